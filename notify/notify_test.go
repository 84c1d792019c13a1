package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
)

// receiver is a webhook on loopback that records what it is sent and
// answers with scripted status codes (200 once they run out).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
	paths  []string
	script []int
	got    chan []byte
}

func newReceiver(t *testing.T, script ...int) *receiver {
	r := &receiver{script: script, got: make(chan []byte, 100)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.bodies = append(r.bodies, b)
		r.paths = append(r.paths, req.URL.Path)
		code := 200
		if len(r.script) > 0 {
			code, r.script = r.script[0], r.script[1:]
		}
		r.mu.Unlock()
		if req.Header.Get("Content-Type") != "application/json" {
			code = 415
		}
		w.WriteHeader(code)
		if code < 300 {
			r.got <- b
		}
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.bodies)
}

// next waits for the next body the receiver accepted.
func (r *receiver) next(t *testing.T) []byte {
	t.Helper()
	select {
	case b := <-r.got:
		return b
	case <-time.After(10 * time.Second):
		t.Fatal("no notification arrived")
		return nil
	}
}

// none checks that nothing more arrives for a while.
func (r *receiver) none(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case b := <-r.got:
		t.Fatalf("unexpected notification: %s", b)
	case <-time.After(d):
	}
}

const storedEvent = `{"event_type":"pre_action","session_id":"s-42","agent_id":"claude-7","timestamp":"2026-11-28T00:00:00Z","depth":0,` +
	`"payload":{"tool_name":"bash","arguments":{"command":"TF_TOKEN=[REDACTED:github_token:1a2b3c] terraform -chdir=prod apply"}}}`

func pending(id, rule string) harness.ApprovalNotice {
	created := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	return harness.ApprovalNotice{
		Approval: store.Approval{ID: id, Created: created, SessionID: "s-42", AgentID: "claude-7", RequestedBy: "agent-key",
			Event: json.RawMessage(storedEvent), RuleID: rule, Reason: "infrastructure change needs a human approval",
			Status: store.ApprovalPending},
		Deadline: created.Add(10 * time.Minute), Fallback: protocol.DecisionBlock,
	}
}

func decided(n harness.ApprovalNotice, st store.ApprovalStatus, by, why string) harness.ApprovalNotice {
	n.Approval.Status, n.Approval.DecidedBy, n.Approval.DecisionReason = st, by, why
	n.Approval.DecidedAt = n.Approval.Created.Add(time.Minute)
	n.Deadline = time.Time{}
	return n
}

func packs(rule string) string {
	if strings.HasPrefix(rule, "approvals.") {
		return "approvals"
	}
	return ""
}

func newNotifier(t *testing.T, o Options) *Notifier {
	t.Helper()
	if o.BaseBackoff == 0 {
		o.BaseBackoff, o.MaxBackoff = 5*time.Millisecond, 20*time.Millisecond
	}
	if o.PackOf == nil {
		o.PackOf = packs
	}
	n, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = n.Close(ctx)
	})
	return n
}

