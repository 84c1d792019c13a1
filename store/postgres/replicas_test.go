package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/postgres"
	"github.com/ahp-go/ahp/transport"
)

// replicaPolicy escalates deploys and caps each session at budget allowed
// actions (session.actions counts them).
const replicaPolicy = `
rules:
  - id: approve-deploy
    priority: 100
    target: {event_types: [pre_action]}
    condition: 'event.command.contains("deploy")'
    outcome:
      decision: escalate
      reason: "deploys need an approval"
      await_approval: {timeout: 5s, fallback: block}
  - id: budget
    priority: 90
    target: {event_types: [pre_action]}
    condition: 'session.actions >= 10'
    outcome: {decision: block, reason: "action budget spent"}
`

// replica is one harness on the shared database, as ahp serve runs it.
type replica struct {
	h  *harness.Harness
	db *postgres.DB
}

// startReplicas opens n harnesses on one fresh schema, each with its own
// connection pool, and runs their replica loops until the test ends.
func startReplicas(t *testing.T, n int) []replica {
	t.Helper()
	url, schema := testURL(t), freshSchema()
	ctx, cancel := context.WithCancel(context.Background())
	var rs []replica
	var wg sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		for _, r := range rs {
			_ = r.db.Close()
		}
	})
	for range n {
		db, err := postgres.Open(t.Context(), url, postgres.Options{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		eng, err := policy.NewEngine(policy.Options{}, policy.Source{Name: "replicas.yaml", Data: []byte(replicaPolicy)})
		if err != nil {
			t.Fatal(err)
		}
		h, err := harness.New(harness.Options{Engine: eng, Store: db})
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Start(ctx); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { h.RunReplica(ctx) })
		rs = append(rs, replica{h: h, db: db})
	}
	return rs
}

// withInfo gives a connection an authenticated principal.
type withInfo struct {
	transport.Conn
	info transport.Info
}

func (w withInfo) Info() transport.Info { return w.info }

// connect returns a client of session on r, as principal agent-1.
func connect(t *testing.T, r replica, session string) *client.Client {
	t.Helper()
	a, b := transport.Pipe()
	srv := server.New(r.h, server.Options{MaxInFlight: 256})
	info := transport.Info{Transport: "memory", Principal: &transport.Principal{ID: "agent-1", Roles: []string{"agent"}}}
	done := make(chan struct{})
	go func() { _ = srv.ServeConn(context.Background(), withInfo{b, info}); close(done) }()
	c := client.New(a, client.Options{SessionID: session, AgentID: "coder", Timeout: 20 * time.Second, FailMode: client.FailError})
	if _, err := c.Handshake(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(); <-done })
	return c
}

func bash(cmd string) map[string]any {
	return map[string]any{"tool_name": "bash", "arguments": map[string]any{"command": cmd}}
}

// An approval raised through replica A is answered through replica B, and
// the agent waiting on A hears the answer within a second.
func TestApprovalAcrossReplicas(t *testing.T) {
	rs := startReplicas(t, 2)
	a, b := rs[0], rs[1]
	c := connect(t, a, "sess-approve")
	got := make(chan protocol.Decision, 1)
	go func() {
		d, err := c.Event(context.Background(), protocol.EventPreAction, bash("./deploy.sh prod"))
		if err != nil {
			t.Errorf("Event: %v", err)
		}
		got <- d
	}()
	var id string
	deadline := time.Now().Add(5 * time.Second)
	for id == "" {
		ps, err := b.db.Approvals().List(t.Context(), store.ApprovalFilter{Status: store.ApprovalPending})
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) == 1 {
			id = ps[0].ID
		} else if time.Now().After(deadline) {
			t.Fatalf("replica B never saw the approval raised on A (%d pending)", len(ps))
		} else {
			time.Sleep(10 * time.Millisecond)
		}
	}
	approver := &transport.Principal{ID: "alice", Roles: []string{"approver"}}
	answered := time.Now()
	if _, err := b.h.Decide(t.Context(), id, true, approver, "ship it"); err != nil {
		t.Fatalf("Decide through replica B: %v", err)
	}
	select {
	case d := <-got:
		took := time.Since(answered)
		if d.Kind != protocol.DecisionAllow {
			t.Fatalf("agent on A got %+v after approval on B, want allow", d)
		}
		if took > time.Second {
			t.Fatalf("agent on A heard the answer after %v, want within 1s", took)
		}
		t.Logf("approval answered on B reached the agent on A in %v", took.Round(time.Millisecond))
	case <-time.After(4 * time.Second):
		t.Fatal("agent on A did not hear the approval given on B")
	}
}

