package policy

import (
	"github.com/ahp-go/ahp/effects"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ahp-go/ahp/protocol"
)

// Options configure how policies are compiled and what applies when no
// rule matches. The zero value enables the default packs and allows by
// default.
type Options struct {
	// Packs switches built-in rule packs on (true) or off (false) by name.
	// Packs not named keep their default: approvals, destructive_shell,
	// secrets and self_protection are on, the others off. See Packs for the
	// list.
	Packs map[string]bool
	// Params are visible to every rule as config.NAME. They override the
	// defaults that enabled packs declare (for example workspace_roots for
	// filesystem_scope, allowed_hosts for network_egress).
	Params map[string]any
	// Default is the decision when no rule matches: allow (also the zero
	// value) or block.
	Default protocol.DecisionKind
	// DefaultReason is the reason of a default block. Empty means
	// "no policy rule allows this event".
	DefaultReason string
	// Mode is ModeEnforce (also the zero value) or ModeShadow, which puts
	// every rule in shadow, packs included: the live decision is then
	// always the allow default, and what the policy would have decided is
	// reported in Result.Shadow.
	Mode Mode
	// Agent is what is known of the agents when an event does not say it:
	// their home directory and user name (for "~" and $HOME) and the view
	// of the file system the effect analysis may use to resolve globs and
	// links and to read scripts run by their path (nil: none). An event's
	// own working directory (payload "cwd") always wins over Agent.Cwd.
	// It does not change the policy version.
	Agent effects.Context
	// Instance are parameters that describe one running harness rather
	// than its policy: the self_protection pack's paths, working
	// directory, process ids, command lines and admin addresses. Rules see
	// them as config.NAME like Params (a list given in both is joined,
	// Instance's items first; otherwise Params wins), but they are left
	// out of the policy version, so that restarts and replicas of one
	// policy share its version.
	Instance map[string]any
	// Settings are the decision-relevant settings outside the policy
	// (the agent descriptor's hash, the approval defaults) that the policy
	// version covers besides the sources, packs, Params, Default and
	// Mode. The rules never see them.
	Settings map[string]any
	// Registerer, when set, receives the engine's metrics. Only NewEngine
	// uses it.
	Registerer prometheus.Registerer
}

// PackEnabled reports whether the options turn pack name on.
func (o Options) PackEnabled(name string) bool {
	if on, ok := o.Packs[name]; ok {
		return on
	}
	p, ok := packByName(name)
	return ok && p.Default
}
