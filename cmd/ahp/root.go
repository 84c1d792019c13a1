package main

import (
	"errors"
	"sync"

	"github.com/spf13/cobra"
)

// subcommands holds the constructors that each file of this package
// registers from init, so that commands live in files of their own.
var (
	subMu       sync.Mutex
	subcommands []func() *cobra.Command
)

// register adds a subcommand constructor; call it from an init function.
func register(f func() *cobra.Command) {
	subMu.Lock()
	defer subMu.Unlock()
	subcommands = append(subcommands, f)
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "ahp",
		Short: "Agent Harness Protocol 2.4: harness, client and tools",
		Long: `ahp speaks the Agent Harness Protocol (AHP) 2.4.

An agent asks a harness before it acts; the harness answers with a decision
(allow, block, modify, defer, escalate or a typed decision) and the agent
enforces it. This one binary runs a harness (ahp serve), sends events to one
(ahp send), and manages policies, approvals, audit records and descriptors.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	addLogFlags(root)
	subMu.Lock()
	defer subMu.Unlock()
	for _, f := range subcommands {
		root.AddCommand(f())
	}
	return root
}

// exitCoder is an error that asks for a specific process exit code.
type exitCoder interface {
	error
	ExitCode() int
}

// exitError carries an exit code and an optional message.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }
func (e *exitError) ExitCode() int { return e.code }

// exitWith returns an error that makes main exit with code, printing msg if
// it is not empty.
func exitWith(code int, msg string) error { return &exitError{code: code, msg: msg} }

func asExitCoder(err error, target *exitCoder) bool { return errors.As(err, target) }
