package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/ahp-go/ahp/transport"
)

// Status is the outcome of one check.
type Status string

// The outcomes of a check.
const (
	Pass Status = "PASS"
	Fail Status = "FAIL"
	Skip Status = "SKIP"
)

// Result is the outcome of one check.
type Result struct {
	Rule   string // spec section, as "§7.3"
	Name   string // what was checked
	Status Status
	Detail string // why it failed or was skipped, or what passed
}

// Report is the outcome of a run.
type Report struct {
	Results []Result
}

// Passed and Failed count the results of each kind.
func (r Report) Passed() int { return r.count(Pass) }

// Failed counts the failed checks.
func (r Report) Failed() int { return r.count(Fail) }

func (r Report) count(s Status) int {
	n := 0
	for _, x := range r.Results {
		if x.Status == s {
			n++
		}
	}
	return n
}

// Write prints one line per check and a closing "N passed, N failed" line.
func (r Report) Write(w io.Writer) error {
	for _, x := range r.Results {
		line := fmt.Sprintf("%s %-6s %s", x.Status, x.Rule, x.Name)
		if x.Detail != "" {
			line += ": " + x.Detail
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "%d passed, %d failed, %d skipped\n", r.Passed(), r.Failed(), r.count(Skip))
	return err
}

// Options configure a run.
type Options struct {
	// Dial opens a new connection to the server under test. Run opens
	// several (a check that may break a connection gets its own).
	Dial func(ctx context.Context) (transport.Conn, error)
	// Timeout bounds each wait for an answer (2 s when 0). A check that
	// gets no answer in time fails.
	Timeout time.Duration
	// OversizeBytes is the size of the message sent by the oversized
	// message check; it must exceed the server's limit (5 MiB when 0,
	// above the 4 MiB default of this project's server).
	OversizeBytes int
	// SlowTool names a pre_action tool the server takes a while to decide
	// (for example one held for a human approval). The check "answered
	// while another is slow" is skipped when it is empty.
	SlowTool string
	// Only, when set, limits the run to the checks whose rule or name it
	// accepts.
	Only func(rule, name string) bool
}

// check is one conformance check.
type check struct {
	rule, name string
	run        func(ctx context.Context, r *runner) (Status, string)
}

// runner holds the state shared by the checks: a handshaken connection
// and what the handshake announced.
type runner struct {
	opts      Options
	main      *session
	maxDepth  uint32
	batchSize int
}

// Run performs every check against the server and returns the report. It
// returns an error only when no connection to the server can be opened.
func Run(ctx context.Context, opts Options) (Report, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = 2 * time.Second
	}
	if opts.OversizeBytes <= 0 {
		opts.OversizeBytes = 5 << 20
	}
	r := &runner{opts: opts, maxDepth: 10, batchSize: 100}
	s, err := r.open(ctx)
	if err != nil {
		return Report{}, fmt.Errorf("conformance: connecting: %w", err)
	}
	s.close()
	defer func() {
		if r.main != nil {
			r.main.close()
		}
	}()
	var rep Report
	for _, c := range checks {
		if opts.Only != nil && !opts.Only(c.rule, c.name) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		st, detail := c.run(ctx, r)
		rep.Results = append(rep.Results, Result{Rule: c.rule, Name: c.name, Status: st, Detail: detail})
		if r.main != nil && r.main.dead != nil {
			r.main.close()
			r.main = nil
		}
	}
	return rep, nil
}

func (r *runner) open(ctx context.Context) (*session, error) {
	dctx, cancel := context.WithTimeout(ctx, 5*r.opts.Timeout)
	defer cancel()
	c, err := r.opts.Dial(dctx)
	if err != nil {
		return nil, err
	}
	return newSession(c, r.opts.Timeout), nil
}

// handshakeParams is a full 2.4 handshake.
func handshakeParams(version string) map[string]any {
	return map[string]any{
		"protocol_version": version,
		"agent_info":       map[string]any{"framework": "ahp-conformance", "version": "1", "capabilities": []string{}},
		"session_id":       "conformance",
		"agent_id":         "conformance",
	}
}

// session returns the shared connection, handshaken, opening it when
// needed. A failure is returned as a reason to fail the check.
func (r *runner) session(ctx context.Context) (*session, string) {
	if r.main != nil {
		return r.main, ""
	}
	s, err := r.open(ctx)
	if err != nil {
		return nil, "connecting: " + err.Error()
	}
	resp, err := s.call(ctx, "ahp/handshake", handshakeParams("2.4"))
	if err != nil {
		s.close()
		return nil, "handshake: " + err.Error()
	}
	if resp.Error != nil || resp.Result == nil {
		s.close()
		return nil, "handshake refused: " + resp.String()
	}
	var hs struct {
		Config *struct {
			BatchSize *int    `json:"batch_size"`
			MaxDepth  *uint32 `json:"max_depth"`
		} `json:"config"`
	}
	if json.Unmarshal(resp.Result, &hs) == nil && hs.Config != nil {
		if hs.Config.BatchSize != nil && *hs.Config.BatchSize > 0 && *hs.Config.BatchSize <= 10000 {
			r.batchSize = *hs.Config.BatchSize
		}
		if hs.Config.MaxDepth != nil && *hs.Config.MaxDepth < 1<<20 {
			r.maxDepth = *hs.Config.MaxDepth
		}
	}
	r.main = s
	return s, ""
}
