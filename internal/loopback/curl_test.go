package loopback

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The spellings this package calls loopback are ones curl really sends to
// this machine: with curl installed, each reaches a server listening on
// 127.0.0.1 (HTTP 200), and the package agrees on host and port.
func TestSpellingsCurlReaches(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is not installed")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	get := func(args ...string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		out, _ := exec.CommandContext(ctx, curl, append([]string{"-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "5"}, args...)...).Output()
		return string(out)
	}
	for _, host := range []string{
		"127.1", "0x7f000001", "2130706433", "017700000001", "0x7f.1", "0177.0.0.1", "127.0.0.1",
		"%31%32%37.0.0.1", "１２７.０.０.１", "api.localhost", "0", "[::ffff:127.0.0.1]",
	} {
		if !IsLocalHost(host) {
			t.Errorf("%s: not local to this package", host)
		}
		for _, p := range []string{port, "0" + port, "0000" + port} {
			if n, ok := ParsePort(p); !ok || strconv.Itoa(n) != port {
				t.Errorf("port %s: %d %v", p, n, ok)
			}
			if code := get("http://" + host + ":" + p + "/"); code != "200" {
				t.Errorf("curl http://%s:%s/: %q, want 200 (the package calls it loopback)", host, p, code)
			}
		}
	}
	res, _ := CurlResolve("x.test:" + port + ":127.0.0.1")
	if code := get("--resolve", "x.test:"+port+":127.0.0.1", "http://x.test:"+port+"/"); code != "200" || len(res) != 1 || !IsLocalHost(res[0].Host) {
		t.Errorf("--resolve: curl %q, package %v", code, res)
	}
	to, _ := CurlConnectTo("::127.1:" + port)
	if code := get("--connect-to", "::127.1:"+port, "http://example.invalid/"); code != "200" || !IsLocalHost(to.Host) || to.Port != port {
		t.Errorf("--connect-to: curl %q, package %v", code, to)
	}
}
