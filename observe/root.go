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

// RootState is the root channel's snapshot state. agents and
// activeSessions are the Host Protocol's RootState members; the ahp ones
// are the harness's.
type RootState struct {
	Agents         []any          `json:"agents"`
	ActiveSessions int            `json:"activeSessions"`
	Harness        HarnessJSON    `json:"ahpHarness"`
	Policy         PolicyJSON     `json:"ahpPolicy"`
	Approvals      []ApprovalJSON `json:"ahpApprovals"`
	Sessions       []Summary      `json:"ahpSessions"`
	Stats          StatsJSON      `json:"ahpStats"`
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
	st := RootState{Agents: []any{}, Harness: HarnessJSON{Name: h.o.ServerName, Version: h.o.ServerVersion,
		StartedAt: h.started.UTC(), Observers: len(h.observers), PendingApprovals: len(h.approvals), ServerSeq: h.seq},
		Policy: h.policyLocked(), Approvals: []ApprovalJSON{}, Stats: h.stats.json(h.o.Now())}
	for _, a := range h.approvals {
		st.Approvals = append(st.Approvals, a)
	}
	sort.Slice(st.Approvals, func(i, j int) bool { return st.Approvals[i].Created.Before(st.Approvals[j].Created) })
	all := h.summariesLocked()
	for _, s := range all {
		if s.Status == "active" {
			st.ActiveSessions++
		}
	}
	st.Sessions = all[:min(len(all), rootSessions)]
	return st
}

// summariesLocked returns every session's summary, most recent first.
func (h *Hub) summariesLocked() []Summary {
	all := make([]Summary, 0, len(h.sessions))
	for _, s := range h.sessions {
		sm := s.summary
		sm.Counts = copyCounts(sm.Counts)
		all = append(all, sm)
	}
	sort.Slice(all, func(i, j int) bool {
		if !all[i].LastActivity.Equal(all[j].LastActivity) {
			return all[i].LastActivity.After(all[j].LastActivity)
		}
		return all[i].Resource < all[j].Resource
	})
	return all
}
