package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
)

// MemoryOptions configure the memory the harness fills itself from what
// agents do (docs/cognitive.md).
type MemoryOptions struct {
	// DisableCapture stops the harness keeping memories (the operator
	// switch); memory_recall still answers from the facts people added.
	DisableCapture bool
	// Retention is how long kept memories live (30 days when 0); facts
	// added by people are never pruned.
	Retention time.Duration
	// CrossSessionAgentFacts lets a session recall what agents wrote in
	// other sessions of its project. Off by default: across sessions only
	// human and policy memories are recalled, because an agent's text is
	// a path for prompt injection into another session.
	CrossSessionAgentFacts bool
}

// Bounds of the memory capture.
const (
	maxMemoryBytes     = 2 << 10 // a kept memory is cut to this
	maxPendingCaptures = 64      // captures being written; more are dropped
	maxKnownWorkspaces = 50000   // sessions whose workspace is remembered
	pruneEvery         = time.Hour
)

// memoryKeeper writes memories in the background and remembers which
// project each session works in.
type memoryKeeper struct {
	h       *Harness
	sem     chan struct{}
	mu      sync.Mutex
	ws      map[string]string // session → workspace
	pruned  time.Time
	pending sync.WaitGroup
}

func newMemoryKeeper(h *Harness) *memoryKeeper {
	return &memoryKeeper{h: h, sem: make(chan struct{}, maxPendingCaptures), ws: map[string]string{}}
}

// learnWorkspace records the project a session works in.
func (m *memoryKeeper) learnWorkspace(session, ws string) {
	ws = normWorkspace(ws)
	if session == "" || ws == "" || len(ws) > store.MaxAuditFieldBytes {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.ws) >= maxKnownWorkspaces {
		clear(m.ws) // rare; sessions tell it again on their next event
	}
	m.ws[session] = ws
}

// workspace returns the project a session was last seen in, or "".
func (m *memoryKeeper) workspace(session string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ws[session]
}

// normWorkspace cleans a workspace path so that "/w/" and "/w" are one project.
func normWorkspace(ws string) string {
	ws = strings.TrimSpace(ws)
	if ws == "" {
		return ""
	}
	return filepath.Clean(ws)
}

// keep stores a memory of session, redacted, in the background. It never
// blocks the agent: when too many writes are pending the memory is dropped.
func (m *memoryKeeper) keep(session, kind, origin, source, content string) {
	if m.h.opts.Memory.DisableCapture || strings.TrimSpace(content) == "" {
		return
	}
	content, _ = m.h.red.String(content)
	source, _ = m.h.red.String(source)
	session, _ = m.h.red.String(session)
	f := &store.Fact{SessionID: session, Workspace: m.workspace(session), Kind: kind, Origin: origin,
		Source: source, Content: cutUTF8(content, maxMemoryBytes), Confidence: 1, Created: m.h.now()}
	select {
	case m.sem <- struct{}{}:
	default:
		m.h.log.Warn("memory capture dropped: too many pending writes", "kind", kind)
		return
	}
	m.pending.Add(1)
	go func() {
		defer func() { <-m.sem; m.pending.Done() }()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := m.h.opts.Store.Memory().Add(ctx, f); err != nil {
			m.h.log.Warn("memory not kept", "kind", kind, "error", err)
			return
		}
		m.prune(ctx)
	}()
}

// prune deletes kept memories older than the retention, at most once per
// pruneEvery.
func (m *memoryKeeper) prune(ctx context.Context) {
	now := m.h.now()
	m.mu.Lock()
	due := now.Sub(m.pruned) >= pruneEvery
	if due {
		m.pruned = now
	}
	m.mu.Unlock()
	if !due {
		return
	}
	ret := m.h.opts.Memory.Retention
	if ret <= 0 {
		ret = 30 * 24 * time.Hour
	}
	if n, err := m.h.opts.Store.Memory().Prune(ctx, now.Add(-ret)); err != nil {
		m.h.log.Warn("memory retention: prune failed", "error", err)
	} else if n > 0 {
		m.h.log.Info("memory retention: pruned kept memories", "count", n)
	}
}

