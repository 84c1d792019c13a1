package service_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/descriptor"
	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/runs/runstest"
	"github.com/ahp-go/ahp/service"
	"github.com/ahp-go/ahp/store"
	_ "github.com/ahp-go/ahp/transport/httptransport" // http:// addresses for client.Dial
)

const policyNoCurl = `rules:
  - id: no-curl
    priority: 100
    target: {event_types: [pre_action]}
    condition: 'event.command.startsWith("curl")'
    outcome: {decision: block, reason: "curl is not allowed"}
`

const policyNoWget = `rules:
  - id: no-wget
    priority: 100
    target: {event_types: [pre_action]}
    condition: 'event.command.startsWith("wget")'
    outcome: {decision: block, reason: "wget is not allowed"}
`

// Reload replaces the policy; a policy that does not compile is refused
// with an error and the previous one keeps deciding. (Moved from the
// binary's SIGHUP test, which stays for the signal itself.)
func TestReload(t *testing.T) {
	c := testConfig(t)
	pol := filepath.Join(filepath.Dir(c.DataDir), "policy.yaml")
	writeFile(t, pol, policyNoCurl)
	c.Policy.Files = []string{pol}
	r := start(t, c, service.Options{})
	cl := dial(t, r.addrs[c.Listen[0]], client.Options{})
	if d := decide(t, cl, "curl example.com"); d.Kind != protocol.DecisionBlock || !strings.Contains(d.Reason, "curl") {
		t.Fatalf("policy A not applied: %+v", d)
	}
	writeFile(t, pol, "rules:\n  - id: broken\n    condition: 'event.command.startsWith('\n")
	if err := r.svc.Reload(); err == nil {
		t.Fatal("a broken policy was accepted")
	}
	if d := decide(t, cl, "curl example.com"); d.Kind != protocol.DecisionBlock {
		t.Fatalf("old policy not kept after a refused reload: %+v", d)
	}
	writeFile(t, pol, policyNoWget)
	if err := r.svc.Reload(); err != nil {
		t.Fatal(err)
	}
	if d := decide(t, cl, "curl example.com"); d.Kind != protocol.DecisionAllow {
		t.Fatalf("policy A still applied after reload: %+v", d)
	}
	if d := decide(t, cl, "wget example.com"); d.Kind != protocol.DecisionBlock {
		t.Fatalf("policy B not applied: %+v", d)
	}
}

// With policy.watch, a changed policy file is reloaded without a call.
// (Moved from cmd/ahp's TestPolicyFileWatchReload.)
func TestPolicyFileWatchReload(t *testing.T) {
	c := testConfig(t)
	pol := filepath.Join(filepath.Dir(c.DataDir), "policy.yaml")
	writeFile(t, pol, policyNoCurl)
	c.Policy.Files, c.Policy.Watch = []string{pol}, true
	r := start(t, c, service.Options{})
	cl := dial(t, r.addrs[c.Listen[0]], client.Options{})
	if d := decide(t, cl, "curl example.com"); d.Kind != protocol.DecisionBlock {
		t.Fatalf("policy A not applied: %+v", d)
	}
	writeFile(t, pol, policyNoWget+"\n# changed\n")
	waitFor(t, "the reload", func() bool { return strings.Contains(r.logs.String(), "policy reloaded") })
	if d := decide(t, cl, "wget example.com"); d.Kind != protocol.DecisionBlock || !strings.Contains(d.Reason, "wget") {
		t.Fatalf("changed file not reloaded: %+v", d)
	}
}

const testDescriptor = `
metadata: {name: support, version: v1}
runtime: {entry_agent: router}
tools:
  lookup_order: {target: example://tool/lookup_order}
agents:
  router:
    handoffs: [order]
    instructions: Route.
  order:
    tools: [lookup_order]
    instructions: Look orders up.
`

