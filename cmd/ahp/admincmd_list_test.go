package main

import (
	"testing"

	"github.com/ahp-go/ahp/internal/admincmd"
)

// Every subcommand ahp registers is classified by the self_protection
// pack's reader (internal/admincmd) as administrative or not, on purpose:
// a new subcommand that is not listed there fails this test.
func TestEverySubcommandIsClassifiedForSelfProtection(t *testing.T) {
	root := newRootCmd()
	for _, c := range root.Commands() {
		if _, ok := admincmd.Subcommands[c.Name()]; !ok {
			t.Errorf("ahp %s is not in admincmd.Subcommands: say whether an agent may run it", c.Name())
		}
	}
	for name, admin := range map[string]bool{"approvals": true, "serve": true, "doctor": true, "hook": true, "status": true, "version": false, "send": false} {
		if admincmd.Subcommands[name] != admin {
			t.Errorf("ahp %s: administrative = %v", name, !admin)
		}
	}
}
