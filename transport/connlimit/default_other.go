//go:build !unix

package connlimit

func fileLimit() (uint64, bool) { return 0, false }
