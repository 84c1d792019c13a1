package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/internal/duration"
	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/replay"
	"github.com/ahp-go/ahp/service"
)

func init() { register(newReplayCmd) }

// replayFlags are the flags of ahp replay.
type replayFlags struct {
	pf             policyFlags
	policies       []string
	sf             storeFlags
	input          string
	session        string
	since, until   string
	counters       string
	principalRoles []string
	fallback       string
	jsonOut        bool
	failOnChange   bool
	maxChanges     int64
	strict         bool
	maxListed      int
}

func newReplayCmd() *cobra.Command {
	var f replayFlags
	cmd := &cobra.Command{
		Use:   "replay --policy FILE [--data-dir DIR | --store FILE|URL | --input FILE.jsonl]",
		Short: "Re-decide recorded events under a new policy and show what would change",
		Long: `replay reads the audit records of a harness (its store, read-only, found as
ahp serve finds it: --store, a postgres:// URL or an SQLite file, else the
store of --config, else <data-dir>/ahp.db; or a file written by "ahp audit
export"), re-evaluates every recorded blocking event
with the new policy, and prints each event whose decision would change, old
against new decision and rule, then a summary by rule. No tool runs and no
agent is contacted. The same input and policy give byte-identical output.

Session counters (actions, tokens, errors, recent tools, run status) are
rebuilt from the recorded stream in order. By default blocking events count
with the new policy's decisions (--counters new); --counters recorded counts
with the recorded ones. Audit records keep the principal's id but not its
roles: rules on principal.roles see no roles unless --principal-roles gives
them. Typed events (idle, planning, rate_limit, ...) compare "blocked by the
policy" against "not blocked". See docs/replay.md.

The policy is compiled as ahp serve compiles it: the default packs apply
unless --packs says otherwise; --config takes packs, params, default and the
approval fallback from a serve configuration (flags given explicitly win).

--since takes an RFC 3339 time or a duration (24h, 7d) counted back from the
last record of the input, never from the clock. Records before --since
still rebuild the counters; records at or after --until are left out.

Exit status:
  0  replay done; no gate, or the gate passed
  1  the gate failed: more decision changes than --max-changes (default 0)
     with --fail-on-change; --strict counts same-decision rule changes too
  2  usage error, unreadable input or store, or a policy that does not compile`,
		Example: `  ahp replay --policy new.yaml --data-dir ./ahp-data
  ahp audit export > audit.jsonl && ahp replay --policy new.yaml --input audit.jsonl --fail-on-change
  ahp replay --config ahp.yaml --policy new.yaml --since 24h --json`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return exitWith(2, fmt.Sprintf("replay takes no arguments (got %q); name policies with --policy", args[0]))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return runReplay(cmd, &f) },
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return exitWith(2, err.Error()) })
	fl := cmd.Flags()
	fl.StringArrayVar(&f.policies, "policy", nil, "new policy file or directory (repeatable); default: the --config policy files")
	f.pf.register(cmd)
	f.sf.register(fl)
	fl.Lookup("config").Usage = "ahp serve configuration to take packs, params, default, approval fallback, store and data dir from (or $AHP_CONFIG)"
	fl.StringVar(&f.input, "input", "", `audit export file (JSON Lines) to read instead of the store; "-" for standard input`)
	fl.StringVar(&f.session, "session", "", "replay only this session")
	fl.StringVar(&f.since, "since", "", "compare only records at or after this RFC 3339 time, or this long before the last record (24h, 7d)")
	fl.StringVar(&f.until, "until", "", "leave out records at or after this RFC 3339 time")
	fl.StringVar(&f.counters, "counters", string(replay.CountersNew), "decisions that rebuild the session counters: new or recorded")
	fl.StringArrayVar(&f.principalRoles, "principal-roles", nil, "roles of a principal, ID=ROLE1,ROLE2 (repeatable); audit records keep no roles")
	fl.StringVar(&f.fallback, "approval-fallback", "", "decision assumed for counting when a new escalation waits for a human: allow or block (default: the config's, else block)")
	fl.BoolVar(&f.jsonOut, "json", false, "print the report as JSON")
	fl.BoolVar(&f.failOnChange, "fail-on-change", false, "exit 1 when more decisions change than --max-changes allows")
	fl.Int64Var(&f.maxChanges, "max-changes", 0, "decision changes the gate allows (implies --fail-on-change)")
	fl.BoolVar(&f.strict, "strict", false, "the gate counts rule changes with the same decision too")
	fl.IntVar(&f.maxListed, "max-listed", replay.DefaultMaxListed, "most changed events to list (counts stay exact)")
	return cmd
}

