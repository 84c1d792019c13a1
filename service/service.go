package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/notify"
	"github.com/ahp-go/ahp/observe"
	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/telemetry"
	"github.com/ahp-go/ahp/transport/connlimit"
)

// ErrClosed is returned by Run after Close.
var ErrClosed = errors.New("service: closed")

// Service is a harness built from a configuration: the store, the policy
// engine, the harness, its listeners and the admin API. Build it with New,
// serve with Run, stop with Close. Its methods are safe for concurrent
// use.
type Service struct {
	cfg  config.Config
	opts Options
	log  *slog.Logger

	handler server.Handler
	srv     *server.Server
	h       *harness.Harness      // nil with Options.ProtocolOnly
	engine  *policy.Engine        // nil with Options.ProtocolOnly
	shadow  *harness.ShadowPolicy // nil without a shadow policy
	db      store.Store           // nil with Options.ProtocolOnly
	reg     *prometheus.Registry  // nil with Options.ProtocolOnly
	hub     *observe.Hub          // nil with Options.ProtocolOnly
	obs     *fanout
	tel     *telemetry.Exporter // nil unless OTLP export is on
	net     *netAuth
	lim     *connlimit.Limiter // the connection limit of every agent listener
	serves  []listener

	adminMux *http.ServeMux

	notifier *notify.Notifier // approval notifications to webhooks; nil without sinks

	replicaID  string                 // this process in a shared store's replica registry
	started    time.Time              // when New was called
	self       Identity               // this process, as self_protection guards it
	adminBound atomic.Pointer[string] // the admin API's bound address

	reloadMu sync.Mutex

	mu        sync.Mutex
	running   bool
	closed    bool
	stopRun   context.CancelFunc
	runDone   chan struct{}
	closeOnce sync.Once
	closeErr  error

	locks locks // the data directory's and the Unix sockets' lock files
}

// New builds the harness cfg describes: it validates cfg, takes the
// exclusive lock of cfg.DataDir (creating it) and of each Unix socket path
// before touching anything else (a second harness on either fails here
// with an error wrapping ErrInUse that names the first), compiles the
// policy, opens the store in cfg.DataDir, writes the harness_start record,
// and checks every listen address. Nothing listens until Run. On error,
// everything opened is closed again and the locks are released.
func New(cfg config.Config, opts Options) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Service{cfg: cfg, opts: opts, log: opts.logger(), obs: &fanout{}, adminMux: http.NewServeMux(),
		replicaID: newReplicaID(), started: time.Now(), self: ThisProcess()}
	s.obs.add(opts.Observers...)
	if err := s.lock(); err != nil {
		return nil, err
	}
	if err := s.build(); err != nil {
		s.closeStore()
		return nil, err
	}
	if err := s.startTelemetry(); err != nil {
		s.closeStore()
		return nil, err
	}
	c := cfg.Harness
	s.srv = server.New(s.handler, server.Options{
		Name: c.Name, Version: opts.version(),
		TimeoutMs: c.TimeoutMs, BatchSize: c.BatchSize, MaxDepth: c.MaxDepth,
		MaxMessageBytes: c.MaxMessageBytes, MaxInFlight: c.MaxInFlight, Logger: s.log,
	})
	maxConns := c.MaxConnections
	if maxConns == 0 {
		maxConns = connlimit.DefaultMax()
	}
	lim, err := connlimit.New(maxConns, connlimit.Options{Logger: s.log, Registerer: s.registerer()})
	if err != nil {
		s.closeStore()
		return nil, err
	}
	s.lim = lim
	for _, addr := range cfg.Listen {
		l, err := s.listenerFor(addr)
		if err != nil {
			s.closeStore()
			return nil, err
		}
		s.serves = append(s.serves, l)
	}
	if s.db != nil {
		if err := s.recordStart(context.Background()); err != nil {
			s.closeStore()
			return nil, err
		}
	}
	return s, nil
}

// Config returns the configuration the service was built from.
func (s *Service) Config() config.Config { return s.cfg }

// Store returns the store of audit records, approvals, memory and runs
// (nil with Options.ProtocolOnly). It is closed by Close.
func (s *Service) Store() store.Store {
	if s.db == nil {
		return nil
	}
	return s.db
}

// Engine returns the live policy engine (nil with Options.ProtocolOnly).
func (s *Service) Engine() *policy.Engine { return s.engine }

// Harness returns the harness that decides events (nil with
// Options.ProtocolOnly).
func (s *Service) Harness() *harness.Harness { return s.h }

// Server returns the protocol server every listener serves; a caller may
// serve more connections on it (ServeConn) while Run runs.
func (s *Service) Server() *server.Server { return s.srv }

// Registry returns the Prometheus registry served on /metrics (nil with
// Options.ProtocolOnly).
func (s *Service) Registry() *prometheus.Registry { return s.reg }

// AdminMux returns the mux of the admin API: the admin routes, /observe
// and the dashboard are mounted on it, and a caller may mount more (with
// patterns that do not collide with those, or Handle panics). It is
// served on cfg.Admin by Run; when cfg.Admin is empty it is not served.
func (s *Service) AdminMux() *http.ServeMux { return s.adminMux }

// Observe adds an observer of every audit record and approval the harness
// stores, as stored (redacted). It may be called at any time; records
// stored before the call are not replayed. Observers must return at once.
func (s *Service) Observe(o harness.Observer) { s.obs.add(o) }

// Reload reads the policy files again and replaces the live policy (and
// the shadow policy with it) when they compile; otherwise the previous
// policy keeps running and the error says why. Observers are told.
func (s *Service) Reload() error {
	if s.engine == nil {
		return errors.New("service: no policy engine to reload (protocol-only)")
	}
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	srcs, err := policy.ReadFiles(s.cfg.Policy.Files...)
	if err == nil {
		err = s.reloadPolicies(srcs)
	}
	if err != nil {
		s.log.Error("policy reload refused; the previous policy keeps running", "error", err)
	} else {
		s.log.Info("policy reloaded", "version", s.engine.Version())
	}
	if s.hub != nil {
		s.hub.PolicyReloaded(err)
	}
	return err
}

// Close stops the service in order: Run's listeners stop accepting and
// their connections end (decisions in flight finish, or fail closed when
// their context ends), the admin API and background work stop, the
// harness_stop record is written, the audit queue drains and the store
// closes. It waits for Run to return. Calls after the first return the
// first one's result.
func (s *Service) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		stop, done := s.stopRun, s.runDone
		s.mu.Unlock()
		if stop != nil {
			stop()
			<-done
		}
		if s.h != nil {
			s.h.Flush() // memories still being written
		}
		if s.db != nil {
			s.recordStop("orderly shutdown")
		}
		s.closeErr = s.closeStore()
	})
	return s.closeErr
}

// closeStore closes the store and then releases the locks: the lock is
// held until nothing of this harness is left in the data directory.
func (s *Service) closeStore() error {
	defer s.unlock()
	// Decisions have ended: deliver the last approval outcomes, flush
	// the spans.
	s.stopNotifier()
	s.stopTelemetry()
	if s.db == nil {
		return nil
	}
	err := s.db.Close()
	if err != nil {
		s.log.Error("closing the store", "error", err)
		err = fmt.Errorf("closing the store: %w", err)
	}
	return err
}

// registerer returns the registry as a Registerer, nil when there is none.
func (s *Service) registerer() prometheus.Registerer {
	if s.reg == nil {
		return nil
	}
	return s.reg
}
