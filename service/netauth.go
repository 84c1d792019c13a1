package service

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/config"
)

// netAuth holds the security settings shared by every network listener of
// one Service (http, https, WebSocket, gRPC): the credentials file, loaded
// once, the refusal counter, and warnings given once.
type netAuth struct {
	cfg config.AuthConfig
	reg prometheus.Registerer // receives the refusal counter; nil: none

	mu      sync.Mutex
	store   *auth.Store
	warned  map[string]bool
	metrics *auth.Metrics
}

// errNoCredentials is returned when a network listener would be open to
// everyone without that having been asked for.
var errNoCredentials = errors.New("a network listener needs --credentials FILE (or $AHP_CREDENTIALS); to run without authentication, pass --insecure-no-auth")

// authenticator returns the Authenticator of a network listener. The
// rule: a credentials file selects its principals; insecure_no_auth
// accepts everyone; with neither, a listener whose listenHost is
// loopback-only (127.0.0.0/8, ::1, localhost) is open with a warning, and
// any other listener (or a call that names no host) refuses to start.
// withMetrics registers the refusal counter at once.
func (n *netAuth) authenticator(log *slog.Logger, withMetrics bool, listenHost ...string) (auth.Authenticator, error) {
	if withMetrics {
		if _, err := n.authMetrics(); err != nil {
			return nil, err
		}
	}
	switch {
	case n.cfg.Credentials != "" && n.cfg.InsecureNoAuth:
		return nil, errors.New("give --credentials or --insecure-no-auth, not both")
	case n.cfg.Credentials != "":
		return n.loadStore(log)
	case n.cfg.InsecureNoAuth:
		n.warnOnce(log, "insecure", "authentication is off (--insecure-no-auth): anyone who can reach the listener can send events and read decisions")
		return auth.InsecureNoAuth{}, nil
	case len(listenHost) > 0 && allLoopback(listenHost):
		if n.cfg.ClientCA != "" {
			return nil, errors.New("--client-ca needs --credentials with an mtls section to map certificates to principals")
		}
		n.warnOnce(log, "loopback", "no --credentials: the loopback listener accepts every local process and user without authentication; give --credentials to require API keys")
		return auth.InsecureNoAuth{}, nil
	}
	return nil, errNoCredentials
}

func allLoopback(hosts []string) bool {
	for _, h := range hosts {
		if !auth.IsLoopbackHost(h) {
			return false
		}
	}
	return true
}

// loadStore loads the credentials file once per Service and logs its
// warnings once.
func (n *netAuth) loadStore(log *slog.Logger) (*auth.Store, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.store != nil {
		return n.store, nil
	}
	st, err := auth.LoadFile(n.cfg.Credentials)
	if err != nil {
		return nil, err
	}
	if n.cfg.ClientCA != "" && !st.HasCertificateMappings() {
		return nil, fmt.Errorf("--client-ca is set but %s maps no certificate to a principal (add an mtls section)", n.cfg.Credentials)
	}
	for _, w := range st.Warnings() {
		log.Warn("credentials file", "warning", w)
	}
	log.Info("credentials loaded", "file", n.cfg.Credentials, "principals", len(st.Principals()))
	n.store = st
	return st, nil
}

// authMetrics returns the refusal counter shared by all listeners.
func (n *netAuth) authMetrics() (*auth.Metrics, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.metrics != nil {
		return n.metrics, nil
	}
	m, err := auth.NewMetrics(n.reg)
	if err != nil {
		return nil, err
	}
	n.metrics = m
	return m, nil
}

func (n *netAuth) warnOnce(log *slog.Logger, key, msg string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.warned[key] {
		n.warned[key] = true
		log.Warn(msg)
	}
}

// serverTLS returns the TLS config of a network listener from the
// certificate, key and client CA, or nil when TLS is not configured.
func (n *netAuth) serverTLS() (*tls.Config, error) {
	if n.cfg.TLSCert == "" && n.cfg.TLSKey == "" {
		if n.cfg.ClientCA != "" {
			return nil, errors.New("--client-ca needs --tls-cert and --tls-key")
		}
		return nil, nil
	}
	return auth.ServerTLSConfig(n.cfg.TLSCert, n.cfg.TLSKey, n.cfg.ClientCA)
}
