//go:build unix

package policy

import "syscall"

// pathExists reports whether os.Stat(p) would succeed, without the
// allocation of its FileInfo: one stat system call, retried on EINTR.
func pathExists(p string) bool {
	var st syscall.Stat_t
	for {
		err := syscall.Stat(p, &st)
		if err != syscall.EINTR {
			return err == nil
		}
	}
}
