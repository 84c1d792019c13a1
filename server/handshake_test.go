package server

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/transport"
)

// hsRecorder records the handshakes it sees.
type hsRecorder struct {
	recorder
	hmu  sync.Mutex
	seen []protocol.HandshakeRequest
}

func (h *hsRecorder) HandleHandshake(_ context.Context, req *protocol.HandshakeRequest, _ *protocol.HandshakeResponse) error {
	h.hmu.Lock()
	defer h.hmu.Unlock()
	h.seen = append(h.seen, *req)
	return nil
}

// The handshake the 2.4 README's curl, wscat and Python snippets send (no
// session_id, agent_id or capabilities) is accepted; the ids are filled in
// from the connection and the handler is told which.
func TestHandshakeFromReferenceSnippets(t *testing.T) {
	const snippet = `{"jsonrpc":"2.0","id":1,"method":"ahp/handshake","params":{"protocol_version":"2.0","agent_info":{"framework":"a3s-code","version":"1.0.0"}}}`
	// Without a HandshakeHandler.
	p := startServer(t, &recorder{}, Options{})
	p.send(snippet)
	if m := p.recv(); m["result"] == nil {
		t.Fatalf("snippet handshake refused: %v", m)
	}

	h := &hsRecorder{}
	p = startServer(t, h, Options{})
	p.send(snippet)
	if m := p.recv(); m["result"] == nil {
		t.Fatalf("snippet handshake refused: %v", m)
	}
	p.send(snippet)
	p.recv()
	p.send(`{"jsonrpc":"2.0","id":2,"method":"ahp/handshake","params":{"protocol_version":"2.4","agent_info":{"framework":"x","version":"1","capabilities":["pre_action"]},"session_id":"s","agent_id":"a"}}`)
	p.recv()
	h.hmu.Lock()
	defer h.hmu.Unlock()
	if len(h.seen) != 3 {
		t.Fatalf("%d handshakes seen", len(h.seen))
	}
	a, b, full := h.seen[0], h.seen[1], h.seen[2]
	if a.SessionID != "memory-1" || b.SessionID != "memory-2" || a.AgentID != "a3s-code" {
		t.Errorf("defaults %q/%q and %q", a.SessionID, a.AgentID, b.SessionID)
	}
	if !slices.Equal(a.Defaulted, []string{"session_id", "agent_id"}) {
		t.Errorf("Defaulted %v", a.Defaulted)
	}
	if full.SessionID != "s" || full.AgentID != "a" || full.Defaulted != nil {
		t.Errorf("given ids changed: %+v", full)
	}
}

// An authenticated connection's principal names the agent.
func TestHandshakeDefaultAgentIsPrincipal(t *testing.T) {
	s := New(&hsRecorder{}, Options{})
	req := protocol.HandshakeRequest{ProtocolVersion: "2.4", AgentInfo: protocol.AgentInfo{Framework: "f", Version: "1"}}
	ctx := WithPeer(context.Background(), transport.Info{Transport: "http", Principal: &transport.Principal{ID: "ci-bot"}})
	s.handshakeDefaults(ctx, &req)
	if req.SessionID != "http-1" || req.AgentID != "ci-bot" {
		t.Fatalf("got %q/%q", req.SessionID, req.AgentID)
	}
	req = protocol.HandshakeRequest{ProtocolVersion: "2.4"}
	s.handshakeDefaults(context.Background(), &req)
	if req.SessionID != "conn-2" || req.AgentID != "agent" {
		t.Fatalf("got %q/%q", req.SessionID, req.AgentID)
	}
}
