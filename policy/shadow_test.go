package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ahp-go/ahp/protocol"
)

// shadowPool is a pool of rules with overlapping targets, priorities and
// outcomes, and one rule that fails to evaluate (fail closed).
var shadowPool = []struct{ id, body string }{
	{"rm", "priority: 10\n    target: {tools: [bash]}\n    condition: event.command.contains('rm')\n    outcome: {decision: block, reason: no rm}"},
	{"git", "priority: 10\n    target: {tools: [bash]}\n    condition: event.command.startsWith('git')\n    outcome: {decision: escalate, reason: git needs a human}"},
	{"files", "priority: 5\n    target: {tools: ['*_file']}\n    outcome: {decision: allow}"},
	{"write", "priority: 5\n    target: {tools: [write_file]}\n    outcome: {decision: defer, retry_after_ms: 100, reason: later}"},
	{"prompt", "target: {event_types: [pre_prompt]}\n    outcome: {decision: block, reason: no prompts}"},
	{"deep", "priority: 20\n    condition: event.depth > 2\n    outcome: {decision: block, reason: too deep}"},
	{"ls", "priority: 10\n    target: {tools: [bash]}\n    condition: event.command == 'ls'\n    outcome: {decision: allow}"},
	{"floor", "priority: 1\n    outcome: {decision: allow}"},
	{"broken", "priority: 10\n    target: {tools: [web_fetch]}\n    condition: payload.arguments.nope == 1\n    outcome: {decision: allow}"},
	{"modify", "priority: 5\n    target: {tools: [bash]}\n    condition: event.command.startsWith('curl')\n    outcome: {decision: modify, modified_payload: '{\"tool_name\": \"bash\", \"arguments\": {\"command\": \"true\"}}'}"},
}

// shadowPolicy writes the pool's rules: those in shadow get mode: shadow,
// those in drop are left out.
func shadowPolicy(shadow, drop map[string]bool) string {
	var b strings.Builder
	b.WriteString("rules:\n")
	for _, r := range shadowPool {
		if drop[r.id] {
			continue
		}
		fmt.Fprintf(&b, "  - id: %s\n    %s\n", r.id, r.body)
		if shadow[r.id] {
			b.WriteString("    mode: shadow\n")
		}
	}
	return b.String()
}

// randomEvents returns n events drawn with a fixed seed.
func randomEvents(n int) []*protocol.Event {
	rng := rand.New(rand.NewPCG(14, 14))
	tools := []string{"bash", "read_file", "write_file", "web_fetch", "search"}
	cmds := []string{"ls", "rm -rf /", "git push", "curl example.com", "cat notes", ""}
	out := make([]*protocol.Event, n)
	for i := range out {
		var ev *protocol.Event
		if rng.IntN(6) == 0 {
			ev = event(protocol.EventPrePrompt, `{"prompt":"hello"}`)
		} else {
			ev = action(tools[rng.IntN(len(tools))], map[string]any{"command": cmds[rng.IntN(len(cmds))]})
		}
		ev.Depth = uint32(rng.IntN(4))
		ev.SessionID = fmt.Sprintf("s%d", rng.IntN(5))
		out[i] = ev
	}
	return out
}

// sameDecision fails unless a and b decide alike (the policy versions in
// the metadata differ, the rule ids are compared instead).
func sameDecision(t *testing.T, what string, ev *protocol.Event, a, b Result) {
	t.Helper()
	da, db := a.Decision, b.Decision
	da.Metadata, db.Metadata = nil, nil
	ok := da.Kind == db.Kind && da.Reason == db.Reason && string(da.ModifiedPayload) == string(db.ModifiedPayload) &&
		da.RetryAfterMs == db.RetryAfterMs && da.EscalationTarget == db.EscalationTarget &&
		a.RuleID == b.RuleID && a.Matched == b.Matched && (a.Err == nil) == (b.Err == nil) && a.Approval == b.Approval
	if !ok {
		t.Fatalf("%s: event %s depth %d: %+v / %+v", what, ev.Payload, ev.Depth, a, b)
	}
}

