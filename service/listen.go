package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/transport"
)

// Schemes returns the listen address schemes a Service serves, as they
// appear in config.Config.Listen: "stdio" alone, or SCHEME:TARGET.
func Schemes() []string { return config.ListenSchemes() }

// listener is one configured listen address and how to serve it.
type listener struct {
	addr string
	// serve serves the harness until ctx ends; ready is called once the
	// address accepts connections.
	serve func(ctx context.Context, ready func(addr, hint string)) error
	// stdio: the listener ends when its input does, and so does Run.
	stdio bool
}

// listenerFor returns how to serve addr. The scheme is a value of the
// configuration: the table of schemes is this switch.
func (s *Service) listenerFor(addr string) (listener, error) {
	l := listener{addr: addr}
	if addr == "stdio" {
		l.stdio = true
		l.serve = s.serveStdio
		return l, nil
	}
	if err := config.CheckListen(addr); err != nil {
		return l, errors.New("--" + err.Error())
	}
	scheme, target, _ := strings.Cut(addr, ":")
	switch scheme {
	case "unix":
		l.serve = func(ctx context.Context, ready func(string, string)) error { return s.serveUnix(ctx, target, ready) }
	case "http", "https":
		l.serve = func(ctx context.Context, ready func(string, string)) error {
			return s.serveHTTP(ctx, scheme, target, ready)
		}
	case "ws", "wss":
		l.serve = func(ctx context.Context, ready func(string, string)) error {
			return s.serveWebSocket(ctx, scheme, target, ready)
		}
	case "grpc", "grpcs":
		l.serve = func(ctx context.Context, ready func(string, string)) error {
			return s.serveGRPC(ctx, scheme, target, ready)
		}
	default:
		return l, fmt.Errorf("--listen %q: unknown scheme (want one of %s)", addr, strings.Join(Schemes(), ", "))
	}
	return l, nil
}

// serveStdio serves one agent on the service's standard input and output.
func (s *Service) serveStdio(ctx context.Context, ready func(string, string)) error {
	var in io.Reader = os.Stdin
	var out io.Writer = os.Stdout
	if s.opts.Stdin != nil {
		in = s.opts.Stdin
	}
	if s.opts.Stdout != nil {
		out = s.opts.Stdout
	}
	s.log.Debug("serving on stdio")
	ready("stdio", "")
	return s.srv.ServeConn(ctx, transport.Stdio(in, out, s.cfg.Harness.MaxMessageBytes))
}

// serveUnix serves on a Unix socket.
func (s *Service) serveUnix(ctx context.Context, target string, ready func(string, string)) error {
	if target == "" {
		return errors.New("--listen unix: needs a path, as in unix:/run/ahp.sock")
	}
	mode := s.opts.SocketMode
	if mode == 0 {
		mode = 0o600
	}
	if mode&^0o660 != 0 {
		return fmt.Errorf("--socket-mode %#o: want 0600 or 0660 (octal)", mode)
	}
	l, err := transport.ListenUnixLimited(target, s.cfg.Harness.MaxMessageBytes, s.lim)
	if err != nil {
		return err
	}
	if mode != 0o600 {
		if err := os.Chmod(target, mode); err != nil {
			_ = l.Close()
			return fmt.Errorf("--socket-mode: %w", err)
		}
	}
	shown := target
	if !filepath.IsAbs(shown) && !strings.HasPrefix(shown, ".") {
		shown = "./" + shown
	}
	ready("unix:"+target, fmt.Sprintf("ahp: harness listening on unix:%s\nahp: try: ahp send --connect unix:%s pre_action '{\"tool_name\":\"bash\",\"arguments\":{\"command\":\"ls\"}}'", shown, shown))
	return s.srv.Serve(ctx, l)
}
