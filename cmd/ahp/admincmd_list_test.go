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

// Whatever global flags come before it, an argv that cobra resolves to an
// administrative command is one internal/admincmd recognises: both read
// the same words, cobra's reading being the one that runs.
func TestAdmincmdReadsArgvAsCobraDoes(t *testing.T) {
	argvs := [][]string{
		{"approvals", "approve", "1"},
		{"--admin", "http://127.0.0.1:07700", "approvals", "approve", "1"},
		{"--token", "", "approvals", "approve", "1"},
		{"--log-level", "debug", "--log-format", "json", "approvals", "deny", "1"},
		{"--log-level=debug", "approvals", "list"},
		{"approvals", "--admin", "http://127.1:7700", "approve", "1"},
		{"--data-dir", "d", "serve"},
		{"serve", "--policy", "open.yaml"},
		{"doctor"},
		{"status", "--connect", "http://127.0.0.1:7700"},
		{"audit", "query"},
		{"--data-dir", "x", "audit", "redact", "--all"},
		{"memory", "add", "yes"},
		{"runs", "list"},
		{"replay", "--policy", "p.yaml"},
		{"hook", "install", "claude-code", "--command", "true", "--write"},
		{"hook", "--connect", "unix:x", "install", "codex"},
		{"--log-level", "debug", "hook", "install", "gemini"},
		// Not administrative, for contrast.
		{"version"},
		{"check", "p.yaml"},
		{"hook", "claude-code", "--connect", "unix:x"},
		{"send", "--connect", "unix:x", "pre_action", "{}"},
	}
	for _, argv := range argvs {
		c, _, err := newRootCmd().Find(argv)
		if err != nil {
			t.Fatalf("%q: cobra: %v", argv, err)
		}
		top := c
		for top.HasParent() && top.Parent().HasParent() {
			top = top.Parent()
		}
		admin := admincmd.Subcommands[top.Name()]
		if top.Name() == "hook" {
			admin = c.Name() != "hook"
		}
		_, found := admincmd.Find(append([]string{"ahp"}, argv...), nil)
		if found != admin {
			t.Errorf("%q: cobra runs %q (administrative %v), admincmd says %v", argv, c.CommandPath(), admin, found)
		}
		// A renamed copy: recognised by shape for the administrative ones.
		if _, byShape := admincmd.Find(append([]string{"/tmp/copy"}, argv...), nil); byShape && !admin {
			t.Errorf("%q: a renamed copy is taken as administrative", argv)
		}
	}
}
