package service_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/service"
)

const versionTestPolicy = "rules:\n  - id: no-wget\n    condition: event.command.startsWith('wget')\n    outcome: {decision: block, reason: no wget}\n"

// versionOf compiles the live policy of c (started from configFile) as
// ahp serve does and returns its version.
func versionOf(t *testing.T, c config.Config, configFile string) string {
	t.Helper()
	srcs, err := policy.ReadFiles(c.Policy.Files...)
	if err != nil {
		t.Fatal(err)
	}
	set, err := policy.Compile(service.PolicyOptions(c, configFile), srcs...)
	if err != nil {
		t.Fatal(err)
	}
	return set.Version()
}

// Two harnesses with one policy in different places (data directory,
// socket, admin address, policy file path, configuration file, working
// directory) have one policy version, with self-protection on; what
// decides (a setting outside the policy, the descriptor) changes it.
func TestPolicyVersionOfReplicas(t *testing.T) {
	replica := func() config.Config {
		c := testConfig(t)
		dir := filepath.Dir(c.DataDir)
		pol := filepath.Join(dir, "policies", "team.yaml")
		if err := os.MkdirAll(filepath.Dir(pol), 0o700); err != nil {
			t.Fatal(err)
		}
		writeFile(t, pol, versionTestPolicy)
		c.Policy.Files = []string{pol}
		c.Admin = "http://127.0.0.1:7700"
		return c
	}
	a, b := replica(), replica()
	b.Admin = "http://10.0.0.2:9090"
	va := versionOf(t, a, "/etc/ahp/a.yaml")
	t.Chdir(t.TempDir())
	vb := versionOf(t, b, "")
	if va != vb {
		t.Fatalf("one policy on two replicas: %s and %s", va, vb)
	}
	// Without a configuration, ahp check's options give the same version.
	srcs, err := policy.ReadFiles(a.Policy.Files...)
	if err != nil {
		t.Fatal(err)
	}
	if set, err := policy.Compile(policy.Options{}, srcs...); err != nil || set.Version() != va {
		t.Fatalf("ahp check's version: %v, %v; want %s", err, set, va)
	}

	for name, change := range map[string]func(*config.Config){
		"approvals.fallback":       func(c *config.Config) { c.Approvals.Fallback = "allow" },
		"approvals.timeout":        func(c *config.Config) { c.Approvals.Timeout = config.Duration(time.Minute) },
		"idle.defer_while_pending": func(c *config.Config) { c.Idle.DeferWhilePending = !c.Idle.DeferWhilePending },
		"descriptor": func(c *config.Config) {
			c.Descriptor = filepath.Join(filepath.Dir(c.DataDir), "harness.yaml")
			writeFile(t, c.Descriptor, testDescriptor)
		},
		"policy.params": func(c *config.Config) { c.Policy.Params = map[string]any{"workspace_roots": []any{"/work"}} },
		"a changed rule": func(c *config.Config) {
			writeFile(t, c.Policy.Files[0], versionTestPolicy+"  - id: no-curl\n    condition: event.command.startsWith('curl')\n    outcome: {decision: block, reason: no curl}\n")
		},
	} {
		c := replica()
		change(&c)
		if v := versionOf(t, c, ""); v == va {
			t.Errorf("%s: the version did not change", name)
		}
	}
	// Another descriptor path with the same content: the same version.
	d1, d2 := replica(), replica()
	for _, c := range []*config.Config{&d1, &d2} {
		c.Descriptor = filepath.Join(filepath.Dir(c.DataDir), "harness.yaml")
		writeFile(t, c.Descriptor, testDescriptor)
	}
	if versionOf(t, d1, "") != versionOf(t, d2, "") {
		t.Error("one descriptor in two places: two versions")
	}
}
