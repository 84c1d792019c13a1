package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/service"
)

const (
	statusPolicyA = "rules:\n  - id: no-curl\n    priority: 100\n    target: {event_types: [pre_action]}\n    condition: 'event.command.startsWith(\"curl\")'\n    outcome: {decision: block, reason: \"no curl\"}\n"
	statusPolicyB = "rules:\n  - id: no-wget\n    priority: 100\n    target: {event_types: [pre_action]}\n    condition: 'event.command.startsWith(\"wget\")'\n    outcome: {decision: block, reason: \"no wget\"}\n"
)

// statusPolicyFile writes a policy file in a directory of its own. Its
// path is not part of the policy hash: two files with one text are one
// policy.
func statusPolicyFile(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// statusReplicaServe runs a harness in-process with its admin API on a
// loopback port and returns the admin address and data directory.
func statusReplicaServe(t *testing.T, pol, store string) (admin, dataDir string) {
	t.Helper()
	dir := t.TempDir()
	c := config.Default()
	c.DataDir = filepath.Join(dir, "data")
	c.Listen = []string{"unix:" + filepath.Join(dir, "h.sock")}
	c.Admin = "http://127.0.0.1:0"
	c.Store = store
	c.Policy.Files = []string{pol}
	// The default packs, self_protection included: its parameters name
	// this replica's own data directory and socket, which are not part of
	// the policy hash.
	var mu sync.Mutex
	ready := make(chan struct{})
	n := 0
	svc, err := service.New(c, service.Options{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Ready: func(l service.Listening) {
			mu.Lock()
			defer mu.Unlock()
			if l.Listen == "admin" {
				admin = l.Addr
			}
			if n++; n == 2 {
				close(ready)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	runErr := make(chan error, 1)
	go func() { runErr <- svc.Run(context.Background()) }()
	t.Cleanup(func() { _ = svc.Close() })
	select {
	case <-ready:
	case err := <-runErr:
		t.Fatalf("serve ended: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("harness not ready")
	}
	mu.Lock()
	defer mu.Unlock()
	return strings.TrimSuffix(admin, "/"), c.DataDir
}

func statusExit(err error) int {
	var ec exitCoder
	if err == nil {
		return 0
	}
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return -1
}

// Three SQLite replicas, one with another policy: ahp status lists the
// three and flags it (exit 2); the two that agree exit 0.
func TestStatusFlagsReplicaWithAnotherPolicy(t *testing.T) {
	polA, polB := statusPolicyFile(t, statusPolicyA), statusPolicyFile(t, statusPolicyB)
	a, dirA := statusReplicaServe(t, polA, "")
	// The same policy from another file, on another data directory.
	b, _ := statusReplicaServe(t, statusPolicyFile(t, statusPolicyA), "")
	c, _ := statusReplicaServe(t, polB, "")

	out, err := runAhp(t, "status", "--connect", a+","+b, "--data-dir", dirA)
	if statusExit(err) != 0 || strings.Count(out, "sqlite") != 2 || strings.Contains(out, "DIFFERENT") {
		t.Fatalf("two replicas, one policy: exit %d (%v)\n%s", statusExit(err), err, out)
	}
	out, err = runAhp(t, "status", "--connect", a, "--connect", b, "--connect", c, "--json")
	if statusExit(err) != exitStatusPolicy || !strings.Contains(err.Error(), "2 different policies") {
		t.Fatalf("three replicas, two policies: exit %d (%v)\n%s", statusExit(err), err, out)
	}
	var rep statusReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Replicas) != 3 || len(rep.Policies) != 2 {
		t.Fatalf("report: %d replicas, %d policies; want 3 and 2\n%s", len(rep.Replicas), len(rep.Policies), out)
	}
	for _, r := range rep.Replicas {
		if want := r.Via[0] == c; r.Different != want {
			t.Fatalf("replica via %v: different=%v, want %v\n%s", r.Via, r.Different, want, out)
		}
		if !strings.HasPrefix(r.PolicyVersion, "sha256:") {
			t.Fatalf("policy hash %q", r.PolicyVersion)
		}
	}
	// An address that does not answer: the others are listed, exit 1.
	out, err = runAhp(t, "status", "--connect", a+",http://127.0.0.1:1")
	if statusExit(err) != exitStatusUnreachable || strings.Count(out, "sqlite") != 1 {
		t.Fatalf("one address down: exit %d (%v)\n%s", statusExit(err), err, out)
	}
}

// Two replicas on one PostgreSQL database: asking either one lists both
// (from the shared registry).
func TestStatusListsSharedReplicas(t *testing.T) {
	url := statusTestDatabase(t)
	// One policy in two copies, two data directories, self-protection on:
	// one policy version, not DIFFERENT (exit 0).
	a, _ := statusReplicaServe(t, statusPolicyFile(t, statusPolicyA), url)
	b, _ := statusReplicaServe(t, statusPolicyFile(t, statusPolicyA), url)
	for _, addr := range []string{a, b} {
		// Each replica registers itself when it starts: allow a moment.
		deadline := time.Now().Add(10 * time.Second)
		for {
			out, err := runAhp(t, "status", "--connect", addr, "--json")
			var rep statusReport
			ok := statusExit(err) == 0 && json.Unmarshal([]byte(out), &rep) == nil && len(rep.Policies) == 1
			if ok && len(rep.Replicas) == 2 {
				break
			}
			if !ok || time.Now().After(deadline) {
				t.Fatalf("status through %s: exit %d (%v)\n%s", addr, statusExit(err), err, out)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// statusTestDatabase creates a fresh database on AHP_TEST_POSTGRES_URL's
// server and returns its URL. Without the variable it skips when run by
// hand and fails in CI.
func statusTestDatabase(t *testing.T) string {
	t.Helper()
	base := os.Getenv("AHP_TEST_POSTGRES_URL")
	if base == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("AHP_TEST_POSTGRES_URL is not set: .ci/run starts PostgreSQL and sets it")
		}
		t.Skip("AHP_TEST_POSTGRES_URL is not set (postgres://user@127.0.0.1:PORT/db); see .ci/run")
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "t_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	_ = conn.Close(ctx)
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, base)
		if err == nil {
			_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			_ = conn.Close(ctx)
		}
	})
	cfg, err := pgx.ParseConfig(base)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Replace(base, "/"+cfg.Database, "/"+name, 1)
}
