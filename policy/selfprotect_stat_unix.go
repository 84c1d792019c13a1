//go:build unix

package policy

import "syscall"

// lstatLink reports whether os.Lstat(p) would succeed and whether p is a
// symbolic link, without the allocation of a FileInfo: one lstat system
// call, retried on EINTR.
func lstatLink(p string) (exists, link bool) {
	var st syscall.Stat_t
	for {
		err := syscall.Lstat(p, &st)
		if err != syscall.EINTR {
			return err == nil, err == nil && st.Mode&syscall.S_IFMT == syscall.S_IFLNK
		}
	}
}
