package service

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ahp-go/ahp/config"
)

// Identity is what the self_protection pack knows of the harness process
// it guards, besides its files (HarnessFiles): its process ids and command
// lines (what kill and pkill -f must not reach), its executable, its
// working directory (relative paths of the configuration, the project's
// hook settings) and its home directory (the user's hook settings, and the
// home that "~" of an event naming none may be: policy.UnknownHome).
type Identity struct {
	PIDs     []int
	Cmdlines []string
	Exe      string // the executable, as os.Executable gives it; "" when not known
	Cwd      string
	Home     string
	// Running reports that the identity is the one of a harness found
	// running (ServeIdentity read its lock file); false for one described
	// from its configuration, or for ThisProcess.
	Running bool
}

// ThisProcess returns the identity of the calling process: the harness
// that New builds is this one.
func ThisProcess() Identity {
	id := Identity{PIDs: []int{os.Getpid()}, Cmdlines: []string{strings.Join(os.Args, " ")}}
	id.Exe, _ = os.Executable()
	id.Cwd, _ = os.Getwd()
	id.Home, _ = os.UserHomeDir()
	return id
}

// ServeIdentity returns the identity of the ahp serve that c describes
// (read from configFile, "" for none): the harness that holds c.DataDir's
// lock file when one runs (its pid, command line, executable, working
// directory and home, as it wrote them there: LockFile), otherwise the one
// `ahp serve --config configFile` would be if this user started it now in
// this directory, with no process id (it has none yet). A lock file this
// user cannot read, or that its process outlived, counts as none. ahp
// explain judges with it, so that its decisions are those of that serve.
func ServeIdentity(c config.Config, configFile string) Identity {
	if o, ok := readLockOwner(filepath.Join(c.DataDir, LockFile)); ok && o.PID > 0 && processAlive(o.PID) {
		// A lock file of an older harness names its pid only: the rest
		// is taken as this process's (same user, same directory).
		id := ThisProcess()
		id.PIDs, id.Running = []int{o.PID}, true
		if len(o.Args) > 0 {
			id.Cmdlines = []string{strings.Join(o.Args, " ")}
		}
		for _, f := range []struct {
			dst *string
			v   string
		}{{&id.Exe, o.Exe}, {&id.Cwd, o.Cwd}, {&id.Home, o.Home}} {
			if f.v != "" {
				*f.dst = f.v
			}
		}
		return id
	}
	id := ThisProcess()
	id.PIDs = nil
	args := []string{"ahp"}
	if len(os.Args) > 0 {
		args[0] = os.Args[0]
	}
	args = append(args, "serve")
	if configFile != "" {
		args = append(args, "--config", configFile)
	}
	id.Cmdlines = []string{strings.Join(args, " ")}
	return id
}

// readLockOwner reads the holder a lock file names.
func readLockOwner(path string) (lockOwner, bool) {
	var o lockOwner
	f, err := os.Open(path)
	if err != nil {
		return o, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxLockInfo))
	if err != nil || json.Unmarshal(b, &o) != nil {
		return o, false
	}
	return o, true
}
