package observe

// Conformance of /observe with the Agent Host Protocol's wire shapes.
// The shapes checked here are facts of the spec's type definitions
// (types/common/commands.ts, types/common/actions.ts, types/common/errors.ts,
// types/channels-root, types/channels-session, types/channels-chat) and of
// its reducer fixtures (types/test-cases): which members are required,
// their JSON types, and how the reducers move a tool call and a turn. The
// test reads the wire as generic JSON, so that a member the spec requires
// and ahp leaves out, or puts under another name, fails here.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/effects"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/sqlite"
	"github.com/ahp-go/ahp/transport"
)

// specDecider decides approvals as the harness does: the decision is
// stored, then the hub is told, before Decide returns.
type specDecider struct {
	mu  sync.Mutex
	hub *Hub
	aps map[string]store.Approval
}

func (d *specDecider) Decide(_ context.Context, id string, approve bool, p *transport.Principal, reason string) (store.Approval, error) {
	d.mu.Lock()
	a, ok := d.aps[id]
	if !ok {
		d.mu.Unlock()
		return store.Approval{}, store.ErrNotFound
	}
	if a.Status != store.ApprovalPending {
		d.mu.Unlock()
		return store.Approval{}, store.ErrAlreadyDecided
	}
	a.Status, a.DecidedBy, a.DecisionReason, a.DecidedAt = store.ApprovalDenied, p.ID, reason, time.Now()
	if approve {
		a.Status = store.ApprovalApproved
	}
	d.aps[id] = a
	d.mu.Unlock()
	d.hub.ApprovalChanged(a)
	return a, nil
}

type specFixture struct {
	hub    *Hub
	dec    *specDecider
	url    string
	auditN int64
	t0     time.Time
}

func newSpecFixture(t *testing.T, o Options) *specFixture {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "ahp.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	f := &specFixture{dec: &specDecider{aps: map[string]store.Approval{}}, t0: time.Now().Add(-time.Minute)}
	o.Store, o.Decider = db, f.dec
	o.Effects = func(json.RawMessage) []effects.Effect {
		return []effects.Effect{{Kind: effects.Run, Program: "deploy", Argv: []string{"deploy", "prod"}}}
	}
	if f.hub, err = New(o); err != nil {
		t.Fatal(err)
	}
	f.dec.hub = f.hub
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.hub.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	authn := auth.AuthenticatorFunc(func(_ context.Context, c auth.Credentials) (*transport.Principal, error) {
		if c.Bearer == "approver" {
			return &transport.Principal{ID: "alice", Roles: []string{"approver"}}, nil
		}
		return nil, errors.New("unknown credential")
	})
	srv := httptest.NewServer(NewHandler(f.hub, HandlerOptions{Auth: authn}))
	t.Cleanup(srv.Close)
	f.url = "ws" + strings.TrimPrefix(srv.URL, "http") + "/observe"
	return f
}

// record tells the hub of an audit record (at a time after the last).
func (f *specFixture) record(session, typ string, blocking bool, outcome, event, decision string) {
	f.auditN++
	rec := &store.AuditRecord{ID: f.auditN, Time: f.t0.Add(time.Duration(f.auditN) * time.Millisecond), SessionID: session,
		AgentID: "coder", EventType: typ, Blocking: blocking, Outcome: outcome, Event: json.RawMessage(event), Transport: "unix"}
	if decision != "" {
		rec.Decision = json.RawMessage(decision)
	}
	f.hub.Recorded(rec)
}

// escalate raises an approval for a pre_action, as the harness does
// before the agent's answer.
func (f *specFixture) escalate(session, id, command string) {
	ev := fmt.Sprintf(`{"event_type":"pre_action","session_id":%q,"payload":{"tool_name":"bash","arguments":{"command":%q}}}`, session, command)
	a := store.Approval{ID: id, Created: f.t0.Add(time.Duration(f.auditN)*time.Millisecond + time.Microsecond), SessionID: session,
		AgentID: "coder", RuleID: "approve-deploy", Reason: "deploys need an approval", Status: store.ApprovalPending, Event: json.RawMessage(ev)}
	f.dec.mu.Lock()
	f.dec.aps[id] = a
	f.dec.mu.Unlock()
	f.hub.ApprovalChanged(a)
}

