package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/ahp-go/ahp/admin"
	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/descriptor"
	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/runs"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/store/sqlite"
)

// dbFile is the SQLite file inside the data directory.
const dbFile = "ahp.db"

// harnessSet is a running harness and what it holds.
type harnessSet struct {
	handler server.Handler
	h       *harness.Harness
	engine  *policy.Engine
	db      *sqlite.DB
	reg     *prometheus.Registry
	log     *slog.Logger
	o       *serveOptions
	reload  func() error

	adminSrv *http.Server
	adminWG  sync.WaitGroup
	obs      *observeSet // observer channels and dashboard (serve_observe.go)
}

// buildHarness opens the store, compiles the policy and returns the
// harness that decides events.
func buildHarness(ctx context.Context, log *slog.Logger, o *serveOptions) (*harnessSet, error) {
	c := o.cfg
	if o.protocolOnly {
		log.Warn("--protocol-only: the baseline decides and nothing is recorded; for benchmarks only")
		return &harnessSet{handler: &harness.Baseline{Log: log}, log: log, o: o}, nil
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	netFlags.reg = reg // network listeners count their refusals here

	popts := policy.Options{Packs: c.Policy.Packs, Params: policyParams(log, c, o.configFile), Registerer: reg}
	if c.Policy.Default == "block" {
		popts.Default = protocol.DecisionBlock
	}
	popts.Mode = policy.Mode(c.Policy.Mode)
	srcs, err := policy.ReadFiles(c.Policy.Files...)
	if err != nil {
		return nil, err
	}
	engine, err := policy.NewEngine(popts, srcs...)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	shadow, err := newShadowPolicy(log, popts, &c, reg)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	db, err := sqlite.Open(ctx, filepath.Join(c.DataDir, dbFile), sqlite.Options{Logger: log, Registerer: reg, MaxBatch: o.auditMaxBatch})
	if err != nil {
		return nil, err
	}
	met, err := harness.NewMetrics(reg)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	perceiver, err := newPerceiver(o.cfg.Context)
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("context: %w", err)
	}
	fallback := protocol.DecisionBlock
	if c.Approvals.Fallback == "allow" {
		fallback = protocol.DecisionAllow
	}
	var sup *harness.DescriptorSupervisor
	if c.Descriptor != "" {
		d, err := descriptor.Load(c.Descriptor)
		if err != nil {
			_ = db.Close()
			return nil, err
		}
		sup = harness.NewDescriptorSupervisor(d)
		log.Info("enforcing descriptor", "file", c.Descriptor, "name", d.Name(), "hash", d.Hash(), "agents", len(d.AgentIDs()))
	}
	var descRef func(*protocol.Event) *runs.DescriptorRef
	if sup != nil {
		d := sup.Descriptor()
		ref := &runs.DescriptorRef{Hash: d.Hash(), Name: d.Name(), Version: d.Version()}
		descRef = func(*protocol.Event) *runs.DescriptorRef { return ref }
	}
	reducer, err := runs.New(db.Runs(), runs.Options{Descriptor: descRef, Logger: log, Registerer: reg})
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	red, err := newRedactor(c, sup)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	obs, err := newObserve(ctx, log, db, engine)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	h, err := harness.New(harness.Options{
		Supervisor: sup, Runs: reducer, Redactor: red, Observer: obs.observer(),
		Engine: engine, Store: db, ApprovalTimeout: c.Approvals.Timeout.D(), ApprovalFallback: fallback,
		DeferIdleWhilePending: c.Idle.DeferWhilePending, MemoryMaxResults: c.Memory.MaxResults,
		Perceiver: perceiver, Metrics: met, Logger: log, Shadow: shadow,
	})
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	if err := h.Start(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	hs := &harnessSet{handler: h, h: h, engine: engine, db: db, reg: reg, log: log, o: o, obs: obs}
	if err := hs.recordStart(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	hs.reload = func() error {
		srcs, err := policy.ReadFiles(c.Policy.Files...)
		if err == nil {
			err = reloadPolicies(engine, srcs, shadow, &c)
		}
		if err != nil {
			log.Error("policy reload refused; the previous policy keeps running", "error", err)
			return err
		}
		log.Info("policy reloaded", "version", engine.Version())
		return nil
	}
	obs.attach(hs)
	log.Info("harness ready", "data_dir", c.DataDir, "policy_version", engine.Version(), "policy_files", len(c.Policy.Files))
	return hs, nil
}

// close stops the admin API, writes the final audit record and closes the
// store (flushing what it holds).
func (hs *harnessSet) close() {
	if hs.db == nil {
		return
	}
	if hs.adminSrv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = hs.adminSrv.Shutdown(ctx)
		cancel()
		hs.adminWG.Wait()
	}
	hs.recordStop("orderly shutdown")
	if err := hs.db.Close(); err != nil {
		hs.log.Error("closing the store", "error", err)
	}
}

// startAdmin serves the admin API when an address is configured. A
// failure to listen stops the harness (cancel).
func (hs *harnessSet) startAdmin(ctx context.Context, cancel context.CancelFunc) error {
	hs.obs.start(ctx)
	addr := hs.o.cfg.Admin
	if addr == "" || hs.db == nil {
		return nil
	}
	u, err := url.Parse(addr)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return fmt.Errorf("admin: %q is not an http://HOST:PORT address", addr)
	}
	if !auth.IsLoopbackAddr(u.Host) {
		hs.log.Warn("admin API listens beyond loopback; approvals still require credentials", "address", addr)
	}
	tok, err := admin.LocalToken(hs.o.cfg.DataDir)
	if err != nil {
		return fmt.Errorf("admin token: %w", err)
	}
	var next auth.Authenticator
	if hs.o.cfg.Auth.Credentials != "" {
		st, err := auth.LoadFile(hs.o.cfg.Auth.Credentials)
		if err != nil {
			return err
		}
		next = st
	}
	handler := hs.obs.mount(admin.Handler(admin.Options{
		Store: hs.db, Decider: hs.h, Auth: admin.TokenAuthenticator(tok, next),
		Gatherer: hs.reg, Reload: hs.reload, Logger: hs.log,
	}), adminAuth(tok, next))
	l, err := net.Listen("tcp", u.Host)
	if err != nil {
		if !hs.o.adminExplicit {
			// The default address is taken (another harness on this
			// machine, say one per stdio agent): run without an admin API.
			hs.log.Warn("admin API not started: default address in use; set --admin or admin: in the config", "address", addr, "error", err)
			return nil
		}
		return fmt.Errorf("admin: %w", err)
	}
	hs.adminSrv = &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
	hs.adminWG.Add(1)
	go func() {
		defer hs.adminWG.Done()
		if err := hs.adminSrv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			hs.log.Error("admin API stopped", "error", err)
			cancel()
		}
	}()
	hs.log.Info("admin API listening", "address", "http://"+l.Addr().String())
	return nil
}

