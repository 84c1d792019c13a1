package service

import (
	"io"
	"log/slog"

	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
)

// PolicyOptions returns the policy options a harness started with c (read
// from configFile, "" for none) compiles its live policy with: its packs,
// its parameters with the self-protection parameters added, its default
// and mode. `ahp explain` uses it so that it judges as `ahp serve` does.
func PolicyOptions(c config.Config, configFile string) policy.Options {
	return policyOptions(slog.New(slog.NewTextHandler(io.Discard, nil)), c, configFile)
}

func policyOptions(log *slog.Logger, c config.Config, configFile string) policy.Options {
	popts := policy.Options{Packs: c.Policy.Packs, Params: policyParams(log, c, configFile)}
	if c.Policy.Default == "block" {
		popts.Default = protocol.DecisionBlock
	}
	popts.Mode = policy.Mode(c.Policy.Mode)
	return popts
}