func preAction(session, command string) string {
	return fmt.Sprintf(`{"event_type":"pre_action","session_id":%q,"payload":{"tool_name":"bash","arguments":{"command":%q}}}`, session, command)
}

// specConn is a client of /observe that keeps what it reads as generic JSON.
type specConn struct {
	t      *testing.T
	c      *websocket.Conn
	in     chan map[string]any // closed when the connection ends
	nextID int
	notes  []map[string]any // notifications read while waiting for answers
}

func (f *specFixture) dial(t *testing.T, bearer string) *specConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	h := http.Header{}
	if bearer != "" {
		h.Set("Authorization", "Bearer "+bearer)
	}
	c, _, err := websocket.Dial(ctx, f.url, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(16 << 20)
	t.Cleanup(func() { _ = c.CloseNow() })
	sc := &specConn{t: t, c: c, in: make(chan map[string]any, 4096)}
	go func() {
		defer close(sc.in)
		for {
			_, b, err := c.Read(context.Background())
			if err != nil {
				return
			}
			var m map[string]any
			if json.Unmarshal(b, &m) != nil {
				m = map[string]any{"notJSON": string(b)}
			}
			sc.in <- m
		}
	}()
	return sc
}

// read returns the next message, or false when none comes within d or
// the connection ended.
func (c *specConn) read(d time.Duration) (map[string]any, bool) {
	select {
	case m, ok := <-c.in:
		if ok && m["notJSON"] != nil {
			c.t.Fatalf("not JSON: %s", m["notJSON"])
		}
		return m, ok
	case <-time.After(d):
		return nil, false
	}
}

// closed reports whether the connection ends within d.
func (c *specConn) closed(d time.Duration) bool {
	deadline := time.After(d)
	for {
		select {
		case _, ok := <-c.in:
			if !ok {
				return true
			}
		case <-deadline:
			return false
		}
	}
}

func (c *specConn) write(v any) {
	c.t.Helper()
	b, _ := json.Marshal(v)
	if err := c.c.Write(c.t.Context(), websocket.MessageText, b); err != nil {
		c.t.Fatal(err)
	}
}

// call sends a request and returns its result or error object.
func (c *specConn) call(method string, params map[string]any) (result, rpcErr map[string]any) {
	c.t.Helper()
	c.nextID++
	c.write(map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": method, "params": params})
	for {
		m, ok := c.read(5 * time.Second)
		if !ok {
			c.t.Fatalf("%s: no answer", method)
		}
		if id, ok := m["id"].(float64); ok && int(id) == c.nextID {
			if e, ok := m["error"].(map[string]any); ok {
				return nil, e
			}
			r, _ := m["result"].(map[string]any)
			return r, nil
		}
		c.notes = append(c.notes, m)
	}
}

func (c *specConn) mustCall(method string, params map[string]any) map[string]any {
	c.t.Helper()
	r, e := c.call(method, params)
	if e != nil {
		c.t.Fatalf("%s: error %v", method, e)
	}
	return r
}

// actions returns the action envelopes on ch read so far and within d
// more; other messages are kept for later calls.
func (c *specConn) actions(ch string, d time.Duration) []map[string]any {
	var out, keep []map[string]any
	take := func(m map[string]any) {
		if p := obj(m["params"]); m["method"] == "action" && p["channel"] == ch {
			out = append(out, p)
		} else {
			keep = append(keep, m)
		}
	}
	for _, m := range c.notes {
		take(m)
	}
	for {
		m, ok := c.read(d)
		if !ok {
			c.notes = keep
			return out
		}
		take(m)
	}
}

func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }
func arr(v any) []any          { a, _ := v.([]any); return a }

