package replay

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
)

// benchPolicy is teamPolicy with a session budget, so that the counters
// matter.
const benchPolicy = teamPolicy + `
  - id: action-budget
    priority: 10
    target: {event_types: [pre_action]}
    condition: session.actions >= 400
    outcome: {decision: block, reason: "action budget used up"}
`

// synthesize writes n blocking events (and a notification after about
// every sixth) as an export file, decided by eng the way the live harness
// decides and records them (generic events only, typed ones need the
// harness's handlers and are covered by the other tests).
func synthesize(tb testing.TB, path string, n int, eng *policy.Engine) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	enc := store.NewAuditEncoder(bw)
	sessions := harness.NewSessions(DefaultMaxSessions)
	rng := rand.New(rand.NewPCG(7, 8))
	var id int64
	write := func(ev *protocol.Event, rec store.AuditRecord) {
		id++
		evJSON, err := json.Marshal(ev)
		if err != nil {
			tb.Fatal(err)
		}
		rec.ID, rec.Time, rec.Event = id, epoch.Add(time.Duration(id)*time.Millisecond), evJSON
		rec.SessionID, rec.AgentID, rec.EventType = ev.SessionID, ev.AgentID, string(ev.EventType)
		rec.PolicyVersion, rec.Principal, rec.Transport = eng.Version(), "agent-a", "unix"
		if err := enc.Encode(&rec); err != nil {
			tb.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		sess := fmt.Sprintf("b%03d", rng.IntN(200))
		var ev protocol.Event
		switch k := rng.IntN(100); {
		case k < 70:
			ev = mkEvent(i, protocol.EventPreAction, sess, bash(commands[rng.IntN(len(commands))]))
		case k < 80:
			url := []string{"http://example.com/a", "https://example.com/b"}[rng.IntN(2)]
			ev = mkEvent(i, protocol.EventPreAction, sess, map[string]any{"tool_name": "web_fetch", "arguments": map[string]any{"url": url}})
		default:
			p := []string{"summarise the diff", "my password is hunter2", "write tests"}[rng.IntN(3)]
			ev = mkEvent(i, protocol.EventPrePrompt, sess, map[string]any{"prompt": p})
		}
		res := eng.Evaluate(&policy.Input{Event: &ev, Principal: policy.Principal{ID: "agent-a"},
			Session: sessions.State(sess), Transport: "unix"})
		sessions.Observe(&ev, res.Decision.Kind)
		d, err := json.Marshal(res.Decision)
		if err != nil {
			tb.Fatal(err)
		}
		write(&ev, store.AuditRecord{Blocking: true, Decision: d, Outcome: string(res.Decision.Kind), RuleID: res.RuleID})
		if rng.IntN(6) == 0 {
			hb := mkEvent(i, protocol.EventPostAction, sess, map[string]any{"tool_name": "bash", "result": "ok"})
			sessions.Observe(&hb, "")
			write(&hb, store.AuditRecord{})
		}
	}
	if err := bw.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// The synthesized stream replays without change under the policy that
// decided it, so the benchmark input is what the harness would record.
func TestSynthesizedStreamReplaysUnchanged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	synthesize(t, path, 5000, engine(t, benchPolicy))
	rep := run(t, NewFileSource(path), Options{Engine: engine(t, benchPolicy)})
	if rep.Compared != 5000 || rep.DecisionChanges != 0 || rep.RuleChanges != 0 {
		t.Fatalf("%+v", rep)
	}
}

// BenchmarkReplay100k replays 100,000 recorded blocking events (plus the
// notifications between them) from an export file under a changed policy.
func BenchmarkReplay100k(b *testing.B) {
	const events = 100000
	path := filepath.Join(b.TempDir(), "audit.jsonl")
	synthesize(b, path, events, engine(b, benchPolicy))
	eng := engine(b, changedPolicy+`
  - id: action-budget
    priority: 10
    target: {event_types: [pre_action]}
    condition: session.actions >= 150
    outcome: {decision: block, reason: "action budget used up"}
`)
	var rep *Report
	start := time.Now()
	for b.Loop() {
		var err error
		rep, err = Run(context.Background(), NewFileSource(path), Options{Engine: eng})
		if err != nil {
			b.Fatal(err)
		}
	}
	perOp := time.Since(start) / time.Duration(b.N)
	if rep.Compared != events {
		b.Fatalf("compared %d events", rep.Compared)
	}
	b.ReportMetric(float64(perOp.Nanoseconds())/events, "ns/event")
	b.ReportMetric(float64(rep.DecisionChanges), "changes")
	if perOp > 10*time.Second {
		b.Errorf("replay of %d events took %s, the budget is 10s", events, perOp)
	}
}
