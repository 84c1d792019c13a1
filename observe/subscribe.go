package observe

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/ahp-go/ahp/store"
)

// snapshotEvents is how many of a snapshot's newest timeline entries
// carry their event inline (older ones give its size only).
const snapshotEvents = 100

// snapshotLocked returns the snapshot of a channel the hub holds, or nil;
// h.mu must be held.
func (h *Hub) snapshotLocked(ch string) *Snapshot {
	if ch == RootChannel {
		return &Snapshot{Resource: ch, State: h.rootStateLocked(), FromSeq: h.seq}
	}
	if id, ok := chatOf(ch); ok {
		if s := h.sessions[id]; s != nil {
			return &Snapshot{Resource: ch, State: s.chatState(), FromSeq: h.seq}
		}
		return nil
	}
	id, ok := sessionOf(ch)
	if !ok {
		return nil
	}
	s := h.sessions[id]
	if s == nil {
		return nil
	}
	st := s.state()
	tl := st.Meta.AHP.Timeline
	for i := 0; i < len(tl)-snapshotEvents; i++ {
		tl[i].Event = nil
	}
	return &Snapshot{Resource: ch, State: st, FromSeq: h.seq}
}

// ensureSession loads a session the hub does not hold from the store; it
// reports whether the session exists.
func (h *Hub) ensureSession(ctx context.Context, ch string) bool {
	if ch == RootChannel {
		return true
	}
	id, ok := sessionOf(ch)
	if !ok {
		if id, ok = chatOf(ch); !ok {
			return false
		}
	}
	h.mu.Lock()
	_, held := h.sessions[id]
	h.mu.Unlock()
	if held {
		return true
	}
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	recs, err := h.o.Store.Audit().Query(lctx, store.AuditFilter{SessionID: id, Limit: maxTimeline, Newest: true})
	if err != nil || len(recs) == 0 {
		return false
	}
	runs, _ := h.o.Store.Runs().List(lctx, store.RunFilter{SessionID: id, Limit: 100})
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, held := h.sessions[id]; held {
		return true
	}
	s, _ := h.sessionLocked(id)
	for i := range recs {
		e := entryOf(&recs[i])
		s.recordOps(&e)
		h.applyLocked(s, e)
	}
	for _, r := range runs {
		s.runs[r.RunID] = runJSON(r)
	}
	s.dirty = false
	return true
}

// subscribeLocked adds o to a channel's subscribers; h.mu must be held.
func (h *Hub) subscribeLocked(o *observer, ch string) {
	if o.subs[ch] {
		return
	}
	o.subs[ch] = true
	m := h.subs[ch]
	if m == nil {
		m = map[*observer]struct{}{}
		h.subs[ch] = m
	}
	m[o] = struct{}{}
	if id, ok := sessionOf(ch); ok {
		if s := h.sessions[id]; s != nil && s.runsStale {
			h.requestRunsLocked(s)
		}
	}
}

// encodeResult returns a JSON-RPC response, or an error response when the
// result cannot be encoded.
func encodeResult(id json.RawMessage, result any) []byte {
	b, err := json.Marshal(response{JSONRPC: "2.0", ID: id, Result: result})
	if err != nil {
		b, _ = json.Marshal(errorResponse{JSONRPC: "2.0", ID: id, Error: rpcError{Code: CodeInternalError, Message: "result could not be encoded: " + err.Error()}})
	}
	return b
}

// subscribe answers subscribe: the snapshot, then the channel's actions
// after it, with no gap and no repeat.
func (h *Hub) subscribe(ctx context.Context, o *observer, id json.RawMessage, ch string) *rpcError {
	var snap *Snapshot
	if h.ensureSession(ctx, ch) {
		h.mu.Lock()
		snap = h.snapshotLocked(ch)
		if snap == nil {
			h.mu.Unlock()
		}
	}
	if snap == nil {
		return notFound(ch)
	}
	o.holding = true
	h.subscribeLocked(o, ch)
	h.mu.Unlock()
	b := encodeResult(id, map[string]any{"snapshot": snap})
	h.mu.Lock()
	o.release(b)
	h.mu.Unlock()
	return nil
}

// initialize answers initialize with the snapshots of the initial
// subscriptions (unknown channels are left out).
func (h *Hub) initialize(ctx context.Context, o *observer, id json.RawMessage, version string, subs []string) {
	for _, ch := range subs {
		h.ensureSession(ctx, ch)
	}
	h.mu.Lock()
	snaps := []*Snapshot{}
	for _, ch := range subs {
		if s := h.snapshotLocked(ch); s != nil {
			snaps = append(snaps, s)
			h.subscribeLocked(o, ch)
		}
	}
	seq := h.seq
	o.holding = true
	h.mu.Unlock()
	info := map[string]any{"name": h.o.ServerName, "version": h.o.ServerVersion}
	b := encodeResult(id, map[string]any{"protocolVersion": version, "serverSeq": seq, "serverInfo": info, "snapshots": snaps,
		"_meta": connMeta(o)})
	h.mu.Lock()
	o.release(b)
	h.mu.Unlock()
}

// listSessions pages through the sessions the hub holds, most recently
// active first. The cursor is the offset of the next page.
func (h *Hub) listSessions(limit int, cursor string) (map[string]any, *rpcError) {
	if limit <= 0 || limit > maxListSessions {
		limit = maxListSessions
	}
	off := 0
	if cursor != "" {
		n, err := strconv.Atoi(cursor)
		if err != nil || n < 0 {
			return nil, errorf(CodeInvalidParams, "cursor is not one this server gave")
		}
		off = n
	}
	h.mu.Lock()
	all := h.summariesLocked()
	h.mu.Unlock()
	off = min(off, len(all))
	end := min(off+limit, len(all))
	out := map[string]any{"items": all[off:end]}
	if end < len(all) {
		out["nextCursor"] = strconv.Itoa(end)
	}
	return out, nil
}

// connMeta is what initialize and reconnect say in _meta.ahp of the
// connection: who is connected and whether it may answer approvals.
func connMeta(o *observer) map[string]any {
	return map[string]any{"ahp": map[string]any{"principal": map[string]any{"id": o.p.ID, "roles": o.p.Roles},
		"canApprove": canApprove(o.p)}}
}

// notFound is the error for a channel that does not exist: the Host
// Protocol's SessionNotFound for a session, NotFound for any other.
func notFound(ch string) *rpcError {
	if _, ok := sessionOf(ch); ok {
		return errorf(CodeSessionNotFound, "no session "+truncate(ch, 200))
	}
	return errorf(CodeNotFound, "no channel "+truncate(ch, 200))
}
