// Package loopback recognises the spellings of this machine's own
// addresses the way the programs an agent runs read them: the C resolver's
// inet_aton forms (127.1, 0x7f000001, 2130706433, 017700000001), IPv6
// (::1, [::1], IPv4-mapped, zones), curl's own rules (localhost and any
// name under .localhost, a trailing dot, percent-encoding, IDN mapping of
// full-width digits) and ports written with leading zeros. The
// self_protection pack uses it to recognise its admin API whatever the
// spelling; it is pure and has no state.
package loopback

import (
	"bufio"
	"io"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// idnaMap maps a host name as curl's IDN support (libidn2, UTS #46) does
// before resolving it: full-width digits and dots become ASCII, letters
// are folded.
var idnaMap = idna.New(idna.MapForLookup(), idna.Transitional(false))

// Normalize returns host as the resolver would be asked for it: brackets
// removed, percent-encoding decoded, mapped through IDNA, lower case, one
// trailing dot removed.
func Normalize(host string) string {
	h := strings.TrimSpace(host)
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	if strings.ContainsRune(h, '%') && !strings.Contains(h, ":") {
		if d, err := url.PathUnescape(h); err == nil {
			h = d
		}
	}
	if !isASCII(h) {
		if m, err := idnaMap.ToASCII(h); err == nil || m != "" {
			h = m
		}
	}
	h = strings.ToLower(h)
	if len(h) > 1 && strings.HasSuffix(h, ".") && !strings.HasSuffix(h, "..") {
		h = h[:len(h)-1]
	}
	return h
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// ParseIPv4 reads s as inet_aton(3) and curl's URL parser read an IPv4
// host: one to four parts separated by dots, each decimal, octal (a
// leading 0) or hexadecimal (0x), the last part filling the bytes the
// others leave (127.1 is 127.0.0.1, 2130706433 is 127.0.0.1).
func ParseIPv4(s string) (netip.Addr, bool) {
	if s == "" || len(s) > 64 {
		return netip.Addr{}, false
	}
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		v, ok := parseInetPart(p)
		if !ok {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	// Every part but the last is one byte; the last fills the rest.
	var n uint64
	for _, v := range vals[:len(vals)-1] {
		if v > 0xff {
			return netip.Addr{}, false
		}
		n = n<<8 | v
	}
	restBits := uint(8 * (4 - (len(vals) - 1)))
	last := vals[len(vals)-1]
	if last >= 1<<restBits {
		return netip.Addr{}, false
	}
	n = n<<restBits | last
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

// parseInetPart reads one part of an inet_aton address.
func parseInetPart(p string) (uint64, bool) {
	base := 10
	digits := p
	switch {
	case len(p) > 1 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'):
		base, digits = 16, p[2:]
		if digits == "" {
			return 0, true // "0x" alone is 0 to inet_aton
		}
	case len(p) > 1 && p[0] == '0':
		base, digits = 8, p[1:]
	}
	if digits == "" || len(digits) > 32 {
		return 0, false
	}
	v, err := strconv.ParseUint(digits, base, 64)
	if err != nil || v > 0xffffffff {
		return 0, false
	}
	return v, true
}

// ParseHost reads host as an address in any spelling a connection would
// accept: the inet_aton forms of IPv4, IPv6 with or without brackets and
// with a zone, after Normalize. IPv4-mapped IPv6 addresses are returned
// as IPv4.
func ParseHost(host string) (netip.Addr, bool) {
	h := Normalize(host)
	if h == "" {
		return netip.Addr{}, false
	}
	if a, ok := ParseIPv4(h); ok {
		return a, true
	}
	if strings.Contains(h, ":") {
		if a, err := netip.ParseAddr(h); err == nil {
			return a.WithZone("").Unmap(), true
		}
		if i := strings.IndexByte(h, '%'); i >= 0 {
			if a, err := netip.ParseAddr(h[:i]); err == nil {
				return a.Unmap(), true
			}
		}
	}
	return netip.Addr{}, false
}

// IsLoopbackHost reports whether a connection to host stays on this
// machine through its loopback interface: localhost and every name under
// .localhost (curl answers them itself), and every spelling of a loopback
// address (127.0.0.0/8, ::1, ::ffff:127.x.y.z).
func IsLoopbackHost(host string) bool {
	h := Normalize(host)
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	a, ok := ParseHost(h)
	return ok && a.IsLoopback()
}

// IsUnspecifiedHost reports whether host is the unspecified address in
// any spelling (0, 0.0.0.0, 0x0, ::, [::]). Linux and macOS connect such a
// connection to this machine, so it reaches whatever listens on loopback
// or on every address.
func IsUnspecifiedHost(host string) bool {
	a, ok := ParseHost(host)
	return ok && a.IsUnspecified()
}

// IsLocalHost reports whether a connection to host reaches a listener
// bound to a loopback address: IsLoopbackHost or IsUnspecifiedHost.
func IsLocalHost(host string) bool { return IsLoopbackHost(host) || IsUnspecifiedHost(host) }

// ParsePort reads a TCP port as curl and Go's net package read it:
// decimal digits, leading zeros allowed (07700 is 7700), at most 65535.
func ParsePort(s string) (int, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	t := strings.TrimLeft(s, "0")
	if t == "" {
		return 0, true
	}
	if len(t) > 5 {
		return 0, false
	}
	n, err := strconv.Atoi(t)
	if err != nil || n > 65535 {
		return 0, false
	}
	return n, true
}

// HostPort is a host as written and a port as written.
type HostPort struct{ Host, Port string }

// CurlResolve reads the value of curl's --resolve option,
// [+]HOST:PORT:ADDR[,ADDR]..., and returns the addresses the connection
// may go to, each with the port. ok is false when s has not that shape.
func CurlResolve(s string) (out []HostPort, ok bool) {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "+"), "-")
	_, rest, ok := cutHostField(s)
	if !ok {
		return nil, false
	}
	port, addrs, ok := strings.Cut(rest, ":")
	if !ok {
		return nil, false
	}
	for a := range strings.SplitSeq(addrs, ",") {
		out = append(out, HostPort{Host: strings.Trim(a, "[]"), Port: port})
	}
	return out, len(out) > 0
}

// CurlConnectTo reads the value of curl's --connect-to option,
// HOST1:PORT1:HOST2:PORT2, and returns where the connection goes
// (HOST2:PORT2; an empty part keeps the request's own, reported as "").
func CurlConnectTo(s string) (HostPort, bool) {
	_, rest, ok := cutHostField(s)
	if !ok {
		return HostPort{}, false
	}
	_, rest, ok = strings.Cut(rest, ":") // PORT1
	if !ok {
		return HostPort{}, false
	}
	host2, port2, ok := cutHostField(rest)
	if !ok {
		return HostPort{}, false
	}
	return HostPort{Host: strings.Trim(host2, "[]"), Port: port2}, true
}

// cutHostField cuts a HOST: field (a bracketed IPv6 address may hold
// colons) off the front of s.
func cutHostField(s string) (host, rest string, ok bool) {
	if strings.HasPrefix(s, "[") {
		i := strings.Index(s, "]:")
		if i < 0 {
			return "", "", false
		}
		return s[:i+1], s[i+2:], true
	}
	return strings.Cut(s, ":")
}

// LoopbackNames returns the names a hosts file (/etc/hosts format) gives
// a loopback or unspecified address, lower case, at most max of them.
func LoopbackNames(r io.Reader, max int) []string {
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() && len(out) < max {
		line, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		if a, ok := ParseHost(f[0]); !ok || !(a.IsLoopback() || a.IsUnspecified()) {
			continue
		}
		for _, n := range f[1:] {
			if len(out) < max {
				out = append(out, Normalize(n))
			}
		}
	}
	return out
}