// need fails unless m has each member with the JSON type named:
// "string", "number", "bool", "object", "array", or "iso" (an ISO 8601
// timestamp string).
func need(t *testing.T, what string, m map[string]any, members ...string) {
	t.Helper()
	if m == nil {
		t.Fatalf("%s: not an object", what)
	}
	for _, spec := range members {
		name, typ, _ := strings.Cut(spec, ":")
		v, ok := m[name]
		if !ok {
			t.Fatalf("%s: member %q missing in %v", what, name, m)
		}
		good := false
		switch typ {
		case "string":
			_, good = v.(string)
		case "number":
			_, good = v.(float64)
		case "bool":
			_, good = v.(bool)
		case "object":
			_, good = v.(map[string]any)
		case "array":
			_, good = v.([]any)
		case "iso":
			s, _ := v.(string)
			_, err := time.Parse(time.RFC3339Nano, s)
			good = err == nil
		}
		if !good {
			t.Fatalf("%s: member %q is %T %v, want %s", what, name, v, v, typ)
		}
	}
}

// noAHPMembers fails when m carries a top-level ahp-prefixed member (the
// harness's data goes under _meta.ahp).
func noAHPMembers(t *testing.T, what string, m map[string]any) {
	t.Helper()
	for k := range m {
		if strings.HasPrefix(k, "ahp") {
			t.Fatalf("%s: top-level member %q; harness data belongs under _meta.ahp", what, k)
		}
	}
}

func initParams(versions []string, subs ...string) map[string]any {
	return map[string]any{"channel": RootChannel, "protocolVersions": versions, "clientId": "spec-client", "initialSubscriptions": subs}
}

var v1 = []string{"1.0.0"}

func TestSpecVersionNegotiation(t *testing.T) {
	for _, c := range []struct {
		offered []string
		want    string // "" when refused
	}{
		{[]string{"0.8.0", "0.7.0", "0.6.0", "0.5.2", "0.5.1"}, "0.8.0"}, // the official Go client 0.7.0's default
		{[]string{"1.0.0", "0.9.0"}, "1.0.0"},                            // the newest spec's baselines
		{[]string{"1.2.0"}, "1.2.0"},                                     // answered as offered, never a version not offered
		{[]string{"0.9.0", "1.1.0"}, "1.1.0"},                            // the highest accepted, wherever it is in the list
		{[]string{"0.9.3"}, "0.9.3"},
		{[]string{"2.0.0", "0.7.0", "0.10.0"}, ""},
		{[]string{"1.0", "1.0.0-rc.1", "01.0.0", "x"}, ""}, // malformed entries are skipped
	} {
		got, ok := negotiate(c.offered)
		if ok != (c.want != "") || got != c.want {
			t.Errorf("negotiate(%v) = %q, %v; want %q", c.offered, got, ok, c.want)
		}
	}

	f := newSpecFixture(t, Options{})
	o := f.dial(t, "approver")
	r := o.mustCall("initialize", initParams([]string{"0.8.0", "0.7.0", "0.6.0", "0.5.2", "0.5.1"}, RootChannel))
	need(t, "InitializeResult", r, "protocolVersion:string", "serverSeq:number", "snapshots:array")
	if r["protocolVersion"] != "0.8.0" {
		t.Fatalf("protocolVersion %v, want 0.8.0", r["protocolVersion"])
	}
	// Refused: UnsupportedProtocolVersion with its required data, then
	// the connection closes.
	o = f.dial(t, "approver")
	_, e := o.call("initialize", initParams([]string{"0.7.0"}))
	if e == nil || e["code"] != float64(CodeUnsupportedVersion) {
		t.Fatalf("initialize 0.7.0: %v, want -32005", e)
	}
	need(t, "UnsupportedProtocolVersionErrorData", obj(e["data"]), "supportedVersions:array")
	if got := fmt.Sprint(arr(obj(e["data"])["supportedVersions"])); got != "[1.0.0 0.9.0 0.8.0]" {
		t.Fatalf("supportedVersions %s", got)
	}
	if !o.closed(3 * time.Second) {
		t.Fatal("the connection stays open after -32005")
	}
}

