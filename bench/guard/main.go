// Command guard measures how well a harness's policy guards an agent: it
// sends every action of a corpus to a harness as an agent would (a
// pre_action event: tool bash with arguments.command for shell, Python
// through bash and as a code tool, Claude Code and Gemini CLI file tools
// with a cwd) and prints, per category and per pack, how many risky
// actions were stopped and how many ordinary ones were. Blocked and
// escalated both count as stopped. See bench/guard/README.md.
//
//	go run ./bench/guard                                  # the committed corpus, in-process default harness
//	go run ./bench/guard --gtfobins /tmp/gtfobins --tldr /tmp/tldr --corpus ''
//	go run ./bench/guard --connect unix:ahp.sock --list-missed
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// packFlags collects --pack NAME=on|off.
type packFlags map[string]bool

func (p packFlags) String() string { return fmt.Sprint(map[string]bool(p)) }

func (p packFlags) Set(s string) error {
	name, v, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return fmt.Errorf("want NAME=on or NAME=off, got %q", s)
	}
	switch v {
	case "on", "true":
		p[name] = true
	case "off", "false":
		p[name] = false
	default:
		return fmt.Errorf("want NAME=on or NAME=off, got %q", s)
	}
	return nil
}

// options are the command line.
type options struct {
	corpus, gtfobins, tldr, atomic string
	intercode                      string
	connect, config                string
	dataDir                        string
	home                           string
	packs                          packFlags
	hold                           time.Duration
	parallel                       int
	jsonOut                        bool
	listMissed, listStopped        bool
	targets                        Targets
	maxInterCode, minGTFOBins      float64
	publicCwd                      string
	categories                     string
}

