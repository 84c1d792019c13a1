package service_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/service"
)

// TestNotificationsAcrossReplicas: on a shared PostgreSQL store, the
// replica whose agent waits tells the pending approval, the replica
// through which a human decides tells the outcome, and neither tells what
// the other did: one body of each.
func TestNotificationsAcrossReplicas(t *testing.T) {
	url := sharedTestDatabase(t)
	h := newHook(t)
	replica := func(name string) (*running, config.Config) {
		c := testConfig(t)
		c.Store = url
		c.Admin = "http://127.0.0.1:0"
		pol := filepath.Join(filepath.Dir(c.DataDir), "deploy.yaml")
		writeFile(t, pol, deployPolicy)
		c.Policy.Files = []string{pol}
		c.Notifications.Sinks = []config.NotifySink{{Name: "all", Format: "json", URL: h.URL + "/" + name}}
		return start(t, c, service.Options{}), c
	}
	a, ca := replica("a")
	b, cb := replica("b")
	agent := dial(t, a.addrs[ca.Listen[0]], client.Options{SessionID: "s-rep", Timeout: time.Minute})
	got := make(chan protocol.Decision, 1)
	go func() {
		d, err := agent.Event(context.Background(), protocol.EventPreAction, map[string]any{"tool_name": "deploy", "arguments": map[string]any{}})
		if err != nil {
			d = protocol.Block(err.Error())
		}
		got <- d
	}()
	id := pendingID(t, a.svc.Store(), "s-rep")
	h.await(t, "pending", `"kind":"pending"`, id)
	adminPost(t, b.addrs["admin"], cb.DataDir, "/v1/approvals/"+id+"/approve", "fine")
	select {
	case d := <-got:
		if d.Kind != protocol.DecisionAllow {
			t.Fatalf("agent got %+v", d)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the agent on replica a never got the decision made on b")
	}
	h.await(t, "outcome", `"outcome":"approved"`, id)
	time.Sleep(500 * time.Millisecond) // room for a duplicate to show up
	var pend, outc, wrong int
	h.mu.Lock()
	for i, body := range h.bodies {
		switch {
		case strings.Contains(body, `"kind":"pending"`) && h.paths[i] == "/a":
			pend++
		case strings.Contains(body, `"kind":"outcome"`) && h.paths[i] == "/b":
			outc++
		default:
			wrong++ // sent by the replica that did not record it
		}
	}
	h.mu.Unlock()
	if pend != 1 || outc != 1 || wrong != 0 {
		t.Fatalf("%d pending bodies from a, %d outcomes from b, %d others; want one pending from a and one outcome from b:\n%s",
			pend, outc, wrong, strings.Join(h.all(), "\n"))
	}
}
