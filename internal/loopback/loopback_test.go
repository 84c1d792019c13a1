package loopback

import (
	"strings"
	"testing"
)

func TestParseIPv4(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1":        "127.0.0.1",
		"127.1":            "127.0.0.1",
		"127.0.1":          "127.0.0.1",
		"0x7f000001":       "127.0.0.1",
		"0X7F000001":       "127.0.0.1",
		"2130706433":       "127.0.0.1",
		"017700000001":     "127.0.0.1",
		"0177.0.0.01":      "127.0.0.1",
		"0x7f.1":           "127.0.0.1",
		"127.0.0.255":      "127.0.0.255",
		"0":                "0.0.0.0",
		"10.1.2.3":         "10.1.2.3",
		"192.168.0x1.0377": "192.168.1.255",
	} {
		a, ok := ParseIPv4(in)
		if !ok || a.String() != want {
			t.Errorf("ParseIPv4(%q) = %v, %v; want %s", in, a, ok, want)
		}
	}
	for _, in := range []string{"", "256.0.0.1", "1.2.3.4.5", "4294967296", "08", "1..2", "127.0.0.0x100", "example.com", "1.2.3.-4"} {
		if a, ok := ParseIPv4(in); ok {
			t.Errorf("ParseIPv4(%q) = %v, want no address", in, a)
		}
	}
}

func TestIsLoopbackHost(t *testing.T) {
	for _, h := range []string{
		"127.0.0.1", "127.1", "0x7f000001", "2130706433", "017700000001", "127.255.255.254",
		"localhost", "LOCALHOST", "localhost.", "api.localhost", "api.localhost.",
		"::1", "[::1]", "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1", "[::ffff:7f00:1]", "::1%lo", "[::1%25lo]",
		"%31%32%37.0.0.1", "１２７.０.０.１", "127。0。0。1", "127.0.0.1.",
	} {
		if !IsLoopbackHost(h) {
			t.Errorf("IsLoopbackHost(%q) = false", h)
		}
		if !IsLocalHost(h) {
			t.Errorf("IsLocalHost(%q) = false", h)
		}
	}
	for _, h := range []string{"", "example.com", "10.0.0.1", "128.0.0.1", "localhost.example.com", "::2", "notlocalhost", "1.1"} {
		if IsLoopbackHost(h) {
			t.Errorf("IsLoopbackHost(%q) = true", h)
		}
	}
	for _, h := range []string{"0", "0.0.0.0", "0x0", "00", "::", "[::]", "0.0"} {
		if !IsUnspecifiedHost(h) || !IsLocalHost(h) || IsLoopbackHost(h) {
			t.Errorf("%q: unspecified %v local %v loopback %v", h, IsUnspecifiedHost(h), IsLocalHost(h), IsLoopbackHost(h))
		}
	}
}

func TestParsePort(t *testing.T) {
	for in, want := range map[string]int{"7700": 7700, "07700": 7700, "0000007700": 7700, "0": 0, "65535": 65535, "080": 80} {
		if n, ok := ParsePort(in); !ok || n != want {
			t.Errorf("ParsePort(%q) = %d, %v; want %d", in, n, ok, want)
		}
	}
	for _, in := range []string{"", "65536", "7700a", "-1", "+80", "0x1e14", "1000000"} {
		if n, ok := ParsePort(in); ok {
			t.Errorf("ParsePort(%q) = %d, want none", in, n)
		}
	}
}

func TestCurlOptions(t *testing.T) {
	hp, ok := CurlResolve("example.com:7700:127.0.0.1")
	if !ok || len(hp) != 1 || hp[0] != (HostPort{"127.0.0.1", "7700"}) {
		t.Fatalf("resolve: %v %v", hp, ok)
	}
	hp, ok = CurlResolve("+*:07700:10.0.0.1,[::1]")
	if !ok || len(hp) != 2 || hp[1] != (HostPort{"::1", "07700"}) {
		t.Fatalf("resolve with a list: %v %v", hp, ok)
	}
	hp, ok = CurlResolve("[fe80::1]:7700:127.1")
	if !ok || len(hp) != 1 || hp[0] != (HostPort{"127.1", "7700"}) {
		t.Fatalf("resolve of an IPv6 name: %v %v", hp, ok)
	}
	if _, ok := CurlResolve("no-colons"); ok {
		t.Fatal("resolve without fields")
	}
	c, ok := CurlConnectTo("example.com:443:127.1:7700")
	if !ok || c != (HostPort{"127.1", "7700"}) {
		t.Fatalf("connect-to: %v %v", c, ok)
	}
	c, ok = CurlConnectTo("::[::1]:07700")
	if !ok || c != (HostPort{"::1", "07700"}) {
		t.Fatalf("connect-to with empty first parts: %v %v", c, ok)
	}
}

func TestLoopbackNames(t *testing.T) {
	hosts := "127.0.0.1 localhost\n127.0.1.1 devbox devbox.lan # the machine\n::1 ip6-localhost ip6-loopback\n10.0.0.2 db\n# 127.0.0.1 commented\n"
	got := strings.Join(LoopbackNames(strings.NewReader(hosts), 100), ",")
	if got != "localhost,devbox,devbox.lan,ip6-localhost,ip6-loopback" {
		t.Fatalf("names = %s", got)
	}
	if n := LoopbackNames(strings.NewReader(hosts), 2); len(n) != 2 {
		t.Fatalf("max ignored: %v", n)
	}
}
