package service_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/jackc/pgx/v5"

	"github.com/ahp-go/ahp/admin"
	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/service"
)

// sharedTestDatabase creates a fresh database on AHP_TEST_POSTGRES_URL's
// server and returns its URL. Without the variable the test fails in CI
// and is skipped when run by hand.
func sharedTestDatabase(t *testing.T) string {
	t.Helper()
	base := os.Getenv("AHP_TEST_POSTGRES_URL")
	if base == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("AHP_TEST_POSTGRES_URL is not set: .ci/run starts PostgreSQL and sets it")
		}
		t.Skip("AHP_TEST_POSTGRES_URL is not set (postgres://user@127.0.0.1:PORT/db); see .ci/run")
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "t_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c, err := pgx.Connect(ctx, base); err == nil {
			_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			_ = c.Close(ctx)
		}
	})
	cfg, err := pgx.ParseConfig(base)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Replace(base, "/"+cfg.Database, "/"+name, 1)
}

// sharedReplica is one replica on the shared database, with its agent
// socket, admin address and admin token.
type sharedReplica struct {
	sock, admin, token string
}

func startSharedReplica(t *testing.T, url string) sharedReplica {
	t.Helper()
	c := testConfig(t)
	c.Store = url
	c.Admin = "http://127.0.0.1:0"
	r := start(t, c, service.Options{})
	tok, err := os.ReadFile(filepath.Join(c.DataDir, admin.TokenFile))
	if err != nil {
		t.Fatal(err)
	}
	return sharedReplica{sock: r.addrs[c.Listen[0]], admin: strings.TrimPrefix(r.addrs["admin"], "http://"), token: strings.TrimSpace(string(tok))}
}

// watcher is an observer connection to one replica's /observe.
type watcher struct {
	t    *testing.T
	ws   *websocket.Conn
	next int
	in   chan json.RawMessage
}

// action is one action notification's params.
type action struct {
	Channel   string          `json:"channel"`
	ServerSeq uint64          `json:"serverSeq"`
	Action    json.RawMessage `json:"action"`
}

