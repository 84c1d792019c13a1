//go:build !unix

package policy

import "os"

// pathExists reports whether os.Stat(p) succeeds.
func pathExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
