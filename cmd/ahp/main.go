// Command ahp is the single command-line tool of the project: it runs a
// harness (serve), talks to one (send), and manages policies, approvals,
// audit records, runs and descriptors.
package main

import (
	"fmt"
	"os"
)

func main() {
	root := newRootCmd()
	if err := root.Execute(); err != nil {
		var ec exitCoder
		if asExitCoder(err, &ec) {
			if msg := err.Error(); msg != "" {
				fmt.Fprintln(os.Stderr, "ahp:", msg)
			}
			os.Exit(ec.ExitCode())
		}
		fmt.Fprintln(os.Stderr, "ahp:", err)
		os.Exit(1)
	}
}