// An agent whose requests are spread over three replicas, many at once,
// gets exactly its budget of allowed actions: the session's counters are
// one, held in the database under the session's lock.
func TestBudgetAcrossReplicas(t *testing.T) {
	rs := startReplicas(t, 3)
	const requests, budget = 45, 10
	var clients []*client.Client
	for _, r := range rs {
		clients = append(clients, connect(t, r, "sess-budget"))
	}
	var allowed, blocked atomic.Int64
	var wg sync.WaitGroup
	for i := range requests {
		c := clients[i%len(clients)] // round-robin over the replicas
		wg.Go(func() {
			d, err := c.Event(context.Background(), protocol.EventPreAction, bash(fmt.Sprintf("echo %d", i)))
			switch {
			case err != nil:
				t.Errorf("request %d: %v", i, err)
			case d.Kind == protocol.DecisionAllow:
				allowed.Add(1)
			default:
				blocked.Add(1)
			}
		})
	}
	wg.Wait()
	if allowed.Load() != budget || blocked.Load() != requests-budget {
		t.Fatalf("%d allowed, %d blocked over 3 replicas; want exactly %d allowed (the budget), %d blocked",
			allowed.Load(), blocked.Load(), budget, requests-budget)
	}
}

// Replicas starting at once on a new database migrate it once: every Open
// succeeds and each migration is recorded exactly once.
func TestConcurrentMigrations(t *testing.T) {
	url, schema := testURL(t), freshSchema()
	const n = 6
	errs := make(chan error, n)
	dbs := make(chan *postgres.DB, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			db, err := postgres.Open(t.Context(), url, postgres.Options{Schema: schema})
			if err != nil {
				errs <- err
				return
			}
			dbs <- db
		})
	}
	wg.Wait()
	close(errs)
	close(dbs)
	for db := range dbs {
		t.Cleanup(func() { _ = db.Close() })
	}
	for err := range errs {
		t.Errorf("concurrent Open: %v", err)
	}
	// A record written through one is read through another.
	db, err := postgres.Open(t.Context(), url, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var versions, distinct int
	if err := db.QueryRowForTest(t.Context(), `SELECT count(*), count(DISTINCT version) FROM schema_version`, &versions, &distinct); err != nil {
		t.Fatal(err)
	}
	if versions != postgres.SchemaVersion || distinct != postgres.SchemaVersion {
		t.Fatalf("schema_version holds %d rows (%d distinct), want %d", versions, distinct, postgres.SchemaVersion)
	}
}

// ExpireOrphaned expires exactly the pending approvals older than maxAge
// whose replica is not in the registry (gone, or not seen within maxAge),
// and announces each: approvals of live replicas, young ones, ones with no
// replica recorded and decided ones stay as they are.
func TestExpireOrphanedApprovals(t *testing.T) {
	db, err := postgres.Open(t.Context(), testURL(t), postgres.Options{Schema: freshSchema()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()
	const maxAge = 200 * time.Millisecond
	if err := db.Heartbeat(ctx, store.Replica{ID: "silent", Started: time.Now()}); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	create := func(replica string, created time.Time) *store.Approval {
		t.Helper()
		a := &store.Approval{SessionID: "s", AgentID: "coder", Replica: replica, RuleID: "r", Reason: "why", Created: created}
		if err := db.Approvals().Create(ctx, a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	gone := create("gone", old)     // its replica never registered
	silent := create("silent", old) // its replica stops heartbeating
	live := create("live", old)
	young := create("gone", time.Now().Add(time.Hour)) // created after the cut
	legacy := create("", old)                          // from before replicas were recorded
	decided := create("gone", old)
	if _, err := db.Approvals().Decide(ctx, decided.ID, store.Resolution{Status: store.ApprovalApproved, By: "alice"}); err != nil {
		t.Fatal(err)
	}

	heard := make(chan string, 16)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = db.WatchApprovals(wctx, func(id string) { heard <- id }) }()
	time.Sleep(300 * time.Millisecond) // LISTEN is in place; "silent" is now older than maxAge
	if err := db.Heartbeat(ctx, store.Replica{ID: "live", Started: time.Now()}); err != nil {
		t.Fatal(err)
	}

	expired, err := db.ExpireOrphaned(ctx, maxAge, "the replica stopped")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, a := range expired {
		got[a.ID] = true
		if a.Status != store.ApprovalExpired || a.DecisionReason != "the replica stopped" || a.DecidedAt.IsZero() {
			t.Errorf("expired approval %+v", a)
		}
	}
	if len(expired) != 2 || !got[gone.ID] || !got[silent.ID] {
		t.Fatalf("expired %d approvals %v; want exactly the two of stopped replicas (%s, %s)", len(expired), got, gone.ID, silent.ID)
	}
	for _, a := range []*store.Approval{live, young, legacy} {
		if cur, err := db.Approvals().Get(ctx, a.ID); err != nil || cur.Status != store.ApprovalPending {
			t.Errorf("approval of replica %q created %s: %v %v, want still pending", a.Replica, a.Created, cur.Status, err)
		}
	}
	if cur, err := db.Approvals().Get(ctx, decided.ID); err != nil || cur.Status != store.ApprovalApproved {
		t.Errorf("decided approval: %v %v, want approved", cur.Status, err)
	}
	for range 2 {
		select {
		case id := <-heard:
			if !got[id] {
				t.Errorf("announced %s, which was not expired", id)
			}
			delete(got, id)
		case <-time.After(5 * time.Second):
			t.Fatalf("expired approvals not announced: %v", got)
		}
	}
	if again, err := db.ExpireOrphaned(ctx, maxAge, "again"); err != nil || len(again) != 0 {
		t.Fatalf("second ExpireOrphaned: %d, %v; want none", len(again), err)
	}
}
