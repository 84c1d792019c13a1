package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-go/ahp/admin"
	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/notify"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/service"
	"github.com/ahp-go/ahp/store"
)

// hook is a webhook receiver on loopback that keeps every body.
type hook struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
	paths  []string // the request path of each body
}

func newHook(t *testing.T) *hook {
	h := &hook{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.bodies = append(h.bodies, string(b))
		h.paths = append(h.paths, r.URL.Path)
		h.mu.Unlock()
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hook) all() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.bodies...)
}

// await waits for a body that contains every one of subs.
func (h *hook) await(t *testing.T, what string, subs ...string) string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		for _, b := range h.all() {
			ok := true
			for _, s := range subs {
				ok = ok && strings.Contains(b, s)
			}
			if ok {
				return b
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s: no body with %q; got:\n%s", what, subs, strings.Join(h.all(), "\n"))
	return ""
}

// deployPolicy escalates the deploy tool to a human (rule team.deploy).
const deployPolicy = `rules:
  - id: team.deploy
    priority: 100
    target: {event_types: [pre_action], tools: [deploy]}
    condition: 'true'
    outcome: {decision: escalate, reason: "a human decides deploys", await_approval: {timeout: 1m, fallback: block}}
`

// adminPost calls the admin API with the local admin token.
func adminPost(t *testing.T, base, dataDir, path, reason string) {
	t.Helper()
	tok, err := admin.LocalToken(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]string{"reason": reason})
	req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
	}
}

// pendingID waits for the one pending approval of session.
func pendingID(t *testing.T, st store.Store, session string) string {
	t.Helper()
	var id string
	waitFor(t, "a pending approval of "+session, func() bool {
		p, err := st.Approvals().List(context.Background(), store.ApprovalFilter{Status: store.ApprovalPending, SessionID: session})
		if err == nil && len(p) == 1 {
			id = p[0].ID
		}
		return id != ""
	})
	return id
}

