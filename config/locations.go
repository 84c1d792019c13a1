package config

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
)

// The default locations keep the harness's own files out of the directory
// it is started in, which is usually the project an agent works in: an
// agent that lists, greps or deletes in its project never meets the audit
// store, the admin token or the socket.

// DefaultDataDir returns where ahp keeps its data directory when none is
// configured: $XDG_STATE_HOME/ahp (default ~/.local/state/ahp) on Linux and
// the BSDs, ~/Library/Application Support/ahp on macOS, %LocalAppData%\ahp
// on Windows, and ./ahp-data when no home directory is known.
func DefaultDataDir() string {
	home, err := os.UserHomeDir()
	switch runtime.GOOS {
	case "windows":
		if d := os.Getenv("LocalAppData"); d != "" {
			return filepath.Join(d, "ahp")
		}
	case "darwin", "ios":
		if err == nil {
			return filepath.Join(home, "Library", "Application Support", "ahp")
		}
	default:
		if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
			return filepath.Join(d, "ahp")
		}
		if err == nil {
			return filepath.Join(home, ".local", "state", "ahp")
		}
	}
	return "./ahp-data"
}

// maxSocketPath is the longest Unix socket path every platform accepts
// (sun_path holds 104 bytes on macOS and the BSDs, 108 on Linux).
const maxSocketPath = 100

// DefaultSocket returns the Unix socket ahp serve listens on and the other
// commands connect to when none is given: $XDG_RUNTIME_DIR/ahp/ahp.sock
// when the session has a runtime directory, otherwise ahp.sock in
// DefaultDataDir, otherwise (a path too long for a socket) ahp-UID/ahp.sock
// in the temporary directory.
func DefaultSocket() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(d) {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			if p := filepath.Join(d, "ahp", "ahp.sock"); len(p) <= maxSocketPath {
				return p
			}
		}
	}
	if p, err := filepath.Abs(filepath.Join(DefaultDataDir(), "ahp.sock")); err == nil && len(p) <= maxSocketPath {
		return p
	}
	return filepath.Join(os.TempDir(), "ahp-"+strconv.Itoa(os.Getuid()), "ahp.sock")
}

// DefaultConnect is the address the commands that talk to a harness use
// when neither a flag nor $AHP_CONNECT names one: the default socket.
func DefaultConnect() string { return "unix:" + DefaultSocket() }
