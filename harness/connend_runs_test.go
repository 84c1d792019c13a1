package harness

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/runs"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/store/sqlite"
	"github.com/ahp-go/ahp/transport"
)

// runsHarness is a harness that keeps run records, served on a Unix socket.
type runsHarness struct {
	h    *Harness
	db   *sqlite.DB
	sock string
}

func newRunsHarness(t *testing.T) *runsHarness {
	t.Helper()
	dir := t.TempDir()
	db, err := sqlite.Open(context.Background(), filepath.Join(dir, "ahp.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := policy.NewEngine(policy.Options{}, policy.Source{Name: "test.yaml", Data: []byte(approvalPolicy)})
	if err != nil {
		t.Fatal(err)
	}
	red, err := runs.New(db.Runs(), runs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Options{Engine: eng, Store: db, Runs: red})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "h.sock")
	l, err := transport.ListenUnix(sock, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { _ = server.New(h, server.Options{}).Serve(ctx, l); close(served) }()
	t.Cleanup(func() {
		cancel()
		_ = l.Close()
		<-served
		_ = db.Close()
	})
	return &runsHarness{h: h, db: db, sock: sock}
}

// run waits until the record of runID satisfies ok, and returns it.
func (rh *runsHarness) run(t *testing.T, runID, what string, ok func(*runs.Record) bool) *runs.Record {
	t.Helper()
	var rec *runs.Record
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if r, err := runs.Load(context.Background(), rh.db.Runs(), runID); err == nil {
			rec = r
			if ok(r) {
				return r
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	b, _ := json.Marshal(rec)
	t.Fatalf("run %s: %s: not within 5s; record %s", runID, what, b)
	return nil
}

func lifecyclePayload(run, session string, status protocol.RunStatus, n int) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"run_id": run, "session_id": session, "status": string(status),
		"updated_at": time.Date(2026, 11, 21, 10, 0, n, 0, time.UTC).Format(time.RFC3339)})
	return b
}

func notification(t *testing.T, session string, payload json.RawMessage) string {
	t.Helper()
	ev := protocol.Event{EventType: protocol.EventRunLifecycle, SessionID: session, AgentID: "coder",
		Timestamp: time.Now().UTC().Format(time.RFC3339Nano), Payload: payload}
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "ahp/event", "params": ev})
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

