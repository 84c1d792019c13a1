//go:build unix

package policy

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user and system) the test process used so
// far. Benchmarks report it per operation next to wall time, because on a
// shared machine wall time also counts the time other processes ran.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
