package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ahp-go/ahp/internal/duration"
	"github.com/ahp-go/ahp/store"
)

func init() { register(newAuditCmd) }

func newAuditCmd() *cobra.Command {
	var sf storeFlags
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Read the audit log: tail, query, export",
		Long: `Read the audit log a harness keeps: one record per event with the decision,
the rule and policy version that made it, the principal, the transport and
the latency. Notifications are recorded too, with an empty outcome.

These commands read the harness's store directly and read-only (except
redact, which rewrites it); they work while the harness runs. The store is
found as ahp serve finds it: --store (a postgres:// URL, or an SQLite file),
else the store of --config, else <data-dir>/ahp.db. The export format is
described in docs/audit-format.md.`,
		Example: `  ahp audit query --since 1h
  ahp audit export --store postgres://ahp@db.internal:5432/ahp --since 24h > audit.jsonl
  ahp audit tail --config /etc/ahp/ahp.yaml`,
	}
	sf.register(cmd.PersistentFlags())
	cmd.AddCommand(newAuditTailCmd(&sf), newAuditQueryCmd(&sf), newAuditExportCmd(&sf),
		newAuditRedactCmd(&sf), newAuditShadowReportCmd(&sf))
	return cmd
}

// auditFilterFlags are the filters shared by the audit subcommands.
type auditFilterFlags struct {
	session, outcome, rule, eventType string
	since, until                      string
	shadow                            bool
}

func (a *auditFilterFlags) add(cmd *cobra.Command, withTime bool) {
	f := cmd.Flags()
	f.StringVar(&a.session, "session", "", "only records of this session")
	f.StringVar(&a.outcome, "decision", "", "only records with this outcome (allow, block, modify, defer, escalate, …)")
	f.StringVar(&a.rule, "rule", "", "only records decided by this rule")
	f.StringVar(&a.eventType, "event-type", "", "only records of this event type")
	f.BoolVar(&a.shadow, "shadow", false, "only records where a shadow rule or the shadow policy would have changed the outcome")
	if withTime {
		f.StringVar(&a.since, "since", "", "only records at or after this time: RFC 3339, or a duration ago such as 15m or 24h")
		f.StringVar(&a.until, "until", "", "only records before this time: RFC 3339, or a duration ago")
	}
}

func (a *auditFilterFlags) filter(now time.Time) (store.AuditFilter, error) {
	f := store.AuditFilter{SessionID: a.session, Outcome: a.outcome, RuleID: a.rule, EventType: a.eventType}
	if a.shadow {
		f.Shadow = store.ShadowChanged
	}
	var err error
	if f.Since, err = parseTimeFlag("--since", a.since, now); err != nil {
		return f, err
	}
	if f.Until, err = parseTimeFlag("--until", a.until, now); err != nil {
		return f, err
	}
	return f, nil
}

// parseTimeFlag reads an RFC 3339 time or a duration before now; "" is the
// zero time.
func parseTimeFlag(name, v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if d, err := duration.Parse(v); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%s %q: want an RFC 3339 time (2026-11-21T10:00:00Z) or a duration ago (15m, 24h, 7d)", name, v)
}

// withAuditLog opens the audit log of the store sf names, read-only, for
// the length of fn; tail is how often Tail looks for new records (0: the
// store's default).
func withAuditLog(ctx context.Context, sf *storeFlags, tail time.Duration, fn func(store.AuditLog) error) error {
	return sf.withStore(ctx, storeOpen{tail: tail}, func(db store.Store, _ storeTarget) error { return fn(db.Audit()) })
}

