package observe

import (
	"bytes"
	"context"
	"time"

	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/runs"
	"github.com/ahp-go/ahp/store"
)

// When an agent connection ends, the harness marks the open runs of its
// sessions (connection_ended, and the connection_lost flag when lost) and
// then writes a connection_ended audit record. The hub answers the record
// by republishing the session's runs that changed, as ahp/runChanged
// actions after the record's own, so that observers see it at once. It
// reads the store only for a session somebody watches: otherwise it marks
// the session's runs stale, and the first observer to subscribe to (or
// reconnect to) the session gets the updates then.

// maxSessionRuns bounds the run records read for one session when its
// connection ended: the harness marks no more than that many.
const maxSessionRuns = runs.MaxEndedRuns

// connEndedLocked asks the run worker to republish the runs of s after a
// connection_ended record, when somebody watches s; else it marks them
// stale. h.mu must be held.
func (h *Hub) connEndedLocked(s *session) {
	if len(h.subs[s.uri]) == 0 {
		s.runsStale = true
		return
	}
	h.requestRunsLocked(s)
}

// requestRunsLocked queues the republication of the runs of s; when the
// worker is too far behind, they stay stale until the next subscriber.
// h.mu must be held.
func (h *Hub) requestRunsLocked(s *session) {
	select {
	case h.runq <- runReq{sessionID: s.id}:
		s.runsStale = false
	default:
		s.runsStale = true
	}
}

// isConnectionEnded reports whether e is the harness's record of an ended
// agent connection.
func isConnectionEnded(e *Entry) bool { return e.EventType == harness.EventConnectionEnded }

// publishSessionRuns reads the runs of a session from the store and
// publishes those that differ from what the hub holds, oldest first. It
// does nothing but mark them stale when nobody watches the session any
// more.
func (h *Hub) publishSessionRuns(ctx context.Context, sessionID string) {
	ch := SessionChannel(sessionID)
	h.mu.Lock()
	s := h.sessions[sessionID]
	if s == nil || len(h.subs[ch]) == 0 {
		if s != nil {
			s.runsStale = true
		}
		h.mu.Unlock()
		return
	}
	h.mu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	recs, err := h.o.Store.Runs().List(rctx, store.RunFilter{SessionID: sessionID, Limit: maxSessionRuns})
	cancel()
	h.mu.Lock()
	defer h.mu.Unlock()
	s = h.sessions[sessionID]
	if s == nil {
		return // forgotten meanwhile: a later snapshot reads the store
	}
	if err != nil {
		s.runsStale = true
		h.log.Warn("run records of a session whose connection ended not read", "session", ch, "error", err)
		return
	}
	for i := len(recs) - 1; i >= 0; i-- {
		b := runJSON(recs[i])
		if bytes.Equal(s.runs[recs[i].RunID], b) {
			continue
		}
		s.runs[recs[i].RunID] = b
		h.publishLocked(s, &op{kind: opRun, run: b}, indexEntry{kind: opRun})
	}
}
