package service

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/ahp-go/ahp/auth"
)

// adminHost returns the host:port of an admin address http://HOST:PORT.
func adminHost(addr string) (string, error) {
	u, err := url.Parse(addr)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return "", fmt.Errorf("admin: %q is not an http://HOST:PORT address", addr)
	}
	return u.Host, nil
}

// startAdmin serves the admin mux on cfg.Admin, when set. A failure of
// the admin server later stops the service (cancel). The returned
// function shuts it down, waiting up to 5 s for requests in progress.
func (s *Service) startAdmin(cancel context.CancelFunc) (stop func(), err error) {
	addr := s.cfg.Admin
	if addr == "" || s.db == nil {
		return func() {}, nil
	}
	host, err := adminHost(addr)
	if err != nil {
		return nil, err
	}
	if !auth.IsLoopbackAddr(host) {
		s.log.Warn("admin API listens beyond loopback; approvals still require credentials", "address", addr)
	}
	l, err := net.Listen("tcp", host)
	if err != nil {
		if s.opts.AdminOptional {
			// The default address is taken (another harness on this
			// machine, say one per stdio agent): run without an admin API.
			s.log.Warn("admin API not started: default address in use; set --admin or admin: in the config", "address", addr, "error", err)
			return func() {}, nil
		}
		return nil, fmt.Errorf("admin: %w", err)
	}
	srv := &http.Server{Handler: s.adminMux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("admin API stopped", "error", err)
			cancel()
		}
	}()
	bound := "http://" + l.Addr().String()
	s.adminBound.Store(&bound)
	s.lockBound("admin", bound)
	s.log.Info("admin API listening", "address", bound)
	if s.opts.Ready != nil {
		s.opts.Ready(Listening{Listen: "admin", Addr: bound})
	}
	return func() {
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		_ = srv.Shutdown(sctx)
		<-done
	}, nil
}
