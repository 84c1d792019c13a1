package observe

import (
	"encoding/json"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/ahp-go/ahp/effects"
	"github.com/ahp-go/ahp/internal/jsonscan"
	"github.com/ahp-go/ahp/store"
)

// maxTimeline is how many entries a session's snapshot keeps.
const maxTimeline = 500

// maxEventBytes is the largest event an action carries inline; a larger
// one is announced by its size only.
const maxEventBytes = 16 << 10

// Entry is one line of a session's timeline: an audited event with its
// decision. Every field comes from the audit record, which is redacted.
type Entry struct {
	AuditID       int64     `json:"auditId,omitempty"`
	Time          time.Time `json:"time"`
	EventType     string    `json:"eventType"`
	AgentID       string    `json:"agentId"`
	Depth         uint32    `json:"depth"`
	Blocking      bool      `json:"blocking"`
	Outcome       string    `json:"outcome,omitempty"`
	RuleID        string    `json:"ruleId,omitempty"`
	Reason        string    `json:"reason,omitempty"`
	LatencyMs     float64   `json:"latencyMs"`
	PolicyVersion string    `json:"policyVersion,omitempty"`
	Principal     string    `json:"principal,omitempty"`
	Transport     string    `json:"transport,omitempty"`
	Redacted      []string  `json:"redacted,omitempty"`
	Error         string    `json:"error,omitempty"`
	ToolName      string    `json:"toolName,omitempty"`
	ToolCallID    string    `json:"toolCallId,omitempty"`
	ApprovalID    string    `json:"approvalId,omitempty"`
	// ApprovalStatus, DecidedBy and ApprovalReason say, for a decision
	// that waited for a human, how the approval ended, who answered and
	// why (from the decision's metadata).
	ApprovalStatus string          `json:"approvalStatus,omitempty"`
	DecidedBy      string          `json:"decidedBy,omitempty"`
	ApprovalReason string          `json:"approvalReason,omitempty"`
	Framework      string          `json:"framework,omitempty"`
	RunID          string          `json:"runId,omitempty"`
	EventBytes     int             `json:"eventBytes"`
	Event          json.RawMessage `json:"event,omitempty"`
	// payload is the event's payload (a slice of Event), found by the
	// scan that reads the fields above, so that the chat's tool call
	// takes its input without another scan.
	payload []byte
}

// eventFields are the parts of an event JSON an entry shows.
type eventFields struct {
	Depth     uint32
	ToolName  string
	RunID     string
	Framework string
	Payload   []byte // the payload member's JSON
}

// readEventFields takes the fields the timeline shows from a stored event
// with one scan and no decoding of the rest (the record is the harness's
// own, well-formed JSON; anything unexpected leaves a field empty).
func readEventFields(ev []byte) (f eventFields) {
	_ = jsonscan.ObjectValid(ev, func(k, v []byte) error {
		switch string(k) {
		case "depth":
			if n, ok := jsonscan.Uint(v, math.MaxUint32); ok {
				f.Depth = uint32(n)
			}
		case "payload":
			f.Payload = v
			if jsonscan.Kind(v) != '{' {
				return nil
			}
			_ = jsonscan.ObjectValid(v, func(pk, pv []byte) error {
				switch string(pk) {
				case "tool_name":
					f.ToolName, _ = jsonscan.String(pv)
				case "run_id":
					f.RunID, _ = jsonscan.String(pv)
				case "agent_info":
					if jsonscan.Kind(pv) == '{' {
						_ = jsonscan.ObjectValid(pv, func(ak, av []byte) error {
							if string(ak) == "framework" {
								f.Framework, _ = jsonscan.String(av)
							}
							return nil
						})
					}
				}
				return nil
			})
		}
		return nil
	})
	return f
}