func TestSpecErrors(t *testing.T) {
	f := newSpecFixture(t, Options{})
	// AuthRequired carries its required data: the protected resources.
	o := f.dial(t, "")
	_, e := o.call("initialize", initParams(v1))
	if e == nil || e["code"] != float64(CodeAuthRequired) {
		t.Fatalf("initialize without a credential: %v", e)
	}
	res := arr(obj(e["data"])["resources"])
	if len(res) != 1 {
		t.Fatalf("-32007 data: %v", e["data"])
	}
	need(t, "ProtectedResourceMetadata", obj(res[0]), "resource:string", "bearer_methods_supported:array")
	if !strings.HasSuffix(obj(res[0])["resource"].(string), "/observe") {
		t.Fatalf("resource %v", obj(res[0])["resource"])
	}

	o = f.dial(t, "approver")
	o.mustCall("initialize", initParams(v1))
	for ch, code := range map[string]int{SessionChannel("nobody"): CodeSessionNotFound, ChatChannel("nobody"): CodeNotFound, "ahp-terminal:/x": CodeNotFound} {
		if _, e := o.call("subscribe", map[string]any{"channel": ch}); e == nil || e["code"] != float64(code) {
			t.Errorf("subscribe %s: %v, want %d", ch, e, code)
		}
	}
	// An approval answered twice: Conflict, not a code of another meaning.
	f.record("s", "handshake", false, "", `{}`, "")
	f.escalate("s", "a1", "deploy prod")
	o.mustCall("ahp/answerApproval", map[string]any{"channel": RootChannel, "approvalId": "a1", "approve": true, "reason": "ok"})
	if _, e := o.call("ahp/answerApproval", map[string]any{"channel": RootChannel, "approvalId": "a1", "approve": false}); e == nil || e["code"] != float64(CodeConflict) {
		t.Fatalf("second answer: %v, want -32011", e)
	}
	if _, e := o.call("ahp/answerApproval", map[string]any{"channel": RootChannel, "approvalId": "zz", "approve": true}); e == nil || e["code"] != float64(CodeNotFound) {
		t.Fatalf("unknown approval: %v, want -32008", e)
	}
}

// checkSummary checks a SessionSummary.
func checkSummary(t *testing.T, what string, s map[string]any) {
	t.Helper()
	need(t, what, s, "resource:string", "provider:string", "title:string", "status:number", "createdAt:iso", "modifiedAt:iso", "_meta:object")
	noAHPMembers(t, what, s)
	need(t, what+"._meta", obj(s["_meta"]), "ahp:object")
}

func TestSpecRootCatalogueAndActiveSessions(t *testing.T) {
	f := newSpecFixture(t, Options{})
	o := f.dial(t, "approver")
	r := o.mustCall("initialize", initParams(v1, RootChannel))
	need(t, "InitializeResult", r, "protocolVersion:string", "serverSeq:number", "snapshots:array", "serverInfo:object", "_meta:object")
	noAHPMembers(t, "serverInfo", obj(r["serverInfo"]))
	need(t, "InitializeResult._meta.ahp", obj(obj(r["_meta"])["ahp"]), "principal:object", "canApprove:bool")
	snap := obj(arr(r["snapshots"])[0])
	need(t, "Snapshot", snap, "resource:string", "state:object", "fromSeq:number")
	root := obj(snap["state"])
	need(t, "RootState", root, "agents:array", "activeSessions:number", "_meta:object")
	noAHPMembers(t, "RootState", root)
	need(t, "RootState._meta.ahp", obj(obj(root["_meta"])["ahp"]), "harness:object", "policy:object", "approvals:array", "sessions:array", "stats:object")

	// A new session: root/sessionAdded with a SessionSummary, then
	// root/activeSessionsChanged keeping activeSessions true.
	f.record("s1", "handshake", false, "", `{}`, "")
	f.record("s2", "handshake", false, "", `{}`, "")
	time.Sleep(400 * time.Millisecond) // a summary flush
	f.record("s1", "session_end", false, "", `{}`, "")
	var added int
	var active []float64
	var changed bool
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) && !(added == 2 && slices.Equal(active, []float64{2, 1}) && changed) {
		m, ok := o.read(500 * time.Millisecond)
		if !ok {
			continue
		}
		p := obj(m["params"])
		switch m["method"] {
		case "root/sessionAdded":
			need(t, "SessionAddedParams", p, "channel:string", "summary:object")
			checkSummary(t, "root/sessionAdded summary", obj(p["summary"]))
			added++
		case "root/sessionSummaryChanged":
			need(t, "SessionSummaryChangedParams", p, "channel:string", "session:string", "changes:object")
			checkSummary(t, "changes", obj(p["changes"]))
			changed = true
		case "action":
			a := obj(p["action"])
			if a["type"] == "root/activeSessionsChanged" {
				need(t, "RootActiveSessionsChangedAction", a, "activeSessions:number")
				active = append(active, a["activeSessions"].(float64))
			}
		}
	}
	if added != 2 || !slices.Equal(active, []float64{2, 1}) || !changed {
		t.Fatalf("sessionAdded %d, activeSessions %v, summary changed %v; want 2, [2 1], true", added, active, changed)
	}

	// listSessions answers items, paged with nextCursor.
	r = o.mustCall("listSessions", map[string]any{"channel": RootChannel, "limit": 1})
	need(t, "ListSessionsResult", r, "items:array", "nextCursor:string")
	checkSummary(t, "listSessions item", obj(arr(r["items"])[0]))
	r = o.mustCall("listSessions", map[string]any{"channel": RootChannel, "limit": 1, "cursor": r["nextCursor"]})
	if len(arr(r["items"])) != 1 || r["nextCursor"] != nil {
		t.Fatalf("last page: %v", r)
	}
	for _, it := range arr(r["items"]) {
		if st := obj(it)["status"].(float64); st != statusIdle && st != statusInProgress && st != statusInputNeeded {
			t.Fatalf("status %v is not a SessionStatus", st)
		}
	}
}