func runReplay(cmd *cobra.Command, f *replayFlags) error {
	ctx := cmd.Context()
	usage := func(format string, a ...any) error { return exitWith(2, fmt.Sprintf(format, a...)) }

	cfg, err := f.sf.loadConfig()
	if err != nil {
		return usage("%v", err)
	}
	popts, err := f.policyOptions(cmd, cfg)
	if err != nil {
		return usage("%v", err)
	}
	paths := f.policies
	if len(paths) == 0 {
		if f.sf.config == "" || len(cfg.Policy.Files) == 0 {
			return usage("--policy is required (or --config with policy files)")
		}
		paths = cfg.Policy.Files
	}
	srcs, err := readPolicyArgs(paths)
	if err != nil {
		return usage("%v", err)
	}
	eng, err := policy.NewEngine(popts, srcs...)
	if err != nil {
		var le *policy.LoadError
		if errors.As(err, &le) {
			for _, p := range le.Problems {
				fmt.Fprintln(cmd.ErrOrStderr(), p.String())
			}
			return usage("the new policy does not compile (%d problems)", len(le.Problems))
		}
		return usage("policy: %v", err)
	}

	opts := replay.Options{
		Engine: eng, Counters: replay.CounterMode(f.counters), SessionID: f.session,
		MaxListed: f.maxListed, ApprovalFallback: protocol.DecisionKind(cfg.Approvals.Fallback),
	}
	if cmd.Flags().Changed("approval-fallback") {
		opts.ApprovalFallback = protocol.DecisionKind(f.fallback)
	}
	if f.maxListed <= 0 {
		return usage("--max-listed must be positive")
	}
	if f.maxChanges < 0 {
		return usage("--max-changes must not be negative")
	}
	if opts.PrincipalRoles, err = parsePrincipalRoles(f.principalRoles); err != nil {
		return usage("%v", err)
	}
	if f.since != "" {
		if opts.Since, opts.Lookback, err = parseSince(f.since); err != nil {
			return usage("--since: %v", err)
		}
	}
	if f.until != "" {
		if opts.Until, err = time.Parse(time.RFC3339Nano, f.until); err != nil {
			return usage("--until: want an RFC 3339 time: %v", err)
		}
	}

	src, closeSrc, err := f.source(cmd)
	if err != nil {
		return usage("%v", err)
	}
	defer closeSrc()
	rep, err := replay.Run(ctx, src, opts)
	if err != nil {
		return usage("%v", err)
	}
	out := cmd.OutOrStdout()
	if f.jsonOut {
		err = rep.WriteJSON(out)
	} else {
		err = rep.WriteText(out)
	}
	if err != nil {
		return err
	}
	gate := f.failOnChange || cmd.Flags().Changed("max-changes")
	if gate && rep.Exceeds(f.maxChanges, f.strict) {
		what := "decision changes"
		n := rep.DecisionChanges
		if f.strict {
			what, n = "changes (decisions and rules)", n+rep.RuleChanges
		}
		return exitWith(1, fmt.Sprintf("replay: %d %s, %d allowed", n, what, f.maxChanges))
	}
	return nil
}

// policyOptions builds the policy options: the configuration's (or the
// zero value's, as ahp serve without a configuration), then the flags given.
func (f *replayFlags) policyOptions(cmd *cobra.Command, cfg config.Config) (policy.Options, error) {
	// The settings outside the policy that its version covers, as ahp
	// serve computes them: the new version is comparable with the
	// recorded ones.
	opts := policy.Options{Packs: cfg.Policy.Packs, Params: cfg.Policy.Params, Settings: service.PolicySettings(cfg)}
	if cfg.Policy.Default == "block" {
		opts.Default = protocol.DecisionBlock
	}
	return f.pf.apply(cmd, opts)
}

