package main

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user + system) this process used so
// far. CPU per decision is steadier than decisions per second on a
// machine that other work shares.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuWindow reports the process CPU time used between from and to.
func cpuWindow(from, to time.Time) <-chan time.Duration {
	out := make(chan time.Duration, 1)
	go func() {
		time.Sleep(time.Until(from))
		start := processCPU()
		time.Sleep(time.Until(to))
		out <- processCPU() - start
	}()
	return out
}