// chatModel applies chat actions as the spec's reducers do (the facts of
// types/test-cases/reducers: 019, 020, 021, 099, 111, 161), so that the
// test can check that a snapshot plus the actions after it equals a later
// snapshot.
type chatModel struct {
	Turns  []map[string]any
	Active map[string]any
}

func newChatModel(state map[string]any) *chatModel {
	m := &chatModel{}
	for _, t := range arr(state["turns"]) {
		m.Turns = append(m.Turns, obj(t))
	}
	m.Active = obj(state["activeTurn"])
	return m
}

func (m *chatModel) call(id string) map[string]any {
	if m.Active == nil {
		return nil
	}
	for _, p := range arr(m.Active["responseParts"]) {
		if tc := obj(obj(p)["toolCall"]); tc["toolCallId"] == id {
			return tc
		}
	}
	return nil
}

func (m *chatModel) apply(t *testing.T, a map[string]any) {
	t.Helper()
	typ, _ := a["type"].(string)
	if typ != "chat/turnStarted" && m.Active != nil && a["turnId"] != nil && a["turnId"] != m.Active["id"] {
		return // a wrong turn id is a no-op
	}
	switch typ {
	case "chat/turnStarted":
		need(t, typ, a, "turnId:string", "startedAt:iso", "message:object")
		need(t, "Message", obj(a["message"]), "text:string", "origin:object")
		m.Active = map[string]any{"id": a["turnId"], "message": a["message"], "responseParts": []any{}}
	case "chat/toolCallStart":
		need(t, typ, a, "turnId:string", "toolCallId:string", "toolName:string", "displayName:string")
		tc := map[string]any{"status": "streaming", "toolCallId": a["toolCallId"], "toolName": a["toolName"]}
		m.Active["responseParts"] = append(arr(m.Active["responseParts"]), map[string]any{"kind": "toolCall", "toolCall": tc})
	case "chat/toolCallReady":
		need(t, typ, a, "turnId:string", "toolCallId:string", "invocationMessage:string")
		tc := m.call(a["toolCallId"].(string))
		if c, ok := a["confirmed"]; ok {
			tc["status"], tc["confirmed"] = "running", c
		} else {
			tc["status"] = "pending-confirmation"
		}
	case "chat/toolCallConfirmed":
		need(t, typ, a, "turnId:string", "toolCallId:string", "approved:bool")
		tc := m.call(a["toolCallId"].(string))
		if tc == nil || tc["status"] != "pending-confirmation" {
			return
		}
		if a["approved"] == true {
			need(t, typ+" (approved)", a, "confirmed:string")
			tc["status"], tc["confirmed"] = "running", a["confirmed"]
		} else {
			need(t, typ+" (denied)", a, "reason:string")
			tc["status"], tc["reason"] = "cancelled", a["reason"]
		}
	case "chat/toolCallComplete":
		need(t, typ, a, "turnId:string", "toolCallId:string", "result:object")
		need(t, "ToolCallResult", obj(a["result"]), "success:bool", "pastTenseMessage:string")
		if tc := m.call(a["toolCallId"].(string)); tc != nil && tc["status"] == "running" {
			tc["status"] = "completed"
		}
	case "chat/turnComplete":
		need(t, typ, a, "turnId:string", "duration:number")
		for _, p := range arr(m.Active["responseParts"]) {
			if tc := obj(obj(p)["toolCall"]); tc["status"] != "completed" && tc["status"] != "cancelled" {
				tc["status"], tc["reason"] = "cancelled", "skipped"
			}
		}
		m.Active["state"] = "complete"
		m.Turns = append(m.Turns, m.Active)
		m.Active = nil
	default:
		t.Fatalf("unexpected action %s on a chat channel", typ)
	}
}

