package policy

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/protocol"
)

// benchPolicy writes 50 rules: 10 for pre_action (none of which matches the
// benchmark event, so all 10 conditions run) and 40 for other event types.
func benchPolicy() Source {
	var b strings.Builder
	b.WriteString("rules:\n")
	conds := []string{
		`event.command.matches('git push .*--force')`,
		`payload.arguments.command.contains('DROP TABLE')`,
		`session.actions > 1000`,
		`'banned' in principal.roles`,
		`event.depth > 5 && event.tool == 'bash'`,
		`has(payload.arguments.sudo) && payload.arguments.sudo == true`,
		`event.command.startsWith('terraform destroy')`,
		`session.errors > 20 && session.run_status == 'failed'`,
		`payload.?arguments.?timeout.orValue(0) > 3600`,
		`event.agent_id == 'quarantined-agent'`,
	}
	for i, c := range conds {
		fmt.Fprintf(&b, "  - id: action-%d\n    priority: %d\n    target: {event_types: [pre_action]}\n    condition: %q\n    outcome: {decision: block, reason: r%d}\n", i, i%3, c, i)
	}
	others := []string{"pre_prompt", "post_action", "session_start", "heartbeat"}
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "  - id: other-%d\n    target: {event_types: [%s]}\n    condition: \"session.tokens > %d\"\n    outcome: {decision: block, reason: o%d}\n", i, others[i%4], 1000+i, i)
	}
	return Source{Name: "bench.yaml", Data: []byte(b.String())}
}

var benchEvent = &protocol.Event{
	EventType: protocol.EventPreAction, SessionID: "s-1", AgentID: "agent-7", Timestamp: "2026-11-21T10:00:00Z", Depth: 1,
	Payload: json.RawMessage(`{"action_type":"tool_call","tool_name":"bash","arguments":{"command":"go test ./... -run TestPolicy -count=1","timeout":120}}`),
}

func benchInput() *Input {
	return &Input{
		Event:     benchEvent,
		Principal: Principal{ID: "ci-bot", Roles: []string{"agent", "ci"}},
		Session:   SessionState{Actions: 42, Tokens: 18000, Errors: 1, RecentTools: []string{"bash", "read"}, RunStatus: "executing"},
		Transport: "stdio",
	}
}

// BenchmarkEvaluate50Rules is the benchmark: 50 rules, 10 of them
// for the event's type, every one of the 10 evaluated (none matches).
func BenchmarkEvaluate50Rules(b *testing.B) {
	set, err := Compile(noPacks(), benchPolicy())
	if err != nil {
		b.Fatal(err)
	}
	in := benchInput()
	if r := set.Evaluate(in); r.Matched || r.Decision.Kind != protocol.DecisionAllow {
		b.Fatalf("unexpected result %+v", r)
	}
	runEvaluate(b, set, in)
}

// BenchmarkEvaluateDefaultPacks adds the packs that are on by default
// (destructive_shell, secrets, approvals) to the 50 rules.
func BenchmarkEvaluateDefaultPacks(b *testing.B) {
	set, err := Compile(Options{}, benchPolicy())
	if err != nil {
		b.Fatal(err)
	}
	in := benchInput()
	if r := set.Evaluate(in); r.Matched {
		b.Fatalf("unexpected result %+v", r)
	}
	runEvaluate(b, set, in)
}

// BenchmarkEvaluateBlock measures an event that a pack blocks.
func BenchmarkEvaluateBlock(b *testing.B) {
	set, err := Compile(Options{}, benchPolicy())
	if err != nil {
		b.Fatal(err)
	}
	ev := *benchEvent
	ev.Payload = json.RawMessage(`{"tool_name":"bash","arguments":{"command":"sudo rm -rf --no-preserve-root /"}}`)
	in := benchInput()
	in.Event = &ev
	if r := set.Evaluate(in); r.Decision.Kind != protocol.DecisionBlock {
		b.Fatalf("unexpected result %+v", r)
	}
	runEvaluate(b, set, in)
}

// runEvaluate times set.Evaluate(in) and also reports CPU ns per operation.
func runEvaluate(b *testing.B, set *Set, in *Input) {
	b.ReportAllocs()
	start, ok := processCPU()
	n := 0
	for b.Loop() {
		set.Evaluate(in)
		n++
	}
	if end, ok2 := processCPU(); ok && ok2 && n > 0 {
		b.ReportMetric(float64(end-start)/float64(n), "cpu-ns/op")
	}
}

// BenchmarkEvaluateDefaultPacksSelfProtected is BenchmarkEvaluateDefaultPacks
// as ahp serve runs it: the self_protection pack guards a data directory,
// a configuration and a policy file, an admin address and a pid, so its
// checks resolve the event's paths on the file system.
func BenchmarkEvaluateDefaultPacksSelfProtected(b *testing.B) {
	dir := b.TempDir()
	opts := Options{Params: SelfProtection{
		Paths: []string{"ahp-data", "ahp-data/admin.token", "ahp.yaml", "team.yaml"}, Cwd: dir,
		AdminAddrs: []string{"http://127.0.0.1:7700"}, PIDs: []int{4242},
	}.Params()}
	set, err := Compile(opts, benchPolicy())
	if err != nil {
		b.Fatal(err)
	}
	in := benchInput()
	if r := set.Evaluate(in); r.Matched {
		b.Fatalf("unexpected result %+v", r)
	}
	runEvaluate(b, set, in)
}

// BenchmarkEvaluateServeEvent is what ahp serve does for each event of
// bench/loadgen (ls -la /workspace/project): every default pack, with
// self_protection guarding files, addresses and a pid as in
// BenchmarkEvaluateDefaultPacksSelfProtected.
func BenchmarkEvaluateServeEvent(b *testing.B) {
	dir := b.TempDir()
	opts := Options{Params: SelfProtection{
		Paths: []string{"ahp-data", "ahp-data/admin.token", "ahp.yaml", "team.yaml"}, Cwd: dir,
		AdminAddrs: []string{"http://127.0.0.1:7700"}, PIDs: []int{4242},
	}.Params()}
	set, err := Compile(opts)
	if err != nil {
		b.Fatal(err)
	}
	ev := *benchEvent
	ev.Payload = json.RawMessage(`{"action_type":"tool_call","tool_name":"bash","arguments":{"command":"ls -la /workspace/project"}}`)
	in := benchInput()
	in.Event = &ev
	if r := set.Evaluate(in); r.Matched {
		b.Fatalf("unexpected result %+v", r)
	}
	runEvaluate(b, set, in)
}
