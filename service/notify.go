package service

import (
	"context"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/notify"
	"github.com/ahp-go/ahp/policy"
)

// notifyCloseGrace is how long Close lets queued approval notifications
// be delivered before it aborts them.
const notifyCloseGrace = 5 * time.Second

// startNotifier builds the webhook notifier of cfg.Notifications (nil when
// no sink is configured). URLs are read from their files and environment
// variables here, so that a missing one stops the start with its name.
func (s *Service) startNotifier(reg prometheus.Registerer) error {
	c := s.cfg.Notifications
	if len(c.Sinks) == 0 {
		return nil
	}
	opts, err := notify.FromConfig(c, os.Getenv)
	if err != nil {
		return err
	}
	opts.PackOf = (&packIndex{engine: s.engine}).packOf
	opts.Registerer, opts.Logger = reg, s.log
	n, err := notify.New(opts)
	if err != nil {
		return err
	}
	s.notifier = n
	hosts := make([]string, 0, len(opts.Sinks))
	for _, sk := range opts.Sinks {
		hosts = append(hosts, sk.Name+" ("+string(sk.Format)+") -> "+config.URLHost(sk.URL))
	}
	s.log.Info("approval notifications on", "sinks", hosts, "dashboard_url", c.DashboardURL)
	return nil
}

// harnessNotifier is the notifier as the harness takes it (a nil
// interface when there is none).
func (s *Service) harnessNotifier() harness.Notifier {
	if s.notifier == nil {
		return nil
	}
	return s.notifier
}

// stopNotifier delivers what is queued, for notifyCloseGrace at most.
func (s *Service) stopNotifier() {
	if s.notifier == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), notifyCloseGrace)
	defer cancel()
	if err := s.notifier.Close(ctx); err != nil {
		s.log.Warn("approval notifications still queued at shutdown were dropped", "error", err)
	}
}

// packIndex answers which built-in pack a rule comes from, for the live
// policy (rebuilt when its version changes).
type packIndex struct {
	engine  *policy.Engine
	mu      sync.Mutex
	version string
	packs   map[string]string
}

func (p *packIndex) packOf(ruleID string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if v := p.engine.Version(); v != p.version || p.packs == nil {
		p.packs = map[string]string{}
		for _, r := range p.engine.Set().Rules(policy.RuleFilter{}) {
			if r.Pack != "" {
				p.packs[r.ID] = r.Pack
			}
		}
		p.version = v
	}
	return p.packs[ruleID]
}
