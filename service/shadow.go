package service

import (
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/policy"
)

// newShadowPolicy compiles the configured shadow policy with the live
// policy's options (same packs and params, no metrics of its own); nil
// when none is configured (docs/shadow.md).
func newShadowPolicy(log *slog.Logger, popts policy.Options, c config.Config, reg prometheus.Registerer) (*harness.ShadowPolicy, error) {
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

// reloadPolicies replaces the live policy with srcs and, when there is
// one, the shadow policy with its files read again: both or neither.
func (s *Service) reloadPolicies(srcs []policy.Source) error {
	if s.shadow == nil {
		return s.engine.Load(srcs...)
	}
	shadowSrcs, err := policy.ReadFiles(s.cfg.Policy.Shadow.Files...)
	if err != nil {
		return fmt.Errorf("shadow policy refused (neither policy was replaced): %w", err)
	}
	return policy.LoadWithShadow(s.engine, srcs, s.shadow.Engine, shadowSrcs)
}