// A shadow rule never changes an outcome: every subset of the pool put in
// shadow decides, on many events, exactly as the policy without those rules.
func TestShadowRulesNeverChangeTheDecision(t *testing.T) {
	events := randomEvents(400)
	n := len(shadowPool)
	for mask := 0; mask < 1<<n; mask += 7 { // 147 subsets, the empty and many mixed ones
		sub := map[string]bool{}
		for i, r := range shadowPool {
			if mask&(1<<i) != 0 {
				sub[r.id] = true
			}
		}
		withShadow := mustCompile(t, noPacks(), shadowPolicy(sub, nil))
		without := mustCompile(t, noPacks(), shadowPolicy(nil, sub))
		for _, ev := range events {
			got := eval(withShadow, ev)
			sameDecision(t, fmt.Sprintf("shadow %v", sub), ev, got, eval(without, ev))
			for _, m := range got.Shadow {
				if !sub[m.RuleID] {
					t.Fatalf("shadow %v: rule %s reported as shadow", sub, m.RuleID)
				}
			}
		}
	}
}

// Each shadow rule is reported when it matches, with Changes true exactly
// when enforcing it would decide the event differently.
func TestShadowMatchSaysWhatEnforcingWouldChange(t *testing.T) {
	events := randomEvents(400)
	full := mustCompile(t, noPacks(), shadowPolicy(nil, nil))
	for _, r := range shadowPool {
		shadowed := mustCompile(t, noPacks(), shadowPolicy(map[string]bool{r.id: true}, nil))
		alone := map[string]bool{}
		for _, o := range shadowPool {
			alone[o.id] = o.id != r.id
		}
		only := mustCompile(t, noPacks(), shadowPolicy(nil, alone))
		matched, changed := 0, 0
		for _, ev := range events {
			got, want, solo := eval(shadowed, ev), eval(full, ev), eval(only, ev)
			if solo.Matched != (len(got.Shadow) == 1) {
				t.Fatalf("rule %s on %s: matched alone %t, shadow matches %+v", r.id, ev.Payload, solo.Matched, got.Shadow)
			}
			if len(got.Shadow) == 0 {
				continue
			}
			matched++
			m := got.Shadow[0]
			if m.RuleID != r.id || m.Decision != solo.Decision.Kind || (m.Err == nil) != (solo.Err == nil) {
				t.Fatalf("rule %s: shadow match %+v, enforced alone %+v", r.id, m, solo)
			}
			wantChange := want.RuleID == r.id && want.Decision.Kind != got.Decision.Kind
			if m.Changes != wantChange {
				t.Fatalf("rule %s on %s depth %d: changes %t, enforced %s by %s, live %s by %s",
					r.id, ev.Payload, ev.Depth, m.Changes, want.Decision.Kind, want.RuleID, got.Decision.Kind, got.RuleID)
			}
			if m.Changes {
				changed++
			}
		}
		t.Logf("rule %s: matched %d, would change %d of %d events", r.id, matched, changed, len(events))
	}
}

// In shadow mode every rule, packs included, is a shadow rule: the answer
// is always the allow default, and a block default is reported instead.
func TestShadowModeShadowsWholePolicyAndPacks(t *testing.T) {
	opts := Options{Mode: ModeShadow, Default: protocol.DecisionBlock}
	set := mustCompile(t, opts, shadowPolicy(nil, nil))
	enforced := mustCompile(t, Options{Default: protocol.DecisionBlock}, shadowPolicy(nil, nil))
	if set.Version() == enforced.Version() {
		t.Fatal("the mode does not enter the policy version")
	}
	if ids := set.ShadowRuleIDs(); !slices.ContainsFunc(ids, func(s string) bool { return strings.HasPrefix(s, "destructive_shell.") }) {
		t.Fatalf("packs not in shadow: %v", ids)
	}
	for _, ev := range append(randomEvents(200), bash("rm -rf /")) {
		got, want := eval(set, ev), eval(enforced, ev)
		if got.Decision.Kind != protocol.DecisionAllow || got.Matched {
			t.Fatalf("shadow mode decided %+v", got)
		}
		if want.Decision.Kind != protocol.DecisionAllow {
			found := false
			for _, m := range got.Shadow {
				found = found || (m.RuleID == want.RuleID && m.Decision == want.Decision.Kind && m.Changes)
			}
			if !found {
				t.Fatalf("enforced %s by %q, shadow reports %+v", want.Decision.Kind, want.RuleID, got.Shadow)
			}
		}
	}
	// An event no rule matches reports the block default.
	got := eval(mustCompile(t, Options{Mode: ModeShadow, Default: protocol.DecisionBlock, Packs: noPacks().Packs}, "rules: []\n"), bash("ls"))
	if len(got.Shadow) != 1 || got.Shadow[0].RuleID != "" || got.Shadow[0].Decision != protocol.DecisionBlock || !got.Shadow[0].Changes {
		t.Fatalf("default block not reported: %+v", got.Shadow)
	}
}