// entryOf builds the timeline entry of an audit record.
func entryOf(rec *store.AuditRecord) Entry {
	e := Entry{AuditID: rec.ID, Time: rec.Time.UTC(), EventType: rec.EventType, AgentID: rec.AgentID,
		Blocking: rec.Blocking, Outcome: rec.Outcome, RuleID: rec.RuleID,
		LatencyMs: float64(rec.Latency.Microseconds()) / 1000, PolicyVersion: rec.PolicyVersion,
		Principal: rec.Principal, Transport: rec.Transport, Redacted: rec.Redacted, Error: rec.Error,
		EventBytes: len(rec.Event)}
	if rec.Outcome == "rejected" {
		e.Reason = rec.Error
	}
	if len(rec.Event) > 0 && jsonscan.Kind(rec.Event) == '{' {
		ef := readEventFields(rec.Event)
		e.Depth, e.ToolName, e.RunID, e.Framework = ef.Depth, ef.ToolName, ef.RunID, ef.Framework
		if len(rec.Event) <= maxEventBytes {
			e.payload = ef.Payload
		}
	}
	if len(rec.Event) <= maxEventBytes {
		e.Event = rec.Event
	}
	if len(rec.Decision) > 0 && jsonscan.Kind(rec.Decision) == '{' {
		readDecisionFields(rec.Decision, &e)
	}
	return e
}

// readDecisionFields takes the reason and the approval's id, status,
// decider and reason from a stored decision into e with one scan, as
// readEventFields does for the event; e.Reason is kept when the decision
// has none.
func readDecisionFields(d []byte, e *Entry) {
	_ = jsonscan.ObjectValid(d, func(k, v []byte) error {
		switch string(k) {
		case "reason":
			if r, ok := jsonscan.String(v); ok {
				e.Reason = r
			}
		case "metadata":
			if jsonscan.Kind(v) != '{' {
				return nil
			}
			_ = jsonscan.ObjectValid(v, func(mk, mv []byte) error {
				switch string(mk) {
				case "approval_id":
					e.ApprovalID, _ = jsonscan.String(mv)
				case "approval_status":
					e.ApprovalStatus, _ = jsonscan.String(mv)
				case "decided_by":
					e.DecidedBy, _ = jsonscan.String(mv)
				case "approval_reason":
					e.ApprovalReason, _ = jsonscan.String(mv)
				}
				return nil
			})
		}
		return nil
	})
}

// Summary is a session as the catalogue shows it: the Host Protocol's
// SessionSummary, with the harness's own fields in _meta.ahp.
type Summary struct {
	Resource   string    `json:"resource"`
	Provider   string    `json:"provider"`
	Title      string    `json:"title"`
	Status     int       `json:"status"` // SessionStatus bits, set by session.wire
	Activity   string    `json:"activity,omitempty"`
	CreatedAt  time.Time `json:"createdAt"`
	ModifiedAt time.Time `json:"modifiedAt"`
	Meta       struct {
		AHP SummaryMeta `json:"ahp"`
	} `json:"_meta"`
}

// SummaryMeta is what the harness knows of a session beyond the Host
// Protocol's summary.
type SummaryMeta struct {
	AgentID      string           `json:"agentId"`
	Framework    string           `json:"framework,omitempty"`
	Counts       map[string]int64 `json:"counts"`
	Events       int64            `json:"events"`
	Pending      int              `json:"pendingApprovals"`
	MaxDepth     uint32           `json:"maxDepth"`
	LastActivity time.Time        `json:"lastActivity"`
	// State is "idle" (no event yet), "active" or "ended" (session_end).
	State string `json:"state"`
}

// session is the hub's state of one session.
type session struct {
	id       string
	uri      string // its session channel
	chatURI  string // its chat channel
	summary  Summary
	timeline []Entry               // the newest maxTimeline entries, oldest first
	open     map[string]string     // tool name → id of the last allowed tool call not yet completed
	pending  map[string]pendingReq // approval id → request
	runs     map[string]json.RawMessage
	chat     chat
	dirty    bool // summary changed since it was last announced
	// runsStale: the agent connection ended while nobody watched, so runs
	// may be older than the store's; the next subscriber has them
	// republished (see connend.go).
	runsStale bool
	// announced holds the tool calls of approvals that were announced
	// as pending; confirmed those whose confirmation was published.
	announced map[string]bool
	confirmed map[string]bool
	// recent holds each agent's last maxRecent entries (for at most
	// maxRecentAgents agents), transport events left out, so that an
	// approval card lists what the agent did even when others flooded
	// the timeline since.
	recent    map[string][]Entry
	index     sessionIndex // replay index of the session's actions, oldest first
	indexFrom uint64       // every action of the session after this serverSeq is in index
	// unkeptSession and unkeptChat are the serverSeq of the last action
	// of the session's channel and of its chat that was not kept for
	// replay, nobody watching (kept.go).
	unkeptSession, unkeptChat uint64
}

