package observe

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"time"

	"github.com/ahp-go/ahp/store"
)

// resume is one subscription a reconnecting client held.
type resume struct {
	channel  string
	lastSeen uint64
}

// ReconnectResult is the answer of reconnect, the Host Protocol's
// ReconnectResult: type "replay" with every missed action of the
// subscribed channels in serverSeq order and the channels that no longer
// exist, or type "snapshot" with a fresh snapshot of each channel when
// some missed action cannot be replayed.
type ReconnectResult struct {
	Type      string            `json:"type"`
	Actions   []json.RawMessage `json:"actions,omitempty"`
	Missing   []string          `json:"missing,omitempty"`
	Snapshots []*Snapshot       `json:"snapshots,omitempty"`
	Meta      map[string]any    `json:"_meta,omitempty"`
}

// MarshalJSON writes the members the result's type requires: actions and
// missing for a replay (empty lists included), snapshots for a snapshot.
func (r ReconnectResult) MarshalJSON() ([]byte, error) {
	if r.Type == "snapshot" {
		return json.Marshal(struct {
			Type      string         `json:"type"`
			Snapshots []*Snapshot    `json:"snapshots"`
			Meta      map[string]any `json:"_meta,omitempty"`
		}{r.Type, nonNil(r.Snapshots), r.Meta})
	}
	return json.Marshal(struct {
		Type    string            `json:"type"`
		Actions []json.RawMessage `json:"actions"`
		Missing []string          `json:"missing"`
		Meta    map[string]any    `json:"_meta,omitempty"`
	}{r.Type, nonNil(r.Actions), nonNil(r.Missing), r.Meta})
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// maxStoreReplay bounds the actions rebuilt from the store for one
// channel; beyond it the answer is snapshots.
const maxStoreReplay = 10000

// seqAction is a replayed action and its serverSeq, for merging.
type seqAction struct {
	seq uint64
	env json.RawMessage
}

// reconnect answers reconnect. Every channel is resubscribed; the missed
// actions come from the ring when it still holds every action after
// lastSeen, else, for session and chat channels, rebuilt from the store
// through the replay index; when some channel can be replayed neither
// way, the answer is a snapshot of every channel. Live actions published
// meanwhile are held back until the answer is queued.
func (h *Hub) reconnect(ctx context.Context, o *observer, id json.RawMessage, lastSeen uint64, chs []string) {
	subs := make([]resume, len(chs))
	for i, ch := range chs {
		subs[i] = resume{ch, lastSeen}
		h.ensureSession(ctx, ch)
	}
	h.catchUp(ctx, subs)
	res := ReconnectResult{Type: "replay", Missing: []string{}, Meta: connMeta(o)}
	type rebuild struct {
		ch      string
		entries []indexEntry
	}
	var rebuilds []rebuild
	var acts []seqAction
	live := []string{}
	h.mu.Lock()
	for _, ch := range chs {
		if h.snapshotLocked(ch) == nil {
			res.Missing = append(res.Missing, ch)
			continue
		}
		h.subscribeLocked(o, ch)
		live = append(live, ch)
	}
	// Missed actions of a channel nobody watched were not kept (kept.go).
	snapshot := false
	for _, ch := range live {
		if s := h.sessions[sessionIDOf(ch)]; s != nil && s.unkeptAfter(ch, lastSeen) {
			snapshot = true
		}
	}
	ring, inRing := h.ringReplayLocked(live, lastSeen)
	switch {
	case snapshot:
	case inRing:
		acts = ring
	default:
		for _, ch := range live {
			s := h.sessions[sessionIDOf(ch)]
			if s == nil || lastSeen < s.indexFrom || lastSeen > h.seq {
				snapshot = true
				break
			}
			es := s.index.after(lastSeen, ch == s.chatURI)
			if len(es) > maxStoreReplay {
				snapshot = true
				break
			}
			rebuilds = append(rebuilds, rebuild{ch, es})
		}
	}
	o.holding = true
	h.mu.Unlock()

	for _, rb := range rebuilds {
		if snapshot {
			break
		}
		got, err := h.rebuild(ctx, rb.ch, rb.entries)
		if err != nil {
			h.log.Info("replay from the store impossible; sending snapshots", "channel", rb.ch, "error", err)
			snapshot = true
			break
		}
		acts = append(acts, got...)
	}
	h.mu.Lock()
	if snapshot {
		res = ReconnectResult{Type: "snapshot", Snapshots: []*Snapshot{}, Meta: res.Meta}
		for _, ch := range live {
			if snap := h.snapshotLocked(ch); snap != nil {
				res.Snapshots = append(res.Snapshots, snap)
			}
		}
	} else {
		sort.Slice(acts, func(i, j int) bool { return acts[i].seq < acts[j].seq })
		res.Actions = make([]json.RawMessage, len(acts))
		for i, a := range acts {
			res.Actions[i] = a.env
		}
	}
	o.release(encodeResult(id, res))
	h.mu.Unlock()
}

// sessionIDOf returns the session of a session or chat channel ("" for
// any other).
func sessionIDOf(ch string) string {
	if id, ok := sessionOf(ch); ok {
		return id
	}
	id, _ := chatOf(ch)
	return id
}

// ringReplayLocked returns the actions of chs after lastSeen, in
// serverSeq order, when the ring still holds every action after lastSeen;
// h.mu must be held.
func (h *Hub) ringReplayLocked(chs []string, lastSeen uint64) ([]seqAction, bool) {
	if lastSeen > h.seq {
		return nil, false // a serverSeq this harness never gave
	}
	if lastSeen == h.seq {
		return nil, true
	}
	if h.ringLen == 0 || lastSeen < h.ringFloor {
		return nil, false // actions after lastSeen have left the ring
	}
	want := make(map[string]bool, len(chs))
	for _, ch := range chs {
		want[ch] = true
	}
	var acts []seqAction
	for k := 0; k < h.ringLen; k++ {
		f := &h.ring[(h.ringEnd-h.ringLen+k+len(h.ring))%len(h.ring)]
		if f.seq > lastSeen && want[f.channel] {
			acts = append(acts, seqAction{f.seq, f.encoded()})
		}
	}
	return acts, true
}

// errGone is returned when a source of an action is no longer in the store.
var errGone = errors.New("observe: the store no longer holds what the action was built from")

// rebuild rebuilds actions from the store.
func (h *Hub) rebuild(ctx context.Context, ch string, entries []indexEntry) ([]seqAction, error) {
	sid := sessionIDOf(ch)
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
	acts := make([]seqAction, 0, len(entries))
	for _, ie := range entries {
		o := op{kind: ie.kind, toolCall: ie.toolCall, approved: ie.approved, how: ie.how, turnID: ie.turnID, dur: ie.dur}
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
			if h.o.Effects != nil && (ie.kind == opStart || ie.kind == opReady || ie.kind == opInputSet) {
				o.effects = h.o.Effects(a.Event)
			}
		case ie.kind == opTurnComplete:
			// built from its index entry alone
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
		p, _ := encodeAction(ch, o.build(SessionChannel(sid)), ie.seq, nil)
		acts = append(acts, seqAction{ie.seq, p})
	}
	return acts, nil
}
