package replay

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/sqlite"
)

const teamPolicy = `
rules:
  - id: no-force-push
    priority: 100
    target: {event_types: [pre_action], tools: ["bash"]}
    condition: 'event.command.contains("git push --force")'
    outcome: {decision: block, reason: "no force push"}
  - id: no-prod
    priority: 100
    target: {event_types: [pre_action], tools: ["bash"]}
    condition: 'event.command.contains("prod")'
    outcome: {decision: block, reason: "not on production"}
  - id: https-only
    priority: 50
    target: {event_types: [pre_action], tools: ["web_fetch"]}
    condition: 'payload.arguments.url.startsWith("http://")'
    outcome: {decision: block, reason: "plain http"}
  - id: no-passwords
    priority: 50
    target: {event_types: [pre_prompt]}
    condition: 'payload.prompt.contains("password")'
    outcome: {decision: block, reason: "no passwords in prompts"}
  - id: no-exploit-intent
    priority: 50
    target: {event_types: [intent_detection]}
    condition: 'payload.prompt.contains("exploit")'
    outcome: {decision: block, reason: "no exploits"}
  - id: skip-tool-limits
    priority: 50
    target: {event_types: [rate_limit]}
    condition: 'payload.limit_type == "tool_execution_limit"'
    outcome: {decision: block, reason: "skip tool limits"}
`

const (
	oldForcePush = `condition: 'event.command.contains("git push --force")'`
	newForcePush = `condition: 'event.command.matches("git push .*(--force|-f)( |$)")'`
	cmdShortF    = "git push -f origin feature"
	cmdLease     = "git push --force-with-lease origin feature"
)

// changedPolicy is teamPolicy with one rule changed: no-force-push now also
// catches -f and no longer catches --force-with-lease.
var changedPolicy = strings.Replace(teamPolicy, oldForcePush, newForcePush, 1)

var commands = []string{
	"ls -la", "git status", "git push origin main", "git push --force origin main",
	cmdShortF, cmdLease, "kubectl apply -f prod.yaml", "cat README.md",
}

// generate returns blocking events (and notifications between them) for
// 20 sessions, the same on every call, and the command of each gen.
func generate(blocking int) ([]sent, map[int]string) {
	rng := rand.New(rand.NewPCG(1, 2))
	cmds := map[int]string{}
	var out []sent
	gen := 0
	for n := 0; n < blocking; {
		sess := fmt.Sprintf("s%02d", rng.IntN(20))
		s := sent{principal: []string{"agent-a", "agent-b"}[rng.IntN(2)], transport: []string{"unix", "http"}[rng.IntN(2)]}
		switch k := rng.IntN(100); {
		case k < 15:
			if rng.IntN(2) == 0 {
				s.ev = mkEvent(gen, protocol.EventPostAction, sess, map[string]any{"tool_name": "bash", "result": "ok"})
			} else {
				s.ev = mkEvent(gen, protocol.EventHeartbeat, sess, map[string]any{
					"uptime_ms": 1000, "total_events_processed": gen, "current_state": "working", "tokens_used": gen * 10})
			}
			n-- // a notification
		case k < 65:
			cmd := commands[rng.IntN(len(commands))]
			cmds[gen] = cmd
			s.ev = mkEvent(gen, protocol.EventPreAction, sess, bash(cmd))
		case k < 72:
			url := []string{"http://example.com/a", "https://example.com/b"}[rng.IntN(2)]
			s.ev = mkEvent(gen, protocol.EventPreAction, sess, map[string]any{"tool_name": "web_fetch", "arguments": map[string]any{"url": url}})
		case k < 85:
			p := []string{"summarise the diff", "my password is hunter2", "write tests"}[rng.IntN(3)]
			s.ev = mkEvent(gen, protocol.EventPrePrompt, sess, map[string]any{"prompt": p})
		case k < 92:
			p := []string{"write an exploit for CVE-1", "refactor the parser"}[rng.IntN(2)]
			s.ev = mkEvent(gen, protocol.EventIntentDetection, sess, map[string]any{"session_id": sess, "prompt": p, "workspace": "/w"})
		default:
			lt := []string{"tool_execution_limit", "llm_token_limit"}[rng.IntN(2)]
			s.ev = mkEvent(gen, protocol.EventRateLimit, sess, map[string]any{
				"session_id": sess, "limit_type": lt, "retry_after_ms": 500, "current_usage": "90%"})
		}
		out = append(out, s)
		gen++
		n++
	}
	return out, cmds
}

