package service

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ahp-go/ahp/config"
)

// TestServeIdentity: ahp explain judges as the serve of its configuration:
// the one whose lock file holds the data directory (its pid, command line,
// executable, cwd and home as it wrote them), else one not started (no
// pid, the command line of ahp serve --config FILE); a lock file whose
// process is gone counts as none.
func TestServeIdentity(t *testing.T) {
	dir := t.TempDir()
	c := config.Default()
	c.DataDir = filepath.Join(dir, "data")
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	id := ServeIdentity(c, "/etc/ahp/ahp.yaml")
	if id.Running || len(id.PIDs) != 0 || len(id.Cmdlines) != 1 || !slices.Contains(id.Cmdlines, os.Args[0]+" serve --config /etc/ahp/ahp.yaml") {
		t.Errorf("no serve running: %+v", id)
	}
	l, err := acquireLock(filepath.Join(c.DataDir, LockFile), lockOwner{PID: os.Getpid(),
		Args: []string{"/usr/local/bin/ahp", "serve", "--config", "/etc/ahp/ahp.yaml"}, Exe: "/usr/local/bin/ahp", Cwd: "/srv/proj", Home: "/var/lib/ahp"})
	if err != nil {
		t.Fatal(err)
	}
	id = ServeIdentity(c, "/etc/ahp/ahp.yaml")
	l.release()
	if !id.Running || !slices.Equal(id.PIDs, []int{os.Getpid()}) || !slices.Equal(id.Cmdlines, []string{"/usr/local/bin/ahp serve --config /etc/ahp/ahp.yaml"}) ||
		id.Exe != "/usr/local/bin/ahp" || id.Cwd != "/srv/proj" || id.Home != "/var/lib/ahp" {
		t.Errorf("serve running: %+v", id)
	}
	// A lock file left by a process that is gone (pid 2^22+1 exceeds
	// Linux's pid_max); platforms without flock cannot tell.
	if !lockSupported {
		return
	}
	if err := os.WriteFile(filepath.Join(c.DataDir, LockFile), []byte(`{"pid":4194305}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if id = ServeIdentity(c, ""); id.Running || len(id.PIDs) != 0 {
		t.Errorf("stale lock file: %+v", id)
	}
}
