package config

import (
	"fmt"
	"strings"
)

// ListenSchemes returns the listen address schemes ahp serve serves, as
// they appear in Config.Listen: "stdio" alone, or SCHEME:TARGET.
func ListenSchemes() []string {
	return []string{"stdio", "grpc", "grpcs", "http", "https", "unix", "ws", "wss"}
}

// CheckListen says whether addr is a listen address ahp serve can serve:
// one of ListenSchemes with its target. ahp check --config and ahp serve
// both use it, so that a configuration check agrees with the server.
func CheckListen(addr string) error {
	if addr == "stdio" {
		return nil
	}
	scheme, target, ok := strings.Cut(addr, ":")
	known := false
	for _, s := range ListenSchemes() {
		known = known || (s == scheme && s != "stdio")
	}
	switch {
	case !ok || !known:
		return fmt.Errorf("listen %q: unknown scheme (want stdio, or one of %s followed by its address, as in unix:/run/ahp/ahp.sock or http://127.0.0.1:8080)",
			addr, strings.Join(ListenSchemes()[1:], ", "))
	case scheme == "unix" && target == "":
		return fmt.Errorf("listen %q: needs a path, as in unix:/run/ahp/ahp.sock", addr)
	case scheme != "unix" && strings.TrimPrefix(target, "//") == "":
		return fmt.Errorf("listen %q: needs a host and port, as in %s://127.0.0.1:8080", addr, scheme)
	}
	return nil
}