// watchReloads reloads the policy on SIGHUP and, when policy.watch is set,
// when a policy file changes (checked every second).
func (hs *harnessSet) watchReloads(ctx context.Context) {
	if hs.reload == nil {
		return
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	files := hs.o.cfg.Policy.Files
	var tick <-chan time.Time
	if hs.o.cfg.Policy.Watch && len(files) > 0 {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		tick = t.C
	}
	stamp := func() string {
		s := ""
		for _, f := range files {
			if fi, err := os.Stat(f); err == nil {
				s += fmt.Sprintf("%s:%d:%d;", f, fi.ModTime().UnixNano(), fi.Size())
			}
		}
		return s
	}
	last := stamp()
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			hs.log.Info("SIGHUP: reloading the policy")
			_ = hs.reload()
			last = stamp()
		case <-tick:
			if now := stamp(); now != last {
				last = now
				hs.log.Info("policy file changed: reloading")
				_ = hs.reload()
			}
		}
	}
}

// retain applies the audit retention settings at start and every hour.
func (hs *harnessSet) retain(ctx context.Context) {
	if hs.db == nil {
		return
	}
	maxAge, maxRows := hs.o.cfg.Audit.MaxAge.D(), hs.o.cfg.Audit.MaxRows
	if maxAge <= 0 && maxRows <= 0 {
		return
	}
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		n, err := hs.db.Audit().Retain(ctx, maxAge, maxRows)
		switch {
		case err != nil && ctx.Err() == nil:
			hs.log.Error("audit retention failed", "error", err)
		case n > 0:
			hs.log.Info("audit retention deleted old records", "records", n, "max_age", maxAge, "max_rows", maxRows)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