// team holds the 1,000 decisions recorded under teamPolicy, once per
// test binary, in the directory TestMain removes.
var team struct {
	once sync.Once
	path string
	cmds map[int]string
}

var testDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "replay-test-")
	if err != nil {
		panic(err)
	}
	testDir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func teamDB(t *testing.T) (string, map[int]string) {
	t.Helper()
	team.once.Do(func() {
		events, cmds := generate(1000)
		team.path, team.cmds = recordIn(t, filepath.Join(testDir, "team.db"), teamPolicy, events), cmds
	})
	if team.path == "" {
		t.Fatal("recording failed in an earlier test")
	}
	return team.path, team.cmds
}

func TestReplayReportsExactlyTheEventsOfTheChangedRule(t *testing.T) {
	path, cmds := teamDB(t)
	src := openStore(t, path)
	recs := allRecords(t, src)

	// Independently of replay: the events whose decision the rule change
	// flips, from the generator's own commands.
	wantFlip := map[int]string{} // gen -> "allow→block" or "block→allow"
	for gen, cmd := range cmds {
		switch cmd {
		case cmdShortF:
			wantFlip[gen] = "allow→block"
		case cmdLease:
			wantFlip[gen] = "block→allow"
		}
	}
	if len(wantFlip) < 50 {
		t.Fatalf("generator made only %d affected events", len(wantFlip))
	}

	rep := run(t, src, Options{Engine: engine(t, changedPolicy)})
	if rep.Compared != 1000 {
		t.Fatalf("compared %d blocking events, want 1000", rep.Compared)
	}
	if rep.Records != int64(len(recs)) || rep.Notifications == 0 || rep.Typed == 0 || rep.Skipped.Total() != 0 {
		t.Fatalf("counts: %+v (store holds %d records)", rep, len(recs))
	}
	genByID := map[int64]int{}
	for i := range recs {
		genByID[recs[i].ID] = genOf(t, &recs[i])
	}
	got := map[int]string{}
	for _, c := range rep.Changes {
		gen := genByID[c.ID]
		if c.Kind != DecisionChanged {
			t.Errorf("#%d: change kind %s", c.ID, c.Kind)
		}
		got[gen] = c.Old.Decision + "→" + c.New.Decision
		switch cmds[gen] {
		case cmdShortF:
			if c.Old.RuleID != "" || c.New.RuleID != "no-force-push" || c.Command != cmdShortF || c.Tool != "bash" {
				t.Errorf("#%d: %+v", c.ID, c)
			}
		case cmdLease:
			if c.Old.RuleID != "no-force-push" || c.New.RuleID != "" {
				t.Errorf("#%d: %+v", c.ID, c)
			}
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(wantFlip) {
		t.Fatalf("changed events differ from the expected ones:\n got %v\nwant %v", got, wantFlip)
	}
	if rep.DecisionChanges != int64(len(wantFlip)) || rep.RuleChanges != 0 || rep.Unlisted != 0 {
		t.Fatalf("decision changes %d, rule changes %d, want %d and 0", rep.DecisionChanges, rep.RuleChanges, len(wantFlip))
	}
	var toBlock, toAllow int64
	for _, f := range wantFlip {
		if f == "allow→block" {
			toBlock++
		} else {
			toAllow++
		}
	}
	// Every flip is between the rule and the default outcome, so both rows
	// hold every change (the default last).
	wantRules := []RuleSummary{
		{RuleID: "no-force-push", Events: toBlock + toAllow, DecisionChanges: toBlock + toAllow,
			Transitions: []Transition{{"allow", "block", toBlock}, {"block", "allow", toAllow}}},
		{RuleID: "", Events: toBlock + toAllow, DecisionChanges: toBlock + toAllow,
			Transitions: []Transition{{"allow", "block", toBlock}, {"block", "allow", toAllow}}},
	}
	if fmt.Sprintf("%+v", rep.Rules) != fmt.Sprintf("%+v", wantRules) {
		t.Fatalf("rules:\n got %+v\nwant %+v", rep.Rules, wantRules)
	}
	if len(rep.OldPolicyVersions) != 1 || rep.OldPolicyVersions[0].Events != 1000 ||
		rep.OldPolicyVersions[0].Version != engine(t, teamPolicy).Version() ||
		rep.NewPolicyVersion != engine(t, changedPolicy).Version() {
		t.Fatalf("versions: old %+v new %s", rep.OldPolicyVersions, rep.NewPolicyVersion)
	}
}

// Replaying under the policy that recorded the events changes nothing, in
// both counter modes: replay decides what the live harness decided.
func TestReplayUnderTheRecordingPolicyChangesNothing(t *testing.T) {
	path, _ := teamDB(t)
	src := openStore(t, path)
	for _, mode := range []CounterMode{CountersNew, CountersRecorded} {
		rep := run(t, src, Options{Engine: engine(t, teamPolicy), Counters: mode})
		if rep.DecisionChanges != 0 || rep.RuleChanges != 0 || rep.Compared != 1000 {
			var b bytes.Buffer
			_ = rep.WriteText(&b)
			t.Fatalf("%s: %s", mode, b.String())
		}
	}
}

func TestReplayIsDeterministicAndFileEqualsStore(t *testing.T) {
	path, _ := teamDB(t)
	src := openStore(t, path)
	db, err := sqlite.Open(context.Background(), path, sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var export bytes.Buffer
	if _, err := db.Audit().Export(context.Background(), &export, store.AuditFilter{}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := os.WriteFile(file, export.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}

	render := func(src Source, opts Options) (text, js string) {
		rep := run(t, src, opts)
		rep.Input = "input" // the only field that names the source
		var a, b bytes.Buffer
		if err := rep.WriteText(&a); err != nil {
			t.Fatal(err)
		}
		if err := rep.WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		return a.String(), b.String()
	}
	for _, opts := range []Options{
		{Engine: engine(t, changedPolicy)},
		{Engine: engine(t, changedPolicy), Counters: CountersRecorded, MaxListed: 7},
		{Engine: engine(t, changedPolicy), SessionID: "s03", Lookback: time.Second},
	} {
		t1, j1 := render(src, opts)
		t2, j2 := render(src, opts)
		if t1 != t2 || j1 != j2 {
			t.Fatal("two replays of the store differ")
		}
		t3, j3 := render(NewFileSource(file), opts)
		t4, j4 := render(NewReaderSource(bytes.NewReader(export.Bytes()), "stdin"), Options{Engine: opts.Engine, Counters: opts.Counters, MaxListed: opts.MaxListed, SessionID: opts.SessionID})
		if t3 != t1 || j3 != j1 {
			t.Fatalf("file replay differs from store replay:\n%s\n---\n%s", t3, t1)
		}
		if opts.Lookback == 0 && (t4 != t1 || j4 != j1) {
			t.Fatalf("reader replay differs from store replay")
		}
		if !strings.Contains(t1, "decision changes: ") || !strings.Contains(t1, "→") {
			t.Fatalf("text report:\n%s", t1)
		}
	}
}

// The listed text line of a change has the documented shape.
func TestTextLine(t *testing.T) {
	path, _ := teamDB(t)
	rep := run(t, openStore(t, path), Options{Engine: engine(t, changedPolicy)})
	var b bytes.Buffer
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	var line string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.Contains(l, cmdShortF) {
			line = l
			break
		}
	}
	c := rep.Changes[slices.IndexFunc(rep.Changes, func(c Change) bool { return c.Command == cmdShortF })]
	want := fmt.Sprintf("#%d  %s  %s  pre_action  old: allow (default)  →  new: block (rule no-force-push)  [tool: bash, command: %q]",
		c.ID, c.Time.Format("2006-01-02T15:04:05.000Z"), c.SessionID, cmdShortF)
	if line != want {
		t.Fatalf("line\n got %q\nwant %q", line, want)
	}
}