// An agent whose connection breaks in the middle of a run (its socket is
// reset, as when its machine vanishes) leaves the run record saying so,
// without a new status; its finished run is left alone. When it comes back
// on a new connection and reports again, the record says it is back; when
// it then closes its connection cleanly, the record says closed. Replaying
// the run's log gives the same record.
func TestRunRecordsSayConnectionEnded(t *testing.T) {
	rh := newRunsHarness(t)
	const session = "sess-vanishing"

	// The agent handshakes and reports two runs over a raw Unix socket.
	nc, err := net.Dial("unix", rh.sock)
	if err != nil {
		t.Fatal(err)
	}
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(nc, `{"jsonrpc":"2.0","id":1,"method":"ahp/handshake","params":{"protocol_version":"2.4",`+
		`"session_id":"`+session+`","agent_id":"coder","agent_info":{"framework":"t","version":"1"}}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	// Read one byte of the answer: the rest stays unread, so closing this
	// end resets the connection (ECONNRESET on the harness's side), as a
	// vanished peer does, instead of ending it cleanly.
	if _, err := io.ReadFull(nc, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(nc, notification(t, session, lifecyclePayload("run-open", session, protocol.RunExecuting, 1))+
		notification(t, session, lifecyclePayload("run-done", session, protocol.RunCompleted, 1))); err != nil {
		t.Fatal(err)
	}
	rh.run(t, "run-open", "executing", func(r *runs.Record) bool { return r.Status == protocol.RunExecuting })
	rh.run(t, "run-done", "completed", func(r *runs.Record) bool { return r.Status == protocol.RunCompleted })
	if err := nc.Close(); err != nil {
		t.Fatal(err)
	}

	rec := rh.run(t, "run-open", "connection lost", func(r *runs.Record) bool { return r.Connection != nil })
	if c := rec.Connection; c.How != runs.ConnectionLost || !strings.Contains(c.Error, "connection reset by peer") || c.At.IsZero() || c.Seq != 2 {
		t.Errorf("connection = %+v", c)
	}
	if rec.Status != protocol.RunExecuting || len(rec.Timeline) != 1 || rec.FlagKinds[0] != runs.FlagConnectionLost {
		t.Errorf("status %s timeline %+v flags %v", rec.Status, rec.Timeline, rec.FlagKinds)
	}
	rr, err := rh.db.Runs().Get(context.Background(), "run-open")
	if err != nil || rr.Status != "executing" || len(rr.Flags) != 1 || rr.Flags[0] != "connection_lost" {
		t.Errorf("stored run %+v, %v", rr, err)
	}
	if done, _ := runs.Load(context.Background(), rh.db.Runs(), "run-done"); done.Connection != nil || done.Counts.Events != 1 {
		t.Errorf("finished run marked: %+v", done)
	}

	// The agent comes back on a new connection, same session.
	conn, err := transport.DialUnix(context.Background(), rh.sock, 0)
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(conn, client.Options{SessionID: session, AgentID: "coder", Timeout: 10 * time.Second, FailMode: client.FailError})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Handshake(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Notify(ctx, protocol.EventRunLifecycle, lifecyclePayload("run-open", session, protocol.RunVerifying, 2)); err != nil {
		t.Fatal(err)
	}
	rec = rh.run(t, "run-open", "back, verifying", func(r *runs.Record) bool { return r.Status == protocol.RunVerifying })
	if rec.Connection != nil || len(rec.FlagKinds) != 1 {
		t.Errorf("after the agent came back: connection %+v flags %v", rec.Connection, rec.FlagKinds)
	}

	// It leaves cleanly, the run still open.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	rec = rh.run(t, "run-open", "connection closed", func(r *runs.Record) bool { return r.Connection != nil })
	if c := rec.Connection; c.How != runs.ConnectionClosed || c.Error != "" || c.Seq != 4 {
		t.Errorf("connection = %+v", c)
	}
	if len(rec.Flags) != 1 || rec.Status != protocol.RunVerifying {
		t.Errorf("a clean close flagged the run or changed its status: %s %+v", rec.Status, rec.Flags)
	}

	replayed, err := runs.Replay(context.Background(), rh.db.Runs(), "run-open")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(rec)
	b, _ := json.Marshal(replayed)
	if string(a) != string(b) {
		t.Errorf("replay differs:\nlive   %s\nreplay %s", a, b)
	}
}

// The error text a run record keeps goes through the harness's redaction,
// like the audit record's.
func TestRunRecordConnectionErrorRedacted(t *testing.T) {
	rh := newRunsHarness(t)
	ctx := context.Background()
	ev := protocol.Event{EventType: protocol.EventRunLifecycle, SessionID: "s", AgentID: "a",
		Payload: lifecyclePayload("r", "s", protocol.RunPlanning, 1)}
	rh.h.HandleNotification(ctx, &ev)
	rh.run(t, "r", "planning", func(r *runs.Record) bool { return r.Status == protocol.RunPlanning })

	const token = "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	rh.h.ConnEnded(server.WithPeer(ctx, transport.Info{Transport: "unix"}), []string{"s"}, errors.New("proxy said Authorization: "+token))
	rec := rh.run(t, "r", "connection lost", func(r *runs.Record) bool { return r.Connection != nil })
	b, _ := json.Marshal(rec)
	if strings.Contains(string(b), token) || !strings.Contains(rec.Connection.Error, "[REDACTED:") ||
		strings.HasPrefix(rec.Connection.Error, "connection lost") {
		t.Errorf("stored %s", b)
	}
	evs, _ := rh.db.Runs().Events(ctx, "r", 0, 10)
	for _, e := range evs {
		if strings.Contains(string(e.Payload), token) {
			t.Errorf("run event log holds the secret: %s", e.Payload)
		}
	}
}
