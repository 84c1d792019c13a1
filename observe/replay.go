package observe

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/ahp-go/ahp/store"
)

// resume is one subscription a reconnecting client held.
type resume struct {
	channel  string
	lastSeen uint64
}

// ReconnectResult is the answer for one channel of a reconnect: kind
// "replay" with the missed actions, "snapshot" when they cannot be
// replayed, or "missing" when the channel does not exist.
type ReconnectResult struct {
	Kind     string            `json:"kind"`
	Channel  string            `json:"channel"`
	Actions  []json.RawMessage `json:"actions,omitempty"`
	Snapshot *Snapshot         `json:"snapshot,omitempty"`
}

// maxStoreReplay bounds the actions rebuilt from the store for one
// channel; beyond it the channel gets a snapshot.
const maxStoreReplay = 10000

// reconnect answers reconnect. Each channel is resubscribed and answered
// with its missed actions: from the ring when it still holds them, else
// rebuilt from the store through the replay index, else a snapshot. Live
// actions published meanwhile are held back until the answer is queued.
func (h *Hub) reconnect(ctx context.Context, o *observer, id json.RawMessage, subs []resume) {
	h.catchUp(ctx, subs)
	for _, r := range subs {
		h.ensureSession(ctx, r.channel)
	}
	results := make([]ReconnectResult, len(subs))
	type rebuild struct {
		i       int
		entries []indexEntry
	}
	var rebuilds []rebuild
	h.mu.Lock()
	for i, r := range subs {
		res := &results[i]
		res.Channel = r.channel
		snap := h.snapshotLocked(r.channel)
		if snap == nil {
			res.Kind = "missing"
			continue
		}
		h.subscribeLocked(o, r.channel)
		if acts, ok := h.ringReplayLocked(r.channel, r.lastSeen); ok {
			res.Kind, res.Actions = "replay", acts
			continue
		}
		if sid, ok := sessionOf(r.channel); ok {
			s := h.sessions[sid]
			if r.lastSeen >= s.indexFrom && r.lastSeen <= h.seq {
				es := s.index.after(r.lastSeen)
				if len(es) <= maxStoreReplay {
					res.Kind = "replay"
					rebuilds = append(rebuilds, rebuild{i, es})
					continue
				}
			}
		}
		res.Kind, res.Snapshot = "snapshot", snap
	}
	seq := h.seq
	o.holding = true
	h.mu.Unlock()

	for _, rb := range rebuilds {
		res := &results[rb.i]
		acts, err := h.rebuild(ctx, res.Channel, rb.entries)
		if err == nil {
			res.Actions = acts
			continue
		}
		h.log.Info("replay from the store impossible; sending a snapshot", "channel", res.Channel, "error", err)
		h.mu.Lock()
		res.Kind, res.Snapshot = "snapshot", h.snapshotLocked(res.Channel)
		h.mu.Unlock()
		if res.Snapshot == nil {
			res.Kind = "missing"
		}
	}
	info := map[string]any{"ahpPrincipal": map[string]any{"id": o.p.ID, "roles": o.p.Roles}, "ahpCanApprove": canApprove(o.p)}
	b := encodeResult(id, map[string]any{"serverSeq": seq, "results": results, "serverInfo": info})
	h.mu.Lock()
	o.release(b)
	h.mu.Unlock()
}

// ringReplayLocked returns the actions of ch after lastSeen when the ring
// still holds every action after lastSeen; h.mu must be held.
func (h *Hub) ringReplayLocked(ch string, lastSeen uint64) ([]json.RawMessage, bool) {
	if lastSeen > h.seq {
		return nil, false // a serverSeq this harness never gave
	}
	if lastSeen == h.seq {
		return []json.RawMessage{}, true
	}
	if h.ringLen == 0 || lastSeen < h.ringFloor {
		return nil, false // actions after lastSeen have left the ring
	}
	acts := []json.RawMessage{}
	for k := 0; k < h.ringLen; k++ {
		f := &h.ring[(h.ringEnd-h.ringLen+k+len(h.ring))%len(h.ring)]
		if f.seq > lastSeen && f.channel == ch {
			acts = append(acts, f.encoded())
		}
	}
	return acts, true
}

// errGone is returned when a source of an action is no longer in the store.
var errGone = errors.New("observe: the store no longer holds what the action was built from")

// rebuild rebuilds actions from the store.
func (h *Hub) rebuild(ctx context.Context, ch string, entries []indexEntry) ([]json.RawMessage, error) {
	sid, _ := sessionOf(ch)
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var minNs, maxNs int64
	for _, e := range entries {
		if e.timeNs == 0 {
			continue
		}
		if minNs == 0 || e.timeNs < minNs {
			minNs = e.timeNs
		}
		maxNs = max(maxNs, e.timeNs)
	}
	byID := map[int64]*store.AuditRecord{}
	type key struct {
		ns  int64
		typ string
	}
	byTime := map[key][]*store.AuditRecord{}
	if minNs != 0 {
		recs, err := h.o.Store.Audit().Query(rctx, store.AuditFilter{SessionID: sid,
			Since: time.Unix(0, minNs), Until: time.Unix(0, maxNs+1), Limit: store.MaxQueryLimit})
		if err != nil {
			return nil, err
		}
		if len(recs) == store.MaxQueryLimit {
			return nil, errors.New("observe: too many records to replay")
		}
		for i := range recs {
			r := &recs[i]
			byID[r.ID] = r
			k := key{r.Time.UnixNano(), r.EventType}
			byTime[k] = append(byTime[k], r)
		}
	}
	used := map[int64]bool{}
	approvals := map[string]store.Approval{}
	acts := make([]json.RawMessage, 0, len(entries))
	for _, ie := range entries {
		o := op{kind: ie.kind, toolCall: ie.toolCall, approved: ie.approved, how: ie.how}
		switch {
		case ie.approvalID != "":
			a, ok := approvals[ie.approvalID]
			if !ok {
				var err error
				if a, err = h.o.Store.Approvals().Get(rctx, ie.approvalID); err != nil {
					return nil, errGone
				}
				approvals[ie.approvalID] = a
			}
			if ie.apStatus == store.ApprovalPending {
				a.Status, a.DecidedBy, a.DecidedAt, a.DecisionReason = store.ApprovalPending, "", time.Time{}, ""
			}
			o.appr = &a
		case ie.kind == opRun:
			r, err := h.o.Store.Runs().Get(rctx, ie.runID)
			if err != nil {
				return nil, errGone
			}
			o.run = runJSON(r)
		default:
			var rec *store.AuditRecord
			if ie.auditID > 0 {
				rec = byID[ie.auditID]
			} else {
				for _, r := range byTime[key{ie.timeNs, ie.eventType}] {
					if !used[r.ID] || len(byTime[key{ie.timeNs, ie.eventType}]) == 1 {
						rec = r
						break
					}
				}
			}
			if rec == nil {
				return nil, errGone
			}
			used[rec.ID] = true
			e := entryOf(rec)
			if ie.auditID == 0 {
				e.AuditID = 0 // as it was published: the record had no id yet
			}
			if ie.toolCall != "" {
				e.ToolCallID = ie.toolCall
			}
			o.entry = &e
		}
		p, _ := encodeAction(ch, o.build(ch), ie.seq)
		acts = append(acts, p)
	}
	return acts, nil
}
