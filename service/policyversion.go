package service

import (
	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/descriptor"
)

// PolicySettings returns the settings of c outside the policy that change
// what the harness decides, which its policy version covers besides the
// policy files, packs, parameters, default and mode (policy.Options.Settings).
// Each is listed only when it differs from the default configuration's, so
// that ahp check and ahp replay without a configuration compute the version
// of ahp serve without one:
//
//   - descriptor: the agent descriptor's canonical hash (its path does not
//     count), or "unreadable" when it cannot be loaded (ahp serve then
//     refuses to start);
//   - approvals_timeout, approvals_fallback: the approval defaults, which
//     decide an escalation nobody answers;
//   - idle_defer_while_pending: idle events are deferred while approvals
//     wait.
//
// Paths of data directories, listen and admin addresses, the store,
// process ids and times are left out: replicas and restarts of one policy
// share its version.
func PolicySettings(c config.Config) map[string]any {
	def := config.Default()
	s := map[string]any{}
	if t := c.Approvals.Timeout.D(); t != def.Approvals.Timeout.D() {
		s["approvals_timeout"] = t.String()
	}
	if f := approvalFallback(c.Approvals.Fallback); f != approvalFallback(def.Approvals.Fallback) {
		s["approvals_fallback"] = f
	}
	if c.Idle.DeferWhilePending != def.Idle.DeferWhilePending {
		s["idle_defer_while_pending"] = c.Idle.DeferWhilePending
	}
	if c.Descriptor != "" {
		s["descriptor"] = "unreadable"
		if d, err := descriptor.Load(c.Descriptor); err == nil {
			s["descriptor"] = d.Hash()
		}
	}
	return s
}

// approvalFallback is the decision an unanswered escalation gets: allow
// only when configured so, block otherwise (as build reads it).
func approvalFallback(s string) string {
	if s == "allow" {
		return "allow"
	}
	return "block"
}