func main() {
	o := options{packs: packFlags{}}
	fs := flag.NewFlagSet("guard", flag.ExitOnError)
	fs.StringVar(&o.corpus, "corpus", "bench/guard/corpus", "directory of the committed corpus (*.txt); '' to skip it")
	fs.StringVar(&o.gtfobins, "gtfobins", "", "a checkout of GTFOBins/GTFOBins.github.io: its reverse-shell, bind-shell, upload, download and file-write entries as risky")
	fs.StringVar(&o.atomic, "atomic", "", "a checkout of redcanaryco/atomic-red-team: its Linux sh/bash tests of the impact, exfiltration, credential-access, command-and-control, persistence, privilege-escalation and defense-impairment tactics as risky")
	fs.StringVar(&o.tldr, "tldr", "", "a checkout of tldr-pages/tldr: the examples of pages/common and pages/linux as ordinary")
	fs.StringVar(&o.intercode, "intercode", "", "a checkout of princeton-nlp/intercode (or its data/results/bash): every recorded agent action of data/results/bash/*/*.json as ordinary, sent in its trajectory's session")
	fs.StringVar(&o.publicCwd, "public-cwd", "~/src/app", "the agent's working directory sent with the public corpora's actions")
	fs.StringVar(&o.home, "home", "", "the agent's home directory: ~ in the corpus's cwd and file-tool paths, and HOME of an in-process harness (default: $HOME)")
	fs.StringVar(&o.categories, "category", "", "send only the cases of these categories (comma-separated: credentials,git,upload,common,...)")
	fs.StringVar(&o.connect, "connect", "", "use the harness at this address (unix:PATH, ...) instead of starting one in-process")
	fs.StringVar(&o.config, "config", "", "in-process harness: a configuration file (default: the built-in defaults)")
	fs.StringVar(&o.dataDir, "data-dir", "", "in-process harness: its data directory (default: a temporary directory, removed at the end)")
	fs.Var(o.packs, "pack", "in-process harness: switch a pack on or off (NAME=on|off; repeatable)")
	fs.DurationVar(&o.hold, "hold", 3*time.Second, "--connect: an action with no answer within this time is counted as escalated (held for a human)")
	fs.IntVar(&o.parallel, "parallel", 4, "actions in flight at once")
	fs.BoolVar(&o.jsonOut, "json", false, "print the report as JSON")
	fs.BoolVar(&o.listMissed, "list-missed", false, "list every risky action not stopped")
	fs.BoolVar(&o.listStopped, "list-stopped", false, "list every ordinary action stopped, with its rule")
	fs.Float64Var(&o.targets.MinRiskyStopped, "min-risky-stopped", -1, "exit 1 when a corpus stops a smaller fraction of its risky actions (e.g. 0.98; negative: no target)")
	fs.Float64Var(&o.targets.MaxOrdinaryStopped, "max-ordinary-stopped", -1, "exit 1 when a corpus stops a larger fraction of its ordinary actions (e.g. 0.005; negative: no target)")
	fs.Float64Var(&o.maxInterCode, "max-intercode-stopped", -1, "exit 1 when the intercode corpus stops a larger fraction of its actions (e.g. 0.005; negative: no target); --max-ordinary-stopped applies to it too when given")
	fs.Float64Var(&o.minGTFOBins, "min-gtfobins-stopped", -1, "exit 1 when the gtfobins corpus stops a smaller fraction of its actions (e.g. 0.95; negative: no target); --min-risky-stopped applies to it too when given")
	_ = fs.Parse(os.Args[1:])
	o.targets.PerSource = map[string]Targets{}
	if o.maxInterCode >= 0 {
		o.targets.PerSource["intercode"] = Targets{MinRiskyStopped: -1, MaxOrdinaryStopped: o.maxInterCode}
	}
	if o.minGTFOBins >= 0 {
		o.targets.PerSource["gtfobins"] = Targets{MinRiskyStopped: o.minGTFOBins, MaxOrdinaryStopped: -1}
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "guard: unexpected arguments:", fs.Args())
		os.Exit(2)
	}
	code, err := run(context.Background(), o, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "guard:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

// run loads the corpora, sends them and reports; it returns 1 when a
// target is missed.
func run(ctx context.Context, o options, w io.Writer) (int, error) {
	home := o.home
	if home == "" {
		home, _ = os.UserHomeDir()
	} else if o.connect == "" {
		// The in-process harness reads the agent's home from HOME, as a
		// harness run by the agent's user does.
		if err := os.Setenv("HOME", home); err != nil {
			return 0, err
		}
	}
	cases, notes, err := loadAll(o, home)
	if err != nil {
		return 0, err
	}
	var actions []Action
	for i := range cases {
		as, err := expand(&cases[i], home)
		if err != nil {
			return 0, err
		}
		actions = append(actions, as...)
	}
	var h *Harness
	if o.connect != "" {
		if o.config != "" || len(o.packs) > 0 || o.dataDir != "" {
			return 0, errors.New("--config, --pack and --data-dir configure an in-process harness; not with --connect")
		}
		h, err = Connect(ctx, o.connect, o.hold)
	} else {
		h, err = StartInProcess(ctx, InProcessOptions{ConfigFile: o.config, Packs: o.packs, DataDir: o.dataDir})
	}
	if err != nil {
		return 0, err
	}
	defer h.Close()
	results, err := sendAll(ctx, h, actions, o.parallel)
	if err != nil {
		return 0, err
	}
	results, off := splitOff(results, h.EnabledPacks())
	reps := Summarise(results)
	miss := o.targets.Check(reps)
	if o.jsonOut {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			Stopped string                    `json:"stopped"`
			Notes   []string                  `json:"notes,omitempty"`
			Sources []SourceReport            `json:"sources"`
			Off     map[string]map[string]int `json:"not_counted_packs_off,omitempty"`
			Targets Targets                   `json:"targets"`
			Missed  []string                  `json:"targets_missed"`
		}{"blocked or escalated", notes, reps, off, o.targets, miss}); err != nil {
			return 0, err
		}
	} else {
		for _, n := range notes {
			fmt.Fprintln(w, n)
		}
		for i := range reps {
			reps[i].WriteText(w, o.listMissed, o.listStopped)
		}
		writeOff(w, off)
		for _, m := range miss {
			fmt.Fprintln(w, "TARGET MISSED:", m)
		}
	}
	if len(miss) > 0 {
		return 1, nil
	}
	return 0, nil
}

