package transport

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// DialOptions configure how a client connects. Network transports read the
// credential and TLS fields; stdio and Unix sockets ignore them.
type DialOptions struct {
	MaxMessageBytes int           // per-message limit (DefaultMaxMessageBytes when 0)
	Timeout         time.Duration // connection set-up timeout (also the request timeout where a transport needs one)
	APIKey          string        // sent as X-API-Key
	BearerToken     string        // sent as Authorization: Bearer
	TLS             *tls.Config   // for https, wss and grpc with TLS
	Header          http.Header   // extra headers for HTTP and WebSocket
}

// Dialer opens a connection to target, which is the part of the address
// after "scheme:" (for "unix:/tmp/h.sock" it is "/tmp/h.sock"; for
// "http://host/ahp" it is "//host/ahp").
type Dialer func(ctx context.Context, scheme, target string, opts DialOptions) (Conn, error)

var (
	dialMu  sync.RWMutex
	dialers = map[string]Dialer{}
)

// RegisterDialer makes Dial handle addresses with the given scheme.
func RegisterDialer(scheme string, d Dialer) {
	dialMu.Lock()
	defer dialMu.Unlock()
	dialers[scheme] = d
}

func init() {
	RegisterDialer("unix", func(ctx context.Context, _, target string, o DialOptions) (Conn, error) {
		return DialUnix(ctx, target, o.MaxMessageBytes)
	})
	RegisterDialer("stdio", func(ctx context.Context, _, target string, o DialOptions) (Conn, error) {
		args, err := SplitCommand(target)
		if err != nil {
			return nil, err
		}
		if len(args) == 0 {
			return nil, fmt.Errorf("stdio: no program given (want stdio:'PROGRAM ARGS')")
		}
		return StartCommand(ctx, o.MaxMessageBytes, args[0], args[1:]...)
	})
}

// Dial connects to addr, written as SCHEME:TARGET, for example
// "unix:/run/ahp.sock" or "stdio:ahp serve --listen stdio".
func Dial(ctx context.Context, addr string, opts DialOptions) (Conn, error) {
	scheme, target, ok := strings.Cut(addr, ":")
	if !ok {
		return nil, fmt.Errorf("transport: address %q has no scheme (want one of %s)", addr, strings.Join(Schemes(), ", "))
	}
	dialMu.RLock()
	d := dialers[scheme]
	dialMu.RUnlock()
	if d == nil {
		if pkg := dialerPackages[scheme]; pkg != "" {
			return nil, fmt.Errorf("transport: scheme %q is not registered: import _ %q to dial it (registered: %s)", scheme, pkg, strings.Join(Schemes(), ", "))
		}
		return nil, fmt.Errorf("transport: unknown scheme %q (want one of %s)", scheme, strings.Join(Schemes(), ", "))
	}
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	return d(ctx, scheme, target, opts)
}

// dialerPackages names the package whose import registers the dialer of
// each network scheme (the transport package itself dials unix and stdio).
var dialerPackages = map[string]string{
	"http": "github.com/ahp-go/ahp/transport/httptransport", "https": "github.com/ahp-go/ahp/transport/httptransport",
	"ws": "github.com/ahp-go/ahp/transport/wstransport", "wss": "github.com/ahp-go/ahp/transport/wstransport",
	"grpc": "github.com/ahp-go/ahp/transport/grpctransport", "grpcs": "github.com/ahp-go/ahp/transport/grpctransport",
}

// Schemes lists the address schemes Dial handles.
func Schemes() []string {
	dialMu.RLock()
	defer dialMu.RUnlock()
	out := make([]string, 0, len(dialers))
	for s := range dialers {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// SplitCommand splits a command line into words, honouring single and
// double quotes and backslash escapes as a POSIX shell does (without
// expansion of any kind).
func SplitCommand(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	esc := false
	for _, r := range s {
		switch {
		case esc:
			cur.WriteRune(r)
			esc = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"':
			switch r {
			case '"':
				quote = 0
			case '\\':
				esc = true
			default:
				cur.WriteRune(r)
			}
		case r == '\\':
			esc, inWord = true, true
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 || esc {
		return nil, fmt.Errorf("stdio: unterminated quote or escape in %q", s)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
