package main

import (
	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/policy"
)

// showDefaults writes into cfg, for --print-config, what an empty setting
// means: every built-in pack with whether it is on (an empty policy.packs
// means each pack's default), so that the printed file says which packs
// run. Loading the printed file gives the same harness.
func showDefaults(cfg *config.Config) {
	if cfg.Policy.Packs == nil {
		cfg.Policy.Packs = map[string]bool{}
	}
	for _, p := range policy.Packs() {
		if _, set := cfg.Policy.Packs[p.Name]; !set {
			cfg.Policy.Packs[p.Name] = p.Default
		}
	}
}
