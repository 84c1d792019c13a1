package service_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/admin"
	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/service"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/postgres"
)

// startEscalatingReplica starts a replica on the shared database whose
// policy escalates "deploy …" commands (an approval waits timeout).
func startEscalatingReplica(t *testing.T, url string, timeout time.Duration) sharedReplica {
	t.Helper()
	c := testConfig(t)
	c.Store = url
	c.Admin = "http://127.0.0.1:0"
	pol := filepath.Join(filepath.Dir(c.DataDir), "escalate.yaml")
	writeFile(t, pol, `rules:
  - id: ask-deploy
    priority: 100
    target: {event_types: [pre_action]}
    condition: 'event.command.startsWith("deploy")'
    outcome: {decision: escalate, reason: "a human decides deploys", await_approval: {timeout: `+timeout.String()+`, fallback: block}}
`)
	c.Policy.Files = []string{pol}
	c.Approvals.Timeout = config.Duration(timeout)
	r := start(t, c, service.Options{})
	tok, err := os.ReadFile(filepath.Join(c.DataDir, admin.TokenFile))
	if err != nil {
		t.Fatal(err)
	}
	return sharedReplica{sock: r.addrs[c.Listen[0]], admin: strings.TrimPrefix(r.addrs["admin"], "http://"), token: strings.TrimSpace(string(tok))}
}

// actionType returns an action's type.
func actionType(a action) string {
	var x struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(a.Action, &x)
	return x.Type
}

// await reads actions (keeping them in acts) until one matches pred, and
// returns it; it fails after 20 s.
func (w *watcher) await(acts *[]action, what string, pred func(action) bool) action {
	w.t.Helper()
	for _, a := range *acts {
		if pred(a) {
			return a
		}
	}
	timeout := time.After(20 * time.Second)
	for {
		select {
		case m, ok := <-w.in:
			if !ok {
				w.t.Fatalf("waiting for %s: connection closed", what)
			}
			var msg struct {
				Method string `json:"method"`
				Params action `json:"params"`
			}
			if json.Unmarshal(m, &msg) != nil || msg.Method != "action" {
				continue
			}
			*acts = append(*acts, msg.Params)
			if pred(msg.Params) {
				return msg.Params
			}
		case <-timeout:
			w.t.Fatalf("no %s after 20 s; actions seen:%s", what, dump(*acts))
		}
	}
}

// isType matches an action of type typ on channel ch whose JSON contains
// every one of subs.
func isType(ch, typ string, subs ...string) func(action) bool {
	return func(a action) bool {
		if a.Channel != ch || actionType(a) != typ {
			return false
		}
		for _, s := range subs {
			if !strings.Contains(string(a.Action), s) {
				return false
			}
		}
		return true
	}
}

// watchSession connects an observer to r, subscribed to the root channel
// and to the session.
func watchSession(t *testing.T, r sharedReplica, session string) (*watcher, *[]action) {
	t.Helper()
	w := watch(t, r)
	acts := new([]action)
	p := initParams()
	p["initialSubscriptions"] = []string{"ahp-root://"}
	w.call("initialize", p, acts)
	w.subscribe("ahp-session:/"+session, acts)
	w.subscribe("ahp-chat:/"+session, acts)
	return w, acts
}

// snapshotPrompts returns the approval ids a fresh observer of r sees
// pending: in the root snapshot's _meta.ahp.approvals and in the session
// snapshot's inputNeeded (as the dashboard shows them).
func snapshotPrompts(t *testing.T, r sharedReplica, session string) (root, input []string) {
	t.Helper()
	w := watch(t, r)
	p := initParams()
	p["initialSubscriptions"] = []string{"ahp-root://", "ahp-session:/" + session}
	res := w.call("initialize", p, nil)
	var ir struct {
		Snapshots []struct {
			Resource string `json:"resource"`
			State    struct {
				Meta struct {
					AHP struct {
						Approvals []struct {
							ID string `json:"id"`
						} `json:"approvals"`
					} `json:"ahp"`
				} `json:"_meta"`
				InputNeeded []struct {
					ID string `json:"id"`
				} `json:"inputNeeded"`
			} `json:"state"`
		} `json:"snapshots"`
	}
	if err := json.Unmarshal(res, &ir); err != nil || len(ir.Snapshots) != 2 {
		t.Fatalf("initialize answer: %s", res)
	}
	for _, s := range ir.Snapshots {
		for _, a := range s.State.Meta.AHP.Approvals {
			root = append(root, a.ID)
		}
		for _, in := range s.State.InputNeeded {
			input = append(input, in.ID)
		}
	}
	_ = w.ws.CloseNow()
	return root, input
}