func watch(t *testing.T, r sharedReplica) *watcher {
	t.Helper()
	h := http.Header{"Authorization": {"Bearer " + r.token}}
	ws, _, err := websocket.Dial(context.Background(), "ws://"+r.admin+"/observe", &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(64 << 20)
	w := &watcher{t: t, ws: ws, in: make(chan json.RawMessage, 1<<14)}
	go func() {
		defer close(w.in)
		for {
			_, b, err := ws.Read(context.Background())
			if err != nil {
				return
			}
			w.in <- b
		}
	}()
	t.Cleanup(func() { _ = ws.CloseNow() })
	return w
}

// call sends a request and returns its result; action notifications that
// arrive meanwhile are appended to acts.
func (w *watcher) call(method string, params any, acts *[]action) json.RawMessage {
	w.t.Helper()
	w.next++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": w.next, "method": method, "params": params})
	if err := w.ws.Write(context.Background(), websocket.MessageText, b); err != nil {
		w.t.Fatal(err)
	}
	timeout := time.After(20 * time.Second)
	for {
		select {
		case m, ok := <-w.in:
			if !ok {
				w.t.Fatalf("%s: connection closed", method)
			}
			var msg struct {
				ID     *int            `json:"id"`
				Method string          `json:"method"`
				Params action          `json:"params"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			_ = json.Unmarshal(m, &msg)
			if msg.ID != nil && *msg.ID == w.next {
				if msg.Error != nil {
					return nil
				}
				return msg.Result
			}
			if msg.Method == "action" && acts != nil {
				*acts = append(*acts, msg.Params)
			}
		case <-timeout:
			w.t.Fatalf("%s: no answer", method)
		}
	}
}

// actions collects session actions until at least n have arrived and
// no more come for half a second.
func (w *watcher) actions(acts []action, n int) []action {
	w.t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		quiet := time.After(500 * time.Millisecond)
		if countSession(acts) < n {
			quiet = nil
		}
		select {
		case <-quiet:
			return sessionOnly(acts)
		case m, ok := <-w.in:
			if !ok {
				w.t.Fatal("connection closed")
			}
			var msg struct {
				Method string `json:"method"`
				Params action `json:"params"`
			}
			if json.Unmarshal(m, &msg) == nil && msg.Method == "action" {
				acts = append(acts, msg.Params)
			}
		case <-timeout:
			w.t.Fatalf("%d session actions of %d after 20 s", countSession(acts), n)
		}
	}
}

// fromCommonStart keeps, of two observers' actions, those of each
// channel from the later of the two observers' first action on that
// channel.
func fromCommonStart(a, b []action) ([]action, []action) {
	start := map[string]uint64{}
	for _, acts := range [][]action{a, b} {
		seen := map[string]bool{}
		for _, x := range acts {
			if !seen[x.Channel] {
				seen[x.Channel] = true
				start[x.Channel] = max(start[x.Channel], x.ServerSeq)
			}
		}
	}
	keep := func(acts []action) []action {
		var out []action
		for _, x := range acts {
			if x.ServerSeq >= start[x.Channel] {
				out = append(out, x)
			}
		}
		return out
	}
	return keep(a), keep(b)
}

func countSession(acts []action) int { return len(sessionOnly(acts)) }

func sessionOnly(acts []action) []action {
	var out []action
	for _, a := range acts {
		if strings.HasPrefix(a.Channel, "ahp-session:") {
			out = append(out, a)
		}
	}
	return out
}

func initParams() map[string]any {
	return map[string]any{"channel": "ahp-root://", "protocolVersions": []string{"1.0.0"}, "clientId": "t"}
}

// subscribe subscribes to a session channel, waiting until the replica
// knows the session (its records come from the shared audit log).
func (w *watcher) subscribe(ch string, acts *[]action) {
	w.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for w.call("subscribe", map[string]any{"channel": ch}, acts) == nil {
		if time.Now().After(deadline) {
			w.t.Fatalf("subscribe %s refused for 10 s", ch)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Two replicas on one PostgreSQL database, agents on both: an observer of
// each sees every session's actions, the same ones with the same serverSeq
// in the same order, and an observer that leaves one replica resumes on
// the other with a replay of what it missed.
func TestObserversOfReplicasSeeOneOrder(t *testing.T) {
	url := sharedTestDatabase(t)
	a, b := startSharedReplica(t, url), startSharedReplica(t, url)
	sessions := []string{"shared-1", "shared-2"}
	agents := map[string]*client.Client{}
	for _, sid := range sessions {
		for name, r := range map[string]sharedReplica{"a": a, "b": b} {
			agents[sid+name] = dial(t, r.sock, client.Options{SessionID: sid, AgentID: "coder"})
		}
	}
	// One event per session creates the sessions.
	for _, sid := range sessions {
		decide(t, agents[sid+"a"], "echo start")
	}
	wa, wb := watch(t, a), watch(t, b)
	var actsA, actsB []action
	wa.call("initialize", initParams(), &actsA)
	wb.call("initialize", initParams(), &actsB)
	for _, sid := range sessions {
		wa.subscribe("ahp-session:/"+sid, &actsA)
		wb.subscribe("ahp-session:/"+sid, &actsB)
	}
	actsA, actsB = sessionOnly(actsA), sessionOnly(actsB)

	// Events through both replicas, interleaved, on both sessions.
	const events = 12
	for i := range events {
		sid := sessions[i%2]
		via := "a"
		if i%3 == 0 {
			via = "b"
		}
		decide(t, agents[sid+via], fmt.Sprintf("echo %d", i))
	}
	const perEvent = 1 // ahp/recorded (the tool call's actions are on the chat channel)
	gotA := wa.actions(actsA, events*perEvent)
	gotB := wb.actions(actsB, events*perEvent)
	// Each observer subscribed to each session at its own point of the
	// stream: a replica may not have read the sessions' first records
	// (handshakes are recorded asynchronously, other replicas' records
	// come with the next poll) when the subscription's snapshot was
	// taken, and then streams them as actions. From the later start of
	// each channel on, the streams must be equal.
	gotA, gotB = fromCommonStart(gotA, gotB)
	if len(gotA) < events*perEvent {
		t.Fatalf("%d actions in common, want at least %d:%s", len(gotA), events*perEvent, dump(gotA))
	}
	if !slices.EqualFunc(gotA, gotB, func(x, y action) bool {
		return x.Channel == y.Channel && x.ServerSeq == y.ServerSeq && string(x.Action) == string(y.Action)
	}) {
		t.Fatalf("observers of the two replicas saw different streams:\nA: %s\nB: %s", dump(gotA), dump(gotB))
	}
	for i := 1; i < len(gotA); i++ {
		if gotA[i].ServerSeq <= gotA[i-1].ServerSeq {
			t.Fatalf("serverSeq not increasing: %s", dump(gotA))
		}
	}
	for i, sid := range []string{sessions[0], sessions[1]} {
		n := 0
		for _, x := range gotA {
			if x.Channel == "ahp-session:/"+sid {
				n++
			}
		}
		if n < events/2*perEvent {
			t.Fatalf("session %d: %d actions, want at least %d", i, n, events/2*perEvent)
		}
	}

	// The observer of A leaves after the first half; events go on; it
	// reconnects to B and gets a replay of exactly what it missed.
	half := gotA[len(gotA)/2-1]
	_ = wa.ws.CloseNow()
	for i := range 4 {
		decide(t, agents[sessions[0]+"a"], fmt.Sprintf("echo later %d", i))
	}
	all := wb.actions(gotB, len(gotB)+4*perEvent)
	wc := watch(t, b)
	res := wc.call("reconnect", map[string]any{"channel": "ahp-root://", "clientId": "t",
		"lastSeenServerSeq": half.ServerSeq, "subscriptions": []string{half.Channel}}, nil)
	var rr struct {
		Type    string   `json:"type"`
		Actions []action `json:"actions"`
	}
	if err := json.Unmarshal(res, &rr); err != nil {
		t.Fatalf("reconnect answer: %s", res)
	}
	var want []action
	for _, x := range all {
		if x.Channel == half.Channel && x.ServerSeq > half.ServerSeq {
			want = append(want, x)
		}
	}
	got := rr.Actions
	if rr.Type != "replay" || !slices.EqualFunc(got, want, func(x, y action) bool {
		return x.ServerSeq == y.ServerSeq && string(x.Action) == string(y.Action)
	}) {
		t.Fatalf("reconnect to the other replica: type %q\ngot:  %s\nwant: %s", rr.Type, dump(got), dump(want))
	}
}

func dump(acts []action) string {
	var b strings.Builder
	for _, a := range acts {
		fmt.Fprintf(&b, "\n  %s %d %.60s", a.Channel, a.ServerSeq, a.Action)
	}
	return b.String()
}
