package service_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/service"
	"github.com/ahp-go/ahp/store"
)

// liveState is what a second harness must leave alone: the first's
// pending approvals, its audit log and its run marker.
type liveState struct {
	pending []string
	audit   int
	lastID  int64
	marker  []byte
}

func snapshot(t *testing.T, r *running, dataDir string) liveState {
	t.Helper()
	ctx := context.Background()
	var st liveState
	p, err := r.svc.Store().Approvals().List(ctx, store.ApprovalFilter{Status: store.ApprovalPending})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range p {
		st.pending = append(st.pending, a.ID)
	}
	recs, err := r.svc.Store().Audit().Query(ctx, store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	st.audit = len(recs)
	if len(recs) > 0 {
		st.lastID = recs[len(recs)-1].ID
	}
	if st.marker, err = os.ReadFile(filepath.Join(dataDir, service.RunMarkerFile)); err != nil {
		t.Fatal(err)
	}
	return st
}

// A second harness on the data directory of a running one (on another
// socket, or on the same socket) fails at once with an error naming the
// first one's pid and address, and changes nothing: the first one's
// pending approval stays pending, its audit log gets no record and its run
// marker stays.
func TestSecondHarnessOnTheSameDataDirChangesNothing(t *testing.T) {
	c := testConfig(t)
	dir := filepath.Dir(c.DataDir)
	pol := filepath.Join(dir, "escalate.yaml")
	writeFile(t, pol, `rules:
  - id: ask-deploy
    priority: 100
    target: {event_types: [pre_action]}
    condition: 'event.command.startsWith("deploy")'
    outcome: {decision: escalate, reason: "a human decides deploys", await_approval: {timeout: 1h}}
`)
	c.Policy.Files = []string{pol}
	c.Approvals.Timeout = config.Duration(time.Hour)
	r := start(t, c, service.Options{})
	cl := dial(t, r.addrs[c.Listen[0]], client.Options{SessionID: "s1", Timeout: time.Hour})
	go func() { _, _ = cl.Event(context.Background(), protocol.EventPreAction, bash("deploy prod")) }()
	waitFor(t, "a pending approval", func() bool {
		p, err := r.svc.Store().Approvals().List(context.Background(), store.ApprovalFilter{Status: store.ApprovalPending})
		return err == nil && len(p) == 1
	})
	before := snapshot(t, r, c.DataDir)
	sock := strings.TrimPrefix(c.Listen[0], "unix:")

	other := c
	other.Listen = []string{"unix:" + filepath.Join(dir, "other.sock")}
	for name, second := range map[string]config.Config{"another socket": other, "the same socket": c} {
		svc, err := service.New(second, service.Options{})
		if err == nil {
			_ = svc.Close()
			t.Fatalf("%s: a second harness started on a data directory in use", name)
		}
		if !errors.Is(err, service.ErrInUse) {
			t.Fatalf("%s: the error does not say the directory is in use: %v", name, err)
		}
		msg := err.Error()
		for _, want := range []string{fmt.Sprintf("pid %d", os.Getpid()), "unix:" + sock} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: the error does not name the running harness (%q): %v", name, want, msg)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "other.sock")); !os.IsNotExist(err) {
		t.Errorf("the refused harness left its socket: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "other.sock"+service.SocketLockSuffix)); !os.IsNotExist(err) {
		t.Errorf("the refused harness left its socket lock file: %v", err)
	}
	after := snapshot(t, r, c.DataDir)
	if fmt.Sprint(after.pending) != fmt.Sprint(before.pending) {
		t.Errorf("pending approvals changed: %v, then %v", before.pending, after.pending)
	}
	if after.audit != before.audit || after.lastID != before.lastID {
		t.Errorf("the audit log changed: %d records (last %d), then %d (last %d)", before.audit, before.lastID, after.audit, after.lastID)
	}
	if !bytes.Equal(after.marker, before.marker) {
		t.Errorf("the run marker changed: %s, then %s", before.marker, after.marker)
	}
	// The first one still decides.
	cl2 := dial(t, r.addrs[c.Listen[0]], client.Options{SessionID: "s2"})
	if d := decide(t, cl2, "ls"); d.Kind != protocol.DecisionAllow {
		t.Fatalf("the first harness after the refusals: %+v", d)
	}
}

// A harness on another data directory but on the Unix socket of a running
// one is refused before it touches its own data directory's store.
func TestSecondHarnessOnTheSameSocketIsRefused(t *testing.T) {
	c := testConfig(t)
	r := start(t, c, service.Options{})
	_ = r
	second := testConfig(t)
	second.Listen = c.Listen
	svc, err := service.New(second, service.Options{})
	if err == nil {
		_ = svc.Close()
		t.Fatal("a second harness started on a socket in use")
	}
	if !errors.Is(err, service.ErrInUse) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("error: %v", err)
	}
	if _, err := os.Stat(filepath.Join(second.DataDir, service.DBFile)); !os.IsNotExist(err) {
		t.Errorf("the refused harness opened a store: %v", err)
	}
}

// Once the first harness has closed, the data directory and the socket can
// be used again.
func TestDataDirLockReleasedOnClose(t *testing.T) {
	c := testConfig(t)
	svc, err := service.New(c, service.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}
	start(t, c, service.Options{})
}

// A data directory that cannot hold the store is a clear error naming
// it, never a panic.
func TestUnusableDataDirIsAnError(t *testing.T) {
	t.Run("store path is a directory", func(t *testing.T) {
		c := testConfig(t)
		if err := os.MkdirAll(filepath.Join(c.DataDir, service.DBFile), 0o700); err != nil {
			t.Fatal(err)
		}
		svc, err := service.New(c, service.Options{})
		if err == nil {
			_ = svc.Close()
			t.Fatal("New accepted a data directory whose store cannot be opened")
		}
		if !strings.Contains(err.Error(), c.DataDir) {
			t.Fatalf("the error does not name the data directory: %v", err)
		}
	})
	t.Run("read-only file system", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("mounting a read-only tmpfs needs root (root ignores permission bits, so a chmod would not do)")
		}
		dir := t.TempDir()
		if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", dir).CombinedOutput(); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("mount: %v: %s", err, out)
			}
			t.Skipf("mount: %v: %s", err, out)
		}
		t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
		c := testConfig(t)
		c.DataDir = dir
		svc, err := service.New(c, service.Options{})
		if err == nil {
			_ = svc.Close()
			t.Fatal("New accepted a read-only data directory")
		}
		if !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "read-only") {
			t.Fatalf("the error does not say the data directory is read-only: %v", err)
		}
	})
}

// Harnesses started at the same moment on one data directory: exactly one
// runs, the others are refused as in use.
func TestConcurrentStartsOnOneDataDir(t *testing.T) {
	base := testConfig(t)
	const n = 6
	type result struct {
		svc *service.Service
		err error
	}
	results := make(chan result, n)
	for i := range n {
		c := base
		c.Listen = []string{"unix:" + filepath.Join(filepath.Dir(base.DataDir), fmt.Sprintf("h%d.sock", i))}
		go func() {
			svc, err := service.New(c, service.Options{})
			results <- result{svc, err}
		}()
	}
	started := 0
	for range n {
		r := <-results
		switch {
		case r.err == nil:
			started++
			defer r.svc.Close()
		case !errors.Is(r.err, service.ErrInUse):
			t.Errorf("a refused start did not say in use: %v", r.err)
		}
	}
	if started != 1 {
		t.Fatalf("%d harnesses started on one data directory, want 1", started)
	}
}
