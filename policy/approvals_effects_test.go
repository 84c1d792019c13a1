package policy

import (
	"testing"

	"github.com/ahp-go/ahp/protocol"
)

func TestApprovalsPackOverEffects(t *testing.T) {
	const p = "approvals."
	held := map[string]string{
		"terraform apply": "infrastructure_change",
		"/usr/local/bin/terraform apply -auto-approve": "infrastructure_change",
		`"terraform" apply`:                            "infrastructure_change",
		"cd infra && tofu -chdir=prod destroy":         "infrastructure_change",
		"pulumi up --yes":                              "infrastructure_change",
		"kubectl -n prod delete deploy web":            "cluster_delete",
		"kubectl drain node-1 --force":                 "cluster_delete",
		"kubectl drain node-1 --delete-emptydir-data":  "cluster_delete",
		"aws s3api delete-bucket --bucket b":           "cloud_delete",
		"az storage container delete -n web":           "cloud_delete",
		"vgremove vg0":                                 "cloud_delete",
		"helm uninstall web":                           "cluster_delete",
		`psql -c "DROP TABLE users"`:                   "database_drop",
		"psql mydb <<'EOF'\ndrop database prod;\nEOF":  "database_drop",
		`mysql -e 'truncate table orders'`:             "database_drop",
		"npm publish":                                  "publish",
		"/usr/bin/npm publish --access public":         "publish",
		"cargo publish":                                "publish",
		"python3 -m twine upload dist/*":               "publish",
		"gh release create v1.2.0":                     "publish",
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
		"npm publish --dry-run", "cargo publish -n", "poetry publish --dry-run",
		"aws sqs delete-message --queue-url https://sqs.x/q --receipt-handle r",
		"aws dynamodb delete-item --table-name t --key '{}'", "az storage blob delete -c web -n b",
		"aws ses delete-receipt-rule --rule-set-name s --rule-name r --generate-cli-skeleton", "vgremove -h",
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
// a forced push and a publish through; one option turns the pack on and
// each is held again.
func TestApprovalsPackOffByDefault(t *testing.T) {
	cmds := map[string]string{
		"terraform apply":              "approvals.infrastructure_change",
		"git push --force origin main": "approvals.git_history",
		"npm publish":                  "approvals.publish",
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
