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

// serveOptions are the options ahp serve compiles its policy with: the
// self_protection pack guards a data directory, a configuration and a
// policy file in a temporary working directory, an admin address and a pid.
func serveOptions(b *testing.B) Options {
	return Options{Params: SelfProtection{
		Paths: []string{"ahp-data", "ahp-data/admin.token", "ahp.yaml", "team.yaml"}, Cwd: b.TempDir(),
		AdminAddrs: []string{"http://127.0.0.1:7700"}, PIDs: []int{4242},
	}.Params()}
}

// BenchmarkEvaluateDefaultPacksSelfProtected is BenchmarkEvaluateDefaultPacks
// as ahp serve runs it: the self_protection pack guards a data directory,
// a configuration and a policy file, an admin address and a pid, so its
// checks resolve the event's paths on the file system.
func BenchmarkEvaluateDefaultPacksSelfProtected(b *testing.B) {
	opts := serveOptions(b)
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
	opts := serveOptions(b)
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

// benchScriptEvent is a pre_action whose command is a build-and-release
// script of about 10 KB: ordinary steps (variables, loops, tests, builds,
// archives, an API call), none of which a default pack stops.
func benchScriptEvent() *protocol.Event {
	steps := []string{
		`export GOFLAGS=-mod=readonly OUT="dist/$(git rev-parse --short HEAD)"`,
		`test -d "$OUT" || mkdir -p "$OUT/bin" "$OUT/docs"`,
		`for pkg in api worker cli; do go vet "./cmd/$pkg" && go build -o "$OUT/bin/$pkg" "./cmd/$pkg"; done`,
		`go test -count=1 -race ./... 2>&1 | tee "$OUT/test.log" | tail -n 5`,
		`case "$(uname -s)" in Linux) strip "$OUT"/bin/* ;; *) echo "no strip" ;; esac`,
		`sed -e "s/@VERSION@/$VERSION/" docs/index.md.in > "$OUT/docs/index.md"`,
		`(cd "$OUT" && sha256sum bin/* > SHA256SUMS)`,
		`curl -sS -H "Accept: application/json" https://ci.example.com/api/builds/latest | jq -r .status`,
		`tar -C "$OUT" -czf "$OUT.tar.gz" . && ls -l "$OUT.tar.gz"`,
		`find build -name '*.o' -newer go.mod -print | xargs -r rm -f`,
		`git status --porcelain | wc -l`,
		`printf '%s\n' "built $OUT at $(date -u +%FT%TZ)" >> release.log`,
	}
	var sb strings.Builder
	for sb.Len() < 10<<10 {
		for _, s := range steps {
			sb.WriteString(s)
			sb.WriteByte('\n')
		}
	}
	cmd, err := json.Marshal(sb.String())
	if err != nil {
		panic(err)
	}
	ev := *benchEvent
	ev.Payload = json.RawMessage(`{"action_type":"tool_call","tool_name":"bash","cwd":"/work/proj","arguments":{"command":` + string(cmd) + `}}`)
	return &ev
}

// BenchmarkEvaluateScript10KB is issue 25's second figure: the effect
// analysis and every default pack, as ahp serve runs them (self-protection
// guarding its files), for one pre_action carrying a 10 KB script.
func BenchmarkEvaluateScript10KB(b *testing.B) {
	opts := serveOptions(b)
	set, err := Compile(opts)
	if err != nil {
		b.Fatal(err)
	}
	in := benchInput()
	in.Event = benchScriptEvent()
	if r := set.Evaluate(in); r.Matched {
		b.Fatalf("the ordinary script was stopped: %s %s", r.RuleID, r.Decision.Reason)
	}
	runEvaluate(b, set, in)
}
