package httptransport

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/ahp-go/ahp/transport"
)

// DefaultPath is the endpoint path used when an address names none; it is
// the path of the 2.4 server.
const DefaultPath = "/ahp"

// DefaultMaxInFlight bounds the requests one Conn has in flight; a
// WriteMessage beyond it waits for a slot. The connection pool keeps as
// many idle connections, so a steady load reuses its connections.
const DefaultMaxInFlight = 128

func init() {
	transport.RegisterDialer("http", dial)
	transport.RegisterDialer("https", dial)
}

func dial(ctx context.Context, scheme, target string, o transport.DialOptions) (transport.Conn, error) {
	return Dial(ctx, scheme+":"+target, o)
}

// Dial returns a Conn that POSTs to endpoint, an http:// or https:// URL
// ("/ahp" is used when it has no path). It does not contact the harness:
// the first message does. Credentials in o are sent with every request;
// they are refused over plain http to a host that is not loopback, because
// they would cross the network in clear text. The Conn keeps its own pool
// of HTTP/1.1 keep-alive connections (at most DefaultMaxInFlight) and
// connects directly, without proxies; use NewConn for a proxy or any other
// *http.Client set-up.
func Dial(ctx context.Context, endpoint string, o transport.DialOptions) (transport.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	u, err := endpointURL(endpoint)
	if err != nil {
		return nil, err
	}
	if u.Scheme == "http" && (o.APIKey != "" || o.BearerToken != "") && !loopbackHost(u.Hostname()) {
		return nil, fmt.Errorf("http: refusing to send credentials in clear text to %s; use https://", u.Host)
	}
	return newH1Conn(u, o)
}

// NewConn is Dial with a caller-provided *http.Client, for callers that
// need a proxy, their own dialer or round-tripper middleware. Close does
// not close hc's idle connections. Redirects are followed as hc says (the
// Conn from Dial never follows them). Credentials are not checked against
// the scheme: hc may reach the harness through a TLS-terminating proxy.
func NewConn(endpoint string, hc *http.Client, o transport.DialOptions) (transport.Conn, error) {
	u, err := endpointURL(endpoint)
	if err != nil {
		return nil, err
	}
	if hc == nil {
		return nil, errors.New("http: NewConn needs an *http.Client")
	}
	return newConn(u, hc, o), nil
}

func endpointURL(endpoint string) (*url.URL, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("http: bad address: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("http: address %q must start with http:// or https://", endpoint)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("http: address %q has no host", endpoint)
	}
	if u.User != nil {
		return nil, errors.New("http: user information in the address is not supported; use an API key or bearer token")
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = DefaultPath
	}
	u.Fragment = ""
	return u, nil
}

func loopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.Unmap().IsLoopback()
}