// answerVia approves or denies an approval through r's admin API.
func answerVia(t *testing.T, r sharedReplica, id string, approve bool) {
	t.Helper()
	verb := "deny"
	if approve {
		verb = "approve"
	}
	req, _ := http.NewRequest("POST", "http://"+r.admin+"/v1/approvals/"+id+"/"+verb, strings.NewReader(`{"reason":"from another replica"}`))
	req.Header.Set("Authorization", "Bearer "+r.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s through the admin API: %s", verb, resp.Status)
	}
}

// escalate sends "deploy prod" from agent c and returns the channel its
// decision arrives on.
func escalate(t *testing.T, c *client.Client) <-chan protocol.Decision {
	t.Helper()
	got := make(chan protocol.Decision, 1)
	go func() {
		d, err := c.Event(context.Background(), protocol.EventPreAction, bash("deploy prod"))
		if err != nil {
			t.Errorf("deploy: %v", err)
			close(got)
			return
		}
		got <- d
	}()
	return got
}

// Three replicas on one PostgreSQL database. An agent on A hits a rule
// that escalates: the observers of B and C get the prompt (root
// ahp/approvalAdded; the session's toolCallReady and inputNeededSet), as
// A's does, and fresh observers of B and C see it in their snapshots.
// The approval is answered through B's admin API: the agent on A is
// allowed, and the prompt is cleared on A, B and C (C neither raised nor
// answered it).
func TestApprovalPromptsOnEveryReplica(t *testing.T) {
	url := sharedTestDatabase(t)
	const sid = "replica-approval"
	a := startEscalatingReplica(t, url, time.Minute)
	b := startEscalatingReplica(t, url, time.Minute)
	c := startEscalatingReplica(t, url, time.Minute)
	agent := dial(t, a.sock, client.Options{SessionID: sid, AgentID: "coder", Timeout: 2 * time.Minute})
	decide(t, agent, "echo start") // the session exists on every replica
	obs := map[string]*watcher{}
	acts := map[string]*[]action{}
	for name, r := range map[string]sharedReplica{"A": a, "B": b, "C": c} {
		obs[name], acts[name] = watchSession(t, r, sid)
	}

	got := escalate(t, agent)
	ch, cch := "ahp-session:/"+sid, "ahp-chat:/"+sid
	var id string
	for _, name := range []string{"A", "B", "C"} {
		w, as := obs[name], acts[name]
		added := w.await(as, name+": root ahp/approvalAdded", isType("ahp-root://", "ahp/approvalAdded", `"ask-deploy"`))
		var x struct {
			Approval struct {
				ID        string `json:"id"`
				SessionID string `json:"sessionId"`
				Status    string `json:"status"`
			} `json:"approval"`
		}
		if err := json.Unmarshal(added.Action, &x); err != nil || x.Approval.ID == "" || x.Approval.SessionID != sid || x.Approval.Status != "pending" {
			t.Fatalf("%s: approvalAdded %s", name, added.Action)
		}
		if id == "" {
			id = x.Approval.ID
		} else if x.Approval.ID != id {
			t.Fatalf("%s: approval %s, A announced %s", name, x.Approval.ID, id)
		}
		w.await(as, name+": chat/toolCallReady of the approval", isType(cch, "chat/toolCallReady", `"ap-`+id+`"`, "Approval required (rule ask-deploy)"))
		w.await(as, name+": session/inputNeededSet", isType(ch, "session/inputNeededSet", `"id":"ap-`+id+`"`, `"toolConfirmation"`))
	}
	for name, r := range map[string]sharedReplica{"B": b, "C": c} {
		root, input := snapshotPrompts(t, r, sid)
		if len(root) != 1 || root[0] != id || len(input) != 1 || input[0] != "ap-"+id {
			t.Fatalf("%s: a new observer's snapshots show approvals %v, inputNeeded %v; want %s", name, root, input, id)
		}
	}

	answerVia(t, b, id, true)
	select {
	case d, ok := <-got:
		if !ok || !d.Allowed() {
			t.Fatalf("the agent on A got %+v after the approval through B", d)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the agent on A got no decision after the approval through B")
	}
	for _, name := range []string{"A", "B", "C"} {
		w, as := obs[name], acts[name]
		w.await(as, name+": root ahp/approvalRemoved", isType("ahp-root://", "ahp/approvalRemoved", `"approvalId":"`+id+`"`, `"status":"approved"`))
		w.await(as, name+": session/inputNeededRemoved", isType(ch, "session/inputNeededRemoved", `"id":"ap-`+id+`"`))
		w.await(as, name+": toolCallConfirmed by the user", isType(cch, "chat/toolCallConfirmed", `"ap-`+id+`"`, `"confirmed":"user-action"`))
		// Once, not twice: the hub hears of it from its harness and from
		// the store.
		n := 0
		for _, x := range *as {
			if isType("ahp-root://", "ahp/approvalAdded")(x) || isType(ch, "session/inputNeededSet")(x) {
				n++
			}
		}
		if n != 2 {
			t.Fatalf("%s: the prompt was announced %d times (want root + session once each):%s", name, n, dump(*as))
		}
	}
	for name, r := range map[string]sharedReplica{"A": a, "B": b, "C": c} {
		if root, input := snapshotPrompts(t, r, sid); len(root)+len(input) != 0 {
			t.Fatalf("%s: after the answer a new observer still sees approvals %v, inputNeeded %v", name, root, input)
		}
	}
}

// An approval raised on A that nobody answers expires on A (its timeout):
// the prompt B's observer was shown is cleared there too, with the
// status expired, and the agent gets the fallback (block).
func TestExpiredApprovalClearedOnEveryReplica(t *testing.T) {
	url := sharedTestDatabase(t)
	const sid = "replica-expiry"
	a := startEscalatingReplica(t, url, 3*time.Second)
	b := startEscalatingReplica(t, url, 3*time.Second)
	agent := dial(t, a.sock, client.Options{SessionID: sid, AgentID: "coder", Timeout: time.Minute})
	decide(t, agent, "echo start")
	wb, actsB := watchSession(t, b, sid)
	got := escalate(t, agent)
	ch, cch := "ahp-session:/"+sid, "ahp-chat:/"+sid
	added := wb.await(actsB, "B: root ahp/approvalAdded", isType("ahp-root://", "ahp/approvalAdded"))
	var x struct {
		Approval struct {
			ID string `json:"id"`
		} `json:"approval"`
	}
	_ = json.Unmarshal(added.Action, &x)
	wb.await(actsB, "B: session/inputNeededSet", isType(ch, "session/inputNeededSet", `"ap-`+x.Approval.ID+`"`))
	select {
	case d, ok := <-got:
		if !ok || d.Allowed() {
			t.Fatalf("an expired approval (fallback block) gave the agent %+v", d)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the agent got no decision after its approval expired")
	}
	wb.await(actsB, "B: root ahp/approvalRemoved (expired)", isType("ahp-root://", "ahp/approvalRemoved", `"approvalId":"`+x.Approval.ID+`"`, `"status":"expired"`))
	wb.await(actsB, "B: session/inputNeededRemoved", isType(ch, "session/inputNeededRemoved", `"id":"ap-`+x.Approval.ID+`"`))
	// The decision record (fallback block) then confirms the tool call, as
	// on the replica that raised it.
	wb.await(actsB, "B: toolCallConfirmed (blocked)", isType(cch, "chat/toolCallConfirmed", `"ap-`+x.Approval.ID+`"`, `"approved":false`))
}

// An approval whose replica stopped without a clean shutdown (no
// heartbeat, not in the registry) is expired by a live replica, and its
// prompt is cleared on that replica's observers; an approval the live
// replica raised itself names it and stays pending.
func TestOrphanedApprovalExpiredByLiveReplica(t *testing.T) {
	url := sharedTestDatabase(t)
	const sid = "replica-orphan"
	b := startEscalatingReplica(t, url, time.Minute)
	db, err := postgres.Open(t.Context(), url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	agent := dial(t, b.sock, client.Options{SessionID: sid, AgentID: "coder", Timeout: 2 * time.Minute})
	decide(t, agent, "echo start")
	w, acts := watchSession(t, b, sid)

	// B's own approval names B, as its registry entry does.
	got := escalate(t, agent)
	added := w.await(acts, "root ahp/approvalAdded of B's own approval", isType("ahp-root://", "ahp/approvalAdded", `"ask-deploy"`))
	var x struct {
		Approval struct {
			ID string `json:"id"`
		} `json:"approval"`
	}
	if err := json.Unmarshal(added.Action, &x); err != nil || x.Approval.ID == "" {
		t.Fatalf("approvalAdded %s", added.Action)
	}
	own, err := db.Approvals().Get(t.Context(), x.Approval.ID)
	if err != nil {
		t.Fatal(err)
	}
	reps, err := db.Replicas(t.Context(), time.Minute)
	if err != nil || len(reps) != 1 || own.Replica != reps[0].ID {
		t.Fatalf("B's approval names replica %q; registry %+v (%v)", own.Replica, reps, err)
	}

	// An approval of a replica that is gone: shown, then expired by B.
	orphan := &store.Approval{ID: "orphan-1", SessionID: sid, AgentID: "coder", Replica: "gone-host-1-dead",
		Created: time.Now().Add(-time.Hour), RuleID: "ask-deploy", Reason: "a human decides deploys"}
	if err := db.Approvals().Create(t.Context(), orphan); err != nil {
		t.Fatal(err)
	}
	w.await(acts, "root ahp/approvalAdded of the orphan", isType("ahp-root://", "ahp/approvalAdded", `"orphan-1"`))
	w.await(acts, "root ahp/approvalRemoved of the orphan (expired)",
		isType("ahp-root://", "ahp/approvalRemoved", `"approvalId":"orphan-1"`, `"status":"expired"`))
	cur, err := db.Approvals().Get(t.Context(), "orphan-1")
	if err != nil || cur.Status != store.ApprovalExpired || !strings.Contains(cur.DecisionReason, "stopped") {
		t.Fatalf("orphan after expiry: %+v, %v", cur, err)
	}
	// The admin API names the replica that raised it.
	req, _ := http.NewRequest("GET", "http://"+b.admin+"/v1/approvals/orphan-1", nil)
	req.Header.Set("Authorization", "Bearer "+b.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var shown struct {
		Replica string `json:"replica"`
		Status  string `json:"status"`
	}
	err = json.NewDecoder(resp.Body).Decode(&shown)
	_ = resp.Body.Close()
	if err != nil || shown.Replica != "gone-host-1-dead" || shown.Status != "expired" {
		t.Fatalf("admin API shows the orphan as %+v (%v)", shown, err)
	}
	if root, _ := snapshotPrompts(t, b, sid); len(root) != 1 || root[0] != x.Approval.ID {
		t.Fatalf("pending approvals shown after the expiry: %v, want only B's own %s", root, x.Approval.ID)
	}

	answerVia(t, b, x.Approval.ID, true)
	select {
	case d, ok := <-got:
		if !ok || !d.Allowed() {
			t.Fatalf("the agent on B got %+v after its approval", d)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the agent on B got no decision after its approval")
	}
}
