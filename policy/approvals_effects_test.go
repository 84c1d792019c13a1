package policy

import (
	"testing"

	"github.com/ahp-go/ahp/protocol"
)

func TestApprovalsPackOverEffects(t *testing.T) {
	const p = "approvals."
	held := map[string]string{
		"terraform apply": "infrastructure_change",
		"/usr/local/bin/terraform apply -auto-approve":  "infrastructure_change",
		`"terraform" apply`:                             "infrastructure_change",
		"cd infra && tofu -chdir=prod destroy":          "infrastructure_change",
		"pulumi up --yes":                               "infrastructure_change",
		"kubectl -n prod delete deploy web":             "cluster_delete",
		"kubectl drain node-1 --force":                  "cluster_delete",
		"kubectl drain node-1 --delete-emptydir-data":   "cluster_delete",
		"vgremove vg0":                                  "volume_delete",
		"docker volume rm pgdata":                       "volume_delete",
		"kubectl apply -k k8s/overlays/dev":             "deploy",
		"helm upgrade --install web charts/web -n dev":  "deploy",
		"gcloud run deploy web --image x":               "deploy",
		"helm uninstall web":                            "cluster_delete",
		"git filter-repo --path secrets --invert-paths": "git_history",
	}
	allowed := []string{
		"terraform plan",
		"kubectl get pods",
		"kubectl describe deploy web",
		`grep -rn "DROP TABLE" migrations/`,
		`git commit -m "drop table users migration"`,
		"npm install",
		"gh pr create",
		"echo terraform apply",
		// help, dry runs and single records (issue 26, tldr-pages)
		"kubectl drain node-1", "kubectl drain node-1 --ignore-daemonsets",
		"kubectl delete -f app.yaml --dry-run=client", "pulumi up -h", "terraform apply -help",
		"vgremove -h", "kubectl apply -f app.yaml --dry-run=server", "helm upgrade web charts/web --dry-run",
		"sudo zfs destroy -nv tank/home@2026-01-01", "zpool destroy -n tank", // zfs and zpool: -n is a dry run
		// what moved to shared_infrastructure (on by default) is not this pack's
		"npm publish", "aws s3api delete-bucket --bucket b", "gh release create v1.2.0",
	}
	var cases []packCase
	for cmd, rule := range held {
		cases = append(cases, packCase{"hold " + cmd, in(bash(cmd)), p + rule})
	}
	for _, cmd := range allowed {
		cases = append(cases, packCase{"allow " + cmd, in(bash(cmd)), ""})
	}
	runPackCases(t, only("approvals"), cases)
}

// TestApprovalsPackOffByDefault: the default packs let a terraform apply,
// a history rewrite and a deploy through; one option turns the pack on and
// each is held again.
func TestApprovalsPackOffByDefault(t *testing.T) {
	cmds := map[string]string{
		"terraform apply": "approvals.infrastructure_change",
		"git filter-branch --tree-filter 'rm -f x' HEAD": "approvals.git_history",
		"kubectl apply -f k8s/":                          "approvals.deploy",
	}
	def, err := Compile(Options{})
	if err != nil {
		t.Fatal(err)
	}
	on, err := Compile(Options{Packs: map[string]bool{"approvals": true}})
	if err != nil {
		t.Fatal(err)
	}
	for cmd, rule := range cmds {
		if r := def.Evaluate(in(bash(cmd))); r.Matched {
			t.Errorf("%s: the default packs matched %s", cmd, r.RuleID)
		}
		if r := on.Evaluate(in(bash(cmd))); r.RuleID != rule || r.Decision.Kind != protocol.DecisionEscalate {
			t.Errorf("%s with approvals on: %s %s, want escalate by %s", cmd, r.Decision.Kind, r.RuleID, rule)
		}
	}
}

// TestDataLossPackOnByDefault: database drops and force pushes over shared
// history are held by the default packs (data_loss), in every spelling,
// while local databases, reads of the words and safe pushes pass.
func TestDataLossPackOnByDefault(t *testing.T) {
	held := map[string]string{
		`psql -c "DROP TABLE users"`:                       "data_loss.database_drop",
		"psql mydb <<'EOF'\ndrop database prod;\nEOF":      "data_loss.database_drop",
		`mysql -e 'truncate table orders'`:                 "data_loss.database_drop",
		`"redis-cli" -h cache.internal flushall`:           "data_loss.remote_database_drop",
		`/usr/bin/mongosh prod --eval 'db.dropDatabase()'`: "data_loss.database_drop",
		"git push --force origin main":                     "data_loss.shared_history",
		`"git" push -f`:                                    "data_loss.shared_history",
		"git push origin +main":                            "data_loss.shared_history",
		"git push --mirror backup":                         "data_loss.shared_history",
		"git push origin --delete main":                    "data_loss.shared_history",
		"git push origin :release/1.2":                     "data_loss.shared_history",
		"sh -c 'git push --force origin main'":             "data_loss.shared_history",
		`redis-cli -hcache.internal FLUSHDB`:               "data_loss.remote_database_drop",
		`redis-cli -u redis://prod:6379 FLUSHALL`:          "data_loss.remote_database_drop",
		`valkey-cli --uri rediss://prod flushall`:          "data_loss.remote_database_drop",
		`ssh prod redis-cli FLUSHALL`:                      "data_loss.remote_database_drop",
		"git filter-repo --path secrets --invert-paths":    "data_loss.version_history", // it drops the old history itself
		`echo FLUSHALL | redis-cli -h prod`:                "data_loss.remote_database_drop",
	}
	allowed := []string{
		"git push", "git push origin feature/x", "git push --force-with-lease origin feature/x",
		"git push origin -d feature/x", `git commit -m "drop table users"`,
		`grep -rn "DROP TABLE" migrations/`, `psql -h localhost -c "DROP TABLE users"`,
		// redis-cli with no -h, -u or URL talks to this machine's server
		`redis-cli -n 3 FLUSHDB`, `"redis-cli" -p 6380 flushall`, `echo FLUSHALL | redis-cli`,
	}
	def, err := Compile(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for cmd, rule := range held {
		if r := def.Evaluate(in(bash(cmd))); r.RuleID != rule || r.Decision.Kind != protocol.DecisionEscalate {
			t.Errorf("%s: %s %s, want escalate by %s", cmd, r.Decision.Kind, r.RuleID, rule)
		}
	}
	for _, cmd := range allowed {
		if r := def.Evaluate(in(bash(cmd))); r.Matched && r.Decision.Kind != protocol.DecisionAllow {
			t.Errorf("%s: %s by %s, want it let through", cmd, r.Decision.Kind, r.RuleID)
		}
	}
}
