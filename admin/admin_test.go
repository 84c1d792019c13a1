package admin

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/sqlite"
	"github.com/ahp-go/ahp/transport"
)

// recordingDecider answers through the store and remembers the principal.
type recordingDecider struct {
	st  store.Store
	who []string
}

func (d *recordingDecider) Decide(ctx context.Context, id string, approve bool, p *transport.Principal, reason string) (store.Approval, error) {
	d.who = append(d.who, p.ID)
	status := store.ApprovalDenied
	if approve {
		status = store.ApprovalApproved
	}
	return d.st.Approvals().Decide(ctx, id, store.Resolution{Status: status, By: p.ID, Reason: reason})
}

// failingStore reports not ready.
type failingStore struct{ store.Store }

func (failingStore) Ping(context.Context) error { return errors.New("disk full") }

func setup(t *testing.T) (*httptest.Server, *sqlite.DB, string, *recordingDecider) {
	t.Helper()
	dir := t.TempDir()
	db, err := sqlite.Open(context.Background(), filepath.Join(dir, "ahp.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	tok, err := LocalToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := LocalToken(dir)
	if again != tok || len(tok) != 64 {
		t.Fatalf("token not stable: %q %q", tok, again)
	}
	creds := auth.AuthenticatorFunc(func(_ context.Context, c auth.Credentials) (*transport.Principal, error) {
		switch c.Bearer {
		case "agent-key":
			return &transport.Principal{ID: "agent-1", Roles: []string{"agent"}}, nil
		case "observer-key":
			return &transport.Principal{ID: "watcher", Roles: []string{"observer"}}, nil
		case "bot-key":
			// A principal that sends events and also holds the approver role.
			return &transport.Principal{ID: "release-bot", Roles: []string{"approver"}}, nil
		}
		return nil, auth.ErrUnauthenticated
	})
	dec := &recordingDecider{st: db}
	srv := httptest.NewServer(Handler(Options{Store: db, Decider: dec, Auth: TokenAuthenticator(tok, creds), Gatherer: prometheus.NewRegistry()}))
	t.Cleanup(srv.Close)
	return srv, db, tok, dec
}

func do(t *testing.T, method, url, token, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, b.String()
}

func TestApprovalsAPI(t *testing.T) {
	srv, db, tok, dec := setup(t)
	ctx := context.Background()
	a := &store.Approval{SessionID: "s", AgentID: "a", RuleID: "r", Reason: "deploy"}
	if err := db.Approvals().Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	if code, _ := do(t, "GET", srv.URL+"/v1/approvals", "", ""); code != http.StatusUnauthorized {
		t.Fatalf("no token: %d", code)
	}
	if code, _ := do(t, "GET", srv.URL+"/v1/approvals", "wrong", ""); code != http.StatusUnauthorized {
		t.Fatalf("wrong token: %d", code)
	}
	if code, _ := do(t, "POST", srv.URL+"/v1/approvals/"+a.ID+"/approve", "agent-key", `{}`); code != http.StatusForbidden {
		t.Fatalf("agent approving: %d", code)
	}
	if code, _ := do(t, "POST", srv.URL+"/v1/approvals/"+a.ID+"/approve", "observer-key", `{}`); code != http.StatusForbidden {
		t.Fatalf("observer approving: %d", code)
	}
	if len(dec.who) != 0 {
		t.Fatalf("refused callers reached the decider: %v", dec.who)
	}
	code, body := do(t, "GET", srv.URL+"/v1/approvals?status=pending", tok, "")
	if code != 200 || !strings.Contains(body, a.ID) {
		t.Fatalf("list: %d %s", code, body)
	}
	code, body = do(t, "POST", srv.URL+"/v1/approvals/"+a.ID+"/approve", tok, `{"reason":"ok by me"}`)
	var got ApprovalJSON
	_ = json.Unmarshal([]byte(body), &got)
	if code != 200 || got.Status != "approved" || got.DecidedBy != "local-admin" || got.DecisionReason != "ok by me" {
		t.Fatalf("approve: %d %s", code, body)
	}
	if code, _ := do(t, "POST", srv.URL+"/v1/approvals/"+a.ID+"/deny", tok, `{}`); code != http.StatusConflict {
		t.Fatalf("second decision: %d", code)
	}
	if code, _ := do(t, "POST", srv.URL+"/v1/approvals/nope/approve", tok, `{}`); code != http.StatusNotFound {
		t.Fatalf("unknown id: %d", code)
	}
	if code, _ := do(t, "POST", srv.URL+"/v1/approvals/"+a.ID+"/approve", tok, `not json`); code != http.StatusBadRequest {
		t.Fatalf("bad body: %d", code)
	}
	if code, _ := do(t, "GET", srv.URL+"/v1/approvals?status=bogus", tok, ""); code != http.StatusBadRequest {
		t.Fatalf("bad status filter: %d", code)
	}
}

func TestProbes(t *testing.T) {
	srv, db, _, _ := setup(t)
	if code, _ := do(t, "GET", srv.URL+"/healthz", "", ""); code != 200 {
		t.Fatalf("healthz: %d", code)
	}
	if code, _ := do(t, "GET", srv.URL+"/readyz", "", ""); code != 200 {
		t.Fatalf("readyz: %d", code)
	}
	if code, _ := do(t, "GET", srv.URL+"/metrics", "", ""); code != 200 {
		t.Fatalf("metrics: %d", code)
	}
	// A store that cannot write turns readiness off.
	bad := httptest.NewServer(Handler(Options{Store: failingStore{db}}))
	defer bad.Close()
	code, body := do(t, "GET", bad.URL+"/readyz", "", "")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "disk full") {
		t.Fatalf("not-ready store: %d %s", code, body)
	}
	// Without an authenticator nobody may answer approvals.
	if code, _ := do(t, "GET", bad.URL+"/v1/approvals", "anything", ""); code != http.StatusUnauthorized {
		t.Fatalf("no authenticator: %d", code)
	}
}

// An approval answered with the credentials of the principal whose event
// raised it is refused, before any decider sees it, and stays pending for
// a human.
func TestSelfApprovalRefused(t *testing.T) {
	srv, db, tok, dec := setup(t)
	ctx := context.Background()
	a := &store.Approval{SessionID: "s", AgentID: "a", RequestedBy: "release-bot", RuleID: "r", Reason: "publish"}
	if err := db.Approvals().Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"approve", "deny"} {
		code, body := do(t, "POST", srv.URL+"/v1/approvals/"+a.ID+"/"+verb, "bot-key", `{"reason":"looks fine to me"}`)
		if code != http.StatusForbidden || !strings.Contains(body, "cannot answer") {
			t.Fatalf("%s by the requester: %d %s", verb, code, body)
		}
	}
	if len(dec.who) != 0 {
		t.Fatalf("self-approval reached the decider: %v", dec.who)
	}
	if got, _ := db.Approvals().Get(ctx, a.ID); got.Status != store.ApprovalPending {
		t.Fatalf("refused answer changed the approval: %+v", got)
	}
	// The listing shows who asked; a human answers.
	if code, body := do(t, "GET", srv.URL+"/v1/approvals/"+a.ID, tok, ""); code != 200 || !strings.Contains(body, `"requested_by":"release-bot"`) {
		t.Fatalf("get: %d %s", code, body)
	}
	if code, body := do(t, "POST", srv.URL+"/v1/approvals/"+a.ID+"/approve", tok, `{}`); code != 200 {
		t.Fatalf("human approving: %d %s", code, body)
	}
	// The same principal may answer approvals others raised.
	b := &store.Approval{SessionID: "s", AgentID: "a", RequestedBy: "agent-1", RuleID: "r", Reason: "publish"}
	if err := db.Approvals().Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	if code, body := do(t, "POST", srv.URL+"/v1/approvals/"+b.ID+"/approve", "bot-key", `{}`); code != 200 {
		t.Fatalf("approver answering another's approval: %d %s", code, body)
	}
}

