package main

import (
	"os"
	"strings"
)

// maxConnectAddrs bounds the endpoints one command tries.
const maxConnectAddrs = 32

// envConnect is the default of --connect: $AHP_CONNECT, if set.
func envConnect() []string {
	if v := os.Getenv("AHP_CONNECT"); v != "" {
		return []string{v}
	}
	return nil
}

// connectAddrs flattens the --connect values: each may be one address or a
// comma-separated list of them. A stdio: address is taken whole (its
// command line may hold commas). Empty items are dropped, and at most
// maxConnectAddrs addresses are kept.
func connectAddrs(values []string) []string {
	var out []string
	for _, v := range values {
		if strings.HasPrefix(strings.TrimSpace(v), "stdio:") {
			out = append(out, strings.TrimSpace(v))
			continue
		}
		for part := range strings.SplitSeq(v, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
	}
	if len(out) > maxConnectAddrs {
		out = out[:maxConnectAddrs]
	}
	return out
}
