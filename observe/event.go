package observe

import (
	"context"
	"encoding/json"
	"time"

	"github.com/ahp-go/ahp/store"
)

// A dashboard shows a summary per timeline row and the whole event only
// when a person opens one. A client may therefore ask, with
// _meta.ahp.leanTimeline: true in initialize or reconnect, for the
// ahp/recorded actions it gets to carry their entry without the event
// (eventBytes still says how large it is), and fetch an event with
// ahp/event {channel, auditId} when it needs it. At thousands of
// decisions a second, the events are about half of what a watched session
// sends each observer; snapshots and replays still carry them.

// maxFetchedEvent bounds the event ahp/event returns (the store holds
// events up to the harness's own request limit).
const maxFetchedEvent = 1 << 20

// eventResult is the result of ahp/event.
type eventResult struct {
	AuditID    int64           `json:"auditId"`
	EventBytes int             `json:"eventBytes"`
	Event      json.RawMessage `json:"event,omitempty"`
}

// event returns the event of audit record auditID of the session of
// channel (a session or chat channel): from the session's timeline when
// the hub still holds it, else from the store. The event is as it was
// stored (redacted).
func (h *Hub) event(ctx context.Context, channel string, auditID int64) (*eventResult, *rpcError) {
	sid := sessionIDOf(channel)
	if sid == "" {
		return nil, errorf(CodeInvalidParams, "ahp/event needs a session channel")
	}
	h.mu.Lock()
	if s := h.sessions[sid]; s != nil {
		for i := len(s.timeline) - 1; i >= 0; i-- {
			if e := &s.timeline[i]; e.AuditID == auditID && len(e.Event) > 0 {
				r := &eventResult{AuditID: auditID, EventBytes: e.EventBytes, Event: e.Event}
				h.mu.Unlock()
				return r, nil
			}
		}
	}
	h.mu.Unlock()
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	recs, err := h.o.Store.Audit().Query(qctx, store.AuditFilter{SessionID: sid, AfterID: auditID - 1, Limit: 1})
	if err != nil {
		return nil, errorf(CodeInternalError, "the event could not be read")
	}
	if len(recs) == 0 || recs[0].ID != auditID {
		return nil, errorf(CodeNotFound, "no audit record "+itoa(auditID)+" in session "+truncate(sid, 200))
	}
	r := &eventResult{AuditID: auditID, EventBytes: len(recs[0].Event)}
	if len(recs[0].Event) <= maxFetchedEvent && json.Valid(recs[0].Event) {
		r.Event = recs[0].Event
	}
	return r, nil
}