// shape reduces a chat to turn ids and tool call ids with their status.
func (m *chatModel) shape() string {
	var b strings.Builder
	one := func(turn map[string]any) {
		fmt.Fprintf(&b, "[%v %v:", turn["id"], turn["state"])
		for _, p := range arr(turn["responseParts"]) {
			tc := obj(obj(p)["toolCall"])
			fmt.Fprintf(&b, " %v=%v", tc["toolCallId"], tc["status"])
		}
		b.WriteString("]")
	}
	for _, turn := range m.Turns {
		one(turn)
	}
	if m.Active != nil {
		one(m.Active)
	}
	return b.String()
}

func TestSpecSessionChatAndDispatch(t *testing.T) {
	f := newSpecFixture(t, Options{})
	const sid = "build/42" // escaped in the URIs
	sch, cch := SessionChannel(sid), ChatChannel(sid)
	if sch != "ahp-session:/build%2F42" || cch != "ahp-chat:/build%2F42" {
		t.Fatalf("channels %s %s", sch, cch)
	}
	f.record(sid, "handshake", false, "", `{}`, "")
	f.record(sid, "pre_prompt", true, "allow", fmt.Sprintf(`{"event_type":"pre_prompt","session_id":%q,"payload":{"prompt":"tidy up"}}`, sid), "")
	f.record(sid, "pre_action", true, "allow", preAction(sid, "ls"), "")

	o := f.dial(t, "approver")
	r := o.mustCall("initialize", initParams(v1, sch, cch))
	snaps := arr(r["snapshots"])
	if len(snaps) != 2 {
		t.Fatalf("%d snapshots", len(snaps))
	}
	st := obj(obj(snaps[0])["state"])
	// SessionState: SessionMetadata members, lifecycle, activeClients,
	// chats (ChatSummary), inputNeeded.
	need(t, "SessionState", st, "provider:string", "title:string", "status:number", "lifecycle:string", "activeClients:array",
		"chats:array", "inputNeeded:array", "_meta:object")
	noAHPMembers(t, "SessionState", st)
	if st["lifecycle"] != "ready" || st["status"] != float64(statusInProgress) {
		t.Fatalf("lifecycle %v status %v", st["lifecycle"], st["status"])
	}
	need(t, "ChatSummary", obj(arr(st["chats"])[0]), "resource:string", "title:string", "status:number", "modifiedAt:iso")
	if obj(arr(st["chats"])[0])["resource"] != cch {
		t.Fatalf("chat %v", arr(st["chats"])[0])
	}
	need(t, "SessionState._meta.ahp", obj(obj(st["_meta"])["ahp"]), "timeline:array", "runs:array", "counts:object")
	chatState := obj(obj(snaps[1])["state"])
	need(t, "ChatState", chatState, "resource:string", "title:string", "status:number", "modifiedAt:iso", "turns:array")
	model := newChatModel(chatState)
	if got := model.shape(); !strings.Contains(got, "ev-3=running") || model.Active == nil {
		t.Fatalf("chat snapshot %s", got)
	}
	need(t, "ActiveTurn", model.Active, "id:string", "startedAt:iso", "message:object", "responseParts:array")
	if obj(model.Active["message"])["text"] != "tidy up" {
		t.Fatalf("the prompt opens the turn: %v", model.Active["message"])
	}

	// Live: a completed call, a blocked one, an escalation answered by a
	// dispatch, a rejected dispatch, the agent's response.
	f.record(sid, "post_action", false, "", fmt.Sprintf(`{"event_type":"post_action","session_id":%q,"payload":{"tool_name":"bash"}}`, sid), "")
	f.record(sid, "pre_action", true, "block", preAction(sid, "rm -rf /"), `{"decision":"block","reason":"no"}`)
	f.escalate(sid, "a1", "deploy prod")
	sess := o.actions(sch, 300*time.Millisecond)
	var req map[string]any
	for _, env := range sess {
		need(t, "ActionEnvelope", env, "channel:string", "action:object", "serverSeq:number")
		if a := obj(env["action"]); a["type"] == "session/inputNeededSet" {
			req = obj(a["request"])
		}
	}
	if req == nil {
		t.Fatal("no session/inputNeededSet")
	}
	need(t, "SessionToolConfirmationRequest", req, "id:string", "kind:string", "chat:string", "turnId:string", "toolCall:object")
	tc := obj(req["toolCall"])
	need(t, "ToolCallPendingConfirmationState", tc, "status:string", "toolCallId:string", "toolName:string", "displayName:string",
		"invocationMessage:string", "intention:string", "riskAssessment:object", "confirmationTitle:string")
	risk := obj(tc["riskAssessment"])
	need(t, "ToolCallRiskAssessment", risk, "kind:string", "status:string", "reason:string", "safety:number")
	if req["kind"] != "toolConfirmation" || req["chat"] != cch || tc["status"] != "pending-confirmation" ||
		!strings.Contains(risk["reason"].(string), "approve-deploy") || !strings.Contains(tc["intention"].(string), "run deploy prod") {
		t.Fatalf("input request %v", req)
	}
	if s := risk["safety"].(float64); s < 0 || s > 1 {
		t.Fatalf("safety %v", s)
	}

	o.write(map[string]any{"jsonrpc": "2.0", "method": "dispatchAction", "params": map[string]any{"channel": cch, "clientSeq": 7,
		"action": map[string]any{"type": "chat/toolCallConfirmed", "turnId": req["turnId"], "toolCallId": req["id"], "approved": true, "confirmed": "user-action"}}})
	time.Sleep(200 * time.Millisecond)
	f.record(sid, "pre_action", true, "allow", preAction(sid, "deploy prod"), `{"decision":"allow","metadata":{"approval_id":"a1"}}`)
	// Dispatched again: the call no longer waits.
	o.write(map[string]any{"jsonrpc": "2.0", "method": "dispatchAction", "params": map[string]any{"channel": cch, "clientSeq": 8,
		"action": map[string]any{"type": "chat/toolCallConfirmed", "turnId": req["turnId"], "toolCallId": req["id"], "approved": false, "reason": "denied"}}})
	// On a channel that does not exist: ignored, no echo.
	o.write(map[string]any{"jsonrpc": "2.0", "method": "dispatchAction", "params": map[string]any{"channel": ChatChannel("nobody"), "clientSeq": 9,
		"action": map[string]any{"type": "chat/toolCallConfirmed", "turnId": "t", "toolCallId": "ap-x", "approved": true, "confirmed": "user-action"}}})
	f.record(sid, "post_response", false, "", `{}`, "")

	chatActs := o.actions(cch, 500*time.Millisecond)
	var echoed, rejected bool
	seq := 0.0
	for _, env := range chatActs {
		need(t, "ActionEnvelope", env, "channel:string", "action:object", "serverSeq:number")
		a := obj(env["action"])
		if env["rejectionReason"] != nil {
			need(t, "rejected ActionEnvelope", env, "rejectionReason:string", "origin:object")
			if obj(env["origin"])["clientSeq"] != float64(8) || obj(env["origin"])["clientId"] != "spec-client" || a["reason"] != "denied" {
				t.Fatalf("rejection %v", env)
			}
			rejected = true
			continue // a rejected action changes nothing
		}
		if env["serverSeq"].(float64) <= seq {
			t.Fatalf("serverSeq %v after %v", env["serverSeq"], seq)
		}
		seq = env["serverSeq"].(float64)
		if org := obj(env["origin"]); org != nil {
			need(t, "ActionOrigin", org, "clientId:string", "clientSeq:number")
			if a["type"] != "chat/toolCallConfirmed" || org["clientSeq"] != float64(7) || a["approved"] != true {
				t.Fatalf("echo %v", env)
			}
			echoed = true
		}
		model.apply(t, a)
	}
	if !echoed || !rejected {
		t.Fatalf("dispatch echoed %v, rejected %v", echoed, rejected)
	}
	for _, env := range chatActs {
		if obj(env["origin"])["clientSeq"] == float64(9) {
			t.Fatalf("a dispatch on a missing channel was echoed: %v", env)
		}
	}
	// One turn, opened by the prompt and completed by the response; ap-a1
	// ran (approved) and the turn ended before its post_action, so the
	// reducers cancel (skip) it.
	if got := model.shape(); !strings.HasPrefix(got, "[turn-") || !strings.HasSuffix(got, " complete: ev-3=completed ev-5=cancelled ap-a1=cancelled]") ||
		strings.Count(got, "[") != 1 {
		t.Fatalf("reduced chat %s", got)
	}
	// The snapshot now equals what the reducers built.
	r2 := o.mustCall("subscribe", map[string]any{"channel": cch})
	later := newChatModel(obj(obj(r2["snapshot"])["state"]))
	if later.shape() != model.shape() {
		t.Fatalf("snapshot %s, reduced %s", later.shape(), model.shape())
	}
}