// pendingReq is an approval waiting for a human, as the session shows it.
type pendingReq struct {
	Request json.RawMessage
	seq     uint64
}

func newSession(id string, now time.Time) *session {
	now = now.UTC().Truncate(time.Millisecond)
	s := &session{id: id, uri: SessionChannel(id), chatURI: ChatChannel(id), summary: Summary{Resource: SessionChannel(id), Provider: "ahp", Title: id,
		CreatedAt: now, ModifiedAt: now},
		open: map[string]string{}, pending: map[string]pendingReq{}, runs: map[string]json.RawMessage{},
		announced: map[string]bool{}, confirmed: map[string]bool{}, chat: newChat()}
	s.summary.Meta.AHP = SummaryMeta{Counts: map[string]int64{}, LastActivity: now, State: "idle"}
	return s
}

// apply adds a recorded entry to the session.
func (s *session) apply(e Entry) {
	// The timeline shows the last maxTimeline entries; it may hold up to
	// twice that, so that the oldest are moved out once per maxTimeline
	// entries rather than on each.
	if len(s.timeline) >= 2*maxTimeline {
		n := copy(s.timeline, s.timeline[len(s.timeline)-maxTimeline+1:])
		clear(s.timeline[n:])
		s.timeline = s.timeline[:n]
	}
	s.timeline = append(s.timeline, e)
	s.noteRecent(&e)
	sm := &s.summary.Meta.AHP
	sm.Events++
	if e.Outcome != "" {
		sm.Counts[e.Outcome]++
	}
	if e.AgentID != "" {
		sm.AgentID = e.AgentID
	}
	if e.Framework != "" {
		sm.Framework = e.Framework
	}
	sm.MaxDepth = max(sm.MaxDepth, e.Depth)
	sm.LastActivity = e.Time
	s.summary.ModifiedAt = e.Time.UTC().Truncate(time.Millisecond)
	switch e.EventType {
	case "session_end":
		sm.State = "ended"
	default:
		sm.State = "active"
	}
	s.dirty = true
}

// wire returns a copy of the session's summary as sent: status computed,
// counts copied.
func (s *session) wire() Summary {
	sm := s.summary
	sm.Status = s.status()
	sm.Meta.AHP.Counts = copyCounts(sm.Meta.AHP.Counts)
	sm.Meta.AHP.Pending = len(s.pending)
	if len(s.pending) > 0 {
		sm.Activity = "waiting for an approval"
	}
	return sm
}

// shown returns the timeline entries a snapshot shows: the last
// maxTimeline.
func (s *session) shown() []Entry {
	return s.timeline[max(0, len(s.timeline)-maxTimeline):]
}

// State is a session channel's snapshot state: the Host Protocol's
// SessionState (its summary's fields, lifecycle, chats, inputNeeded), with
// the harness's timeline and runs in _meta.ahp beside the summary's.
type State struct {
	Resource      string            `json:"resource"`
	Provider      string            `json:"provider"`
	Title         string            `json:"title"`
	Status        int               `json:"status"`
	Activity      string            `json:"activity,omitempty"`
	CreatedAt     time.Time         `json:"createdAt"`
	ModifiedAt    time.Time         `json:"modifiedAt"`
	Lifecycle     string            `json:"lifecycle"`
	ActiveClients []any             `json:"activeClients"`
	Chats         []chatSummary     `json:"chats"`
	DefaultChat   string            `json:"defaultChat"`
	InputNeeded   []json.RawMessage `json:"inputNeeded"`
	Meta          struct {
		AHP StateMeta `json:"ahp"`
	} `json:"_meta"`
}

// StateMeta is the harness's part of a session snapshot: the summary's
// fields, the timeline and the run records.
type StateMeta struct {
	SummaryMeta
	Timeline []Entry           `json:"timeline"`
	Runs     []json.RawMessage `json:"runs"`
}