// loadAll reads every corpus asked for; notes are lines to print before
// the figures (what a loader did not send, and why).
func loadAll(o options, home string) ([]Case, []string, error) {
	var (
		cases []Case
		notes []string
	)
	if o.corpus != "" {
		cs, err := LoadCorpusDir(o.corpus)
		if err != nil {
			return nil, nil, err
		}
		cases = append(cases, cs...)
	}
	cwd := expandHome(o.publicCwd, home)
	if o.gtfobins != "" {
		cs, err := LoadGTFOBins(o.gtfobins, cwd)
		if err != nil {
			return nil, nil, err
		}
		cases = append(cases, cs...)
	}
	if o.atomic != "" {
		cs, err := LoadAtomic(o.atomic, cwd)
		if err != nil {
			return nil, nil, err
		}
		cases = append(cases, cs...)
	}
	if o.tldr != "" {
		cs, err := LoadTLDR(o.tldr, cwd)
		if err != nil {
			return nil, nil, err
		}
		cases = append(cases, cs...)
	}
	if o.intercode != "" {
		l, err := LoadInterCode(o.intercode, cwd)
		if err != nil {
			return nil, nil, err
		}
		cases = append(cases, l.Cases...)
		notes = append(notes, l.skippedNote())
	}
	if o.categories != "" {
		want := map[string]bool{}
		for _, c := range strings.Split(o.categories, ",") {
			want[strings.TrimSpace(c)] = true
		}
		kept := cases[:0]
		for _, c := range cases {
			if want[c.Category] {
				kept = append(kept, c)
			}
		}
		cases = kept
	}
	if len(cases) == 0 {
		return nil, nil, errors.New("no case to send: give --corpus, --gtfobins, --atomic, --tldr or --intercode (and a --category they have)")
	}
	for i := range cases {
		cases[i].Cwd = expandHome(cases[i].Cwd, home)
	}
	return cases, notes, nil
}

// sendAll sends every action, parallel at once: each in a session of its
// own (no counter or earlier decision of one case weighs on another),
// except the actions of cases with the same Case.Session, which are sent
// one after the other, in order, in one session (a recorded trajectory).
func sendAll(ctx context.Context, h *Harness, actions []Action, parallel int) ([]Result, error) {
	if parallel < 1 {
		parallel = 1
	}
	results := make([]Result, len(actions))
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	next := make(chan []int)
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for job := range next {
				// The session is named after its first action.
				sid := fmt.Sprintf("guard-%06d", job[0])
				for _, i := range job {
					out, err := h.Send(ctx, sid, &actions[i])
					if err != nil {
						mu.Lock()
						if firstErr == nil {
							firstErr = fmt.Errorf("%s (%s): %w", actions[i].Case.Where(), actions[i].Via, err)
						}
						mu.Unlock()
						break
					}
					results[i] = Result{Action: &actions[i], Outcome: out, Pack: h.PackOf(out.RuleID)}
				}
			}
		}()
	}
	for _, job := range sessionJobs(actions) {
		mu.Lock()
		stop := firstErr != nil
		mu.Unlock()
		if stop {
			break
		}
		next <- job
	}
	close(next)
	wg.Wait()
	return results, firstErr
}

// sessionJobs groups the actions by session: one job per action, except
// that the actions of one Case.Session are one job, in their order (a
// loader names its sessions so that two corpora's never meet). Jobs are
// in the order of their first action.
func sessionJobs(actions []Action) [][]int {
	var jobs [][]int
	at := map[string]int{}
	for i := range actions {
		c := actions[i].Case
		if c.Session == "" {
			jobs = append(jobs, []int{i})
			continue
		}
		k := c.Session
		if j, ok := at[k]; ok {
			jobs[j] = append(jobs[j], i)
			continue
		}
		at[k] = len(jobs)
		jobs = append(jobs, []int{i})
	}
	return jobs
}
