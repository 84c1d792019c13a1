// Command compare races our harness against Open Policy Agent and a
// minimal Python stdio harness on one scenario: the ten rules of
// scenario/ (nine on destructive shell commands, one on a tool name,
// allow the rest) and one 330-byte pre_action event that every rule lets
// through. Every configuration runs once per round, the rounds
// interleaved, each with 1 agent and with many agents in closed loops;
// it prints the medians with their spread and the ratios to our
// comparable configuration as a Markdown table, and draws them as an SVG
// chart. bench/compare/run.sh builds everything and runs it.
//
//	go run ./bench/compare -ahp /tmp/ahp -opa /tmp/opa -rounds 5
//	go run ./bench/compare -from results.json -svg bench/compare.svg
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

func main() {
	var (
		ahpBin    = flag.String("ahp", "/tmp/ahp", "ahp binary (go build -o /tmp/ahp ./cmd/ahp)")
		opaBin    = flag.String("opa", "", "opa binary (built from the Go module proxy into a temporary directory; empty: skip OPA)")
		python    = flag.String("python", "python3", "Python 3 interpreter for harness.py (empty: skip Python)")
		dir       = flag.String("dir", "bench/compare", "directory of harness.py and scenario/")
		rounds    = flag.Int("rounds", 5, "rounds; each runs every configuration once")
		dur       = flag.Duration("d", 2*time.Second, "measured time per run")
		warm      = flag.Duration("warmup", 500*time.Millisecond, "warm-up before each measured time")
		agentsF   = flag.String("agents", "1,16", "concurrent agents of the runs, comma separated (the first is the latency run, the last the throughput run)")
		only      = flag.String("only", "", "run only the configurations whose name matches this regular expression (e.g. 'ahp/unix|opa')")
		outJSON   = flag.String("out", "", "write every measurement to this JSON file")
		from      = flag.String("from", "", "do not measure: report the measurements of this JSON file")
		svgOut    = flag.String("svg", "", "write the chart to this SVG file")
		deadline  = flag.Duration("timeout", 30*time.Minute, "give up after this long")
		protoOnly = flag.Bool("protocol-only", false, "also run ahp serve --protocol-only over a Unix socket and stdio (not the scenario: no policy, no audit; what the protocol layer alone costs)")
	)
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("compare: ")

	var res results
	if *from != "" {
		b, err := os.ReadFile(*from)
		if err != nil {
			log.Fatal(err)
		}
		if err := json.Unmarshal(b, &res); err != nil {
			log.Fatalf("%s: %v", *from, err)
		}
	} else {
		agents, err := parseAgents(*agentsF)
		if err != nil {
			log.Fatal(err)
		}
		var filter *regexp.Regexp
		if *only != "" {
			if filter, err = regexp.Compile(*only); err != nil {
				log.Fatalf("-only: %v", err)
			}
		}
		tmp, err := os.MkdirTemp("", "ahp-compare-")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(tmp)
		abs, err := filepath.Abs(*dir)
		if err != nil {
			log.Fatal(err)
		}
		e := &env{ahp: *ahpBin, opa: *opaBin, python: *python, harnessPy: filepath.Join(abs, "harness.py"),
			scenario: filepath.Join(abs, "scenario"), tmp: tmp}
		var ts []target
		for _, t := range targets(*protoOnly) {
			if (t.Family == "opa" && e.opa == "") || (t.Family == "python" && e.python == "") ||
				(filter != nil && !filter.MatchString(t.Name)) {
				continue
			}
			ts = append(ts, t)
		}
		ctx, cancel := context.WithTimeout(context.Background(), *deadline)
		defer cancel()
		res, err = run(ctx, e, ts, agents, *rounds, *warm, *dur)
		if err != nil {
			log.Fatal(err)
		}
		if *outJSON != "" {
			b, _ := json.MarshalIndent(res, "", "  ")
			if err := os.WriteFile(*outJSON, b, 0o644); err != nil {
				log.Fatal(err)
			}
		}
	}
	sum := summarize(res)
	fmt.Print(markdown(res, sum))
	if *svgOut != "" {
		if err := os.WriteFile(*svgOut, []byte(chart(res, sum)), 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

// results is what a run measured, with its conditions.
type results struct {
	Started  time.Time      `json:"started"`
	Host     string         `json:"host"`
	Rounds   int            `json:"rounds"`
	Measured time.Duration  `json:"measured_ns"`
	Agents   []int          `json:"agents"`
	Targets  []targetInfo   `json:"targets"`
	Runs     []measurement  `json:"runs"`
	Load     []string       `json:"load_average"` // /proc/loadavg before each round
	Extra    map[string]any `json:"extra,omitempty"`
}

type targetInfo struct {
	Name, Label, Family, Ref string
}

func parseAgents(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 256 {
			return nil, fmt.Errorf("-agents: %q is not a number of agents in 1..256", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// run measures every target at every concurrency, once per round; each
// round starts one target further along the list, so that no target is
// always measured first or after the same neighbour.
func run(ctx context.Context, e *env, ts []target, agents []int, rounds int, warm, d time.Duration) (results, error) {
	host, _ := os.Hostname()
	res := results{Started: time.Now().UTC(), Host: host, Rounds: rounds, Measured: d, Agents: agents}
	for _, t := range ts {
		res.Targets = append(res.Targets, targetInfo{t.Name, t.Label, t.Family, t.Ref})
	}
	for round := range rounds {
		la, _ := os.ReadFile("/proc/loadavg")
		res.Load = append(res.Load, strings.TrimSpace(string(la)))
		for k := range ts {
			t := ts[(k+round)%len(ts)]
			if err := ctx.Err(); err != nil {
				return res, fmt.Errorf("out of time in round %d: %w", round+1, err)
			}
			r, err := t.start(ctx, e)
			if err != nil {
				return res, fmt.Errorf("%s: %w", t.Name, err)
			}
			// A row that is not the scenario gets no probes: it does not
			// decide with the scenario's policy.
			if !t.notScenario {
				if err := checkProbes(ctx, r); err != nil {
					r.stop()
					return res, fmt.Errorf("%s: the policy does not decide as the scenario says: %w", t.Name, err)
				}
			}
			for _, n := range agents {
				var logBefore int64
				if r.logFile != "" {
					logBefore = fileSize(r.logFile)
				}
				m, err := measure(ctx, r, n, warm, d)
				if err != nil {
					r.stop()
					return res, fmt.Errorf("%s, %d agents: %w", t.Name, n, err)
				}
				m.Target, m.Round = t.Name, round+1
				if r.logFile != "" {
					// Includes the warm-up's decisions: bytes per decision over both.
					total := m.N + int(m.Rate*warm.Seconds())
					if grown := fileSize(r.logFile) - logBefore; grown > 0 && total > 0 {
						m.LogSize = grown / int64(total)
					}
				}
				res.Runs = append(res.Runs, m)
				fmt.Fprintf(os.Stderr, "round %d  %-16s %3d agents  %8.0f/s  p50 %-10v p99 %-10v cpu/decision %v\n",
					round+1, t.Name, n, m.Rate, m.P50.Round(time.Microsecond), m.P99.Round(time.Microsecond), m.CPU.Round(100*time.Nanosecond))
			}
			r.stop()
		}
	}
	return res, nil
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}
