package policy

import (
	"testing"

	"github.com/ahp-go/ahp/protocol"
)

const versionPolicy = `# the team's policy
rules:
  - id: no-curl
    priority: 100
    target: {event_types: [pre_action]}
    condition: 'event.command.startsWith("curl")'
    outcome: {decision: block, reason: "no curl"}
  - id: no-wget
    condition: event.command == "wget"
    outcome: {decision: block, reason: no wget}
`

// The same policy written another way: other file name, comments, key
// order, flow and block styles, quoting.
const versionPolicyReformatted = `rules:
- outcome:
    reason: 'no curl'
    decision: block
  condition: "event.command.startsWith(\"curl\")"
  target:
    event_types:
    - pre_action
  id: no-curl
  priority: 0x64   # the same number
- {id: no-wget, condition: 'event.command == "wget"', outcome: {decision: "block", reason: "no wget"}}
`

func versionOf(t *testing.T, opts Options, name, text string) string {
	t.Helper()
	set, err := Compile(opts, Source{Name: name, Data: []byte(text)})
	if err != nil {
		t.Fatalf("compile %s: %v", name, err)
	}
	return set.Version()
}

// One policy gives one version whatever its file is called and however
// its YAML is written; a changed rule, rule order, parameter or setting
// gives another.
func TestVersionIsCanonical(t *testing.T) {
	v := versionOf(t, noPacks(), "/etc/ahp/policy.yaml", versionPolicy)
	if got := versionOf(t, noPacks(), "./team.yml", versionPolicyReformatted); got != v {
		t.Fatalf("the same policy reformatted: %s, want %s", got, v)
	}
	for name, text := range map[string]string{
		"changed reason": replaceOnce(versionPolicy, `"no curl"`, `"curl is off"`),
		"changed rule":   replaceOnce(versionPolicy, `startsWith("curl")`, `startsWith("curl ")`),
		"rules swapped": `rules:
  - id: no-wget
    condition: event.command == "wget"
    outcome: {decision: block, reason: no wget}
  - id: no-curl
    priority: 100
    target: {event_types: [pre_action]}
    condition: 'event.command.startsWith("curl")'
    outcome: {decision: block, reason: "no curl"}
`,
	} {
		if versionOf(t, noPacks(), "/etc/ahp/policy.yaml", text) == v {
			t.Errorf("%s: the version did not change", name)
		}
	}
	opts := noPacks()
	opts.Params = map[string]any{"x": 1}
	if versionOf(t, opts, "p.yaml", versionPolicy) == v {
		t.Error("a parameter: the version did not change")
	}
	opts = noPacks()
	opts.Packs["network_egress"] = true
	opts.Params = map[string]any{"allowed_hosts": []any{"example.com"}}
	if versionOf(t, opts, "p.yaml", versionPolicy) == v {
		t.Error("a pack: the version did not change")
	}
	opts = noPacks()
	opts.Settings = map[string]any{"descriptor": "sha256:1"}
	withSetting := versionOf(t, opts, "p.yaml", versionPolicy)
	opts.Settings = map[string]any{"descriptor": "sha256:2"}
	if withSetting == v || versionOf(t, opts, "p.yaml", versionPolicy) == withSetting {
		t.Error("a setting: the version did not change")
	}
}

// The harness's own parameters (Options.Instance: its pid, files, working
// directory) reach the rules but not the version: two harnesses, or two
// runs of one, with the same policy share it.
func TestVersionLeavesOutInstance(t *testing.T) {
	spA := SelfProtection{Paths: []string{"/srv/a/ahp-data"}, Cwd: "/srv/a", PIDs: []int{1111}, Cmdlines: []string{"ahp serve --data-dir /srv/a/ahp-data"}, AdminAddrs: []string{"127.0.0.1:7700"}}
	spB := SelfProtection{Paths: []string{"/srv/b/data"}, Cwd: "/srv/b", PIDs: []int{2222}, Cmdlines: []string{"ahp serve"}, AdminAddrs: []string{"10.0.0.2:9090"}}
	optsFor := func(sp SelfProtection) Options {
		o := noPacks()
		o.Packs["self_protection"] = true
		o.Params = map[string]any{"self_protection_paths": []any{"/etc/ahp/extra"}}
		o.Instance = sp.Params()
		return o
	}
	a, err := Compile(optsFor(spA))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Compile(optsFor(spB))
	if err != nil {
		t.Fatal(err)
	}
	if a.Version() != b.Version() {
		t.Fatalf("two harnesses with one policy: %s and %s", a.Version(), b.Version())
	}
	// The rules still see each harness's own files, and the operator's.
	for _, c := range []struct {
		set   *Set
		cmd   string
		block bool
	}{
		{a, "rm -rf /srv/a/ahp-data", true},
		{a, "rm -rf /srv/b/data", false},
		{b, "rm -rf /srv/b/data", true},
		{b, "rm -rf /etc/ahp/extra", true},
		{a, "rm -rf /etc/ahp/extra", true},
	} {
		r := eval(c.set, bash(c.cmd))
		if got := r.Decision.Kind == protocol.DecisionBlock; got != c.block {
			t.Errorf("%s: %s by %q, want block=%v", c.cmd, r.Decision.Kind, r.RuleID, c.block)
		}
	}
	// An operator's parameter is part of the version.
	o := optsFor(spA)
	o.Params = map[string]any{"self_protection_paths": []any{"/etc/ahp/other"}}
	if c, err := Compile(o); err != nil || c.Version() == a.Version() {
		t.Fatalf("another operator parameter: %v, same version %v", err, c != nil && c.Version() == a.Version())
	}
}

func replaceOnce(s, old, new string) string {
	for i := 0; i+len(old) <= len(s); i++ {
		if s[i:i+len(old)] == old {
			return s[:i] + new + s[i+len(old):]
		}
	}
	panic("replaceOnce: " + old + " not found")
}
