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
// from configFile, "" for none) in this process compiles its live policy
// with: DecisionPolicy's, with ThisProcess as the harness.
func PolicyOptions(c config.Config, configFile string) policy.Options {
	return policyOptions(discardLog, c, configFile, ThisProcess())
}

// DecisionPolicy returns what the harness self, started with c (read from
// configFile, "" for none), decides with: the policy options (its packs,
// its parameters, the self_protection parameters of self, its default and
// mode, the settings its policy version covers, and the view of the file
// system its effect analysis reads: globs expanded, links resolved and
// scripts read in the agent's working directory and the temporary
// directories, never the harness's own files) and the policy sources
// (c.Policy.Files, read now). It is the one place that builds them: ahp
// serve (New, with ThisProcess) compiles its live policy from them, and
// ahp explain (with ServeIdentity) explains with them, so that both read
// an action alike. What neither knows of the agent (its home when the
// event names none) the policy package assumes alike for both
// (policy.UnknownHome).
func DecisionPolicy(c config.Config, configFile string, self Identity) (policy.Options, []policy.Source, error) {
	return decisionPolicy(discardLog, c, configFile, self)
}

func decisionPolicy(log *slog.Logger, c config.Config, configFile string, self Identity) (policy.Options, []policy.Source, error) {
	srcs, err := policy.ReadFiles(c.Policy.Files...)
	if err != nil {
		return policy.Options{}, nil, err
	}
	return policyOptions(log, c, configFile, self), srcs, nil
}

// discardLog is the logger of the exported builders: their callers report
// what matters themselves.
var discardLog = slog.New(slog.NewTextHandler(io.Discard, nil))

func policyOptions(log *slog.Logger, c config.Config, configFile string, self Identity) policy.Options {
	popts := policy.Options{Packs: c.Policy.Packs, Params: c.Policy.Params,
		Instance: instanceParams(log, c, configFile, self), Settings: PolicySettings(c)}
	if c.Policy.Default == "block" {
		popts.Default = protocol.DecisionBlock
	}
	popts.Mode = policy.Mode(c.Policy.Mode)
	// Agents usually run on this machine: the effect analysis expands
	// their globs, resolves their links and reads the scripts they run
	// (in their working directory and the temporary directories), never
	// the harness's own files.
	popts.Agent.FS = &effects.OSFS{ScriptRoots: effects.DefaultScriptRoots, Deny: underAny(self.Cwd, perceptionProtected(c, configFile))}
	return popts
}

// underAny returns a function that reports whether a path is one of files
// (relative ones taken from the directory cwd, or this process's when "")
// or lies under one, compared as given and with links resolved.
func underAny(cwd string, files []string) func(string) bool {
	var roots []string
	for _, f := range files {
		if cwd != "" && !filepath.IsAbs(f) {
			f = filepath.Join(cwd, f)
		}
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
