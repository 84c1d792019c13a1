package service

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/ahp-go/ahp/admin"
	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/descriptor"
	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/intent"
	"github.com/ahp-go/ahp/observe"
	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/runs"
)

// DBFile is the SQLite file inside the data directory.
const DBFile = "ahp.db"

// build opens the store, compiles the policy and builds the harness, the
// observer hub and the admin handler. On error the caller closes the
// store.
func (s *Service) build() error {
	c, log := s.cfg, s.log
	if s.opts.ProtocolOnly {
		log.Warn("--protocol-only: the baseline decides and nothing is recorded; for benchmarks only")
		s.handler = &harness.Baseline{Log: log}
		return nil
	}
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s.reg = reg
	s.net = &netAuth{cfg: s.cfg.Auth, reg: s.registerer(), warned: map[string]bool{}}

	popts, srcs, err := decisionPolicy(log, c, s.opts.ConfigFile, s.self)
	if err != nil {
		return err
	}
	popts.Registerer = reg
	engine, err := policy.NewEngine(popts, srcs...)
	if err != nil {
		return fmt.Errorf("policy: %w", err)
	}
	s.engine = engine
	if s.shadow, err = newShadowPolicy(log, popts, c, reg); err != nil {
		return err
	}
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	if s.db, err = s.openStore(ctx, reg); err != nil {
		return err
	}
	met, err := harness.NewMetrics(reg)
	if err != nil {
		return err
	}
	perceiver, err := newPerceiver(c, s.opts.ConfigFile)
	if err != nil {
		return fmt.Errorf("context: %w", err)
	}
	fallback := protocol.DecisionBlock
	if c.Approvals.Fallback == "allow" {
		fallback = protocol.DecisionAllow
	}
	var sup *harness.DescriptorSupervisor
	var descRef func(*protocol.Event) *runs.DescriptorRef
	if c.Descriptor != "" {
		d, err := descriptor.Load(c.Descriptor)
		if err != nil {
			return err
		}
		sup = harness.NewDescriptorSupervisor(d)
		log.Info("enforcing descriptor", "file", c.Descriptor, "name", d.Name(), "hash", d.Hash(), "agents", len(d.AgentIDs()))
		ref := &runs.DescriptorRef{Hash: d.Hash(), Name: d.Name(), Version: d.Version()}
		descRef = func(*protocol.Event) *runs.DescriptorRef { return ref }
	}
	reducer, err := runs.New(s.db.Runs(), runs.Options{Descriptor: descRef, Logger: log, Registerer: reg})
	if err != nil {
		return err
	}
	red, err := NewRedactor(c, sup)
	if err != nil {
		return err
	}
	hub, err := observe.New(observe.Options{
		Store: s.db, Logger: log, ServerName: "ahp", ServerVersion: s.opts.version(),
		PolicyVersion: engine.Version, PolicyRules: func() []string { return engine.Set().RuleIDs() },
		RingSize: s.opts.Observe.Ring, QueueSize: s.opts.Observe.Queue, SharedSeq: s.sharedStore(),
		Effects: s.approvalEffects,
	})
	if err != nil {
		return err
	}
	if err := hub.Load(ctx, 10000); err != nil {
		return err
	}
	s.hub = hub
	s.obs.first = s.hubObserver(hub)
	if err := s.startNotifier(reg); err != nil {
		return err
	}
	h, err := harness.New(harness.Options{
		Supervisor: sup, Runs: reducer, Redactor: red, Observer: s.obs, ReplicaID: s.sharedReplicaID(),
		Engine: engine, Store: s.db, ApprovalTimeout: c.Approvals.Timeout.D(), ApprovalFallback: fallback,
		DeferIdleWhilePending: c.Idle.DeferWhilePending, MemoryMaxResults: c.Memory.MaxResults,
		Perceiver: perceiver, Metrics: met, Logger: log, Shadow: s.shadow,
		Memory: harness.MemoryOptions{DisableCapture: !c.Memory.Capture, Retention: c.Memory.Retention.D(),
			CrossSessionAgentFacts: c.Memory.CrossSessionAgentFacts},
		IntentLLM: intentLLM(c.Intent.LLM), Notifier: s.harnessNotifier(),
	})
	if err != nil {
		return err
	}
	if err := h.Start(ctx); err != nil {
		return err
	}
	s.h, s.handler = h, h
	hub.SetDecider(h)
	return s.buildAdmin()
}

// buildAdmin mounts the admin API, /observe and the dashboard on the
// admin mux. The admin token is created in the data directory when the
// admin API is configured.
func (s *Service) buildAdmin() error {
	if s.cfg.Admin == "" {
		return nil
	}
	if _, err := adminHost(s.cfg.Admin); err != nil {
		return err
	}
	tok, err := admin.LocalToken(s.cfg.DataDir)
	if err != nil {
		return fmt.Errorf("admin token: %w", err)
	}
	var next auth.Authenticator
	if s.cfg.Auth.Credentials != "" {
		st, err := auth.LoadFile(s.cfg.Auth.Credentials)
		if err != nil {
			return err
		}
		next = st
	}
	a := admin.TokenAuthenticator(tok, next)
	s.adminMux.HandleFunc("GET /v1/status", s.serveStatus)
	ometrics, err := s.net.authMetrics()
	if err != nil {
		return err
	}
	oh := observe.NewHandler(s.hub, observe.HandlerOptions{Auth: a, Metrics: ometrics})
	for _, p := range oh.Routes() {
		s.adminMux.Handle(p, oh)
	}
	s.adminMux.Handle("/", admin.Handler(admin.Options{
		Store: s.db, Decider: s.h, Auth: a,
		Gatherer: s.reg, Reload: s.Reload, Logger: s.log,
		Effects: s.approvalEffects,
	}))
	return nil
}

// intentLLM turns intent.llm into the harness's LLM options (nil when not
// configured). The API key is read from the named environment variable.
func intentLLM(l *config.LLMConfig) *intent.LLMOptions {
	if l == nil {
		return nil
	}
	o := &intent.LLMOptions{URL: l.URL, Model: l.Model, Timeout: time.Duration(l.TimeoutMs) * time.Millisecond}
	if l.APIKeyEnv != "" {
		o.APIKey = os.Getenv(l.APIKeyEnv)
	}
	return o
}
