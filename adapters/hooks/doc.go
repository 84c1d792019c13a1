// Package hooks puts the hook systems of popular coding agents (Claude
// Code, Codex CLI, Gemini CLI) in front of an AHP harness. It reads each
// tool's hook input exactly as the tool writes it, turns it into an AHP
// event, asks the harness, and writes the tool's own answer format.
//
// Control paths fail closed: an input that cannot be read, a harness that
// cannot be reached or does not answer in time, or an answer that cannot be
// expressed in the tool's format becomes a deny (exit code 2, the reason on
// stderr), never a silent allow. An escalation never becomes an allow
// unless a human approves it.
package hooks
