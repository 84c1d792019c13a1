package auth

import (
	"net"
	"net/netip"
	"strings"
)

// IsLoopbackHost reports whether host (a name or IP address, without a
// port) names only the loopback interface: "localhost", 127.0.0.0/8 or
// ::1. An empty host means every interface and is not loopback.
func IsLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") || strings.EqualFold(host, "localhost.") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	return ip.Unmap().IsLoopback()
}

// IsLoopbackAddr is IsLoopbackHost for a HOST:PORT address.
func IsLoopbackAddr(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	return IsLoopbackHost(host)
}
