// Package policy is the harness's rule engine. Policies are YAML files of
// rules whose conditions are CEL expressions, compiled and type-checked when
// they are loaded; a compiled Set decides on each event (allow, block,
// modify, defer or escalate) and names the rule that decided.
//
// Built-in rule packs (destructive shell commands, secrets, approvals for
// hard-to-undo operations, file system scope, network egress, sub-agent
// depth, session budgets) are embedded and switched on through Options. An
// Engine swaps sets atomically for hot reload, and RunTests runs policy test
// files for ahp test. docs/policy.md describes the language.
package policy