// state returns a copy of the session's snapshot state.
func (s *session) state() State {
	sm := s.wire()
	st := State{Resource: sm.Resource, Provider: sm.Provider, Title: sm.Title, Status: sm.Status, Activity: sm.Activity,
		CreatedAt: sm.CreatedAt, ModifiedAt: sm.ModifiedAt, Lifecycle: "ready", ActiveClients: []any{},
		Chats: []chatSummary{s.chatSummary()}, DefaultChat: s.chatURI, InputNeeded: []json.RawMessage{}}
	st.Meta.AHP = StateMeta{SummaryMeta: sm.Meta.AHP, Timeline: append([]Entry(nil), s.shown()...), Runs: []json.RawMessage{}}
	reqs := make([]pendingReq, 0, len(s.pending))
	for _, p := range s.pending {
		reqs = append(reqs, p)
	}
	sort.Slice(reqs, func(i, j int) bool { return reqs[i].seq < reqs[j].seq })
	for _, p := range reqs {
		st.InputNeeded = append(st.InputNeeded, p.Request)
	}
	ids := make([]string, 0, len(s.runs))
	for id := range s.runs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		st.Meta.AHP.Runs = append(st.Meta.AHP.Runs, s.runs[id])
	}
	return st
}

// RunJSON is a run record as observers see it.
type RunJSON struct {
	RunID     string          `json:"runId"`
	SessionID string          `json:"sessionId"`
	Status    string          `json:"status"`
	UpdatedAt time.Time       `json:"updatedAt"`
	Flags     []string        `json:"flags,omitempty"`
	Record    json.RawMessage `json:"record"`
}

func runJSON(r store.RunRecord) json.RawMessage {
	b, _ := json.Marshal(RunJSON{RunID: r.RunID, SessionID: r.SessionID, Status: r.Status, UpdatedAt: r.UpdatedAt, Flags: r.Flags, Record: r.Record})
	return b
}

// ApprovalJSON is a pending approval as the root channel lists it.
type ApprovalJSON struct {
	ID         string          `json:"id"`
	Created    time.Time       `json:"created"`
	SessionID  string          `json:"sessionId"`
	AgentID    string          `json:"agentId"`
	RuleID     string          `json:"ruleId"`
	Reason     string          `json:"reason"`
	Status     string          `json:"status"`
	ToolCallID string          `json:"toolCallId"`
	Event      json.RawMessage `json:"event,omitempty"` // left out above maxApprovalEventBytes
	EventBytes int             `json:"eventBytes"`      // the event's size, shown or not
	// Effects is what the action does, as the harness's policy reads it
	// (programs run, files changed, hosts reached); only in the root
	// channel's approval list.
	Effects []effects.Effect `json:"effects,omitempty"`
	// Meta holds the harness's additions (see ApprovalExtra).
	Meta *ApprovalMeta `json:"_meta,omitempty"`
}

// ApprovalMeta is the _meta member of an approval: ahp's additions under
// "ahp".
type ApprovalMeta struct {
	AHP ApprovalExtra `json:"ahp"`
}

// ApprovalExtra is what an approver decides on beyond the request itself:
// when the approval expires and what the agent then gets, what the agent
// did just before (only in the root channel's list), and once decided,
// who decided, when and why.
type ApprovalExtra struct {
	// Deadline is when the approval expires unless answered; Fallback
	// is the decision the waiting agent then gets (allow or block).
	Deadline *time.Time `json:"deadline,omitempty"`
	Fallback string     `json:"fallback,omitempty"`
	// Recent lists the agent's last actions in the session before it
	// asked, oldest first (at most maxRecent).
	Recent         []RecentAction `json:"recent,omitempty"`
	DecidedBy      string         `json:"decidedBy,omitempty"`
	DecidedAt      *time.Time     `json:"decidedAt,omitempty"`
	DecisionReason string         `json:"decisionReason,omitempty"`
}

// RecentAction is one earlier action of an agent, as an approval card
// lists it: what was asked and what the harness answered.
type RecentAction struct {
	Time      time.Time `json:"time"`
	EventType string    `json:"eventType"`
	ToolName  string    `json:"toolName,omitempty"`
	Outcome   string    `json:"outcome,omitempty"`
	RuleID    string    `json:"ruleId,omitempty"`
	// Summary is the command, path or URL of the action, cut to
	// maxSummaryRunes.
	Summary string `json:"summary,omitempty"`
}

