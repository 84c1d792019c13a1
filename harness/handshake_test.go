package harness

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/transport"
)

// A handshake without ids (the 2.4 README snippets) is accepted, and the
// audit record says which ids came from the connection.
func TestHandshakeRecordedWithDefaults(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	req := &protocol.HandshakeRequest{ProtocolVersion: "2.0", AgentInfo: protocol.AgentInfo{Framework: "a3s-code", Version: "1.0.0"},
		SessionID: "memory-1", AgentID: "agent-1", Defaulted: []string{"session_id", "agent_id"}}
	pctx := server.WithPeer(ctx, transport.Info{Transport: "memory", Principal: &transport.Principal{ID: "agent-1"}})
	if err := f.h.HandleHandshake(pctx, req, &protocol.HandshakeResponse{}); err != nil {
		t.Fatal(err)
	}
	var rec *store.AuditRecord
	deadline := time.Now().Add(5 * time.Second)
	for rec == nil && time.Now().Before(deadline) {
		for _, r := range f.audit(t, store.AuditFilter{EventType: "handshake"}) {
			if r.SessionID == "memory-1" {
				rec = &r
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if rec == nil {
		t.Fatal("no audit record of the handshake")
	}
	var ev protocol.Event
	if err := protocol.DecodeEvent(rec.Event, &ev); err != nil {
		t.Fatalf("recorded event: %v (%s)", err, rec.Event)
	}
	if ev.AgentID != "agent-1" || rec.Principal != "agent-1" || !strings.Contains(string(ev.Metadata), `"defaulted":["session_id","agent_id"]`) {
		t.Fatalf("record %+v, event %s", rec, rec.Event)
	}
	var p map[string]any
	_ = json.Unmarshal(ev.Payload, &p)
	if p["agent_info"].(map[string]any)["framework"] != "a3s-code" {
		t.Fatalf("payload %s", ev.Payload)
	}
	// The fixture's own client sent its ids: its record says nothing was defaulted.
	for _, r := range f.audit(t, store.AuditFilter{EventType: "handshake"}) {
		if r.SessionID == "sess-1" && strings.Contains(string(r.Event), "defaulted") {
			t.Fatalf("client handshake marked defaulted: %s", r.Event)
		}
	}
}

// A secret in a handshake (say, a token pasted as the framework's name)
// is stored redacted, like any event.
func TestHandshakeRecordRedacted(t *testing.T) {
	f := newFixture(t)
	const token = "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	req := &protocol.HandshakeRequest{ProtocolVersion: "2.4", AgentInfo: protocol.AgentInfo{Framework: "x " + token, Version: "1"},
		SessionID: "hs-secret", AgentID: "a"}
	if err := f.h.HandleHandshake(context.Background(), req, &protocol.HandshakeResponse{}); err != nil {
		t.Fatal(err)
	}
	var recs []store.AuditRecord
	deadline := time.Now().Add(5 * time.Second)
	for len(recs) == 0 && time.Now().Before(deadline) {
		recs = f.audit(t, store.AuditFilter{SessionID: "hs-secret"})
		time.Sleep(10 * time.Millisecond)
	}
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	if strings.Contains(string(recs[0].Event), token) || !strings.Contains(string(recs[0].Event), "[REDACTED:") {
		t.Fatalf("handshake stored as %s", recs[0].Event)
	}
}

// When an agent's connection ends, each session handshaken on it gets a
// connection_ended record: "closed" when the agent hung up, "lost" with
// the transport's error otherwise.
func TestConnectionEndedRecorded(t *testing.T) {
	f := newFixture(t)
	ctx := server.WithPeer(context.Background(), transport.Info{Transport: "unix", Principal: &transport.Principal{ID: "agent-1"}})
	f.h.ConnEnded(ctx, []string{"gone-1", "gone-2"}, errors.New("read: connection reset by peer"))
	f.h.ConnEnded(ctx, []string{"bye-1"}, io.EOF)
	var recs []store.AuditRecord
	deadline := time.Now().Add(5 * time.Second)
	for len(recs) < 3 && time.Now().Before(deadline) {
		recs = f.audit(t, store.AuditFilter{EventType: EventConnectionEnded})
		time.Sleep(10 * time.Millisecond)
	}
	if len(recs) != 3 {
		t.Fatalf("%d connection_ended records", len(recs))
	}
	for _, r := range recs {
		lost := strings.HasPrefix(r.SessionID, "gone-")
		if lost != strings.Contains(string(r.Event), `"connection":"lost"`) || lost != strings.Contains(r.Error, "connection reset") || r.Principal != "agent-1" {
			t.Errorf("record %+v %s", r, r.Event)
		}
	}
}