// TestNotificationsEndToEnd: a harness configured with a JSON sink (URL
// from the environment), a Slack sink (URL from a file) and a sink for one
// rule tells them of a pending approval, with the link to its card, the
// rule, the agent and the action redacted as stored (the token in the
// command never leaves), and of its outcome after an approve and a deny
// through the admin API, by whom and why.
func TestNotificationsEndToEnd(t *testing.T) {
	jsonHook, slackHook, deployHook := newHook(t), newHook(t), newHook(t)
	c := testConfig(t)
	dir := filepath.Dir(c.DataDir)
	c.Admin = "http://127.0.0.1:0"
	// The command's token must reach the approval, redacted; approvals (off
	// by default) holds the terraform apply.
	c.Policy.Packs = map[string]bool{"secrets": false, "approvals": true}
	pol := filepath.Join(dir, "deploy.yaml")
	writeFile(t, pol, deployPolicy)
	c.Policy.Files = []string{pol}
	urlFile := filepath.Join(dir, "slack-url")
	writeFile(t, urlFile, slackHook.URL+"/services/T0/B0/secret\n")
	t.Setenv("AHP_TEST_NOTIFY_URL", jsonHook.URL+"/any")
	c.Notifications.DashboardURL = "https://ahp.example.com"
	c.Notifications.Sinks = []config.NotifySink{
		{Name: "generic", Format: "json", URLEnv: "AHP_TEST_NOTIFY_URL"},
		{Name: "slack", Format: "slack", URLFile: urlFile},
		{Name: "deploys", Format: "json", URL: deployHook.URL, Rules: []string{"team.deploy"}},
	}
	r := start(t, c, service.Options{})
	agent := dial(t, r.addrs[c.Listen[0]], client.Options{SessionID: "s-infra", AgentID: "agent-7", Timeout: time.Minute})

	const token = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
	got := make(chan protocol.Decision, 1)
	go func() {
		d, err := agent.Event(context.Background(), protocol.EventPreAction, bash("GITHUB_TOKEN="+token+" terraform -chdir=prod apply"))
		if err != nil {
			d = protocol.Block(err.Error())
		}
		got <- d
	}()
	id := pendingID(t, r.svc.Store(), "s-infra")
	body := jsonHook.await(t, "pending (json)", `"kind":"pending"`, id)
	var m notify.Message
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	if m.Link != "https://ahp.example.com/#approval="+id || m.RuleID != "approvals.infrastructure_change" || m.Pack != "approvals" ||
		m.AgentID != "agent-7" || m.SessionID != "s-infra" || m.Deadline == nil || m.Fallback != "block" ||
		!strings.Contains(m.Action.Summary, "terraform -chdir=prod apply") || !strings.Contains(m.Action.Summary, "[REDACTED:") {
		t.Fatalf("pending body: %s", body)
	}
	stored, err := r.svc.Store().Approvals().Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Action.Event) != string(stored.Event) {
		t.Fatalf("the body's event is not the stored one:\n%s\n%s", m.Action.Event, stored.Event)
	}
	slackHook.await(t, "pending (slack)", "Approval waiting", "https://ahp.example.com/#approval="+id, "terraform -chdir=prod apply")

	adminPost(t, r.addrs["admin"], c.DataDir, "/v1/approvals/"+id+"/approve", "change ticket CHG-1")
	if d := <-got; d.Kind != protocol.DecisionAllow {
		t.Fatalf("agent got %+v", d)
	}
	jsonHook.await(t, "outcome (json)", `"kind":"outcome"`, `"outcome":"approved"`, id, `"decision_reason":"change ticket CHG-1"`, `"decided_by":"`)
	slackHook.await(t, "outcome (slack)", "Approval approved", "change ticket CHG-1")

	// A deploy: the rule's sink gets it too; a deny is told.
	go func() {
		d, err := agent.Event(context.Background(), protocol.EventPreAction, map[string]any{"tool_name": "deploy", "arguments": map[string]any{"target": "prod"}})
		if err != nil {
			d = protocol.Block(err.Error())
		}
		got <- d
	}()
	id2 := pendingID(t, r.svc.Store(), "s-infra")
	deployHook.await(t, "pending (rule sink)", `"kind":"pending"`, id2, `"rule_id":"team.deploy"`)
	adminPost(t, r.addrs["admin"], c.DataDir, "/v1/approvals/"+id2+"/deny", "not today")
	if d := <-got; d.Kind != protocol.DecisionBlock {
		t.Fatalf("agent got %+v", d)
	}
	deployHook.await(t, "outcome (rule sink)", `"outcome":"denied"`, id2, "not today")
	jsonHook.await(t, "deny (json)", `"outcome":"denied"`, id2)
	for _, b := range deployHook.all() {
		if strings.Contains(b, id) {
			t.Fatalf("the team.deploy sink got the terraform approval: %s", b)
		}
	}
	for _, b := range append(append(jsonHook.all(), slackHook.all()...), deployHook.all()...) {
		if strings.Contains(b, token) || strings.Contains(b, "ghp_0123") {
			t.Fatalf("the secret left in a notification: %s", b)
		}
	}
	if n := len(jsonHook.all()); n != 4 {
		t.Fatalf("generic sink got %d bodies, want 4 (two pending, two outcomes)", n)
	}
	if strings.Contains(r.logs.String(), "/services/T0/B0/secret") {
		t.Fatalf("the Slack URL was logged:\n%s", r.logs)
	}
}

