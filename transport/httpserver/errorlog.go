package httpserver

import (
	"context"
	"log/slog"
	"strings"

	"github.com/ahp-go/ahp/auth"
)

// errorLog receives the lines net/http logs and passes them to slog. A
// failed TLS handshake that involves a client certificate (missing,
// expired, from an unknown CA) is a refusal: it is counted by the guard.
// Other handshake failures (port scans, health probes that only connect)
// are logged at debug level.
type errorLog struct {
	log   *slog.Logger
	guard *auth.Guard
}

const tlsPrefix = "http: TLS handshake error from "

func (e *errorLog) Write(p []byte) (int, error) {
	line := strings.TrimSpace(string(p))
	if rest, ok := strings.CutPrefix(line, tlsPrefix); ok {
		remote, reason, _ := strings.Cut(rest, ": ")
		if e.guard != nil && strings.Contains(reason, "certificate") {
			e.guard.Refused(context.Background(), remote, auth.ReasonTLS, tlsError(reason))
		} else {
			e.log.Debug("TLS handshake failed", "remote", remote, "error", reason)
		}
		return len(p), nil
	}
	e.log.Warn("http server", "error", line)
	return len(p), nil
}

type tlsError string

func (e tlsError) Error() string { return string(e) }
