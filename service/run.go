package service

import (
	"context"
	"errors"
	"sync"
)

// Run serves every configured listener and the admin API until ctx ends,
// Close is called, a listener fails, or the stdio agent goes away; then it
// stops them (listeners stop accepting and their connections end) and
// returns. Background work (policy file watching, audit retention, the
// observer hub) runs with it. Run may be called once; the error joins the
// listeners' errors (nil on an orderly stop).
func (s *Service) Run(ctx context.Context) error {
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return ErrClosed
	case s.running:
		s.mu.Unlock()
		return errors.New("service: Run called twice")
	}
	s.running = true
	ctx, cancel := context.WithCancel(ctx)
	s.stopRun, s.runDone = cancel, make(chan struct{})
	s.mu.Unlock()
	defer close(s.runDone)

	var bg sync.WaitGroup
	stopAdmin := func() {}
	defer func() {
		// Listeners have stopped: the admin API and the background work
		// end before Close closes the store.
		cancel()
		stopAdmin()
		bg.Wait()
	}()
	if s.hub != nil {
		bg.Go(func() { s.hub.Run(ctx) })
	}
	stop, err := s.startAdmin(cancel)
	if err != nil {
		return err
	}
	stopAdmin = stop
	bg.Go(func() { s.watchPolicyFiles(ctx) })
	bg.Go(func() { s.retain(ctx) })
	bg.Go(func() { s.replicate(ctx) })
	bg.Go(func() { s.followStore(ctx) })

	// "harness ready" is said once every listener accepts: until then
	// start-up can still fail (an address in use, a socket not writable).
	var readyMu sync.Mutex
	waiting := len(s.serves)
	if waiting == 0 {
		s.logReady()
	}
	errc := make(chan error, len(s.serves))
	var wg sync.WaitGroup
	for _, l := range s.serves {
		wg.Go(func() {
			err := l.serve(ctx, func(addr, hint string) {
				if !l.stdio {
					s.log.Info("listening", "address", l.addr)
				}
				s.lockBound(l.addr, addr)
				if s.opts.Ready != nil {
					s.opts.Ready(Listening{Listen: l.addr, Addr: addr, Hint: hint})
				}
				readyMu.Lock()
				waiting--
				last := waiting == 0
				readyMu.Unlock()
				if last {
					s.logReady()
				}
			})
			if err != nil || l.stdio {
				// A failed listener stops the service; so does the end of
				// the stdio agent's input.
				cancel()
			}
			errc <- err
		})
	}
	wg.Wait()
	close(errc)
	var errs []error
	for err := range errc {
		if err != nil && !errors.Is(err, context.Canceled) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// logReady says the harness serves: every listener accepts, the admin API
// too. A service without a store (Options.ProtocolOnly) says nothing.
func (s *Service) logReady() {
	if s.db == nil {
		return
	}
	s.log.Info("harness ready", "data_dir", s.cfg.DataDir, "policy_version", s.engine.Version(),
		"policy_files", len(s.cfg.Policy.Files), "listen", s.cfg.Listen)
}
