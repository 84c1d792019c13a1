package policy

import (
	"net/url"
	"slices"
	"strings"

	"github.com/ahp-go/ahp/effects"
	"github.com/ahp-go/ahp/internal/loopback"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
)

// urlHost returns the lower-case host name of a URL ("" if there is none).
// A URL without a scheme (example.com/x) is read as a host and path.
func urlHost(raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return ""
	}
	if !strings.Contains(raw, "://") {
		raw = "//" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
}

// hostAllowed reports whether host is on the allow-list. An entry matches
// the same host name; "*.example.com" matches every subdomain of
// example.com (not example.com itself); "*" matches every host.
func hostAllowed(host string, allowed []string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	for _, a := range allowed {
		a = strings.ToLower(strings.TrimSpace(a))
		switch {
		case a == "*":
			return true
		case strings.HasPrefix(a, "*."):
			if strings.HasSuffix(host, a[1:]) && len(host) > len(a)-1 {
				return true
			}
		case a == host:
			return true
		}
	}
	return false
}

func isNumber(w string) bool {
	if w == "" {
		return false
	}
	for _, c := range w {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// actionHosts returns the hosts an action reaches: the hosts of the
// connect, send and download effects of the payload (URL arguments of web
// tools, curl, wget, nc, ssh, /dev/tcp, sockets and HTTP clients in
// interpreter code), as event.effects has them, lower case, each once.
func actionHosts(payload ref.Val) []string {
	var out []string
	for _, e := range payloadActs(payload) {
		switch e.Kind {
		case effects.Connect, effects.Send, effects.Download:
			if h := strings.TrimSuffix(strings.ToLower(e.Host()), "."); h != "" && !slices.Contains(out, h) {
				out = append(out, h)
			}
		}
	}
	return out
}

// celStringList reads a CEL string or list of strings.
func celStringList(v ref.Val) ([]string, ref.Val) {
	switch x := v.(type) {
	case types.String:
		return []string{string(x)}, nil
	case types.Null:
		return nil, nil
	}
	l, ok := v.(traits.Lister)
	if !ok {
		return nil, types.NewErr("expected a string or a list of strings, got %s", v.Type().TypeName())
	}
	n, _ := l.Size().(types.Int)
	out := make([]string, 0, int(n))
	for i := types.Int(0); i < n; i++ {
		s, ok := l.Get(i).(types.String)
		if !ok {
			return nil, types.NewErr("expected a list of strings")
		}
		out = append(out, string(s))
	}
	return out, nil
}

// canonicalHost returns host as a connection reaches it: an address in any
// spelling a client accepts (2852039166, 0xa9fea9fe, 169.254.43518,
// [::ffff:169.254.169.254]) as its canonical text (169.254.169.254), a
// name lower-cased, IDNA-mapped and without its trailing dot.
func canonicalHost(host string) string {
	if a, ok := loopback.ParseHost(host); ok {
		return a.String()
	}
	return loopback.Normalize(host)
}
