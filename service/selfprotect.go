package service

import (
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/ahp-go/ahp/admin"
	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/policy"
)

// SelfProtectionPack is the built-in pack that keeps agents from switching
// the harness off.
const SelfProtectionPack = "self_protection"

// HarnessFiles lists the files and directories of a running harness: what
// the self_protection pack guards and what ahp doctor checks. Relative
// paths are as configured.
func HarnessFiles(c config.Config, configFile string) []string {
	files := []string{c.DataDir, filepath.Join(c.DataDir, admin.TokenFile)}
	if configFile != "" {
		files = append(files, configFile)
	}
	files = append(files, c.Policy.Files...)
	for _, f := range []string{c.Descriptor, c.Auth.Credentials, c.Auth.TLSCert, c.Auth.TLSKey, c.Auth.ClientCA} {
		if f != "" {
			files = append(files, f)
		}
	}
	for _, l := range c.Listen {
		if p, ok := strings.CutPrefix(l, "unix:"); ok && p != "" {
			files = append(files, p)
		}
	}
	return files
}

// selfProtection describes the harness self for the self_protection
// pack: its files, admin address, process and names, and the executables
// its hooks run (its own, ahp and ahp-hook, and those the hook settings it
// can read name; see HookExecutables for what it cannot know).
func selfProtection(c config.Config, configFile string, self Identity) policy.SelfProtection {
	sp := policy.SelfProtection{
		Paths:    HarnessFiles(c, configFile),
		Cwd:      self.Cwd,
		PIDs:     self.PIDs,
		Cmdlines: self.Cmdlines,
	}
	if c.Admin != "" {
		sp.AdminAddrs = []string{c.Admin}
	}
	sp.Executables, sp.Names = harnessExecutables(self.Exe, self.Cwd, self.Home)
	return sp
}

// instanceParams returns the self_protection parameters of the harness
// self (its files, working directory, process, names and admin address),
// which the policy sees but which are not part of its version (see
// policy.Options.Instance); nil when the operator switched the pack off.
// Lists an operator gave for the same parameters are kept after the
// harness's own.
func instanceParams(log *slog.Logger, c config.Config, configFile string, self Identity) map[string]any {
	on, set := c.Policy.Packs[SelfProtectionPack]
	if set && !on {
		log.Warn("the self_protection pack is off (policy.packs.self_protection: false): a supervised agent can read the admin token, rewrite the policy, stop the harness or remove its hooks; see docs/security.md")
		return nil
	}
	return selfProtection(c, configFile, self).Params()
}
