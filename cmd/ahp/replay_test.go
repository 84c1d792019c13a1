package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/sqlite"
	"github.com/ahp-go/ahp/transport"
)

const replayOldPolicy = `
rules:
  - id: no-force-push
    priority: 100
    target: {event_types: [pre_action], tools: ["bash"]}
    condition: 'event.command.contains("git push --force")'
    outcome: {decision: block, reason: "no force push"}
`

// replayFixture records a few decisions with a live harness and returns
// the data directory and an export of its audit log.
func replayFixture(t *testing.T) (dataDir, export string) {
	t.Helper()
	dataDir = t.TempDir()
	db, err := sqlite.Open(context.Background(), filepath.Join(dataDir, sqlite.FileName), sqlite.Options{Sync: sqlite.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	// The built-in packs are off: the fixture's decisions are its own
	// policy's (a default pack would hold a force push for a human, and
	// nobody answers here).
	off := map[string]bool{}
	for _, n := range policy.PackNames() {
		off[n] = false
	}
	eng, err := policy.NewEngine(policy.Options{Packs: off}, policy.Source{Name: "old.yaml", Data: []byte(replayOldPolicy)})
	if err != nil {
		t.Fatal(err)
	}
	// The harness calls its clock from background work too (memory
	// capture), so the fake clock takes a lock.
	var clockMu sync.Mutex
	clock := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	h, err := harness.New(harness.Options{Engine: eng, Store: db, Now: func() time.Time {
		clockMu.Lock()
		defer clockMu.Unlock()
		clock = clock.Add(time.Second)
		return clock
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := server.WithPeer(context.Background(), transport.Info{Transport: "unix", Principal: &transport.Principal{ID: "agent-1"}})
	for i, cmd := range []string{"ls", "git push --force origin main", "git push -f origin x", "git status", "git push -f origin y"} {
		ev := &protocol.Event{EventType: protocol.EventPreAction, SessionID: "s1", AgentID: "coder", Timestamp: "t",
			Payload: json.RawMessage(fmt.Sprintf(`{"tool_name":"bash","arguments":{"command":%q},"n":%d}`, cmd, i))}
		if _, err := h.HandleEvent(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if _, err := db.Audit().Export(context.Background(), &b, store.AuditFilter{}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	export = filepath.Join(t.TempDir(), "audit.jsonl")
	if err := os.WriteFile(export, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return dataDir, export
}

func writeReplayPolicy(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// runReplayCLI runs the root command in-process and returns its output and exit
// code (0 for success, the exitCoder's code, or -1 for another error).
func runReplayCLI(t *testing.T, args ...string) (string, int) {
	t.Helper()
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	if err == nil {
		return out.String(), 0
	}
	var ec exitCoder
	if errors.As(err, &ec) {
		return out.String() + errOut.String() + err.Error(), ec.ExitCode()
	}
	t.Logf("error: %v", err)
	return out.String() + err.Error(), -1
}

func TestReplayCommand(t *testing.T) {
	dataDir, export := replayFixture(t)
	same := writeReplayPolicy(t, replayOldPolicy)
	changed := writeReplayPolicy(t, strings.Replace(replayOldPolicy,
		`event.command.contains("git push --force")`, `event.command.matches("git push .*(--force|-f)( |$)")`, 1))
	renamed := writeReplayPolicy(t, strings.Replace(replayOldPolicy, "id: no-force-push", "id: force-push", 1))

	t.Run("unchanged policy passes the gate", func(t *testing.T) {
		out, code := runReplayCLI(t, "replay", "--packs", "none", "--policy", same, "--input", export, "--fail-on-change")
		if code != 0 || !strings.Contains(out, "decision changes: 0") {
			t.Fatalf("code %d:\n%s", code, out)
		}
	})
	t.Run("changed decisions fail the gate", func(t *testing.T) {
		out, code := runReplayCLI(t, "replay", "--packs", "none", "--policy", changed, "--input", export, "--fail-on-change")
		if code != 1 || !strings.Contains(out, "decision changes: 2") ||
			!strings.Contains(out, `old: allow (default)  →  new: block (rule no-force-push)  [tool: bash, command: "git push -f origin x"]`) {
			t.Fatalf("code %d:\n%s", code, out)
		}
		if _, code := runReplayCLI(t, "replay", "--packs", "none", "--policy", changed, "--input", export, "--max-changes", "2"); code != 0 {
			t.Fatalf("--max-changes 2: code %d", code)
		}
		if _, code := runReplayCLI(t, "replay", "--packs", "none", "--policy", changed, "--input", export, "--max-changes", "1"); code != 1 {
			t.Fatalf("--max-changes 1: code %d", code)
		}
		if _, code := runReplayCLI(t, "replay", "--packs", "none", "--policy", changed, "--input", export); code != 0 {
			t.Fatalf("no gate: code %d", code)
		}
	})
	t.Run("rule changes fail only a strict gate", func(t *testing.T) {
		out, code := runReplayCLI(t, "replay", "--packs", "none", "--policy", renamed, "--input", export, "--fail-on-change")
		if code != 0 || !strings.Contains(out, "rule changes, same decision: 1") {
			t.Fatalf("code %d:\n%s", code, out)
		}
		if _, code := runReplayCLI(t, "replay", "--packs", "none", "--policy", renamed, "--input", export, "--fail-on-change", "--strict"); code != 1 {
			t.Fatalf("--strict: code %d", code)
		}
	})
	t.Run("store and file give the same report, twice", func(t *testing.T) {
		a, _ := runReplayCLI(t, "replay", "--packs", "none", "--policy", changed, "--input", export)
		b, _ := runReplayCLI(t, "replay", "--packs", "none", "--policy", changed, "--data-dir", dataDir)
		c, _ := runReplayCLI(t, "replay", "--packs", "none", "--policy", changed, "--store", filepath.Join(dataDir, sqlite.FileName))
		a2, _ := runReplayCLI(t, "replay", "--packs", "none", "--policy", changed, "--input", export)
		body := func(s string) string { _, rest, _ := strings.Cut(s, "\n"); return rest }
		if a != a2 || body(a) != body(b) || b != c {
			t.Fatalf("reports differ:\n%s\n---\n%s\n---\n%s", a, b, c)
		}
	})
	t.Run("json", func(t *testing.T) {
		out, code := runReplayCLI(t, "replay", "--packs", "none", "--policy", changed, "--input", export, "--json", "--since", "3s")
		var rep struct {
			DecisionChanges int    `json:"decision_changes"`
			Since           string `json:"since"`
			Changes         []struct {
				ID int64 `json:"id"`
			} `json:"changes"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 {
			t.Fatalf("code %d, %v:\n%s", code, err, out)
		}
		// Records are at least 2s apart (the harness reads the clock more
		// than once per event): 3s back from the last one leaves only it.
		data, _ := os.ReadFile(export)
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		var last store.AuditRecord
		if err := last.UnmarshalJSON([]byte(lines[len(lines)-1])); err != nil {
			t.Fatal(err)
		}
		want := last.Time.Add(-3 * time.Second).UTC().Format(time.RFC3339Nano)
		if rep.DecisionChanges != 1 || rep.Since != want || len(rep.Changes) != 1 || rep.Changes[0].ID != last.ID {
			t.Fatalf("%+v, want since %s and change #%d", rep, want, last.ID)
		}
	})
	t.Run("usage and input errors exit 2", func(t *testing.T) {
		bad := writeReplayPolicy(t, "rules:\n  - id: x\n    condition: 'nope('\n    outcome: {decision: block, reason: r}\n")
		for _, args := range [][]string{
			{"replay", "--input", export},
			{"replay", "--policy", same, "--input", filepath.Join(t.TempDir(), "missing.jsonl")},
			{"replay", "--policy", same, "--data-dir", t.TempDir()},
			{"replay", "--policy", same, "--input", export, "--no-such-flag"},
			{"replay", "--policy", same, "--input", export, "extra"},
			{"replay", "--policy", same, "--input", export, "--since", "yesterday"},
			{"replay", "--policy", same, "--input", export, "--counters", "both"},
			{"replay", "--policy", same, "--input", export, "--data-dir", dataDir},
			{"replay", "--policy", bad, "--input", export},
		} {
			if out, code := runReplayCLI(t, args...); code != 2 {
				t.Errorf("%v: code %d:\n%s", args[1:], code, out)
			}
		}
	})
}
