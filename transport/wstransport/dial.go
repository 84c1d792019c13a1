package wstransport

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/ahp-go/ahp/transport"
	"github.com/ahp-go/ahp/transport/reconnect"
)

// DefaultPath is the endpoint path used when a ws:// or wss:// address has
// none; it is where wsserve is mounted by `ahp serve`.
const DefaultPath = "/ahp"

func init() {
	transport.RegisterDialer("ws", dialer)
	transport.RegisterDialer("wss", dialer)
}

// dialer is the transport.Dialer for ws and wss: a reconnecting Conn.
func dialer(ctx context.Context, scheme, target string, opts transport.DialOptions) (transport.Conn, error) {
	return DialReconnecting(ctx, scheme+":"+target, opts, reconnect.Options{WaitTimeout: opts.Timeout})
}

// DialReconnecting connects to rawURL like Dial and returns a Conn that
// reconnects after a loss (see package reconnect). A refused upgrade
// (401 or 403) while reconnecting ends the retries.
func DialReconnecting(ctx context.Context, rawURL string, opts transport.DialOptions, ropts reconnect.Options) (*reconnect.Conn, error) {
	return reconnect.Dial(ctx, func(ctx context.Context) (transport.Conn, error) {
		c, err := Dial(ctx, rawURL, opts)
		var he *HandshakeError
		if errors.As(err, &he) && (he.StatusCode == http.StatusUnauthorized || he.StatusCode == http.StatusForbidden) {
			return nil, reconnect.Permanent(err)
		}
		return c, err
	}, ropts)
}

// HandshakeError reports an upgrade the server refused.
type HandshakeError struct {
	URL        string // the address, without its query
	StatusCode int    // the HTTP status of the refusal
	// Message is the "message" of a JSON body the refusal came with (an
	// AHP harness at its connection limit says so), cut to 512 bytes;
	// empty when there was none.
	Message string
}

// Error names the address (without its query), the HTTP status and the
// server's message, if any.
func (e *HandshakeError) Error() string {
	if e.Message != "" {
		return fmt.Sprintf("ws: %s refused the WebSocket upgrade: %d %s: %s", e.URL, e.StatusCode, http.StatusText(e.StatusCode), e.Message)
	}
	return fmt.Sprintf("ws: %s refused the WebSocket upgrade: %d %s", e.URL, e.StatusCode, http.StatusText(e.StatusCode))
}

// Dial opens one WebSocket connection to rawURL (ws://HOST[:PORT][/PATH]
// or wss://...; an empty path means DefaultPath). Credentials from opts
// are sent as X-API-Key and "Authorization: Bearer" headers of the
// upgrade request, with opts.Header; they are refused over ws:// to a
// host that is not loopback, where they would cross the network in clear
// text. Redirects are not followed, so credentials never reach another
// host. The returned Conn does not reconnect; it pings the server every
// DefaultPingInterval so that a dead peer is noticed.
func Dial(ctx context.Context, rawURL string, opts transport.DialOptions) (*Conn, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("ws: bad address: %w", errors.Unwrap(err))
	}
	if u.Scheme != "ws" && u.Scheme != "wss" {
		return nil, fmt.Errorf("ws: address scheme %q is not ws or wss", u.Scheme)
	}
	if u.Host == "" {
		return nil, errors.New("ws: address has no host (want ws://HOST:PORT/ahp)")
	}
	if u.Path == "" {
		u.Path = DefaultPath
	}
	shown := redact(u)
	if u.Scheme == "ws" && (opts.APIKey != "" || opts.BearerToken != "") && !isLoopback(u.Hostname()) {
		return nil, fmt.Errorf("ws: refusing to send credentials in clear text to %s; use wss://", u.Host)
	}
	hdr := http.Header{}
	for k, v := range opts.Header {
		hdr[k] = append([]string(nil), v...)
	}
	if opts.APIKey != "" {
		hdr.Set("X-API-Key", opts.APIKey)
	}
	if opts.BearerToken != "" {
		hdr.Set("Authorization", "Bearer "+opts.BearerToken)
	}
	var batch *batchConn
	rt := newRoundTripper(u.Scheme == "wss", opts.TLS, func(c net.Conn) net.Conn {
		batch = newBatchConn(c, DefaultWriteTimeout)
		return batch
	})
	defer rt.CloseIdleConnections()
	ws, resp, err := websocket.Dial(ctx, u.String(), &websocket.DialOptions{
		HTTPClient: &http.Client{
			Transport:     rt,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		HTTPHeader:      hdr,
		CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			return nil, &HandshakeError{URL: shown, StatusCode: resp.StatusCode, Message: refusalMessage(resp)}
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its text quotes the whole URL, query included
		}
		return nil, fmt.Errorf("ws: dial %s: %w", shown, err)
	}
	return newConn(ws, ConnOptions{
		MaxMessageBytes: opts.MaxMessageBytes,
		Info:            transport.Info{Transport: u.Scheme, Remote: u.Host},
	}, batch), nil
}

// newRoundTripper returns the HTTP transport of one upgrade: HTTP/1.1
// only (the upgrade needs it), the environment's proxy settings, and the
// caller's TLS configuration for wss. wrap is applied to the TCP
// connection (under TLS).
func newRoundTripper(secure bool, cfg *tls.Config, wrap func(net.Conn) net.Conn) *http.Transport {
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	t := &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return wrap(c), nil
		},
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConns:        1,
	}
	if secure {
		if cfg == nil {
			cfg = &tls.Config{MinVersion: tls.VersionTLS12}
		} else {
			cfg = cfg.Clone()
		}
		cfg.NextProtos = []string{"http/1.1"}
		t.TLSClientConfig = cfg
	}
	return t
}

// isLoopback reports whether host names only the loopback interface.
func isLoopback(host string) bool {
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// redact returns u without its query and user info, for messages.
func redact(u *url.URL) string {
	s := u.Scheme + "://" + u.Host + u.EscapedPath()
	if u.RawQuery != "" {
		s += "?…"
	}
	return strings.TrimSuffix(s, "/")
}

// maxRefusalBytes bounds the message of a refusal repeated in an error.
const maxRefusalBytes = 512

// refusalMessage returns the "message" of the JSON body of a refused
// upgrade (coder/websocket keeps the first KiB of the body), or "".
func refusalMessage(resp *http.Response) string {
	if resp.Body == nil {
		return ""
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err != nil {
		return ""
	}
	var body struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(b, &body) != nil {
		return ""
	}
	m := body.Message
	if len(m) > maxRefusalBytes {
		m = strings.ToValidUTF8(m[:maxRefusalBytes], "") + "…"
	}
	return m
}
