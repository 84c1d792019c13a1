package service

import (
	"encoding/json"
	"io"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/effects"
	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
)

// PolicyOptions returns the policy options a harness started with c (read
// from configFile, "" for none) compiles its live policy with: its packs,
// its parameters, this harness's own self-protection parameters, its
// default and mode, and the settings its policy version covers
// (PolicySettings). `ahp explain` uses it so that it judges as `ahp serve` does.
func PolicyOptions(c config.Config, configFile string) policy.Options {
	return policyOptions(slog.New(slog.NewTextHandler(io.Discard, nil)), c, configFile)
}

func policyOptions(log *slog.Logger, c config.Config, configFile string) policy.Options {
	popts := policy.Options{Packs: c.Policy.Packs, Params: c.Policy.Params,
		Instance: instanceParams(log, c, configFile), Settings: PolicySettings(c)}
	if c.Policy.Default == "block" {
		popts.Default = protocol.DecisionBlock
	}
	popts.Mode = policy.Mode(c.Policy.Mode)
	// Agents usually run on this machine: the effect analysis expands
	// their globs, resolves their links and reads the scripts they run
	// (in their working directory and the temporary directories), never
	// the harness's own files.
	popts.Agent.FS = &effects.OSFS{ScriptRoots: effects.DefaultScriptRoots, Deny: underAny(perceptionProtected(c, configFile))}
	return popts
}

// underAny returns a function that reports whether a path is one of files
// or lies under one, compared as given and with links resolved.
func underAny(files []string) func(string) bool {
	var roots []string
	for _, f := range files {
		if a, err := filepath.Abs(f); err == nil {
			roots = append(roots, a)
			if r, err := filepath.EvalSymlinks(a); err == nil && r != a {
				roots = append(roots, r)
			}
		}
	}
	return func(p string) bool {
		p = filepath.Clean(p)
		for _, r := range roots {
			if p == r || strings.HasPrefix(p, strings.TrimSuffix(r, "/")+"/") {
				return true
			}
		}
		return false
	}
}

// approvalEffects reads the effects of a stored approval's event with the
// live policy (what the approver is shown beside the event).
func (s *Service) approvalEffects(raw json.RawMessage) []effects.Effect {
	var ev protocol.Event
	if err := json.Unmarshal(raw, &ev); err != nil || s.engine == nil {
		return nil
	}
	return s.engine.Set().Effects(&ev)
}