// With a descriptor, a tool the agent does not declare is blocked and the
// decision is recorded with the descriptor's hash. (Moved from cmd/ahp's
// TestServeDescriptorBlocksUndeclaredTool.)
func TestDescriptorBlocksUndeclaredTool(t *testing.T) {
	c := testConfig(t)
	desc := filepath.Join(filepath.Dir(c.DataDir), "harness.yaml")
	writeFile(t, desc, testDescriptor)
	d, err := descriptor.Load(desc)
	if err != nil {
		t.Fatal(err)
	}
	c.Descriptor = desc
	r := start(t, c, service.Options{})
	cl := dial(t, r.addrs[c.Listen[0]], client.Options{SessionID: "s1", AgentID: "order"})
	ctx := context.Background()
	got, err := cl.Event(ctx, protocol.EventPreAction, map[string]any{"tool_name": "refund", "arguments": map[string]any{}})
	if err != nil || got.Kind != protocol.DecisionBlock || !strings.Contains(got.Reason, `agent "order" does not declare tool "refund"`) {
		t.Fatalf("undeclared tool: %+v %v", got, err)
	}
	if got, err = cl.Event(ctx, protocol.EventPreAction, map[string]any{"tool_name": "lookup_order", "arguments": map[string]any{}}); err != nil || got.Kind != protocol.DecisionAllow {
		t.Fatalf("declared tool: %+v %v", got, err)
	}
	recs, err := r.svc.Store().Audit().Query(ctx, store.AuditFilter{RuleID: "descriptor"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].DescriptorHash != d.Hash() || !strings.Contains(string(recs[0].Event), "refund") {
		t.Fatalf("audit records of the descriptor rule (hash %s): %+v", d.Hash(), recs)
	}
}

// A scripted session of run notifications (with a duplicate, out-of-order
// snapshots and an illegal transition) becomes the expected run record.
// (Moved from cmd/ahp's TestRunsFromLiveHarness; ahp runs show has its own
// tests on a filled store.)
func TestRunsFromLiveHarness(t *testing.T) {
	c := testConfig(t)
	r := start(t, c, service.Options{})
	cl := dial(t, r.addrs[c.Listen[0]], client.Options{SessionID: runstest.SessionID, AgentID: runstest.AgentID, FailMode: client.FailError})
	ctx := context.Background()
	for _, ev := range runstest.Session() {
		if err := cl.NotifyEvent(ctx, &ev); err != nil {
			t.Fatal(err)
		}
	}
	// Notifications are handled in order before this request is answered.
	if err := cl.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Status string `json:"status"`
		Counts struct {
			Duplicates int `json:"duplicates"`
			OutOfOrder int `json:"out_of_order"`
			Illegal    int `json:"illegal"`
		} `json:"counts"`
	}
	waitFor(t, "the run record", func() bool {
		got, err := r.svc.Store().Runs().Get(ctx, runstest.RunID)
		return err == nil && json.Unmarshal(got.Record, &rec) == nil && rec.Status == "completed"
	})
	if rec.Counts.Duplicates != 2 || rec.Counts.OutOfOrder != 2 || rec.Counts.Illegal != 1 {
		t.Fatalf("run record: %+v", rec)
	}
}

// The credentials rule of network listeners: loopback without credentials
// is open with a warning; any other address without credentials refuses
// to start. (Moved from cmd/ahp's TestServeHTTPAuthRule.)
func TestHTTPAuthRule(t *testing.T) {
	c := testConfig(t)
	c.Listen = []string{"http://127.0.0.1:0"}
	r := start(t, c, service.Options{})
	cl := dial(t, r.addrs[c.Listen[0]], client.Options{})
	if d := decide(t, cl, "ls"); d.Kind != protocol.DecisionAllow {
		t.Fatalf("loopback without credentials: %+v", d)
	}
	if !strings.Contains(r.logs.String(), "without authentication") {
		t.Errorf("no warning about the open loopback listener:\n%s", r.logs)
	}

	c2 := testConfig(t)
	c2.Listen = []string{"http://0.0.0.0:0"}
	svc, err := service.New(c2, service.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := svc.Run(ctx); err == nil || !strings.Contains(err.Error(), "--credentials") {
		t.Fatalf("0.0.0.0 without credentials: %v", err)
	}
}

// recorder is a harness.Observer that keeps the event types it is told of.
type recorder struct {
	mu    sync.Mutex
	types []string
}

func (o *recorder) Recorded(rec *store.AuditRecord) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.types = append(o.types, rec.EventType+":"+rec.Outcome)
}

func (o *recorder) ApprovalChanged(store.Approval) {}

func (o *recorder) seen() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return strings.Join(o.types, ",")
}