// TestJSONBody: the generic body carries the documented fields: schema and
// version, kind, the link to the card, the rule and its pack, the agent,
// the session and the action as stored; the outcome says who and why.
func TestJSONBody(t *testing.T) {
	r := newReceiver(t)
	n := newNotifier(t, Options{Sinks: []Sink{{Name: "hook", URL: r.URL + "/hook", Format: FormatJSON}},
		DashboardURL: "https://ahp.example.com/"})
	p := pending("ap-1", "approvals.infrastructure_change")
	n.NotifyApproval(p)
	var m Message
	if err := json.Unmarshal(r.next(t), &m); err != nil {
		t.Fatal(err)
	}
	if m.Schema != Schema || m.Version != 1 || m.Kind != KindPending || m.Status != "pending" || m.Outcome != "" {
		t.Fatalf("header: %+v", m)
	}
	if m.Link != "https://ahp.example.com/#approval=ap-1" || m.Find != "ahp approvals show ap-1" {
		t.Fatalf("link %q find %q", m.Link, m.Find)
	}
	if m.RuleID != "approvals.infrastructure_change" || m.Pack != "approvals" || m.AgentID != "claude-7" || m.SessionID != "s-42" ||
		m.Reason != "infrastructure change needs a human approval" || m.RequestedBy != "agent-key" {
		t.Fatalf("who/why: %+v", m)
	}
	if m.Action.EventType != "pre_action" || m.Action.Tool != "bash" ||
		m.Action.Summary != "TF_TOKEN=[REDACTED:github_token:1a2b3c] terraform -chdir=prod apply" ||
		string(m.Action.Event) != storedEvent || m.Action.EventBytes != len(storedEvent) {
		t.Fatalf("action: %+v", m.Action)
	}
	if m.Deadline == nil || !m.Deadline.Equal(p.Deadline) || m.Fallback != "block" || m.DecidedAt != nil {
		t.Fatalf("deadline/fallback: %+v", m)
	}

	n.NotifyApproval(decided(p, store.ApprovalDenied, "alice", "not on a Friday"))
	m = Message{}
	if err := json.Unmarshal(r.next(t), &m); err != nil {
		t.Fatal(err)
	}
	if m.Kind != KindOutcome || m.Outcome != OutcomeDenied || m.DecidedBy != "alice" || m.DecisionReason != "not on a Friday" ||
		m.DecidedAt == nil || m.Deadline != nil || m.Fallback != "" {
		t.Fatalf("outcome: %+v", m)
	}
	exp := decided(p, store.ApprovalExpired, "ahp", "no decision within 10m0s")
	exp.TimedOut = true
	n.NotifyApproval(exp)
	if err := json.Unmarshal(r.next(t), &m); err != nil {
		t.Fatal(err)
	}
	if m.Outcome != OutcomeTimedOut || m.Fallback != "block" {
		t.Fatalf("timed out: %+v", m)
	}
	exp.TimedOut = false
	n.NotifyApproval(exp)
	if err := json.Unmarshal(r.next(t), &m); err != nil {
		t.Fatal(err)
	}
	if m.Outcome != OutcomeExpired {
		t.Fatalf("expired: %+v", m)
	}
	if r.paths[0] != "/hook" {
		t.Fatalf("path %q", r.paths[0])
	}
}

