package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ahp-go/ahp/service"
)

// Exit codes of ahp status (besides 0: every replica runs one policy).
const (
	exitStatusUnreachable = 1 // an admin API could not be asked
	exitStatusPolicy      = 2 // replicas run different policies
)

// Bounds on what ahp status reads from each admin API.
const (
	maxStatusBody     = 1 << 20
	maxStatusReplicas = 1000
)

type statusOptions struct {
	connect []string
	token   string
	dataDir string
	timeout time.Duration
	json    bool
}

func init() { register(newStatusCmd) }

func newStatusCmd() *cobra.Command {
	o := &statusOptions{}
	cmd := &cobra.Command{
		Use:   "status [--connect ADMIN_URL]...",
		Short: "List a harness's replicas and check that they run one policy",
		Long: `List the replicas of a harness with the policy each one runs.

ahp status asks GET /v1/status of each admin API named by --connect (repeat
it, or separate addresses by commas; default $AHP_ADMIN or
http://127.0.0.1:7700). Replicas sharing a PostgreSQL store each list every
live replica, so one address is enough there; SQLite replicas list only
themselves, so name each of them. The same replica seen through several
addresses is listed once.

The token is found as for ahp approvals ($AHP_ADMIN_TOKEN, --token, or the
local <data-dir>/admin.token) and sent when there is one.

A replica whose policy hash differs from the one most replicas run is
flagged DIFFERENT.

Exit codes:
  0  every replica runs the same policy
  1  an admin API could not be asked (the others are still listed)
  2  replicas run different policies`,
		Example: `  ahp status --connect http://10.0.0.11:9090
  ahp status --connect http://10.0.0.11:9090,http://10.0.0.12:9090 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runStatus(cmd, o) },
	}
	def := os.Getenv("AHP_ADMIN")
	if def == "" {
		def = "http://127.0.0.1:7700"
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.connect, "connect", []string{def}, "admin API address of a replica; repeat it or separate addresses by commas (or $AHP_ADMIN)")
	f.StringVar(&o.token, "token", "", "admin token; prefer $AHP_ADMIN_TOKEN, default: the local token in --data-dir")
	f.StringVar(&o.dataDir, "data-dir", defaultDataDir(), "data directory of a local harness, where its admin token is (or $AHP_DATA_DIR)")
	f.DurationVar(&o.timeout, "timeout", 5*time.Second, "how long to wait for each admin API")
	f.BoolVar(&o.json, "json", false, "print the replicas as JSON")
	return cmd
}

// statusReplica is one replica in the report.
type statusReplica struct {
	service.ReplicaJSON
	Store     string   `json:"store"`
	Via       []string `json:"via"`       // the admin APIs that listed it
	Different bool     `json:"different"` // runs another policy than most
}

// statusReport is what ahp status --json prints.
type statusReport struct {
	Replicas    []*statusReplica  `json:"replicas"`
	Policies    map[string]int    `json:"policies"` // policy hash -> replicas
	Unreachable map[string]string `json:"unreachable,omitempty"`
}

func runStatus(cmd *cobra.Command, o *statusOptions) error {
	addrs := connectAddrs(o.connect)
	if len(addrs) == 0 {
		return exitWith(exitStatusUnreachable, "--connect is required")
	}
	ao := &adminClientOptions{token: o.token, dataDir: o.dataDir}
	tok, _ := ao.bearer() // GET /v1/status needs no token; send one if we have it
	type answer struct {
		st  *service.StatusJSON
		err error
	}
	answers := make([]answer, len(addrs))
	var wg sync.WaitGroup
	for i, addr := range addrs {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
			defer cancel()
			st, err := fetchStatus(ctx, addr, tok)
			answers[i] = answer{st, err}
		})
	}
	wg.Wait()

	rep := statusReport{Policies: map[string]int{}}
	byID := map[string]*statusReplica{}
	add := func(r service.ReplicaJSON, storeKind, via string) {
		if len(byID) >= maxStatusReplicas && byID[r.ID] == nil {
			return
		}
		sr := byID[r.ID]
		if sr == nil {
			sr = &statusReplica{ReplicaJSON: r, Store: storeKind}
			byID[r.ID] = sr
			rep.Replicas = append(rep.Replicas, sr)
		} else if r.Seen.After(sr.Seen) {
			sr.ReplicaJSON = r
		}
		if !slices.Contains(sr.Via, via) {
			sr.Via = append(sr.Via, via)
		}
	}
	for i, a := range answers {
		if a.err != nil {
			if rep.Unreachable == nil {
				rep.Unreachable = map[string]string{}
			}
			rep.Unreachable[addrs[i]] = a.err.Error()
			continue
		}
		// The replica answering reports itself from memory (its current
		// policy); the registry may lag it by a heartbeat.
		add(a.st.Replica, a.st.Store, addrs[i])
		for _, r := range a.st.Replicas {
			if r.ID != a.st.Replica.ID {
				add(r, a.st.Store, addrs[i])
			}
		}
	}
	for _, r := range rep.Replicas {
		rep.Policies[r.PolicyVersion]++
	}
	majority := majorityPolicy(rep.Replicas)
	for _, r := range rep.Replicas {
		r.Different = r.PolicyVersion != majority
	}
	sort.SliceStable(rep.Replicas, func(i, j int) bool { return rep.Replicas[i].ID < rep.Replicas[j].ID })

	out := cmd.OutOrStdout()
	if o.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rep)
	} else {
		printStatus(out, rep.Replicas)
	}
	errw := cmd.ErrOrStderr()
	for _, addr := range addrs {
		if msg, ok := rep.Unreachable[addr]; ok {
			fmt.Fprintf(errw, "ahp: %s: %s\n", addr, msg)
		}
	}
	if len(rep.Policies) > 1 {
		return exitWith(exitStatusPolicy, fmt.Sprintf("replicas run %d different policies: reload or roll out the same policy on every replica", len(rep.Policies)))
	}
	if len(rep.Unreachable) > 0 {
		return exitWith(exitStatusUnreachable, fmt.Sprintf("%d of %d admin APIs could not be asked", len(rep.Unreachable), len(addrs)))
	}
	return nil
}

// majorityPolicy returns the policy hash most replicas run; on a tie, the
// one of the earliest started replica among them.
func majorityPolicy(rs []*statusReplica) string {
	count := map[string]int{}
	first := map[string]time.Time{}
	for _, r := range rs {
		count[r.PolicyVersion]++
		if t, ok := first[r.PolicyVersion]; !ok || r.Started.Before(t) {
			first[r.PolicyVersion] = r.Started
		}
	}
	best := ""
	for p, n := range count {
		if best == "" || n > count[best] || n == count[best] && first[p].Before(first[best]) {
			best = p
		}
	}
	return best
}

func printStatus(w io.Writer, rs []*statusReplica) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REPLICA\tADMIN\tSTORE\tPOLICY\tVERSION\tSTARTED\t")
	for _, r := range rs {
		flag := ""
		if r.Different {
			flag = "DIFFERENT POLICY"
		}
		addr := r.Address
		if addr == "" {
			addr = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, addr, r.Store, r.PolicyVersion, r.Version,
			r.Started.UTC().Format(time.RFC3339), flag)
	}
	_ = tw.Flush()
}

// fetchStatus asks one admin API for GET /v1/status.
func fetchStatus(ctx context.Context, addr, token string) (*service.StatusJSON, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(addr, "/")+"/v1/status", nil)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("admin API unreachable: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxStatusBody+1))
	if err != nil {
		return nil, fmt.Errorf("reading the status: %w", err)
	}
	if len(data) > maxStatusBody {
		return nil, fmt.Errorf("status answer larger than %d bytes", maxStatusBody)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("admin API answered HTTP %d: %s", resp.StatusCode, firstLine(data))
	}
	var st service.StatusJSON
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("not a status answer: %w", err)
	}
	if st.Replica.ID == "" {
		return nil, fmt.Errorf("not a status answer: no replica id")
	}
	return &st, nil
}

// firstLine returns the start of an error body for a message.
func firstLine(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\n")
	if len(s) > 200 {
		s = s[:200]
	}
	return strings.TrimSpace(s)
}
