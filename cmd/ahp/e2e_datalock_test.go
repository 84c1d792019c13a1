package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/sqlite"
)

// runAhpIn runs the ahp binary in dir and returns its exit code, stdout and
// stderr; it fails the test when the command does not end within 20 s.
func runAhpIn(t *testing.T, bin, dir string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("ahp %s did not end: %s", strings.Join(args, " "), errb.String())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// lifecycle returns the harness_* records of the audit log in dataDir.
func lifecycle(t *testing.T, dataDir string) []store.AuditRecord {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(dataDir, "ahp.db"), sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	recs, err := db.Audit().Query(ctx, store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var out []store.AuditRecord
	for _, r := range recs {
		if strings.HasPrefix(r.EventType, "harness_") {
			out = append(out, r)
		}
	}
	return out
}

// Issue 24, item 5: a second ahp serve on the data directory of a running
// one (on its socket, or on another) fails at once, names the running
// one's pid and address, and changes nothing: the run marker stays, so
// that a later kill -9 of the first harness is still reported as
// harness_lost by the next start.
func TestSecondServeLeavesTheFirstAlone(t *testing.T) {
	bin := e2eBinary(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	first, sock, stderr := startServe(t, bin, dir)
	defer func() { _ = first.Process.Kill(); _ = first.Wait() }()
	marker, err := os.ReadFile(filepath.Join(data, "harness.running"))
	if err != nil {
		t.Fatal(err)
	}
	for _, listen := range []string{"unix:" + sock, "unix:" + filepath.Join(dir, "other.sock")} {
		began := time.Now()
		code, _, errText := runAhpIn(t, bin, dir, "serve", "--listen", listen, "--admin", "off", "--data-dir", data)
		if code != 1 {
			t.Fatalf("second serve on %s: exit %d, want 1; stderr: %s", listen, code, errText)
		}
		if took := time.Since(began); took > 10*time.Second {
			t.Errorf("second serve took %v to fail", took)
		}
		for _, want := range []string{fmt.Sprintf("pid %d", first.Process.Pid), "unix:" + sock, "in use"} {
			if !strings.Contains(errText, want) {
				t.Errorf("second serve on %s: the message does not say %q: %s", listen, want, errText)
			}
		}
		if strings.Contains(errText, "panic") {
			t.Errorf("second serve panicked: %s", errText)
		}
	}
	now, err := os.ReadFile(filepath.Join(data, "harness.running"))
	if err != nil || !bytes.Equal(now, marker) {
		t.Fatalf("the run marker changed: %q, then %q (%v)", marker, now, err)
	}
	if !accepting(sock) {
		t.Fatalf("the first harness stopped accepting; stderr: %s", stderr.String())
	}
	recs := lifecycle(t, data)
	if len(recs) != 1 || recs[0].EventType != "harness_start" {
		t.Fatalf("the audit log got records from the refused harnesses: %+v", recs)
	}

	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	next, _, _ := startServe(t, bin, dir)
	_ = next.Process.Signal(os.Interrupt)
	if err := next.Wait(); err != nil {
		t.Fatalf("the next harness did not stop cleanly: %v", err)
	}
	var lost []store.AuditRecord
	for _, r := range lifecycle(t, data) {
		if r.EventType == "harness_lost" {
			lost = append(lost, r)
		}
	}
	if len(lost) != 1 || !strings.Contains(string(lost[0].Event), fmt.Sprintf(`"pid":%d`, first.Process.Pid)) {
		t.Fatalf("after kill -9 of the first harness, want one harness_lost naming pid %d, got %+v", first.Process.Pid, lost)
	}
}

// The README tour: with ./ahp serve running (here on ./ahp-data and
// ./ahp.sock), ahp send --connect 'stdio:ahp serve --listen stdio' in the
// same directory works, on a temporary data directory of its own, and
// leaves the running harness's data alone; the temporary directory is
// removed afterwards.
func TestSendOverStdioBesideARunningServe(t *testing.T) {
	bin := e2eBinary(t)
	dir := t.TempDir()
	sock := filepath.Join(dir, "ahp.sock")
	_, stop := serveOnSocket(t, bin, dir, sock, "--listen", "unix:"+sock, "--data-dir", "ahp-data", "--admin", "off", "--log-level", "error")
	defer stop()
	data := filepath.Join(dir, "ahp-data")
	marker, err := os.ReadFile(filepath.Join(data, "harness.running"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where ahp send makes the stdio harness's data directory
	code, out, errText := runAhpIn(t, bin, dir, "send", "--connect", "stdio:"+bin+" serve --listen stdio --admin off --log-level error", "pre_action", rmRoot)
	if code != 2 || !strings.Contains(out, `"decision":"block"`) {
		t.Fatalf("send over stdio beside a running harness: exit %d, %s; stderr: %s", code, out, errText)
	}
	now, err := os.ReadFile(filepath.Join(data, "harness.running"))
	if err != nil || !bytes.Equal(now, marker) {
		t.Fatalf("the running harness's run marker changed: %q, then %q (%v)", marker, now, err)
	}
	if recs := lifecycle(t, data); len(recs) != 1 {
		t.Fatalf("the stdio harness wrote into the running harness's audit log: %+v", recs)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("ahp send left its temporary data directory: %v", left)
	}
}

// serveOnSocket starts ahp serve with args in dir, waits until sock
// accepts connections (failing the test with serve's stderr after 20 s),
// and returns it with the function that stops it with SIGINT and waits.
func serveOnSocket(t *testing.T, bin, dir, sock string, args ...string) (srv *exec.Cmd, stop func()) {
	t.Helper()
	srv = exec.Command(bin, append([]string{"serve"}, args...)...)
	srv.Dir = dir
	stderr := &syncBuffer{}
	srv.Stderr = stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	stop = func() { _ = srv.Process.Signal(os.Interrupt); _ = srv.Wait() }
	deadline := time.Now().Add(20 * time.Second)
	for !accepting(sock) {
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("harness did not start: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return srv, stop
}
