// Package nettest holds what the WebSocket and gRPC transport tests
// share: a handler that counts what reaches it and records who sent it, a
// credentials store with one principal per credential form, and helpers
// for AHP round trips. It is for tests only.
package nettest

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/auth/authtest"
	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/server"
)

// Secrets and principal names of Store.
const (
	APIKey      = "test-api-key-0123456789abcdef0123"
	Bearer      = "test-bearer-token-0123456789abcdef"
	KeyAgent    = "key-agent"
	BearerAgent = "bearer-agent"
	CertAgent   = "cert-agent" // mapped from a client certificate with CommonName CertCN
	CertCN      = "agent.example"
	Observer    = "observer-only"
	ObserverKey = "observer-key-0123456789abcdef0123"
)

// Store returns a credentials store: KeyAgent with APIKey, BearerAgent
// with Bearer, CertAgent from a certificate named CertCN, and Observer
// (ObserverKey), who lacks the agent role.
func Store(t testing.TB) *auth.Store {
	t.Helper()
	s, err := auth.Parse([]byte(`version: 1
principals:
  - id: ` + KeyAgent + `
    roles: [agent]
    api_keys: ["` + APIKey + `"]
  - id: ` + BearerAgent + `
    roles: [agent]
    bearer_tokens: ["` + Bearer + `"]
  - id: ` + CertAgent + `
    roles: [agent]
  - id: ` + Observer + `
    roles: [observer]
    api_keys: ["` + ObserverKey + `"]
mtls:
  - common_name: ` + CertCN + `
    principal: ` + CertAgent + `
`))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Handler decides events like a small policy: a pre_action whose command
// contains "rm -rf" is blocked, everything else allowed. It counts every
// call that reaches it and remembers the principal of the last one.
// Events whose command is "wait" block until Release is closed.
type Handler struct {
	server.BaseHandler
	Events        atomic.Int64 // HandleEvent calls
	Notifications atomic.Int64
	Handshakes    atomic.Int64
	Release       chan struct{}
	Waiting       chan struct{} // receives one value per "wait" event that started

	mu        sync.Mutex
	principal string
	deadline  bool
}

// NewHandler returns a Handler.
func NewHandler() *Handler {
	return &Handler{Release: make(chan struct{}), Waiting: make(chan struct{}, 64)}
}

// Calls returns how many handshakes, events and notifications reached h.
func (h *Handler) Calls() int64 {
	return h.Events.Load() + h.Notifications.Load() + h.Handshakes.Load()
}

// Principal returns the principal ID of the last call ("" when none).
func (h *Handler) Principal() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.principal
}

// SawDeadline reports whether the last event's context had a deadline.
func (h *Handler) SawDeadline() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.deadline
}

func (h *Handler) note(ctx context.Context) {
	id := ""
	if p := server.PeerFromContext(ctx).Principal; p != nil {
		id = p.ID
	}
	_, dl := ctx.Deadline()
	h.mu.Lock()
	h.principal, h.deadline = id, dl
	h.mu.Unlock()
}

// HandleHandshake counts handshakes and answers with the defaults.
func (h *Handler) HandleHandshake(ctx context.Context, _ *protocol.HandshakeRequest, _ *protocol.HandshakeResponse) error {
	h.Handshakes.Add(1)
	h.note(ctx)
	return nil
}

// HandleEvent blocks "rm -rf" commands and waits on "wait".
func (h *Handler) HandleEvent(ctx context.Context, ev *protocol.Event) (protocol.Decision, error) {
	h.Events.Add(1)
	h.note(ctx)
	var p struct {
		Arguments struct {
			Command string `json:"command"`
		} `json:"arguments"`
	}
	_ = json.Unmarshal(ev.Payload, &p)
	switch {
	case p.Arguments.Command == "wait":
		h.Waiting <- struct{}{}
		select {
		case <-h.Release:
		case <-ctx.Done():
			return protocol.Decision{}, ctx.Err()
		}
	case strings.Contains(p.Arguments.Command, "rm -rf"):
		return protocol.Block("destructive command"), nil
	}
	return protocol.Allow(), nil
}

// HandleNotification counts notifications.
func (h *Handler) HandleNotification(ctx context.Context, _ *protocol.Event) {
	h.Notifications.Add(1)
	h.note(ctx)
}

// Payloads of pre_action events.
var (
	RmRoot = json.RawMessage(`{"tool_name":"bash","arguments":{"command":"rm -rf /"}}`)
	Ls     = json.RawMessage(`{"tool_name":"bash","arguments":{"command":"ls"}}`)
	Wait   = json.RawMessage(`{"tool_name":"bash","arguments":{"command":"wait"}}`)
)

// RoundTrip performs the handshake and checks that "rm -rf /" is blocked
// and "ls" allowed.
func RoundTrip(t testing.TB, c *client.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Handshake(ctx); err != nil {
		t.Fatalf("handshake: %v", err)
	}
	d, err := c.Event(ctx, protocol.EventPreAction, RmRoot)
	if err != nil {
		t.Fatalf("event: %v", err)
	}
	if d.Kind != protocol.DecisionBlock {
		t.Fatalf("rm -rf /: got %s, want block", d.Kind)
	}
	d, err = c.Event(ctx, protocol.EventPreAction, Ls)
	if err != nil {
		t.Fatalf("event: %v", err)
	}
	if d.Kind != protocol.DecisionAllow {
		t.Fatalf("ls: got %s, want allow", d.Kind)
	}
}

// Refusals returns the value of ahp_auth_refusals_total for transport and
// reason in reg.
func Refusals(t testing.TB, reg *prometheus.Registry, transport, reason string) float64 {
	t.Helper()
	return authtest.Refusals(t, reg, transport, reason)
}

// Eventually waits up to d for cond.
func Eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