// GET /v1/shadow/report: the same report as ahp audit shadow-report, for
// admins only, with its filters checked.
func TestShadowReportAPI(t *testing.T) {
	srv, db, tok, _ := setup(t)
	ctx := context.Background()
	rec := &store.AuditRecord{SessionID: "s1", AgentID: "a", EventType: "pre_action", Blocking: true, Outcome: "allow",
		Event:         json.RawMessage(`{"event_type":"pre_action","session_id":"s1","agent_id":"a","timestamp":"2026-11-23T00:00:00Z","depth":0,"payload":{"tool_name":"bash","arguments":{"command":"curl x"}}}`),
		Decision:      json.RawMessage(`{"decision":"allow"}`),
		Shadow:        json.RawMessage(`{"live":{"rule_id":"","decision":"allow"},"rules":[{"rule_id":"no-curl","decision":"block","reason":"no curl","changes":true}]}`),
		ShadowChanged: true}
	if err := db.Audit().Append(ctx, rec); err != nil {
		t.Fatal(err)
	}
	code, body := do(t, "GET", srv.URL+"/v1/shadow/report?since=1h", tok, "")
	if code != http.StatusOK || !strings.Contains(body, `"rule_id":"no-curl"`) || !strings.Contains(body, `"changed":1`) {
		t.Fatalf("admin: %d %s", code, body)
	}
	if code, body := do(t, "GET", srv.URL+"/v1/shadow/report", "observer-key", ""); code != http.StatusForbidden {
		t.Fatalf("observer: %d %s", code, body)
	}
	if code, body := do(t, "GET", srv.URL+"/v1/shadow/report?since=yesterday", tok, ""); code != http.StatusBadRequest {
		t.Fatalf("bad since: %d %s", code, body)
	}
}
