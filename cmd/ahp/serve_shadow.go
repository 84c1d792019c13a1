package main

import (
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"

	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/policy"
)

// shadowFlags are the flags of ahp serve that roll a policy out in shadow
// (docs/shadow.md).
var shadowFlags struct {
	mode   string
	files  []string
	sample float64
}

func init() {
	serveFlagHooks = append(serveFlagHooks, func(f *pflag.FlagSet) {
		f.StringVar(&shadowFlags.mode, "policy-mode", "enforce", "enforce, or shadow: every rule, packs included, is evaluated and recorded but none decides (a first deployment)")
		f.StringArrayVar(&shadowFlags.files, "shadow-policy", nil, "candidate policy file evaluated beside the live policy on every event, never deciding; disagreements are recorded (repeatable)")
		f.Float64Var(&shadowFlags.sample, "shadow-sample", 1, "fraction of events the shadow policy evaluates, in (0, 1]")
	})
}

// applyShadowFlags puts the shadow flags that were set into c.
func applyShadowFlags(f *pflag.FlagSet, c *config.Config) {
	if f.Changed("policy-mode") {
		c.Policy.Mode = shadowFlags.mode
	}
	c.Policy.Shadow.Files = append(c.Policy.Shadow.Files, shadowFlags.files...)
	if f.Changed("shadow-sample") {
		c.Policy.Shadow.Sample = shadowFlags.sample
	}
}

// newShadowPolicy compiles the configured shadow policy with the live
// policy's options (same packs and params, no metrics of its own); nil
// when none is configured.
func newShadowPolicy(log *slog.Logger, popts policy.Options, c *config.Config, reg prometheus.Registerer) (*harness.ShadowPolicy, error) {
	files := c.Policy.Shadow.Files
	if len(files) == 0 {
		return nil, nil
	}
	srcs, err := policy.ReadFiles(files...)
	if err != nil {
		return nil, fmt.Errorf("shadow policy: %w", err)
	}
	popts.Registerer = nil
	popts.Mode = policy.ModeEnforce
	eng, err := policy.NewEngine(popts, srcs...)
	if err != nil {
		return nil, fmt.Errorf("shadow policy: %w", err)
	}
	met, err := harness.NewShadowMetrics(reg)
	if err != nil {
		return nil, err
	}
	log.Info("shadow policy evaluated beside the live one", "version", eng.Version(), "files", len(files), "sample", c.Policy.Shadow.Sample)
	return &harness.ShadowPolicy{Engine: eng, Sample: c.Policy.Shadow.Sample, Metrics: met}, nil
}

// reloadPolicies reloads the live policy and, when there is one, the
// shadow policy with it: both or neither.
func reloadPolicies(engine *policy.Engine, srcs []policy.Source, sp *harness.ShadowPolicy, c *config.Config) error {
	if sp == nil {
		return engine.Load(srcs...)
	}
	shadowSrcs, err := policy.ReadFiles(c.Policy.Shadow.Files...)
	if err != nil {
		return fmt.Errorf("shadow policy refused (neither policy was replaced): %w", err)
	}
	return policy.LoadWithShadow(engine, srcs, sp.Engine, shadowSrcs)
}
