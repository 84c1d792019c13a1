//go:build unix

package connlimit

import "syscall"

// fileLimit returns the process's open-file limit (the soft limit, which
// Go raises to the hard limit when the process starts).
func fileLimit() (uint64, bool) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, false
	}
	return rl.Cur, true
}
