package service_test

import (
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

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/service"
	"github.com/ahp-go/ahp/store"
)

// smallDisk mounts a tmpfs of size bytes on a new temporary directory and
// unmounts it when the test ends. Outside CI it skips the test when that
// is not possible (not root, no mount permission); in CI it fails.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	fail := t.Skipf
	if os.Getenv("CI") != "" {
		fail = t.Fatalf
	}
	if os.Geteuid() != 0 {
		fail("the disk-full test mounts a small tmpfs and needs root (CI runs it as root)")
		return ""
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		fail("mount -t tmpfs -o size=%s: %v: %s (the disk-full test needs it)", size, err, out)
		return ""
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// fillDisk writes dir/filler until the file system is full and returns
// its path.
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the disk: %v", err)
			}
			break
		}
	}
	// The last bytes: page cache rounding may leave a block or two.
	for _, n := range []int{4096, 512, 1} {
		for {
			if _, err := f.Write(chunk[:n]); err != nil {
				break
			}
		}
	}
	return path
}

// TestDiskFull fills the file system of the store's data directory while
// agents ask: blocking events are refused (a block that says the audit
// log is unavailable, the log naming the full disk), writing resumes when
// space returns, and every decision acknowledged before, during and after
// is in the audit log.
func TestDiskFull(t *testing.T) {
	disk := smallDisk(t, "4m")
	c := testConfig(t)
	c.DataDir = filepath.Join(disk, "data")
	r := start(t, c, service.Options{})
	cl := dial(t, c.Listen[0], client.Options{SessionID: "s-disk", Timeout: 30 * time.Second})
	ctx := context.Background()
	pad := strings.Repeat("x", 2000) // so that the records take room
	acked := map[string]bool{}
	ask := func(i int) protocol.Decision {
		cmd := fmt.Sprintf("echo %d %s", i, pad)
		d, err := cl.Event(ctx, protocol.EventPreAction, bash(cmd))
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if d.Kind == protocol.DecisionAllow {
			acked[cmd] = true
		}
		return d
	}
	n := 0
	for ; n < 20; n++ {
		if d := ask(n); d.Kind != protocol.DecisionAllow {
			t.Fatalf("event %d before the disk filled: %+v", n, d)
		}
	}

	filler := fillDisk(t, disk)
	var refused protocol.Decision
	for ; n < 2000; n++ { // the WAL may still have room for a few records
		if d := ask(n); d.Kind != protocol.DecisionAllow {
			refused = d
			break
		}
	}
	if refused.Kind != protocol.DecisionBlock {
		t.Fatalf("the disk is full and %d events later none was refused (last: %+v)", n, refused)
	}
	if !strings.Contains(refused.Reason, "audit log unavailable") {
		t.Errorf("refusal reason %q does not say the audit log is unavailable", refused.Reason)
	}
	for i := 0; i < 5; i++ { // and it stays closed while the disk is full
		n++
		if d := ask(n); d.Kind != protocol.DecisionBlock {
			t.Errorf("event %d with the disk full: %+v, want block", n, d)
		}
	}
	if logs := r.logs.String(); !strings.Contains(logs, "audit append failed: failing closed") || !strings.Contains(logs, "disk is full") {
		t.Errorf("the log does not name the full disk:\n%s", logs)
	}
	t.Logf("refused after %d events with: %s", n, refused.Reason)
	for _, line := range strings.Split(r.logs.String(), "\n") {
		if strings.Contains(line, "audit append failed") {
			t.Logf("log: %s", line)
			break
		}
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		n++
		d := ask(n)
		if d.Kind == protocol.DecisionAllow {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("writing did not resume once space returned: %+v", d)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for i := 0; i < 20; i++ {
		n++
		if d := ask(n); d.Kind != protocol.DecisionAllow {
			t.Fatalf("event %d after space returned: %+v", n, d)
		}
	}

	recs, err := r.svc.Store().Audit().Query(ctx, store.AuditFilter{EventType: string(protocol.EventPreAction)})
	if err != nil {
		t.Fatal(err)
	}
	inAudit := map[string]bool{}
	for _, rec := range recs {
		for cmd := range acked {
			if strings.Contains(string(rec.Event), fmt.Sprintf(`"command":%q`, cmd)) {
				inAudit[cmd] = true
			}
		}
	}
	for cmd := range acked {
		if !inAudit[cmd] {
			t.Errorf("acknowledged decision missing from the audit: %.20s…", cmd)
		}
	}
	t.Logf("%d decisions acknowledged, all in the audit log", len(acked))
}