func TestShadowModeProblems(t *testing.T) {
	ps := loadProblems(t, noPacks(), "rules:\n  - id: a\n    mode: dryrun\n    outcome: {decision: allow}\n")
	if len(ps) != 1 || ps[0].String() != "p.yaml:3: rule a: mode: expected enforce or shadow" {
		t.Fatalf("problems %v", ps)
	}
	_, err := Compile(Options{Mode: "dryrun"})
	if err == nil || !strings.Contains(err.Error(), `policy mode "dryrun": expected enforce or shadow`) {
		t.Fatalf("bad mode accepted: %v", err)
	}
	set := mustCompile(t, noPacks(), "rules:\n  - id: a\n    mode: enforce\n    outcome: {decision: block, reason: x}\n")
	if r := eval(set, bash("ls")); r.RuleID != "a" || len(set.ShadowRuleIDs()) != 0 {
		t.Fatalf("mode: enforce is not enforced: %+v", r)
	}
}

func TestShadowDecisionsAreCounted(t *testing.T) {
	reg := prometheus.NewRegistry()
	opts := noPacks()
	opts.Registerer = reg
	e, err := NewEngine(opts, Source{Name: "p.yaml", Data: []byte(shadowPolicy(map[string]bool{"rm": true, "git": true}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"rm a", "rm b", "git push", "ls"} {
		e.Evaluate(&Input{Event: bash(cmd)})
	}
	if got := metricValue(t, e.metrics.shadow.WithLabelValues("rm", "block")); got != 2 {
		t.Fatalf("rm block counted %v times", got)
	}
	if got := metricValue(t, e.metrics.shadow.WithLabelValues("git", "escalate")); got != 1 {
		t.Fatalf("git escalate counted %v times", got)
	}
	b, _ := json.Marshal(e.Set().ShadowRuleIDs())
	if string(b) != `["rm","git"]` {
		t.Fatalf("shadow rules %s", b)
	}
}

// A shadow policy that fails to compile is refused at reload, and neither
// the live policy nor the running shadow policy is touched.
func TestLoadWithShadowRefusesABadShadowPolicy(t *testing.T) {
	live, err := NewEngine(noPacks(), Source{Name: "live.yaml", Data: []byte(blockLS)})
	if err != nil {
		t.Fatal(err)
	}
	cand, err := NewEngine(noPacks(), Source{Name: "cand.yaml", Data: []byte(allowLS)})
	if err != nil {
		t.Fatal(err)
	}
	liveSet, candSet := live.Set(), cand.Set()
	bad := Source{Name: "cand.yaml", Data: []byte("rules:\n  - id: broken\n    condition: event.nope\n    outcome: {decision: allow}\n")}
	err = LoadWithShadow(live, []Source{{Name: "live.yaml", Data: []byte(allowLS)}}, cand, []Source{bad})
	var le *LoadError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "shadow policy refused") || !strings.Contains(err.Error(), "cand.yaml:3: rule broken") {
		t.Fatalf("error %v", err)
	}
	if live.Set() != liveSet || cand.Set() != candSet {
		t.Fatal("a refused shadow policy replaced a running set")
	}
	if r := live.Evaluate(&Input{Event: bash("ls")}); r.RuleID != "v1" {
		t.Fatalf("live policy changed: %+v", r)
	}
	// A bad live policy is refused the same way.
	if err := LoadWithShadow(live, []Source{bad}, cand, []Source{{Name: "cand.yaml", Data: []byte(blockLS)}}); err == nil || cand.Set() != candSet {
		t.Fatalf("bad live policy: %v, shadow replaced %t", err, cand.Set() != candSet)
	}
	// Both good: both replaced.
	if err := LoadWithShadow(live, []Source{{Name: "live.yaml", Data: []byte(allowLS)}}, cand, []Source{{Name: "cand.yaml", Data: []byte(blockLS)}}); err != nil {
		t.Fatal(err)
	}
	if live.Evaluate(&Input{Event: bash("ls")}).RuleID != "v2" || cand.Evaluate(&Input{Event: bash("ls")}).RuleID != "v1" {
		t.Fatal("good reload not installed")
	}
}
