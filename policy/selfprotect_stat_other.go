//go:build !unix

package policy

import (
	"io/fs"
	"os"
)

// lstatLink reports whether os.Lstat(p) succeeds and whether p is a
// symbolic link.
func lstatLink(p string) (exists, link bool) {
	fi, err := os.Lstat(p)
	return err == nil, err == nil && fi.Mode()&fs.ModeSymlink != 0
}