// Observers given in Options and added with Observe are told of every
// decision as recorded.
func TestObserveDecisions(t *testing.T) {
	c := testConfig(t)
	first, later := &recorder{}, &recorder{}
	r := start(t, c, service.Options{Observers: []harness.Observer{first}})
	r.svc.Observe(later)
	cl := dial(t, r.addrs[c.Listen[0]], client.Options{})
	decide(t, cl, "rm -rf /")
	decide(t, cl, "ls")
	for name, o := range map[string]*recorder{"Options.Observers": first, "Observe": later} {
		if got := o.seen(); !strings.Contains(got, "pre_action:block,pre_action:allow") {
			t.Errorf("%s saw %q", name, got)
		}
	}
}

// The admin API is served on the admin mux, and routes mounted on it by
// the caller are served next to /healthz.
func TestAdminMux(t *testing.T) {
	c := testConfig(t)
	c.Admin = "http://127.0.0.1:0"
	addr := make(chan string, 1)
	svc, err := service.New(c, service.Options{Ready: func(l service.Listening) {
		if l.Listen == "admin" {
			addr <- l.Addr
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	svc.AdminMux().HandleFunc("GET /extra", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "mounted\n") })
	go func() { _ = svc.Run(context.Background()) }()
	defer svc.Close()
	base := <-addr
	for path, want := range map[string]string{"/healthz": "ok\n", "/extra": "mounted\n"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != want {
			t.Errorf("%s: %d %q", path, resp.StatusCode, body)
		}
	}
}

// Two services in one process are independent: each has its own store,
// policy, listeners and credentials state.
func TestTwoServicesInOneProcess(t *testing.T) {
	c1, c2 := testConfig(t), testConfig(t)
	pol := filepath.Join(filepath.Dir(c2.DataDir), "policy.yaml")
	writeFile(t, pol, policyNoCurl)
	c2.Policy.Files = []string{pol}
	r1, r2 := start(t, c1, service.Options{}), start(t, c2, service.Options{})
	cl1 := dial(t, r1.addrs[c1.Listen[0]], client.Options{})
	cl2 := dial(t, r2.addrs[c2.Listen[0]], client.Options{})
	if d := decide(t, cl1, "curl example.com"); d.Kind != protocol.DecisionAllow {
		t.Fatalf("first service: %+v", d)
	}
	if d := decide(t, cl2, "curl example.com"); d.Kind != protocol.DecisionBlock {
		t.Fatalf("second service: %+v", d)
	}
	if err := r1.svc.Close(); err != nil {
		t.Fatal(err)
	}
	if d := decide(t, cl2, "ls"); d.Kind != protocol.DecisionAllow {
		t.Fatalf("second service after the first closed: %+v", d)
	}
}

// A listen address of an unknown scheme, or a malformed configuration, is
// refused by New with a message naming it.
func TestNewRefusesBadConfig(t *testing.T) {
	c := testConfig(t)
	c.Listen = []string{"carrier-pigeon:coop"}
	if _, err := service.New(c, service.Options{}); err == nil || !strings.Contains(err.Error(), "carrier-pigeon") {
		t.Fatalf("unknown scheme: %v", err)
	}
	c = testConfig(t)
	c.Policy.Default = "maybe"
	if _, err := service.New(c, service.Options{}); err == nil || !strings.Contains(err.Error(), "policy.default") {
		t.Fatalf("invalid config: %v", err)
	}
	c = testConfig(t)
	c.Admin = "ftp://somewhere"
	if _, err := service.New(c, service.Options{}); err == nil || !strings.Contains(err.Error(), "admin") {
		t.Fatalf("bad admin address: %v", err)
	}
}

// Stdio serves one agent on the given reader and writer; when the input
// ends, Run returns.
func TestStdioEndsWithInput(t *testing.T) {
	c := testConfig(t)
	c.Listen = []string{"stdio"}
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ahp/handshake","params":{"protocol_version":"2.4","session_id":"s1","agent_info":{"name":"t","version":"1","framework":"test"}}}` + "\n")
	var out strings.Builder
	svc, err := service.New(c, service.Options{Stdin: in, Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	if err := svc.Run(context.Background()); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !strings.Contains(out.String(), `"id":1`) || !strings.Contains(out.String(), `"result"`) {
		t.Fatalf("stdout: %s", out.String())
	}
}
