package main

import (
	"os"
	"runtime/debug"
)

// serveGCPercent is the garbage collector's target (GOGC) of ahp serve
// when the environment sets none. A decision allocates 10-15 KB of
// short-lived memory (the parsed command, the audit record, the observers'
// copies) against a live heap of about 20 MB, so at Go's default of 100
// the collector runs every thousand decisions or so and costs close to a
// tenth of the server's CPU; at 200 it runs half as often, for a heap
// goal of three times the live heap instead of twice (bench/README.md,
// "Issue 25: end-to-end decisions/s"). GOGC (and GOMEMLIMIT, which the Go
// runtime reads itself) set in the environment win: GOGC=100 restores
// Go's default.
const serveGCPercent = 200

// setServeGC sets the collector's target to serveGCPercent unless the
// environment sets GOGC, and returns the target it set (0 when it left the
// environment's).
func setServeGC(lookup func(string) (string, bool)) int {
	if _, set := lookup("GOGC"); set {
		return 0
	}
	debug.SetGCPercent(serveGCPercent)
	return serveGCPercent
}

// setServeGCFromEnv is setServeGC on the process's environment.
func setServeGCFromEnv() int { return setServeGC(os.LookupEnv) }