// apply overrides opts with the policy flags that were given on cmd
// (--packs replaces the packs, --param adds to the parameters, --default
// replaces the default).
func (pf *policyFlags) apply(cmd *cobra.Command, opts policy.Options) (policy.Options, error) {
	flagOpts, err := pf.options()
	if err != nil {
		return policy.Options{}, err
	}
	fl := cmd.Flags()
	if fl.Changed("packs") {
		opts.Packs = flagOpts.Packs
	}
	if fl.Changed("param") {
		params := make(map[string]any, len(opts.Params)+len(flagOpts.Params))
		for k, v := range opts.Params {
			params[k] = v
		}
		for k, v := range flagOpts.Params {
			params[k] = v
		}
		opts.Params = params
	}
	if fl.Changed("default") {
		switch flagOpts.Default {
		case protocol.DecisionAllow, protocol.DecisionBlock:
			opts.Default = flagOpts.Default
		default:
			return opts, fmt.Errorf("--default %q: want allow or block", flagOpts.Default)
		}
	}
	return opts, nil
}

// readPolicyArgs reads policy files, expanding directories (whose test
// files are skipped, as ahp check does).
func readPolicyArgs(args []string) ([]policy.Source, error) {
	paths, err := expandPolicyArgs(args)
	if err != nil {
		return nil, err
	}
	srcs, err := policy.ReadFiles(paths...)
	if err != nil {
		return nil, err
	}
	out := srcs[:0]
	for i, s := range srcs {
		if policy.IsTestFile(s) && !explicit(args, paths[i]) {
			continue
		}
		out = append(out, s)
	}
	return out, nil
}

// source opens the input: an export file, standard input, or the store
// (read-only).
func (f *replayFlags) source(cmd *cobra.Command) (replay.Source, func(), error) {
	nop := func() {}
	if f.input != "" {
		if f.sf.store != "" || f.sf.dataDir != "" {
			return nil, nop, errors.New("--input cannot be combined with --store or --data-dir")
		}
		if f.input == "-" {
			return replay.NewReaderSource(cmd.InOrStdin(), "standard input"), nop, nil
		}
		if _, err := os.Stat(f.input); err != nil {
			return nil, nop, err
		}
		return replay.NewFileSource(f.input), nop, nil
	}
	if f.sf.store != "" && f.sf.dataDir != "" {
		return nil, nop, errors.New("--store and --data-dir exclude each other")
	}
	db, t, err := f.sf.open(cmd.Context(), storeOpen{})
	if err != nil {
		return nil, nop, fmt.Errorf("store: %w", err)
	}
	return replay.NewStoreSource(db.Audit(), t.String()), func() { _ = db.Close() }, nil
}

// parsePrincipalRoles reads ID=ROLE1,ROLE2 flags.
func parsePrincipalRoles(flags []string) (map[string][]string, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	out := make(map[string][]string, len(flags))
	for _, fv := range flags {
		id, roles, ok := strings.Cut(fv, "=")
		if !ok || id == "" {
			return nil, fmt.Errorf("--principal-roles %q: want ID=ROLE1,ROLE2", fv)
		}
		for _, r := range strings.Split(roles, ",") {
			if r = strings.TrimSpace(r); r != "" {
				out[id] = append(out[id], r)
			}
		}
	}
	return out, nil
}

// parseSince reads an RFC 3339 time or a look-back duration (Go syntax,
// or a whole number of days such as 7d).
func parseSince(s string) (time.Time, time.Duration, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, 0, nil
	}
	d, err := duration.Parse(s)
	if err != nil {
		return time.Time{}, 0, fmt.Errorf("%q: want an RFC 3339 time or a duration such as 24h or 7d", s)
	}
	if d <= 0 {
		return time.Time{}, 0, fmt.Errorf("%q: the duration must be positive", s)
	}
	return time.Time{}, d, nil
}