func newAuditQueryCmd(sf *storeFlags) *cobra.Command {
	var (
		ff     auditFilterFlags
		limit  int
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "query",
		Short: "Show the newest matching records, oldest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := ff.filter(time.Now())
			if err != nil {
				return err
			}
			if limit < 1 || limit > store.MaxQueryLimit {
				return fmt.Errorf("--limit %d: want 1 to %d", limit, store.MaxQueryLimit)
			}
			f.Limit, f.Newest = limit, true
			ctx, cancel := context.WithTimeout(cmd.Context(), time.Minute)
			defer cancel()
			var recs []store.AuditRecord
			err = withAuditLog(ctx, sf, 0, func(a store.AuditLog) (err error) {
				recs, err = a.Query(ctx, f)
				return err
			})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return writeAuditJSON(out, recs)
			}
			if len(recs) == 0 {
				fmt.Fprintln(out, "no records")
				return nil
			}
			tw := newAuditTable(out, false)
			for i := range recs {
				tw.row(&recs[i])
			}
			return tw.flush()
		},
	}
	ff.add(cmd, true)
	cmd.Flags().IntVar(&limit, "limit", 100, "show at most this many records (the newest)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON Lines in the export format")
	return cmd
}

func newAuditTailCmd(sf *storeFlags) *cobra.Command {
	var (
		ff       auditFilterFlags
		last     int
		interval time.Duration
		asJSON   bool
	)
	cmd := &cobra.Command{
		Use:   "tail",
		Short: "Show the last records, then follow new ones until interrupted",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := ff.filter(time.Now())
			if err != nil {
				return err
			}
			if last < 0 || last > store.MaxQueryLimit {
				return fmt.Errorf("-n %d: want 0 to %d", last, store.MaxQueryLimit)
			}
			if interval < 10*time.Millisecond {
				return fmt.Errorf("--interval %v: want at least 10ms", interval)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			out := cmd.OutOrStdout()
			tw := newAuditTable(out, true)
			show := func(r store.AuditRecord) error {
				if asJSON {
					return writeAuditJSON(out, []store.AuditRecord{r})
				}
				tw.row(&r)
				return tw.flush()
			}
			err = withAuditLog(ctx, sf, interval, func(a store.AuditLog) error {
				start, err := tailStart(ctx, a, f, last, show)
				if err != nil {
					return err
				}
				f.AfterID = start
				return a.Tail(ctx, f, show)
			})
			if errors.Is(err, context.Canceled) && ctx.Err() != nil {
				return nil // interrupted: the normal way to stop following
			}
			return err
		},
	}
	ff.add(cmd, false)
	cmd.Flags().IntVarP(&last, "lines", "n", 10, "show this many matching records before following")
	cmd.Flags().DurationVar(&interval, "interval", 250*time.Millisecond, "how often to look for new records")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON Lines in the export format")
	return cmd
}

// tailStart shows the last n matching records and returns the ID to follow
// from: the newest record of the log, so that only records written from
// now on follow.
func tailStart(ctx context.Context, a store.AuditLog, f store.AuditFilter, n int, show func(store.AuditRecord) error) (int64, error) {
	newest, err := a.Query(ctx, store.AuditFilter{Limit: 1, Newest: true})
	if err != nil || len(newest) == 0 {
		return 0, err
	}
	start := newest[0].ID
	if n == 0 {
		return start, nil
	}
	f.Limit, f.Newest = n, true
	recs, err := a.Query(ctx, f)
	if err != nil {
		return 0, err
	}
	for _, r := range recs {
		if r.ID > start {
			break // written after the newest seen above; Tail shows it
		}
		if err := show(r); err != nil {
			return 0, err
		}
	}
	return start, nil
}

