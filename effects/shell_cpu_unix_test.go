//go:build unix

package effects

import (
	"syscall"
	"time"
)

// shProcessCPU is the CPU time this process has used (user and system, all
// threads: the garbage collector's work included).
func shProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
