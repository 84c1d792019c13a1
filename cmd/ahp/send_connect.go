package main

import (
	"github.com/ahp-go/ahp/config"
	"os"
	"strings"
)

// dataDirEnv names the data directory of ahp serve when --data-dir is not
// given (it wins over the configuration file's data_dir).
const dataDirEnv = "AHP_DATA_DIR"

// stdioDataDir gives a harness that ahp send starts over stdio (a stdio:
// address) its own temporary data directory, through $AHP_DATA_DIR, unless
// that is set already: the harness a user runs in the same directory holds
// ./ahp-data locked, and a harness started for one call must not take over
// the data of a running one. The returned function removes the directory
// (call it once the connection is closed). A --data-dir in the stdio
// command line still wins, for records that must outlive the call.
func stdioDataDir(addrs []string) (cleanup func()) {
	if os.Getenv(dataDirEnv) != "" {
		return func() {}
	}
	stdio := false
	for _, a := range addrs {
		stdio = stdio || strings.HasPrefix(a, "stdio:")
	}
	if !stdio {
		return func() {}
	}
	dir, err := os.MkdirTemp("", "ahp-send-data-")
	if err != nil {
		return func() {} // the harness uses its own default
	}
	if os.Setenv(dataDirEnv, dir) != nil {
		_ = os.Remove(dir)
		return func() {}
	}
	return func() {
		_ = os.Unsetenv(dataDirEnv)
		_ = os.RemoveAll(dir)
	}
}

// maxConnectAddrs bounds the endpoints one command tries.
const maxConnectAddrs = 32

// envConnect is the default of --connect: $AHP_CONNECT, if set.
func envConnect() []string { return []string{defaultConnect()} }

// defaultConnect is the harness address of a command given none:
// $AHP_CONNECT, or the default socket of ahp serve (config.DefaultSocket).
func defaultConnect() string {
	if v := os.Getenv("AHP_CONNECT"); v != "" {
		return v
	}
	return config.DefaultConnect()
}

// defaultDataDir is the data directory of a local harness a command reads
// when given none: $AHP_DATA_DIR, or ahp serve's default.
func defaultDataDir() string {
	if v := os.Getenv(dataDirEnv); v != "" {
		return v
	}
	return config.DefaultDataDir()
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
