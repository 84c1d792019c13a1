//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package service

import (
	"errors"
	"os"
	"syscall"
)

// lockSupported reports whether this platform takes the exclusive locks of
// the data directory and of Unix socket paths.
const lockSupported = true

// noFollow keeps a lock file that is a symbolic link from being opened:
// the link could point at a file the harness would then overwrite.
const noFollow = syscall.O_NOFOLLOW

// tryLock takes an exclusive flock on f without waiting; errLocked when
// another open file description (another process, or another service in
// this one) holds it. The kernel releases it when the process dies.
func tryLock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return errLocked
		default:
			return err
		}
	}
}

// processAlive reports whether a process with this id exists (one of
// another user's included).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
