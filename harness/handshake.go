package harness

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
)

// HandleHandshake records each handshake in the audit log, as an event of
// type "handshake" whose payload is the request and whose metadata lists
// the ids the server filled in because the agent left them out
// ({"defaulted":["session_id","agent_id"]}), so that an audit reader can
// tell an id the agent chose from one derived from its connection. The
// response is the server's, unchanged.
func (h *Harness) HandleHandshake(ctx context.Context, req *protocol.HandshakeRequest, _ *protocol.HandshakeResponse) error {
	peer := peerOf(ctx)
	now := h.now()
	// The first principal to open a session owns it for ahp/query, at once
	// (its audit record below is written asynchronously).
	h.queries.claimOwner(req.SessionID, principalID(peer))
	// The payload is the request as the agent sent it: ids it left out
	// stay out (the envelope and the metadata carry the defaults).
	sent := map[string]any{"protocol_version": req.ProtocolVersion, "agent_info": req.AgentInfo}
	if !slices.Contains(req.Defaulted, "session_id") {
		sent["session_id"] = req.SessionID
	}
	if !slices.Contains(req.Defaulted, "agent_id") {
		sent["agent_id"] = req.AgentID
	}
	payload, err := json.Marshal(sent)
	if err != nil {
		return err
	}
	ev := protocol.Event{
		EventType: protocol.EventHandshake, SessionID: req.SessionID, AgentID: req.AgentID,
		Timestamp: now.UTC().Format(time.RFC3339Nano), Payload: payload,
	}
	if len(req.Defaulted) > 0 {
		ev.Metadata, _ = json.Marshal(map[string][]string{"defaulted": req.Defaulted})
	}
	// What is stored goes through the one redaction step, like any event.
	se := h.seal(&ev, policy.SecretsUnknown)
	evJSON, err := json.Marshal(se.ev)
	if err != nil {
		return err
	}
	rec := &store.AuditRecord{
		Time: now, SessionID: se.ev.SessionID, AgentID: se.ev.AgentID, EventType: string(protocol.EventHandshake),
		Event: evJSON, PolicyVersion: h.opts.Engine.Version(), Principal: principalID(peer), Transport: peer.Transport,
		DescriptorHash: h.descriptorHash(), Redacted: se.kinds.List(),
	}
	if err := h.opts.Store.Audit().AppendAsync(ctx, rec); err != nil {
		h.log.Error("audit append failed for a handshake", "error", err)
	} else {
		h.observeRecord(rec)
	}
	return nil
}