// Flush waits until the memories being written are stored (tests, shutdown).
func (h *Harness) Flush() { h.memory.pending.Wait() }

// cutUTF8 cuts s to at most n bytes at a character boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// rememberNotification keeps success summaries and errors.
func (h *Harness) rememberNotification(ev *protocol.Event) {
	switch ev.EventType {
	case protocol.EventSuccess:
		var p protocol.SuccessPayload
		if json.Unmarshal(ev.Payload, &p) != nil || p.ActionSummary == "" {
			return
		}
		h.memory.keep(ev.SessionID, store.KindSuccess, store.OriginAgent, "agent "+ev.AgentID,
			fmt.Sprintf("succeeded (%s): %s", p.ActionType, p.ActionSummary))
	case protocol.EventError:
		h.memory.keep(ev.SessionID, store.KindError, store.OriginAgent, "agent "+ev.AgentID,
			"error: "+payloadText(ev.Payload))
	}
}

// rememberBlock keeps a policy block with its reason.
func (h *Harness) rememberBlock(ev *protocol.Event, res *policy.Result, d protocol.Decision) {
	if d.Kind != protocol.DecisionBlock || !res.Matched {
		return
	}
	what := string(ev.EventType)
	var a protocol.ActionPayload
	if json.Unmarshal(ev.Payload, &a) == nil && a.ToolName != "" {
		what = "tool " + a.ToolName
		if len(a.Arguments) > 0 {
			what += " " + cutUTF8(string(a.Arguments), 300)
		}
	}
	h.memory.keep(ev.SessionID, store.KindBlock, store.OriginPolicy, "policy rule "+res.RuleID,
		fmt.Sprintf("blocked %s: %s", what, d.Reason))
}

// rememberApproval keeps a human's answer to an approval and its reason.
func (h *Harness) rememberApproval(a store.Approval) {
	verb := "denied"
	if a.Status == store.ApprovalApproved {
		verb = "approved"
	}
	text := fmt.Sprintf("%s by %s: %s", verb, a.DecidedBy, a.Reason)
	if a.DecisionReason != "" {
		text += " — reason: " + a.DecisionReason
	}
	h.memory.keep(a.SessionID, store.KindApproval, store.OriginHuman, "approver "+a.DecidedBy, text)
}

// payloadText is the readable part of an error payload: its message-like
// string members, else the payload itself.
func payloadText(p json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(p, &m) == nil {
		var parts []string
		for _, k := range []string{"error_type", "error", "message", "error_message", "details"} {
			if s, ok := m[k].(string); ok && s != "" {
				parts = append(parts, s)
			}
		}
		if len(parts) > 0 {
			return strings.Join(parts, ": ")
		}
	}
	return cutUTF8(string(p), maxMemoryBytes)
}

// memoryKinds maps a memory_recall's memory_type to fact kinds: a kind
// name, "semantic"/"facts" (people's facts), "episodic"/"events" (what
// the harness kept), or anything else (all, "" included) for every kind.
func memoryKinds(t string) []string {
	switch t = strings.ToLower(strings.TrimSpace(t)); t {
	case store.KindFact, store.KindSuccess, store.KindError, store.KindApproval, store.KindBlock, store.KindPrompt:
		return []string{t}
	case "semantic", "facts", "knowledge":
		return []string{store.KindFact}
	case "episodic", "events", "history":
		return []string{store.KindSuccess, store.KindError, store.KindApproval, store.KindBlock, store.KindPrompt}
	case "procedural", "decisions":
		return []string{store.KindApproval, store.KindBlock}
	}
	return nil
}

// recallFact is a fact as memory_recall returns it: its source names who
// wrote it (human, policy, agent) and the session it comes from.
func recallFact(f store.Fact, session string) protocol.Fact {
	w := f.Wire()
	from := "this session"
	switch {
	case f.SessionID == "" && f.Workspace == "":
		from = "global"
	case f.SessionID == "":
		from = "project"
	case f.SessionID != session:
		from = "session " + f.SessionID
	}
	w.Source = fmt.Sprintf("%s (%s, %s, %s)", f.Origin, f.Kind, from, f.Source)
	return w
}