// TestSlackBody: the Slack body has a text and blocks that show the rule,
// the agent, the session, the command and the link to the card; without a
// dashboard URL it says how to find the approval instead.
func TestSlackBody(t *testing.T) {
	r := newReceiver(t)
	n := newNotifier(t, Options{Sinks: []Sink{{URL: r.URL, Format: FormatSlack}}, DashboardURL: "https://ahp.example.com"})
	p := pending("ap-2", "approvals.infrastructure_change")
	n.NotifyApproval(p)
	var b struct {
		Text   string `json:"text"`
		Blocks []struct {
			Type     string                        `json:"type"`
			Text     struct{ Type, Text string }   `json:"text"`
			Elements []struct{ Type, Text string } `json:"elements"`
		} `json:"blocks"`
	}
	if err := json.Unmarshal(r.next(t), &b); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.Text, "Approval waiting") || !strings.Contains(b.Text, "claude-7") || len(b.Blocks) != 3 {
		t.Fatalf("%+v", b)
	}
	all := b.Blocks[0].Text.Text + b.Blocks[1].Text.Text + b.Blocks[2].Elements[0].Text
	for _, want := range []string{"approvals.infrastructure_change (pack approvals)", "claude-7", "s-42",
		"```TF_TOKEN=[REDACTED:github_token:1a2b3c] terraform -chdir=prod apply```",
		"<https://ahp.example.com/#approval=ap-2|Open the approval card>", "then block"} {
		if !strings.Contains(all, want) {
			t.Errorf("slack body lacks %q:\n%s", want, all)
		}
	}
	if b.Blocks[0].Text.Type != "mrkdwn" || b.Blocks[2].Type != "context" {
		t.Fatalf("block types: %+v", b.Blocks)
	}

	n2 := newNotifier(t, Options{Sinks: []Sink{{URL: r.URL, Format: FormatSlack}}})
	n2.NotifyApproval(decided(p, store.ApprovalApproved, "bob", "ok <b>"))
	if err := json.Unmarshal(r.next(t), &b); err != nil {
		t.Fatal(err)
	}
	all = b.Blocks[0].Text.Text + b.Blocks[2].Elements[0].Text
	for _, want := range []string{"*Approval approved*", "bob", "ok &lt;b&gt;", "Find it with `ahp approvals show ap-2`"} {
		if !strings.Contains(all, want) {
			t.Errorf("slack outcome lacks %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "http") {
		t.Errorf("a link without a dashboard URL: %s", all)
	}
}

// TestRetriesAfterServerErrors: 500s are retried with back-off until the
// receiver accepts; the counters say so.
func TestRetriesAfterServerErrors(t *testing.T) {
	r := newReceiver(t, 500, 503, 500)
	reg := prometheus.NewRegistry()
	n := newNotifier(t, Options{Sinks: []Sink{{Name: "flaky", URL: r.URL, Format: FormatJSON}}, Registerer: reg, MaxAttempts: 5})
	start := time.Now()
	n.NotifyApproval(pending("ap-3", "r"))
	r.next(t)
	if r.count() != 4 {
		t.Fatalf("%d requests, want 4 (3 failures, then success)", r.count())
	}
	waitCount(t, n.met.sent.WithLabelValues("flaky"), 1)
	if got := value(n.met.retries.WithLabelValues("flaky")); got != 3 {
		t.Fatalf("retries %v", got)
	}
	if got := value(n.met.failed.WithLabelValues("flaky")); got != 0 {
		t.Fatalf("failed %v", got)
	}
	// Back-off: at least half of 5+10+20 ms was waited.
	if el := time.Since(start); el < 17*time.Millisecond {
		t.Fatalf("no back-off: %v", el)
	}

	// A 4xx is the receiver refusing the body: not retried.
	r2 := newReceiver(t, 404)
	n2 := newNotifier(t, Options{Sinks: []Sink{{Name: "gone", URL: r2.URL, Format: FormatJSON}}, MaxAttempts: 5})
	n2.NotifyApproval(pending("ap-4", "r"))
	waitCount(t, n2.met.failed.WithLabelValues("gone"), 1)
	if r2.count() != 1 {
		t.Fatalf("a 404 was retried: %d requests", r2.count())
	}

	// Always failing: given up after MaxAttempts.
	r3 := newReceiver(t, 500, 500, 500, 500, 500, 500)
	n3 := newNotifier(t, Options{Sinks: []Sink{{Name: "down", URL: r3.URL, Format: FormatJSON}}, MaxAttempts: 3})
	n3.NotifyApproval(pending("ap-5", "r"))
	waitCount(t, n3.met.failed.WithLabelValues("down"), 1)
	if r3.count() != 3 {
		t.Fatalf("%d attempts, want 3", r3.count())
	}
}

func waitCount(t *testing.T, c prometheus.Counter, want float64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for value(c) != want {
		if time.Now().After(deadline) {
			t.Fatalf("counter is %v, want %v", value(c), want)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestFilters: sinks get only the kinds, packs and rules they name.
func TestFilters(t *testing.T) {
	byPack, byRule, outcomes, all := newReceiver(t), newReceiver(t), newReceiver(t), newReceiver(t)
	n := newNotifier(t, Options{Sinks: []Sink{
		{Name: "pack", URL: byPack.URL, Format: FormatJSON, Packs: []string{"approvals"}},
		{Name: "rule", URL: byRule.URL, Format: FormatJSON, Rules: []string{"team.deploy"}},
		{Name: "outcomes", URL: outcomes.URL, Format: FormatJSON, Kinds: []Kind{KindOutcome}, Packs: []string{"approvals"}, Rules: []string{"team.deploy"}},
		{Name: "all", URL: all.URL, Format: FormatJSON},
	}})
	infra, deploy, other := pending("a1", "approvals.infrastructure_change"), pending("a2", "team.deploy"), pending("a3", "team.other")
	for _, p := range []harness.ApprovalNotice{infra, deploy, other} {
		n.NotifyApproval(p)
		n.NotifyApproval(decided(p, store.ApprovalApproved, "bob", ""))
	}
	ids := func(r *receiver, k int) string {
		var out []string
		for range k {
			var m Message
			_ = json.Unmarshal(r.next(t), &m)
			out = append(out, m.ApprovalID+":"+string(m.Kind))
		}
		return strings.Join(out, " ")
	}
	if got := ids(byPack, 2); got != "a1:pending a1:outcome" {
		t.Errorf("pack sink got %s", got)
	}
	if got := ids(byRule, 2); got != "a2:pending a2:outcome" {
		t.Errorf("rule sink got %s", got)
	}
	if got := ids(outcomes, 2); got != "a1:outcome a2:outcome" {
		t.Errorf("outcome sink got %s", got)
	}
	if got := ids(all, 6); got != "a1:pending a1:outcome a2:pending a2:outcome a3:pending a3:outcome" {
		t.Errorf("catch-all sink got %s", got)
	}
	for _, r := range []*receiver{byPack, byRule, outcomes} {
		r.none(t, 50*time.Millisecond)
	}
}

// TestHangingReceiverCostsCallerNothing: with a receiver that never
// answers, NotifyApproval still returns at once; past the queue, notices
// are dropped, counted and logged once; Close ends every goroutine of the
// notifier by its deadline.
func TestHangingReceiverCostsCallerNothing(t *testing.T) {
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hang.Close()
	defer close(release)
	var logs bytes.Buffer
	var logMu sync.Mutex
	reg := prometheus.NewRegistry()
	n, err := New(Options{Sinks: []Sink{{Name: "hang", URL: hang.URL + "/services/T000/B000/secretpart", Format: FormatSlack}},
		QueueSize: 8, Timeout: 30 * time.Second, Registerer: reg,
		Logger: slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logs}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // when the test fails before its own Close
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = n.Close(ctx)
	})
	const calls = 5000
	start := time.Now()
	var worst time.Duration
	for i := range calls {
		t0 := time.Now()
		n.NotifyApproval(pending("ap", "r"))
		if d := time.Since(t0); d > worst {
			worst = d
		}
		_ = i
	}
	total := time.Since(start)
	t.Logf("%d notices to a hanging receiver: %v in all, worst call %v", calls, total, worst)
	if worst > 50*time.Millisecond || total > time.Second {
		t.Fatalf("NotifyApproval waited: worst %v, total %v", worst, total)
	}
	dropped := value(n.met.dropped.WithLabelValues(AllSinks)) + value(n.met.dropped.WithLabelValues("hang"))
	if dropped < calls-2*8-2 { // two queues, one notice being sorted, one being sent
		t.Fatalf("dropped %v of %d with queues of 8", dropped, calls)
	}
	logMu.Lock()
	lines := strings.Count(logs.String(), "approval notifications dropped")
	logMu.Unlock()
	if lines != 1 {
		t.Fatalf("%d drop log lines, want 1 (rate-limited):\n%s", lines, logs.String())
	}

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	if err := n.Close(ctx); err == nil {
		t.Fatal("Close reported every notice delivered to a hanging receiver")
	}
	if el := time.Since(t0); el > 2*time.Second {
		t.Fatalf("Close took %v", el)
	}
	if g := notifierGoroutines(); g != "" {
		t.Fatalf("goroutines left after Close:\n%s", g)
	}
	n.NotifyApproval(pending("late", "r")) // after Close: dropped, no panic
	logMu.Lock()
	defer logMu.Unlock()
	if strings.Contains(logs.String(), "secretpart") || strings.Contains(logs.String(), "B000") {
		t.Fatalf("the URL's secret path was logged:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "127.0.0.1") {
		t.Fatalf("the host is not logged:\n%s", logs.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// notifierGoroutines returns the stacks of goroutines still running the
// notifier's code ("" when none).
func notifierGoroutines() string {
	var b []byte
	for range 50 {
		b = make([]byte, 1<<20)
		b = b[:runtime.Stack(b, true)]
		if !bytes.Contains(b, []byte("notify.(*Notifier)")) {
			return ""
		}
		time.Sleep(10 * time.Millisecond)
	}
	var out []string
	for _, g := range strings.Split(string(b), "\n\n") {
		if strings.Contains(g, "notify.(*Notifier)") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}

// TestCloseDeliversQueued: what was queued before Close is delivered when
// the receiver answers, and Close then returns nil.
func TestCloseDeliversQueued(t *testing.T) {
	r := newReceiver(t)
	n, err := New(Options{Sinks: []Sink{{URL: r.URL, Format: FormatJSON}}})
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		n.NotifyApproval(pending("q", "r"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := n.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if r.count() != 20 {
		t.Fatalf("%d of 20 delivered", r.count())
	}
	if g := notifierGoroutines(); g != "" {
		t.Fatalf("goroutines left:\n%s", g)
	}
}

// TestErrorsNeverHoldTheURL: a receiver that cannot be reached is logged
// by host, never by its URL's path or query.
func TestErrorsNeverHoldTheURL(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL + "/hooks/s3cr3t-path?token=s3cr3t-query"
	dead.Close()
	var logs bytes.Buffer
	var mu sync.Mutex
	n := newNotifier(t, Options{Sinks: []Sink{{Name: "dead", URL: url, Format: FormatJSON}}, MaxAttempts: 2,
		Logger: slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))})
	n.NotifyApproval(pending("ap", "r"))
	waitCount(t, n.met.failed.WithLabelValues("dead"), 1)
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "not delivered") || strings.Contains(logs.String(), "s3cr3t") {
		t.Fatalf("log:\n%s", logs.String())
	}
	if _, err := New(Options{Sinks: []Sink{{URL: "ftp://x/s3cr3t", Format: FormatJSON}}}); err == nil || strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("bad URL: %v", err)
	}
}

// TestBigEventLeftOut: an event past MaxEventBytes is not sent whole; the
// summary is cut.
func TestBigEventLeftOut(t *testing.T) {
	big := strings.Repeat("x", MaxEventBytes)
	ev, _ := json.Marshal(map[string]any{"event_type": "pre_action", "payload": map[string]any{"tool_name": "bash", "arguments": map[string]any{"command": big}}})
	a := describe(ev)
	if !a.EventOmitted || a.Event != nil || a.EventBytes != len(ev) || len(a.Summary) > maxSummary || !strings.HasSuffix(a.Summary, "…") {
		t.Fatalf("omitted %v, event %d bytes, summary %d bytes", a.EventOmitted, len(a.Event), len(a.Summary))
	}
	if got := describe(json.RawMessage(`{"event_type":"pre_action","payload":{"tool_name":"write","arguments":{"file_path":"/etc/hosts","content":"x"}}}`)); got.Summary != "/etc/hosts" {
		t.Fatalf("summary %q", got.Summary)
	}
	if got := describe(json.RawMessage(`{"event_type":"confirmation","payload":{"prompt":"go?"}}`)); got.Summary != `{"prompt":"go?"}` {
		t.Fatalf("summary %q", got.Summary)
	}
}

// value reads a counter.
func value(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		return -1
	}
	return m.GetCounter().GetValue()
}

// notifyLoop times NotifyApproval(p) to one sink with queues of size
// queue, and closes the notifier after.
func notifyLoop(b *testing.B, sink Sink, queue int, p harness.ApprovalNotice) {
	n, err := New(Options{Sinks: []Sink{sink}, QueueSize: queue})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	defer func() { _ = n.Close(ctx) }()
	b.ReportAllocs()
	for b.Loop() {
		n.NotifyApproval(p)
	}
}

// BenchmarkNotifyApproval is what a decision pays for a notice: queued
// (the shared queue has room: the sorting goroutine keeps up, whatever
// the receiver does) and dropped (every queue is full, the receiver
// hangs).
func BenchmarkNotifyApproval(b *testing.B) {
	p := pending("ap", "approvals.infrastructure_change")
	b.Run("queued", func(b *testing.B) {
		srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		defer srv.Close()
		notifyLoop(b, Sink{URL: srv.URL, Format: FormatJSON}, 1024, p)
	})
	b.Run("dropped", func(b *testing.B) {
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		defer srv.Close()
		defer close(release)
		notifyLoop(b, Sink{URL: srv.URL, Format: FormatSlack}, 1, p)
	})
}