// TestNotificationsHangingReceiver: with every receiver hanging, decisions
// (held ones that time out, and plain ones) take no longer than without
// notifications, drops are counted on /metrics, and Close ends in its
// grace.
func TestNotificationsHangingReceiver(t *testing.T) {
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hang.Close()
	defer close(release)
	c := testConfig(t)
	c.Admin = "http://127.0.0.1:0"
	pol := filepath.Join(filepath.Dir(c.DataDir), "deploy.yaml")
	writeFile(t, pol, strings.Replace(deployPolicy, "timeout: 1m", "timeout: 50ms", 1))
	c.Policy.Files = []string{pol}
	c.Notifications.QueueSize = 2
	c.Notifications.Timeout = config.Duration(time.Minute)
	c.Notifications.Sinks = []config.NotifySink{{Name: "hang", Format: "slack", URL: hang.URL + "/hook"}}
	r := start(t, c, service.Options{})
	agent := dial(t, r.addrs[c.Listen[0]], client.Options{SessionID: "s-hang", Timeout: time.Minute})

	// The same harness without notifications, alternated with it, for
	// comparison.
	co := testConfig(t)
	writeFile(t, filepath.Join(filepath.Dir(co.DataDir), "deploy.yaml"), strings.Replace(deployPolicy, "timeout: 1m", "timeout: 50ms", 1))
	co.Policy.Files = []string{filepath.Join(filepath.Dir(co.DataDir), "deploy.yaml")}
	ro := start(t, co, service.Options{})
	plain := dial(t, ro.addrs[co.Listen[0]], client.Options{SessionID: "s-plain", Timeout: time.Minute})

	const n = 20
	held := func(c *client.Client) time.Duration {
		t0 := time.Now()
		d, err := c.Event(context.Background(), protocol.EventPreAction, map[string]any{"tool_name": "deploy", "arguments": map[string]any{}})
		if err != nil || d.Kind != protocol.DecisionBlock {
			t.Fatalf("%+v %v", d, err)
		}
		return time.Since(t0)
	}
	var on, off []time.Duration
	for range n {
		off = append(off, held(plain))
		on = append(on, held(agent))
	}
	slices.Sort(on)
	slices.Sort(off)
	t.Logf("%d held actions timing out after 50ms each: median %v, worst %v with the receiver hanging; median %v, worst %v without notifications",
		n, on[n/2], on[n-1], off[n/2], off[n-1])
	if on[n-1] > time.Second {
		t.Fatalf("a decision waited for the receiver: %v", on[n-1])
	}
	resp, err := http.Get(r.addrs["admin"] + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(metrics), `ahp_approval_webhooks_dropped_total{sink="`) ||
		!strings.Contains(string(metrics), `ahp_approval_webhooks_sent_total{sink="hang"} 0`) {
		t.Fatalf("metrics:\n%s", grepLines(string(metrics), "webhooks"))
	}
	dropped := 0.0
	for _, l := range strings.Split(grepLines(string(metrics), "ahp_approval_webhooks_dropped_total"), "\n") {
		var v float64
		if i := strings.LastIndexByte(l, ' '); i > 0 {
			_, _ = fmt.Sscan(l[i+1:], &v)
		}
		dropped += v
	}
	// 2n notices; at most one in flight and two in each queue.
	if dropped < 2*n-5 {
		t.Fatalf("%v drops counted, want at least %d:\n%s", dropped, 2*n-5, grepLines(string(metrics), "webhooks"))
	}
	t0 := time.Now()
	if err := r.svc.Close(); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(t0); el > 8*time.Second {
		t.Fatalf("Close took %v with a hanging receiver", el)
	}
	if !strings.Contains(r.logs.String(), "approval notifications still queued at shutdown were dropped") {
		t.Fatalf("no shutdown line:\n%s", r.logs)
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestNotificationsBadConfig: a sink whose URL variable or file is
// missing stops the start with its name, never a URL.
func TestNotificationsBadConfig(t *testing.T) {
	c := testConfig(t)
	c.Notifications.Sinks = []config.NotifySink{{Name: "ops", Format: "json", URLEnv: "AHP_TEST_UNSET_VARIABLE"}}
	_ = os.Unsetenv("AHP_TEST_UNSET_VARIABLE")
	if _, err := service.New(c, service.Options{}); err == nil || !strings.Contains(err.Error(), "AHP_TEST_UNSET_VARIABLE") {
		t.Fatalf("New: %v", err)
	}
	c = testConfig(t)
	c.Notifications.Sinks = []config.NotifySink{{Name: "ops", Format: "json", URLFile: "/nonexistent/url"}}
	if _, err := service.New(c, service.Options{}); err == nil || !strings.Contains(err.Error(), "sink ops: url_file") {
		t.Fatalf("New: %v", err)
	}
}