func TestSpecReconnect(t *testing.T) {
	f := newSpecFixture(t, Options{})
	f.record("s", "handshake", false, "", `{}`, "")
	o := f.dial(t, "approver")
	r := o.mustCall("initialize", initParams(v1, SessionChannel("s"), ChatChannel("s")))
	last := r["serverSeq"].(float64)
	_ = o.c.CloseNow()
	f.record("s", "pre_action", true, "allow", preAction("s", "ls"), "")

	// Replay: every missed action of the channels, in serverSeq order, and
	// the channels that no longer exist.
	o = f.dial(t, "approver")
	r = o.mustCall("reconnect", map[string]any{"channel": RootChannel, "clientId": "spec-client", "lastSeenServerSeq": last,
		"subscriptions": []string{SessionChannel("s"), ChatChannel("s"), SessionChannel("gone")}})
	need(t, "ReconnectReplayResult", r, "type:string", "actions:array", "missing:array")
	if r["type"] != "replay" || fmt.Sprint(r["missing"]) != "["+SessionChannel("gone")+"]" {
		t.Fatalf("reconnect %v", r)
	}
	var types []string
	prev := last
	for _, env := range arr(r["actions"]) {
		e := obj(env)
		need(t, "ActionEnvelope", e, "channel:string", "action:object", "serverSeq:number")
		if e["serverSeq"].(float64) <= prev {
			t.Fatalf("replay out of order: %v", r["actions"])
		}
		prev = e["serverSeq"].(float64)
		types = append(types, obj(e["action"])["type"].(string))
	}
	if got := strings.Join(types, " "); got != "ahp/recorded chat/turnStarted chat/toolCallStart chat/toolCallReady" {
		t.Fatalf("replayed %s", got)
	}
	// Resubscribed: the next action arrives live.
	f.record("s", "session_end", false, "", `{}`, "")
	if acts := o.actions(ChatChannel("s"), 300*time.Millisecond); len(acts) != 1 || obj(acts[0]["action"])["type"] != "chat/turnComplete" {
		t.Fatalf("after reconnect: %v", acts)
	}

	// A serverSeq this harness never gave: snapshots.
	o = f.dial(t, "approver")
	r = o.mustCall("reconnect", map[string]any{"channel": RootChannel, "clientId": "spec-client", "lastSeenServerSeq": prev * 2,
		"subscriptions": []string{SessionChannel("s"), RootChannel}})
	need(t, "ReconnectSnapshotResult", r, "type:string", "snapshots:array")
	if r["type"] != "snapshot" || len(arr(r["snapshots"])) != 2 {
		t.Fatalf("reconnect %v", r)
	}
	// The spec's params only.
	if _, e := o.call("reconnect", map[string]any{"channel": RootChannel, "clientId": "x", "subscriptions": []string{}}); e == nil || e["code"] != float64(CodeInvalidParams) {
		t.Fatalf("reconnect without lastSeenServerSeq: %v", e)
	}
}