func newAuditExportCmd(sf *storeFlags) *cobra.Command {
	var (
		ff     auditFilterFlags
		format string
		output string
		limit  int
	)
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write matching records as JSON Lines (docs/audit-format.md), oldest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "jsonl" {
				return fmt.Errorf("--format %q: the only format is jsonl", format)
			}
			f, err := ff.filter(time.Now())
			if err != nil {
				return err
			}
			if limit < 0 {
				return fmt.Errorf("--limit %d: want 0 (all) or more", limit)
			}
			f.Limit = limit
			w := cmd.OutOrStdout()
			var file *os.File
			if output != "" && output != "-" {
				if file, err = os.OpenFile(output, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600); err != nil {
					return err
				}
				w = file
			}
			var n int64
			err = withAuditLog(cmd.Context(), sf, 0, func(a store.AuditLog) (err error) {
				n, err = a.Export(cmd.Context(), w, f)
				return err
			})
			if file != nil {
				if cerr := file.Close(); err == nil {
					err = cerr
				}
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "exported %d records\n", n)
			return nil
		},
	}
	ff.add(cmd, true)
	cmd.Flags().StringVar(&format, "format", "jsonl", "output format (jsonl)")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write to this file instead of stdout (created with mode 0600)")
	cmd.Flags().IntVar(&limit, "limit", 0, "export at most this many records, the oldest matching (0: all)")
	return cmd
}

func writeAuditJSON(w io.Writer, recs []store.AuditRecord) error {
	enc := store.NewAuditEncoder(w)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			return err
		}
	}
	return nil
}

// auditTable prints records as aligned columns. A fixed table (for tail,
// which prints rows one at a time) pads each column to a set width instead
// of measuring the rows.
type auditTable struct {
	w      io.Writer
	tw     *tabwriter.Writer
	fixed  bool
	header bool
}

func newAuditTable(w io.Writer, fixed bool) *auditTable {
	return &auditTable{w: w, tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0), fixed: fixed}
}

// auditColumns are the table's columns with their widths in a fixed table.
var auditColumns = []struct {
	name  string
	width int
}{
	{"ID", 8}, {"TIME", 24}, {"SESSION", 36}, {"EVENT", 18}, {"OUTCOME", 9}, {"RULE", 24},
	{"LATENCY", 10}, {"TRANSPORT", 10}, {"PRINCIPAL", 16}, {"REASON", 80},
}

func (t *auditTable) row(r *store.AuditRecord) {
	if !t.header {
		names := make([]string, len(auditColumns))
		for i, c := range auditColumns {
			names[i] = c.name
		}
		t.line(names)
		t.header = true
	}
	outcome := r.Outcome
	if outcome == "" {
		outcome = "-"
	}
	reason := decisionReason(r.Decision)
	if r.Error != "" {
		reason = strings.TrimSpace(reason + " [error: " + r.Error + "]")
	}
	if s := shadowSummary(r.Shadow); s != "" {
		reason = strings.TrimSpace(reason + " [shadow: " + s + "]")
	}
	t.line([]string{strconv.FormatInt(r.ID, 10), r.Time.UTC().Format("2006-01-02T15:04:05.000Z"),
		r.SessionID, r.EventType, outcome, r.RuleID, r.Latency.Round(time.Microsecond).String(),
		r.Transport, r.Principal, reason})
}

func (t *auditTable) line(cells []string) {
	for i, c := range cells {
		w := auditColumns[i].width
		c = cell(c, w)
		switch {
		case i == len(cells)-1:
			fmt.Fprintln(t.out(), c)
		case t.fixed:
			fmt.Fprintf(t.w, "%-*s  ", w, c)
		default:
			fmt.Fprint(t.tw, c, "\t")
		}
	}
}

func (t *auditTable) out() io.Writer {
	if t.fixed {
		return t.w
	}
	return t.tw
}

func (t *auditTable) flush() error { return t.tw.Flush() }

// decisionReason returns the reason of a decision, if it has one.
func decisionReason(d json.RawMessage) string {
	var v struct {
		Reason string `json:"reason"`
	}
	if len(d) == 0 || json.Unmarshal(d, &v) != nil {
		return ""
	}
	return v.Reason
}

// cell makes s fit one table cell: one line, at most n runes, "-" when
// empty.
func cell(s string, n int) string {
	if s == "" {
		return "-"
	}
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
