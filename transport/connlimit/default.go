package connlimit

// Bounds of the default limit.
const (
	// FallbackMax is the default when the file limit is unknown.
	FallbackMax = 4096
	// reserveMin and reserveMax bound the descriptors kept back from
	// agents for the store, logs, the admin API and listeners.
	reserveMin = 64
	reserveMax = 1024
)

// DefaultMax derives the default connection limit from the process's
// open-file limit n: n minus a reserve of an eighth of n, at least 64 and
// at most 1024 descriptors, for the store, logs, the admin API and the
// listeners themselves; at least 16. (Go raises the soft limit to the hard
// one at start, so n is the hard limit the process was given: ulimit -Hn,
// or LimitNOFILE in a systemd unit.) Without a known file limit it is
// FallbackMax.
func DefaultMax() int {
	n, ok := fileLimit()
	if !ok || n == 0 {
		return FallbackMax
	}
	return defaultFor(n)
}

func defaultFor(n uint64) int {
	const most = 1 << 30
	if n > most {
		n = most
	}
	reserve := min(max(n/8, reserveMin), reserveMax)
	if n <= reserve+16 {
		return 16
	}
	return int(n - reserve)
}
