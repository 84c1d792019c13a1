package observe

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/runs"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/sqlite"
	"github.com/ahp-go/ahp/transport"
)

// countingStore counts the hub's reads of run records.
type countingStore struct {
	store.Store
	reads *atomic.Int64
}

func (c countingStore) Runs() store.Runs { return countingRuns{c.Store.Runs(), c.reads} }

type countingRuns struct {
	store.Runs
	reads *atomic.Int64
}

func (c countingRuns) Get(ctx context.Context, id string) (store.RunRecord, error) {
	c.reads.Add(1)
	return c.Runs.Get(ctx, id)
}

func (c countingRuns) List(ctx context.Context, f store.RunFilter) ([]store.RunRecord, error) {
	c.reads.Add(1)
	return c.Runs.List(ctx, f)
}

// connEndFixture is a hub with its run worker, served over HTTP, on a
// store whose runs a real runs.Reducer keeps, as in ahp serve.
type connEndFixture struct {
	hub    *Hub
	reds   *runs.Reducer
	url    string
	reads  atomic.Int64
	auditN int64
}

func newConnEndFixture(t *testing.T) *connEndFixture {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "ahp.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	f := &connEndFixture{}
	f.hub, err = New(Options{Store: countingStore{db, &f.reads}})
	if err != nil {
		t.Fatal(err)
	}
	if f.reds, err = runs.New(db.Runs(), runs.Options{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.hub.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	watcher := auth.AuthenticatorFunc(func(context.Context, auth.Credentials) (*transport.Principal, error) {
		return &transport.Principal{ID: "watcher", Roles: []string{"observer"}}, nil
	})
	srv := httptest.NewServer(NewHandler(f.hub, HandlerOptions{Auth: watcher}))
	t.Cleanup(srv.Close)
	f.url = "ws" + strings.TrimPrefix(srv.URL, "http") + "/observe"
	return f
}

// runEvent has the reducer take a run_lifecycle event, then tells the hub
// of its audit record, as the harness does.
func (f *connEndFixture) runEvent(t *testing.T, session, run, status string) {
	t.Helper()
	payload := fmt.Sprintf(`{"run_id":%q,"session_id":%q,"status":%q,"updated_at":"2026-11-21T10:00:0%dZ"}`, run, session, status, f.auditN%10)
	ev := protocol.Event{EventType: protocol.EventRunLifecycle, SessionID: session, AgentID: "agent-1", Payload: json.RawMessage(payload)}
	if err := f.reds.Observe(t.Context(), &ev); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(ev)
	f.record(session, "run_lifecycle", raw, "")
}

// connectionEnded marks the session's open runs and then tells the hub of
// the connection_ended audit record: the harness's order (ConnEnded).
func (f *connEndFixture) connectionEnded(t *testing.T, session, how, errText string) {
	t.Helper()
	if _, err := f.reds.ConnectionEnded(t.Context(), session, runs.ConnectionEnd{How: how, Error: errText, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	detail, _ := json.Marshal(map[string]any{"session_id": session, "connection": how, "transport": "unix"})
	if errText != "" {
		errText = "connection lost: " + errText
	}
	f.record(session, "connection_ended", detail, errText)
}

// waitRun waits until the hub holds a run of the session.
func (f *connEndFixture) waitRun(t *testing.T, session, run string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		f.hub.mu.Lock()
		s := f.hub.sessions[session]
		held := s != nil && s.runs[run] != nil
		f.hub.mu.Unlock()
		if held {
			return
		}
	}
	t.Fatalf("the hub never published run %s of session %s", run, session)
}

func (f *connEndFixture) record(session, typ string, event json.RawMessage, errText string) {
	f.auditN++
	f.hub.Recorded(&store.AuditRecord{ID: f.auditN, Time: time.Now(), SessionID: session, AgentID: "agent-1",
		EventType: typ, Event: event, Transport: "unix", Error: errText})
}

// wsObserver is a connected observer-protocol client.
type wsObserver struct {
	t      *testing.T
	c      *websocket.Conn
	nextID int
}

func (f *connEndFixture) dial(t *testing.T) *wsObserver {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, f.url, &websocket.DialOptions{HTTPHeader: http.Header{"X-API-Key": {"k"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.CloseNow() })
	return &wsObserver{t: t, c: c}
}

// wsMsg is a message from the hub: a response or a notification.
type wsMsg struct {
	ID     *int            `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
	Params struct {
		Channel   string `json:"channel"`
		ServerSeq uint64 `json:"serverSeq"`
		Action    struct {
			Type  string          `json:"type"`
			Entry Entry           `json:"entry"`
			Run   json.RawMessage `json:"run"`
		} `json:"action"`
	} `json:"params"`
}

func (o *wsObserver) read() wsMsg {
	o.t.Helper()
	ctx, cancel := context.WithTimeout(o.t.Context(), 5*time.Second)
	defer cancel()
	_, b, err := o.c.Read(ctx)
	if err != nil {
		o.t.Fatalf("reading from the hub: %v", err)
	}
	var m wsMsg
	if err := json.Unmarshal(b, &m); err != nil {
		o.t.Fatalf("%s: %v", b, err)
	}
	return m
}

// call sends a request and returns its result, collecting the actions
// that arrive before it.
func (o *wsObserver) call(method string, params map[string]any) (json.RawMessage, []wsMsg) {
	o.t.Helper()
	o.nextID++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": o.nextID, "method": method, "params": params})
	if err := o.c.Write(o.t.Context(), websocket.MessageText, b); err != nil {
		o.t.Fatal(err)
	}
	var before []wsMsg
	for {
		m := o.read()
		if m.ID != nil && *m.ID == o.nextID {
			if m.Error != nil {
				o.t.Fatalf("%s: %s", method, m.Error)
			}
			return m.Result, before
		}
		before = append(before, m)
	}
}

// nextAction returns the next action notification.
func (o *wsObserver) nextAction() wsMsg {
	o.t.Helper()
	for {
		if m := o.read(); m.Method == "action" {
			return m
		}
	}
}

// runOf decodes a run as observers see it, with the record's
// connection_ended member.
type runOf struct {
	RunJSON
	Conn *struct {
		Connection string `json:"connection"`
		Error      string `json:"error"`
	}
}

func decodeRun(t *testing.T, raw json.RawMessage) runOf {
	t.Helper()
	var r runOf
	if err := json.Unmarshal(raw, &r.RunJSON); err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Conn *struct {
			Connection string `json:"connection"`
			Error      string `json:"error"`
		} `json:"connection_ended"`
	}
	if err := json.Unmarshal(r.Record, &rec); err != nil {
		t.Fatalf("run record %s: %v", r.Record, err)
	}
	r.Conn = rec.Conn
	return r
}

// An observer subscribed to a session learns at once that the session's
// agent connection ended: after the connection_ended record's own action
// comes an ahp/runChanged for each run the harness marked, carrying
// connection_ended (and, when lost, the connection_lost flag), in
// serverSeq order. A finished run, which the harness leaves alone, is not
// republished.
func TestConnectionEndedRepublishesRuns(t *testing.T) {
	f := newConnEndFixture(t)
	ch := SessionChannel("s1")
	f.runEvent(t, "s1", "done", "completed")
	o := f.dial(t)
	o.call("initialize", map[string]any{"channel": RootChannel, "protocolVersions": []string{"1.0.0"}, "clientId": "c1",
		"initialSubscriptions": []string{ch}})
	f.runEvent(t, "s1", "open", "executing")
	for seen := false; !seen; {
		a := o.nextAction()
		seen = a.Params.Action.Type == "ahp/runChanged" && decodeRun(t, a.Params.Action.Run).RunID == "open"
	}

	f.connectionEnded(t, "s1", runs.ConnectionLost, "read unix: connection reset by peer")
	rec := o.nextAction()
	if rec.Params.Action.Type != "ahp/recorded" || rec.Params.Action.Entry.EventType != "connection_ended" {
		t.Fatalf("first action after the end of the connection: %+v, want the connection_ended record", rec.Params.Action)
	}
	upd := o.nextAction()
	if upd.Params.Action.Type != "ahp/runChanged" {
		t.Fatalf("action after the connection_ended record: %s, want ahp/runChanged", upd.Params.Action.Type)
	}
	r := decodeRun(t, upd.Params.Action.Run)
	if r.RunID != "open" || r.Status != "executing" || r.Conn == nil || r.Conn.Connection != "lost" ||
		!strings.Contains(r.Conn.Error, "connection reset by peer") || !slices.Contains(r.Flags, "connection_lost") {
		t.Fatalf("run update %s: want run open, executing, connection_ended lost with the error, flag connection_lost", upd.Params.Action.Run)
	}
	if upd.Params.ServerSeq <= rec.Params.ServerSeq || upd.Params.Channel != ch {
		t.Errorf("run update serverSeq %d on %s, record's %d: want after it, on %s", upd.Params.ServerSeq, upd.Params.Channel, rec.Params.ServerSeq, ch)
	}

	// A later record of the session comes after, with no update of the
	// finished run in between.
	f.record("s1", "session_end", json.RawMessage(`{"event_type":"session_end"}`), "")
	if a := o.nextAction(); a.Params.Action.Type != "ahp/recorded" || a.Params.Action.Entry.EventType != "session_end" {
		t.Fatalf("after the run update: %s %s, want the session_end record (the finished run is unchanged)", a.Params.Action.Type, a.Params.Action.Run)
	}
}

// When nobody watches the session, a connection_ended record costs no read
// of the store; whoever subscribes or reconnects later is brought up to
// date: a subscriber gets the run update after its snapshot, and a
// reconnecting observer after the replayed record.
func TestConnectionEndedUnwatchedDefersRunUpdate(t *testing.T) {
	f := newConnEndFixture(t)
	ch := SessionChannel("s2")
	f.runEvent(t, "s2", "r1", "executing")
	f.waitRun(t, "s2", "r1")
	o := f.dial(t)
	res, _ := o.call("initialize", map[string]any{"channel": RootChannel, "protocolVersions": []string{"1.0.0"}, "clientId": "c2",
		"initialSubscriptions": []string{ch}})
	var init struct {
		ServerSeq uint64 `json:"serverSeq"`
		Snapshots []any  `json:"snapshots"`
	}
	if err := json.Unmarshal(res, &init); err != nil || len(init.Snapshots) != 1 {
		t.Fatalf("initialize: %s", res)
	}
	lastSeen := init.ServerSeq
	_ = o.c.CloseNow()
	deadline := time.Now().Add(5 * time.Second)
	for f.hub.Observers() > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}

	readsBefore := f.reads.Load()
	f.connectionEnded(t, "s2", runs.ConnectionClosed, "")
	time.Sleep(100 * time.Millisecond) // time for a run worker to read, if it were asked
	if n := f.reads.Load() - readsBefore; n != 0 {
		t.Fatalf("%d reads of run records for a connection_ended nobody watched, want 0", n)
	}

	// A reconnecting observer: the record in the replay, then the update.
	o2 := f.dial(t)
	res, before := o2.call("reconnect", map[string]any{"channel": RootChannel, "clientId": "c2",
		"lastSeenServerSeq": lastSeen, "subscriptions": []string{ch}})
	var rc ReconnectResult
	if err := json.Unmarshal(res, &rc); err != nil || rc.Type != "replay" {
		t.Fatalf("reconnect: %s", res)
	}
	var replayed []string
	for _, a := range rc.Actions {
		var p wsMsg
		_ = json.Unmarshal(a, &p.Params)
		replayed = append(replayed, p.Params.Action.Type+":"+p.Params.Action.Entry.EventType)
	}
	if !slices.Equal(replayed, []string{"ahp/recorded:connection_ended"}) {
		t.Fatalf("replayed %v, want the connection_ended record", replayed)
	}
	upd := checkClosedUpdate(t, o2, before)

	// A new subscriber: its snapshot already has it, or an update follows.
	o3 := f.dial(t)
	res, _ = o3.call("initialize", map[string]any{"channel": RootChannel, "protocolVersions": []string{"1.0.0"}, "clientId": "c3",
		"initialSubscriptions": []string{ch}})
	var snap struct {
		Snapshots []struct {
			State State `json:"state"`
		} `json:"snapshots"`
	}
	if err := json.Unmarshal(res, &snap); err != nil || len(snap.Snapshots) != 1 || len(snap.Snapshots[0].State.Meta.AHP.Runs) != 1 {
		t.Fatalf("initialize: %s", res)
	}
	if r := decodeRun(t, snap.Snapshots[0].State.Meta.AHP.Runs[0]); r.Conn == nil || r.Conn.Connection != "closed" {
		t.Errorf("snapshot after the update %d: run %s, want connection_ended closed", upd, snap.Snapshots[0].State.Meta.AHP.Runs[0])
	}
}

// checkClosedUpdate reads the run update that follows a reconnect's answer
// and checks that it says the connection closed; it returns its serverSeq.
func checkClosedUpdate(t *testing.T, o *wsObserver, before []wsMsg) uint64 {
	t.Helper()
	for _, m := range before {
		if m.Method == "action" {
			t.Fatalf("action %s before the reconnect's answer", m.Params.Action.Type)
		}
	}
	upd := o.nextAction()
	r := decodeRun(t, upd.Params.Action.Run)
	if upd.Params.Action.Type != "ahp/runChanged" || r.RunID != "r1" || r.Conn == nil || r.Conn.Connection != "closed" || slices.Contains(r.Flags, "connection_lost") {
		t.Fatalf("after reconnecting: %s %s, want run r1 with connection_ended closed and no connection_lost flag", upd.Params.Action.Type, upd.Params.Action.Run)
	}
	return upd.Params.ServerSeq
}
