package observe

import (
	"sort"
	"time"
)

// ReloadInfo is the result of the last policy reload.
type ReloadInfo struct {
	At      time.Time `json:"at"`
	OK      bool      `json:"ok"`
	Version string    `json:"version"`
	Error   string    `json:"error,omitempty"`
}

// RuleJSON is a loaded rule and how often it decided since the start.
type RuleJSON struct {
	ID   string `json:"id"`
	Hits int64  `json:"hits"`
}

// PolicyJSON is the loaded policy as the root channel shows it.
type PolicyJSON struct {
	Version    string      `json:"version"`
	Rules      []RuleJSON  `json:"rules"`
	LastReload *ReloadInfo `json:"lastReload,omitempty"`
}

// HarnessJSON is the harness's status.
type HarnessJSON struct {
	Name             string    `json:"name"`
	Version          string    `json:"version"`
	StartedAt        time.Time `json:"startedAt"`
	Observers        int       `json:"observers"`
	PendingApprovals int       `json:"pendingApprovals"`
	ServerSeq        uint64    `json:"serverSeq"`
}

// RootState is the root channel's snapshot state: the Host Protocol's
// RootState (agents, activeSessions), with the harness's status, policy,
// pending approvals, sessions and statistics in _meta.ahp.
type RootState struct {
	Agents         []any `json:"agents"`
	ActiveSessions int   `json:"activeSessions"`
	Meta           struct {
		AHP RootMeta `json:"ahp"`
	} `json:"_meta"`
}

// RootMeta is the harness's part of the root snapshot.
type RootMeta struct {
	Harness   HarnessJSON    `json:"harness"`
	Policy    PolicyJSON     `json:"policy"`
	Approvals []ApprovalJSON `json:"approvals"`
	Sessions  []Summary      `json:"sessions"`
	Stats     StatsJSON      `json:"stats"`
}

// rootSessions is how many sessions the root snapshot lists (listSessions
// pages through all of them).
const rootSessions = 200

func (h *Hub) policyLocked() PolicyJSON {
	p := PolicyJSON{Version: h.o.PolicyVersion(), Rules: []RuleJSON{}}
	seen := map[string]bool{}
	for _, id := range h.o.PolicyRules() {
		seen[id] = true
		p.Rules = append(p.Rules, RuleJSON{ID: id, Hits: h.stats.hits[id]})
	}
	for id, n := range h.stats.hits {
		if !seen[id] {
			p.Rules = append(p.Rules, RuleJSON{ID: id, Hits: n})
		}
	}
	sort.SliceStable(p.Rules, func(i, j int) bool { return p.Rules[i].Hits > p.Rules[j].Hits })
	if !h.reload.At.IsZero() {
		r := h.reload
		p.LastReload = &r
	}
	return p
}

// rootStateLocked returns the root snapshot; h.mu must be held.
func (h *Hub) rootStateLocked() RootState {
	st := RootState{Agents: []any{}, ActiveSessions: h.activeLocked()}
	m := RootMeta{Harness: HarnessJSON{Name: h.o.ServerName, Version: h.o.ServerVersion,
		StartedAt: h.started.UTC(), Observers: len(h.observers), PendingApprovals: len(h.approvals), ServerSeq: h.seq},
		Policy: h.policyLocked(), Approvals: []ApprovalJSON{}, Stats: h.stats.json(h.o.Now())}
	for _, a := range h.approvals {
		m.Approvals = append(m.Approvals, a)
	}
	sort.Slice(m.Approvals, func(i, j int) bool { return m.Approvals[i].Created.Before(m.Approvals[j].Created) })
	all := h.summariesLocked()
	m.Sessions = all[:min(len(all), rootSessions)]
	st.Meta.AHP = m
	return st
}

// activeLocked returns how many sessions have not ended (the Host
// Protocol's activeSessions); h.mu must be held.
func (h *Hub) activeLocked() int { return h.nActive }

// applyLocked applies a recorded entry to s and keeps the count of active
// sessions; h.mu must be held.
func (h *Hub) applyLocked(s *session, e Entry) {
	was := s.summary.Meta.AHP.State != "ended"
	s.apply(e)
	if is := s.summary.Meta.AHP.State != "ended"; is != was {
		if is {
			h.nActive++
		} else {
			h.nActive--
		}
	}
}

// activeChangedLocked publishes root/activeSessionsChanged when the count
// of active sessions changed since it was last published (the summary
// flush calls it, so changes are coalesced to one per 250 ms); h.mu must
// be held.
func (h *Hub) activeChangedLocked() {
	if n := h.activeLocked(); n != h.active {
		h.active = n
		h.publishRootLocked(map[string]any{"type": "root/activeSessionsChanged", "activeSessions": n})
	}
}

// summariesLocked returns every session's summary, most recent first.
func (h *Hub) summariesLocked() []Summary {
	all := make([]Summary, 0, len(h.sessions))
	for _, s := range h.sessions {
		all = append(all, s.wire())
	}
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i].Meta.AHP.LastActivity, all[j].Meta.AHP.LastActivity
		if !a.Equal(b) {
			return a.After(b)
		}
		return all[i].Resource < all[j].Resource
	})
	return all
}