// maxRecent is how many earlier actions an approval lists;
// maxSummaryRunes bounds each one's summary.
const (
	maxRecent       = 5
	maxSummaryRunes = 200
)

// transportNoise reports whether an event type is the connection's own
// bookkeeping rather than something the agent did.
func transportNoise(eventType string) bool {
	return eventType == "handshake" || eventType == "connection_ended"
}

// maxRecentAgents bounds the agents of a session whose recent entries
// are kept.
const maxRecentAgents = 8

// noteRecent keeps e among its agent's recent entries.
func (s *session) noteRecent(e *Entry) {
	if transportNoise(e.EventType) || e.AgentID == "" {
		return
	}
	r, ok := s.recent[e.AgentID]
	if !ok && len(s.recent) >= maxRecentAgents {
		return
	}
	if s.recent == nil {
		s.recent = map[string][]Entry{}
	}
	if len(r) >= maxRecent {
		copy(r, r[1:])
		r = r[:maxRecent-1]
	}
	s.recent[e.AgentID] = append(r, *e)
}

// recentActions returns the last maxRecent entries of s by agent (of any
// agent when agent is empty or not tracked), oldest first, transport
// events left out.
func (s *session) recentActions(agent string) []RecentAction {
	var es []*Entry
	if r, ok := s.recent[agent]; ok && agent != "" {
		for i := range r {
			es = append(es, &r[i])
		}
	} else {
		for i := len(s.timeline) - 1; i >= 0 && len(es) < maxRecent; i-- {
			if e := &s.timeline[i]; !transportNoise(e.EventType) {
				es = append(es, e)
			}
		}
		slices.Reverse(es)
	}
	out := make([]RecentAction, 0, len(es))
	for _, e := range es {
		out = append(out, RecentAction{Time: e.Time, EventType: e.EventType, ToolName: e.ToolName, Outcome: e.Outcome,
			RuleID: e.RuleID, Summary: actionSummary(e.Event)})
	}
	return out
}

// actionSummary returns the command, file path or URL an event's payload
// names in its arguments (or input), cut to maxSummaryRunes; "" when none.
func actionSummary(ev json.RawMessage) string {
	if len(ev) == 0 {
		return ""
	}
	var v struct {
		Payload struct {
			Arguments map[string]json.RawMessage `json:"arguments"`
			Input     map[string]json.RawMessage `json:"tool_input"`
		} `json:"payload"`
	}
	if json.Unmarshal(ev, &v) != nil {
		return ""
	}
	for _, args := range []map[string]json.RawMessage{v.Payload.Arguments, v.Payload.Input} {
		for _, k := range []string{"command", "cmd", "file_path", "path", "url"} {
			var str string
			if raw, ok := args[k]; ok && json.Unmarshal(raw, &str) == nil && str != "" {
				if r := []rune(str); len(r) > maxSummaryRunes {
					str = string(r[:maxSummaryRunes]) + "…"
				}
				return str
			}
		}
	}
	return ""
}

// maxApprovalEventBytes is the largest event a pending approval carries
// inline: an approver must see what is asked in all but outlandish cases
// (a larger one is read through the admin API).
const maxApprovalEventBytes = 64 << 10

func approvalJSON(a store.Approval) ApprovalJSON {
	out := ApprovalJSON{ID: a.ID, Created: a.Created.UTC(), SessionID: a.SessionID, AgentID: a.AgentID, RuleID: a.RuleID,
		Reason: a.Reason, Status: string(a.Status), ToolCallID: approvalToolCallID(a.ID), EventBytes: len(a.Event)}
	if len(a.Event) <= maxApprovalEventBytes {
		out.Event = a.Event
	}
	if a.DecidedBy != "" || a.DecisionReason != "" || !a.DecidedAt.IsZero() {
		x := ApprovalExtra{DecidedBy: a.DecidedBy, DecisionReason: a.DecisionReason}
		if !a.DecidedAt.IsZero() {
			t := a.DecidedAt.UTC()
			x.DecidedAt = &t
		}
		out.Meta = &ApprovalMeta{AHP: x}
	}
	return out
}
