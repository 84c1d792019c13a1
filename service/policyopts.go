package service

import (
	"encoding/json"
	"io"
	"log/slog"

	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/effects"
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

// approvalEffects reads the effects of a stored approval's event with the
// live policy (what the approver is shown beside the event).
func (s *Service) approvalEffects(raw json.RawMessage) []effects.Effect {
	var ev protocol.Event
	if err := json.Unmarshal(raw, &ev); err != nil || s.engine == nil {
		return nil
	}
	return s.engine.Set().Effects(&ev)
}
