package harness

import (
	"container/list"
	"encoding/json"
	"sync"

	"github.com/ahp-go/ahp/internal/jsonscan"
	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
)

// recentTools is how many tool names a session remembers.
const recentTools = 10

// Sessions keeps the harness's own counters per session (actions, tokens,
// errors, recent tools, run status) for policies to read. It holds at most
// max sessions and forgets the least recently active one beyond that.
// Replay uses it too, to rebuild the counters from a recorded stream.
type Sessions struct {
	mu  sync.Mutex
	max int
	m   map[string]*list.Element
	lru *list.List
}

type sessionEntry struct {
	id    string
	state policy.SessionState
}

// NewSessions returns an empty tracker holding at most max sessions.
func NewSessions(max int) *Sessions {
	return &Sessions{max: max, m: make(map[string]*list.Element), lru: list.New()}
}

// State returns a copy of a session's counters.
func (s *Sessions) State(id string) policy.SessionState {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.m[id]; ok {
		st := e.Value.(*sessionEntry).state
		st.RecentTools = append([]string(nil), st.RecentTools...)
		return st
	}
	return policy.SessionState{}
}

// Set replaces a session's counters (with those read from a shared store).
func (s *Sessions) Set(id string, st policy.SessionState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.get(id).state = st
}

// get returns the entry of a session, creating it; s.mu must be held.
func (s *Sessions) get(id string) *sessionEntry {
	if e, ok := s.m[id]; ok {
		s.lru.MoveToFront(e)
		return e.Value.(*sessionEntry)
	}
	ent := &sessionEntry{id: id}
	s.m[id] = s.lru.PushFront(ent)
	if s.lru.Len() > s.max {
		old := s.lru.Back()
		s.lru.Remove(old)
		delete(s.m, old.Value.(*sessionEntry).id)
	}
	return ent
}

// Observe updates a session's counters with an event (and, for blocking
// events, the kind of decision it got).
func (s *Sessions) Observe(ev *protocol.Event, outcome protocol.DecisionKind) {
	var tool, runStatus string
	var tokens int64 = -1
	switch ev.EventType {
	case protocol.EventPreAction:
		tool = stringMember(ev.Payload, "tool_name")
	case protocol.EventRunLifecycle:
		runStatus = stringMember(ev.Payload, "status")
	case protocol.EventHeartbeat:
		var hb struct {
			TokensUsed *int64 `json:"tokens_used"`
		}
		if json.Unmarshal(ev.Payload, &hb) == nil && hb.TokensUsed != nil {
			tokens = *hb.TokensUsed
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &s.get(ev.SessionID).state
	switch ev.EventType {
	case protocol.EventPreAction:
		if outcome == protocol.DecisionAllow || outcome == protocol.DecisionModify {
			st.Actions++
		}
		if tool != "" {
			st.RecentTools = append(st.RecentTools, tool)
			if len(st.RecentTools) > recentTools {
				st.RecentTools = append(st.RecentTools[:0], st.RecentTools[len(st.RecentTools)-recentTools:]...)
			}
		}
	case protocol.EventError:
		st.Errors++
	case protocol.EventRunLifecycle:
		if runStatus != "" {
			st.RunStatus = runStatus
		}
	}
	if tokens >= 0 && tokens > st.Tokens {
		st.Tokens = tokens
	}
	// The agent's own statistics, when sent, raise the counters (never lower).
	if c := ev.Context; c != nil && c.SessionStats != nil {
		if t := int64(c.SessionStats.TotalTokens); t > st.Tokens {
			st.Tokens = t
		}
		if e := int64(c.SessionStats.ErrorCount); e > st.Errors {
			st.Errors = e
		}
	}
}

// stringMember returns the string member key of a JSON object (also
// found under a name in other letter case, as the policy reads it), or "".
func stringMember(obj json.RawMessage, key string) string {
	var out string
	_ = jsonscan.Object(obj, func(k, v []byte) error {
		if named(k, key) {
			out, _ = jsonscan.String(v)
		}
		return nil
	})
	return out
}
