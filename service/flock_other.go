//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package service

import "os"

// lockSupported reports whether this platform takes the exclusive locks of
// the data directory and of Unix socket paths: not here (no flock); the
// service warns at start.
const lockSupported = false

// noFollow is 0: the platform has no O_NOFOLLOW.
const noFollow = 0

// tryLock takes no lock on this platform.
func tryLock(*os.File) error { return nil }

// processAlive cannot tell on this platform: a process is taken as alive.
func processAlive(int) bool { return true }
