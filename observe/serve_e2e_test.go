package observe_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/sqlite"
	"github.com/ahp-go/ahp/transport"
)

// Credentials of the test harness (plain secrets: test only).
const (
	agentKey    = "agent-key-0123456789"
	observerKey = "observer-key-0123456789"
	approverKey = "approver-key-0123456789"
)

const testCredentials = `version: 1
principals:
  - id: agent-1
    roles: [agent]
    api_keys: ["` + agentKey + `"]
  - id: watcher
    roles: [observer]
    api_keys: ["` + observerKey + `"]
  - id: alice
    roles: [approver]
    api_keys: ["` + approverKey + `"]
`

const testPolicy = `rules:
  - id: approve-deploy
    priority: 100
    target: {event_types: [pre_action]}
    condition: 'event.command.contains("deploy")'
    outcome:
      decision: escalate
      reason: "deploys need an approval"
      await_approval: {timeout: 60s, fallback: block, approver_role: approver}
`

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// ahpBinary builds the ahp command once.
func ahpBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ahp-observe-e2e-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "ahp")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/ahp-go/ahp/cmd/ahp").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("%v: %s", err, out)
		}
	})
	if binErr != nil {
		t.Fatalf("build ahp: %v", binErr)
	}
	return binPath
}

// harnessProc is a running ahp serve.
type harnessProc struct {
	dir, sock, admin string
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startServe runs ahp serve with the test credentials and policy.
func startServe(t *testing.T, extra ...string) *harnessProc {
	t.Helper()
	bin := ahpBinary(t)
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "creds.yaml"), []byte(testCredentials), 0o600))
	must(t, os.WriteFile(filepath.Join(dir, "policy.yaml"), []byte(testPolicy), 0o600))
	hp := &harnessProc{dir: dir, sock: filepath.Join(dir, "ahp.sock"), admin: freePort(t)}
	args := append([]string{"serve", "--listen", "unix:" + hp.sock, "--admin", "http://" + hp.admin,
		"--data-dir", filepath.Join(dir, "data"), "--credentials", filepath.Join(dir, "creds.yaml"),
		"--policy", filepath.Join(dir, "policy.yaml"), "--log-level", "error"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	must(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get("http://" + hp.admin + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				if c, err := transport.DialUnix(context.Background(), hp.sock, 1<<20); err == nil {
					_ = c.Close()
					return hp
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("ahp serve did not become ready")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// agent connects an agent client for a session.
func (hp *harnessProc) agent(t *testing.T, session string) *client.Client {
	t.Helper()
	conn, err := transport.DialUnix(context.Background(), hp.sock, 1<<20)
	must(t, err)
	c := client.New(conn, client.Options{SessionID: session, AgentID: "coder", Timeout: 90 * time.Second, FailMode: client.FailError})
	_, err = c.Handshake(context.Background())
	must(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// obs is a test observer connection.
type obs struct {
	t    *testing.T
	ws   *websocket.Conn
	next int
	in   chan msg
	err  chan error
}

type msg struct {
	ID     *int            `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func (hp *harnessProc) dial(t *testing.T, key string) *obs {
	t.Helper()
	h := http.Header{}
	if key != "" {
		h.Set("X-API-Key", key)
	}
	ws, _, err := websocket.Dial(context.Background(), "ws://"+hp.admin+"/observe", &websocket.DialOptions{HTTPHeader: h})
	must(t, err)
	ws.SetReadLimit(64 << 20)
	o := &obs{t: t, ws: ws, in: make(chan msg, 1<<16), err: make(chan error, 1)}
	go func() {
		for {
			_, b, err := ws.Read(context.Background())
			if err != nil {
				o.err <- err
				close(o.in)
				return
			}
			var m msg
			if err := json.Unmarshal(b, &m); err != nil {
				o.err <- err
				close(o.in)
				return
			}
			o.in <- m
		}
	}()
	t.Cleanup(func() { _ = ws.CloseNow() })
	return o
}

// call sends a request and returns its answer; notifications that arrive
// before it are passed to onNote.
func (o *obs) call(method string, params any, onNote func(msg)) msg {
	o.t.Helper()
	o.next++
	id := o.next
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	must(o.t, o.ws.Write(context.Background(), websocket.MessageText, b))
	timeout := time.After(30 * time.Second)
	for {
		select {
		case m, ok := <-o.in:
			if !ok {
				o.t.Fatalf("%s: connection closed before the answer", method)
			}
			if m.ID != nil && *m.ID == id {
				return m
			}
			if onNote != nil {
				onNote(m)
			}
		case <-timeout:
			o.t.Fatalf("%s: no answer", method)
		}
	}
}

func root() map[string]any { return map[string]any{"channel": "ahp-root://"} }

func initParams(subs ...string) map[string]any {
	return map[string]any{"channel": "ahp-root://", "protocolVersions": []string{"1.0.0"}, "clientId": "test", "initialSubscriptions": subs}
}

// closed waits until the server closes the connection.
func (o *obs) closed() bool {
	timeout := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-o.in:
			if !ok {
				return true
			}
		case <-timeout:
			return false
		}
	}
}

func TestObserveRefusalsAndHandshake(t *testing.T) {
	hp := startServe(t)

	// No credential: ping is answered, anything else is -32007 and the end.
	o := hp.dial(t, "")
	if m := o.call("ping", root(), nil); m.Error != nil || string(m.Result) != "null" {
		t.Fatalf("ping without credentials: %+v %s", m.Error, m.Result)
	}
	if m := o.call("initialize", initParams(), nil); m.Error == nil || m.Error.Code != -32007 {
		t.Fatalf("initialize without credentials: %+v", m)
	}
	if !o.closed() {
		t.Fatal("connection without credentials stays open")
	}

	// An agent credential: -32009.
	o = hp.dial(t, agentKey)
	if m := o.call("initialize", initParams(), nil); m.Error == nil || m.Error.Code != -32009 {
		t.Fatalf("initialize as an agent: %+v", m)
	}
	if !o.closed() {
		t.Fatal("agent connection stays open")
	}

	// ping before initialize, then a version the server does not speak.
	o = hp.dial(t, observerKey)
	if m := o.call("ping", root(), nil); m.Error != nil || string(m.Result) != "null" {
		t.Fatalf("ping before initialize: %+v %s", m.Error, m.Result)
	}
	p := initParams()
	p["protocolVersions"] = []string{"2.0.0", "0.7.0"}
	m := o.call("initialize", p, nil)
	if m.Error == nil || m.Error.Code != -32005 || !strings.Contains(string(m.Error.Data), `"supportedVersions":["1.0.0","0.9.0","0.8.0"]`) {
		t.Fatalf("unsupported version: %+v", m.Error)
	}
	if !o.closed() {
		t.Fatal("connection stays open after a version mismatch")
	}

	// The answer is the highest offered version in a baseline's range,
	// as offered.
	o = hp.dial(t, observerKey)
	p["protocolVersions"] = []string{"3.0.0", "0.9.4", "1.4.2"}
	m = o.call("initialize", p, nil)
	var ir struct {
		ProtocolVersion string `json:"protocolVersion"`
		ServerSeq       uint64 `json:"serverSeq"`
		Meta            struct {
			AHP struct {
				CanApprove *bool `json:"canApprove"`
			} `json:"ahp"`
		} `json:"_meta"`
	}
	if m.Error != nil || json.Unmarshal(m.Result, &ir) != nil || ir.ProtocolVersion != "1.4.2" || ir.ServerSeq == 0 ||
		ir.Meta.AHP.CanApprove == nil || *ir.Meta.AHP.CanApprove {
		t.Fatalf("initialize: %+v %s", m.Error, m.Result)
	}
	// An observer may not answer approvals.
	m = o.call("approvals/answer", map[string]any{"channel": "ahp-root://", "approvalId": "x", "approve": true, "reason": "r"}, nil)
	if m.Error == nil || m.Error.Code != -32009 {
		t.Fatalf("observer answering: %+v", m.Error)
	}
	m = o.call("subscribe", map[string]any{"channel": "ahp-session:/nobody"}, nil)
	if m.Error == nil || m.Error.Code != -32001 {
		t.Fatalf("unknown session: %+v", m.Error)
	}
	m = o.call("subscribe", map[string]any{"channel": "ahp-chat:/nobody"}, nil)
	if m.Error == nil || m.Error.Code != -32008 {
		t.Fatalf("unknown chat: %+v", m.Error)
	}
}

// envelope is an action notification's params.
type envelope struct {
	Channel   string          `json:"channel"`
	ServerSeq uint64          `json:"serverSeq"`
	Action    json.RawMessage `json:"action"`
}

type actionBody struct {
	Type  string `json:"type"`
	Entry *entry `json:"entry"`
}

type entry struct {
	AuditID   int64     `json:"auditId"`
	Time      time.Time `json:"time"`
	EventType string    `json:"eventType"`
	Outcome   string    `json:"outcome"`
	RuleID    string    `json:"ruleId"`
}

func (e entry) key() string {
	return fmt.Sprintf("%d|%s|%s|%s", e.Time.UnixNano(), e.EventType, e.Outcome, e.RuleID)
}

// entryOf returns the timeline entry an action carries, if any (every
// record comes as ahp/recorded on the session channel).
func entryOf(raw json.RawMessage) *entry {
	var a actionBody
	_ = json.Unmarshal(raw, &a)
	return a.Entry
}

// mirror is an observer's reconstruction of a session.
type mirror struct {
	lastSeq uint64
	entries map[string]int
	n       int
}

func newMirror(snapshot json.RawMessage) (*mirror, error) {
	var s struct {
		FromSeq uint64 `json:"fromSeq"`
		State   struct {
			Meta struct {
				AHP struct {
					Timeline []entry `json:"timeline"`
				} `json:"ahp"`
			} `json:"_meta"`
		} `json:"state"`
	}
	if err := json.Unmarshal(snapshot, &s); err != nil {
		return nil, err
	}
	m := &mirror{lastSeq: s.FromSeq, entries: map[string]int{}}
	for _, e := range s.State.Meta.AHP.Timeline {
		m.entries[e.key()]++
		m.n++
	}
	return m, nil
}

// apply applies an action; it fails on a serverSeq that does not increase.
func (m *mirror) apply(env envelope) error {
	if env.ServerSeq <= m.lastSeq {
		return fmt.Errorf("serverSeq %d after %d", env.ServerSeq, m.lastSeq)
	}
	m.lastSeq = env.ServerSeq
	if e := entryOf(env.Action); e != nil {
		m.entries[e.key()]++
		m.n++
	}
	return nil
}

// storeEntries reads a session's audit records from the data directory.
func (hp *harnessProc) storeEntries(t *testing.T, session string) map[string]int {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(hp.dir, "data", "ahp.db"), sqlite.Options{ReadOnly: true})
	must(t, err)
	defer db.Close()
	recs, err := db.Audit().Query(context.Background(), store.AuditFilter{SessionID: session})
	must(t, err)
	out := map[string]int{}
	for _, r := range recs {
		out[entry{Time: r.Time.UTC(), EventType: r.EventType, Outcome: r.Outcome, RuleID: r.RuleID}.key()]++
	}
	return out
}

func diffCounts(got, want map[string]int) string {
	var d []string
	for k, n := range want {
		if got[k] != n {
			d = append(d, fmt.Sprintf("%s: observer %d, store %d", k, got[k], n))
		}
	}
	for k, n := range got {
		if _, ok := want[k]; !ok {
			d = append(d, fmt.Sprintf("%s: observer %d, store 0", k, n))
		}
	}
	sort.Strings(d)
	if len(d) > 5 {
		d = append(d[:5], fmt.Sprintf("... %d more", len(d)-5))
	}
	return strings.Join(d, "\n")
}

// waitStore waits until the store holds n records of a session.
func (hp *harnessProc) waitStore(t *testing.T, session string, n int) map[string]int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := hp.storeEntries(t, session)
		total := 0
		for _, c := range got {
			total += c
		}
		if total >= n || time.Now().After(deadline) {
			return got
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sendLoad sends n events at about rate per second: mostly
// notifications, every tenth a decided pre_action.
func sendLoad(t *testing.T, c *client.Client, n, rate int) {
	t.Helper()
	ctx := context.Background()
	start := time.Now()
	for i := 0; i < n; i++ {
		// Paced on a schedule: a slow send is caught up, not dropped.
		if d := time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(rate))); d > 0 {
			time.Sleep(d)
		}
		var err error
		switch {
		case i%10 == 0:
			_, err = c.Event(ctx, protocol.EventPreAction, map[string]any{"tool_name": "bash", "arguments": map[string]any{"command": fmt.Sprintf("ls %d", i)}})
		case i%10 == 5:
			_, err = c.Event(ctx, protocol.EventPreAction, map[string]any{"tool_name": "bash", "arguments": map[string]any{"command": "rm -rf /"}})
		default:
			err = c.Notify(ctx, protocol.EventPostAction, map[string]any{"tool_name": "bash", "result": i})
		}
		if err != nil {
			t.Errorf("event %d: %v", i, err)
			return
		}
	}
}

func TestObserveGapFreeUnderLoad(t *testing.T) {
	hp := startServe(t)
	const session, events, rate, agents = "load", 3000, 1000, 4
	observers := 50
	if v := os.Getenv("OBS_N"); v != "" {
		fmt.Sscan(v, &observers)
	}
	var cs []*client.Client
	for range agents {
		cs = append(cs, hp.agent(t, session)) // their handshakes create the session
	}
	hp.waitStore(t, session, agents)

	type result struct {
		m   *mirror
		err error
	}
	results := make(chan result, observers)
	ready := make(chan struct{}, observers)
	stop := make(chan struct{})
	for i := 0; i < observers; i++ {
		o := hp.dial(t, observerKey)
		go func() {
			var m *mirror
			var err error
			defer func() { results <- result{m, err} }()
			var early []envelope
			r := o.call("initialize", initParams("ahp-root://"), nil)
			if r.Error != nil {
				err = errors.New(r.Error.Message)
				ready <- struct{}{}
				return
			}
			r = o.call("subscribe", map[string]any{"channel": "ahp-session:/" + session}, func(n msg) {
				var env envelope
				if n.Method == "action" && json.Unmarshal(n.Params, &env) == nil && env.Channel == "ahp-session:/"+session {
					early = append(early, env) // must not happen: nothing before the snapshot
				}
			})
			ready <- struct{}{}
			if r.Error != nil {
				err = errors.New(r.Error.Message)
				return
			}
			var sr struct {
				Snapshot json.RawMessage `json:"snapshot"`
			}
			_ = json.Unmarshal(r.Result, &sr)
			if m, err = newMirror(sr.Snapshot); err != nil {
				return
			}
			if len(early) > 0 {
				err = fmt.Errorf("%d session actions before the subscribe answer", len(early))
				return
			}
			for {
				select {
				case n, ok := <-o.in:
					if !ok {
						err = fmt.Errorf("observer disconnected: %v", <-o.err)
						return
					}
					var env envelope
					if n.Method == "action" && json.Unmarshal(n.Params, &env) == nil && env.Channel == "ahp-session:/"+session {
						if err = m.apply(env); err != nil {
							return
						}
					}
				case <-stop:
					return
				}
			}
		}()
	}
	for i := 0; i < observers; i++ {
		<-ready
	}
	start := time.Now()
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Go(func() { sendLoad(t, c, events/agents, rate/agents) })
	}
	wg.Wait()
	took := time.Since(start)
	t.Logf("%d events in %v (%.0f/s) to %d observers", events, took, float64(events)/took.Seconds(), observers)
	// The senders are paced at 1,000 events/s; on a busy machine (or with
	// the race detector) they reach less, and the check still holds.
	want := hp.waitStore(t, session, events+agents)
	// Let the observers drain, then compare each with the store.
	time.Sleep(500 * time.Millisecond)
	close(stop)
	for i := 0; i < observers; i++ {
		r := <-results
		if r.err != nil {
			t.Fatalf("observer: %v", r.err)
		}
		if d := diffCounts(r.m.entries, want); d != "" {
			t.Fatalf("observer's state differs from the store (%d entries):\n%s", r.m.n, d)
		}
	}
}

func TestObserveReconnectReplaysFromRingAndStore(t *testing.T) {
	hp := startServe(t, "--observe-ring", "64")
	const session = "flaky"
	c := hp.agent(t, session)
	hp.waitStore(t, session, 1)
	ch := "ahp-session:/" + session

	// A second observer watches the session's chat live, never leaving:
	// what a reconnect replays of the chat (from the ring or rebuilt from
	// the store) must be exactly what it saw.
	cch := "ahp-chat:/" + session
	live := hp.dial(t, observerKey)
	live.call("initialize", initParams(cch), nil)
	var liveMu sync.Mutex
	liveActs := map[uint64]string{}
	go func() {
		for n := range live.in {
			var env struct {
				Channel   string          `json:"channel"`
				ServerSeq uint64          `json:"serverSeq"`
				Action    json.RawMessage `json:"action"`
			}
			if n.Method == "action" && json.Unmarshal(n.Params, &env) == nil && env.Channel == cch {
				liveMu.Lock()
				liveActs[env.ServerSeq] = string(env.Action)
				liveMu.Unlock()
			}
		}
	}()

	o := hp.dial(t, observerKey)
	o.call("initialize", initParams(), nil)
	r := o.call("subscribe", map[string]any{"channel": ch}, nil)
	var sr struct {
		Snapshot json.RawMessage `json:"snapshot"`
	}
	must(t, json.Unmarshal(r.Result, &sr))
	m, err := newMirror(sr.Snapshot)
	must(t, err)
	chatFrom := m.lastSeq
	sendLoad(t, c, 40, 1000)
	// Read part of the stream, then drop the connection mid-stream.
	for got := 0; got < 15; {
		n := <-o.in
		var env envelope
		if n.Method == "action" && json.Unmarshal(n.Params, &env) == nil && env.Channel == ch {
			must(t, m.apply(env))
			got++
		}
	}
	_ = o.ws.CloseNow()

	reconnect := func(wantKind string) {
		t.Helper()
		o := hp.dial(t, observerKey)
		r := o.call("reconnect", map[string]any{"channel": "ahp-root://", "clientId": "test",
			"lastSeenServerSeq": m.lastSeq, "subscriptions": []string{ch}}, nil)
		var rr struct {
			Type    string     `json:"type"`
			Actions []envelope `json:"actions"`
		}
		if r.Error != nil || json.Unmarshal(r.Result, &rr) != nil {
			t.Fatalf("reconnect: %+v %s", r.Error, r.Result)
		}
		if rr.Type != wantKind {
			t.Fatalf("reconnect answered %q, want %q", rr.Type, wantKind)
		}
		for _, env := range rr.Actions {
			must(t, m.apply(env))
		}
		_ = o.ws.CloseNow()
	}
	// The ring (64 actions) still holds what was missed.
	reconnect("replay")
	// Many more actions than the ring holds: replayed from the store.
	_ = o.ws.CloseNow()
	sendLoad(t, c, 600, 1000)
	want := hp.waitStore(t, session, 641)
	time.Sleep(300 * time.Millisecond) // the last notifications reach the hub
	reconnect("replay")
	if d := diffCounts(m.entries, want); d != "" {
		t.Fatalf("reconstructed state differs from the store (%d entries):\n%s", m.n, d)
	}
	// The chat from the start, far beyond the ring: rebuilt from the store.
	o = hp.dial(t, observerKey)
	r = o.call("reconnect", map[string]any{"channel": "ahp-root://", "clientId": "test",
		"lastSeenServerSeq": chatFrom, "subscriptions": []string{cch}}, nil)
	var rr struct {
		Type    string `json:"type"`
		Actions []struct {
			Channel   string          `json:"channel"`
			ServerSeq uint64          `json:"serverSeq"`
			Action    json.RawMessage `json:"action"`
		} `json:"actions"`
	}
	if r.Error != nil || json.Unmarshal(r.Result, &rr) != nil || rr.Type != "replay" {
		t.Fatalf("chat reconnect: %+v %.300s", r.Error, r.Result)
	}
	liveMu.Lock()
	defer liveMu.Unlock()
	if len(rr.Actions) != len(liveActs) || len(rr.Actions) < 100 {
		t.Fatalf("chat replay: %d actions, the live observer saw %d (want at least 100)", len(rr.Actions), len(liveActs))
	}
	for _, a := range rr.Actions {
		if liveActs[a.ServerSeq] != string(a.Action) {
			t.Fatalf("chat action %d replayed as %s, sent live as %s", a.ServerSeq, a.Action, liveActs[a.ServerSeq])
		}
	}
}

func TestObserveApprovals(t *testing.T) {
	hp := startServe(t)
	const session = "deployer"
	c := hp.agent(t, session)
	hp.waitStore(t, session, 1)
	ch := "ahp-session:/" + session
	o := hp.dial(t, approverKey)
	r := o.call("initialize", initParams("ahp-root://", ch), nil)
	if r.Error != nil {
		t.Fatal(r.Error.Message)
	}

	decide := func(answer func(approvalID, toolCallID string)) protocol.Decision {
		done := make(chan protocol.Decision, 1)
		go func() {
			d, err := c.Event(context.Background(), protocol.EventPreAction, map[string]any{"tool_name": "bash", "arguments": map[string]any{"command": "deploy prod"}})
			if err != nil {
				t.Error(err)
			}
			done <- d
		}()
		// The escalation shows as the Host Protocol's input-needed request.
		for {
			n := <-o.in
			var env envelope
			if n.Method != "action" || json.Unmarshal(n.Params, &env) != nil || env.Channel != ch {
				continue
			}
			var a struct {
				Type    string `json:"type"`
				Request struct {
					ID       string `json:"id"`
					Kind     string `json:"kind"`
					ToolCall struct {
						ToolCallID string `json:"toolCallId"`
						Status     string `json:"status"`
						Meta       struct {
							AHP struct {
								Approval struct {
									ID string `json:"id"`
								} `json:"approval"`
							} `json:"ahp"`
						} `json:"_meta"`
					} `json:"toolCall"`
				} `json:"request"`
			}
			_ = json.Unmarshal(env.Action, &a)
			if a.Type == "session/inputNeededSet" {
				if a.Request.Kind != "toolConfirmation" || a.Request.ToolCall.Status != "pending-confirmation" {
					t.Fatalf("input request: %s", env.Action)
				}
				answer(a.Request.ToolCall.Meta.AHP.Approval.ID, a.Request.ToolCall.ToolCallID)
				break
			}
		}
		return <-done
	}
	d := decide(func(id, _ string) {
		if m := o.call("approvals/answer", map[string]any{"channel": "ahp-root://", "approvalId": id, "approve": true, "reason": "ok"}, nil); m.Error != nil {
			t.Fatalf("answer: %+v", m.Error)
		}
	})
	if d.Kind != protocol.DecisionAllow {
		t.Fatalf("approved: %+v", d)
	}
	// The Host Protocol's way: dispatch chat/toolCallConfirmed on the
	// session's chat.
	var denied string
	d = decide(func(_, toolCall string) {
		denied = toolCall
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "dispatchAction", "params": map[string]any{
			"channel": "ahp-chat:/" + session, "clientSeq": 1, "action": map[string]any{"type": "chat/toolCallConfirmed", "turnId": "t",
				"toolCallId": toolCall, "approved": false, "reason": "denied", "reasonMessage": "not today"}}})
		must(t, o.ws.Write(context.Background(), websocket.MessageText, b))
	})
	if d.Kind != protocol.DecisionBlock || !strings.Contains(d.Reason, "not today") {
		t.Fatalf("denied: %+v", d)
	}
	// The same dispatch again: the tool call no longer waits, so it is
	// echoed back to this client with a rejectionReason.
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "dispatchAction", "params": map[string]any{
		"channel": "ahp-chat:/" + session, "clientSeq": 2, "action": map[string]any{"type": "chat/toolCallConfirmed", "turnId": "t",
			"toolCallId": denied, "approved": true, "confirmed": "user-action"}}})
	must(t, o.ws.Write(context.Background(), websocket.MessageText, b))
	for deadline := time.After(10 * time.Second); ; {
		select {
		case n := <-o.in:
			var env struct {
				Channel         string `json:"channel"`
				RejectionReason string `json:"rejectionReason"`
				Origin          *struct {
					ClientID  string `json:"clientId"`
					ClientSeq int    `json:"clientSeq"`
				} `json:"origin"`
			}
			if n.Method == "action" && json.Unmarshal(n.Params, &env) == nil && env.RejectionReason != "" {
				if env.Channel != "ahp-chat:/"+session || env.Origin == nil || env.Origin.ClientID != "test" || env.Origin.ClientSeq != 2 {
					t.Fatalf("rejection: %s", n.Params)
				}
				return
			}
		case <-deadline:
			t.Fatal("the second dispatch was not rejected")
		}
	}
}
