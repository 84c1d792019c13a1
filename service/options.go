package service

import (
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/ahp-go/ahp/harness"
)

// Options are the settings of a Service that are not part of the
// configuration file: how the hosting process logs, identifies itself and
// reports readiness, and a few knobs for measurements. The zero value is
// usable.
type Options struct {
	// Logger receives the service's logs; nil discards them.
	Logger *slog.Logger
	// Version is announced in the handshake and written in the
	// harness_start record ("dev" when empty).
	Version string
	// ConfigFile is the file the configuration was read from, if any. The
	// self_protection pack guards it like the other files of the harness.
	ConfigFile string

	// AdminOptional runs without the admin API, with a warning, when its
	// address is taken; otherwise that is an error. `ahp serve` sets it
	// when the address is its default (one harness per stdio agent may
	// share a machine).
	AdminOptional bool

	// ProtocolOnly decides with the built-in baseline: no policy engine,
	// no store, no admin API. For measuring the protocol layer only.
	ProtocolOnly bool
	// AuditMaxBatch bounds the audit records of one group commit (0: the
	// store's default; 1 disables group commit).
	AuditMaxBatch int

	// SocketMode is the permission of unix: sockets: 0600 (the default
	// when zero) or 0660 (the socket's group may connect).
	SocketMode os.FileMode
	// HTTPWriteTimeout and HTTPReadTimeout bound answering and reading one
	// HTTP request on http(s) listeners (0: the httpserver defaults). The
	// write timeout must exceed the longest escalation wait.
	HTTPWriteTimeout, HTTPReadTimeout time.Duration
	// WebSocket configures WebSocket connections on http(s) listeners.
	WebSocket WebSocketOptions
	// Observe configures the observer channels and dashboard.
	Observe ObserveOptions

	// Stdin and Stdout carry the "stdio" listener (os.Stdin and os.Stdout
	// when nil). When Stdin ends, the agent is gone and Run returns.
	Stdin  io.Reader
	Stdout io.Writer

	// Ready, when set, is called once for each listener (and the admin
	// API) when it accepts connections. It must return quickly.
	Ready func(Listening)

	// Observers are told of every audit record and approval as stored
	// (redacted), after the dashboard's hub. See also Service.Observe.
	Observers []harness.Observer
}

// WebSocketOptions configure WebSocket connections on http(s) listeners.
type WebSocketOptions struct {
	// PingInterval is the keep-alive ping period: 0 the default, negative
	// turns pings off.
	PingInterval time.Duration
	// WriteTimeout drops an agent that does not take a message in time (0:
	// the default).
	WriteTimeout time.Duration
	// Origins are browser origins (host patterns) allowed to connect;
	// agents send no Origin and are always allowed.
	Origins []string
}

// ObserveOptions configure the observer channels (/observe) and the
// dashboard, served next to the admin API.
type ObserveOptions struct {
	// OnListeners serves them on the http(s) listeners too (needs
	// credentials).
	OnListeners bool
	// Ring is how many observer actions are kept in memory for replay
	// (0: 4096).
	Ring int
	// Queue bounds the messages queued per observer before it is
	// disconnected as too slow (0: 1024).
	Queue int
}

// Listening describes a listener that accepts connections.
type Listening struct {
	// Listen is the configured address ("unix:ahp.sock", "http://127.0.0.1:0"),
	// or "admin" for the admin API.
	Listen string
	// Addr is the address clients connect to, with the port chosen by the
	// system ("http://127.0.0.1:41234/ahp").
	Addr string
	// Hint is a line or two telling a user how to connect; empty for the
	// admin API.
	Hint string
}

func (o *Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

func (o *Options) version() string {
	if o.Version == "" {
		return "dev"
	}
	return o.Version
}
