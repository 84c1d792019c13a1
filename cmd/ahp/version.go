package main

import (
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/ahp-go/ahp/effects"
	"github.com/ahp-go/ahp/protocol"
)

// Set at build time by a release build (packaging/release.sh):
//
//	-ldflags "-X main.version=v1.2.3 -X main.commit=<full hash> -X main.date=<RFC 3339 UTC>"
var (
	version = ""
	commit  = ""
	date    = ""
)

func init() { register(newVersionCmd) }

// buildStamp is what ahp knows about its own build.
type buildStamp struct {
	Version  string // v1.2.3, a module version, or "dev"
	Commit   string // the VCS revision, "" when unknown
	Date     string // the commit or build time, "" when unknown
	Modified bool   // built from a work tree with uncommitted changes
	Go       string // the Go toolchain
}

// readBuildStamp returns the values stamped with -ldflags -X, and fills
// the ones left empty from the binary's build information: the module
// version (go install module@version), and the VCS revision, commit time
// and modified flag that go build records in a checkout (-buildvcs).
func readBuildStamp() buildStamp {
	s := buildStamp{Version: version, Commit: commit, Date: date, Go: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		if s.Version == "" {
			s.Version = "dev"
		}
		return s
	}
	if s.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		s.Version = bi.Main.Version
	}
	stamped := commit != ""
	for _, kv := range bi.Settings {
		switch kv.Key {
		case "vcs.revision":
			if s.Commit == "" {
				s.Commit = kv.Value
			}
		case "vcs.time":
			if s.Date == "" {
				s.Date = kv.Value
			}
		case "vcs.modified":
			if !stamped {
				s.Modified = kv.Value == "true"
			}
		}
	}
	if s.Version == "" {
		s.Version = "dev"
	}
	return s
}

// buildVersion returns the version stamped at build time, the module
// version when installed with go install, or "dev".
func buildVersion() string { return readBuildStamp().Version }

// String is the line ahp version prints after "ahp ".
func (s buildStamp) String() string {
	out := s.Version
	if s.Commit != "" {
		c := s.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		if s.Modified {
			c += "+modified"
		}
		out += ", commit " + c
	}
	if s.Date != "" {
		out += ", " + s.Date
	}
	return out + ", " + s.Go
}

// pythonLine is the second line of ahp version: whether this binary reads
// the Python code agents run (tree-sitter, through cgo) or holds it all for
// a human (a build without cgo).
func pythonLine() string {
	name, ok := effects.PythonReader()
	if ok {
		return "python: read (" + name + ")"
	}
	return "python: NOT read, parser " + name + "; every piece of Python code is an unknown effect, held for a human"
}

// warnNoPython logs, when ahp serve starts, that this binary reads no
// Python code (a build without cgo), so that an operator who missed ahp
// version sees it in the harness's log.
func warnNoPython(log *slog.Logger) {
	if name, ok := effects.PythonReader(); !ok {
		log.Warn("this binary reads no Python code: each piece of it is an unknown effect, held for a human; build with cgo (packaging/release.sh)", "python_parser", name)
	}
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the ahp version, its build and the protocol version it speaks",
		Long: `Print the ahp version, the commit and date it was built from, the Go
toolchain, and the protocol version it speaks; then whether this binary
reads the Python code agents run ("python: read (tree-sitter-python)") or
not ("python: NOT read": a build without cgo, where each piece of Python
code is an unknown effect held for a human).

A release build (packaging/release.sh) stamps the version, commit and date.
Otherwise they come from the binary's build information: the module
version for go install module@version, and the commit and its time that
go build records in a git checkout ("+modified" when the work tree had
changes); "dev" when nothing is known.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(cmd.OutOrStdout(), "ahp %s (protocol %s)\n%s\n", readBuildStamp(), protocol.Version, pythonLine())
			return nil
		},
	}
}
