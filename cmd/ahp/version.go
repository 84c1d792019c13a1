package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/ahp-go/ahp/protocol"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = ""

func init() { register(newVersionCmd) }

// buildVersion returns the version stamped at build time, the module
// version when installed with go install, or "dev".
func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the ahp version and the protocol version it speaks",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(cmd.OutOrStdout(), "ahp %s (protocol %s)\n", buildVersion(), protocol.Version)
			return nil
		},
	}
}
