package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/store"
)

func newAuditShadowReportCmd(sf *storeFlags) *cobra.Command {
	var (
		ff       auditFilterFlags
		examples int
		asJSON   bool
	)
	cmd := &cobra.Command{
		Use:   "shadow-report",
		Short: "Per rule: what shadow rules and the shadow policy would have changed",
		Long: `Summarise the shadow verdicts of the audit log, per rule: events matched,
how many would have been decided differently (would block, would escalate),
the distinct sessions and tools affected, and a few example events. Shadow
rules (mode: shadow, or ahp serve --policy-mode shadow) and the shadow
policy (ahp serve --shadow-policy) write these verdicts; see docs/shadow.md.`,
		Example: `  ahp audit shadow-report --since 24h
  ahp audit shadow-report --since 7d --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := ff.filter(time.Now())
			if err != nil {
				return err
			}
			if examples < 0 || examples > 100 {
				return fmt.Errorf("--examples %d: want 0 to 100", examples)
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Minute)
			defer cancel()
			var rep *harness.ShadowReport
			err = withAuditLog(ctx, sf, 0, func(a store.AuditLog) (err error) {
				rep, err = harness.BuildShadowReport(ctx, a, f, harness.ShadowReportOptions{Examples: examples})
				return err
			})
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			return printShadowReport(cmd.OutOrStdout(), rep)
		},
	}
	ff.add(cmd, true)
	cmd.Flags().IntVar(&examples, "examples", 3, "example events listed per rule")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON (the admin API's GET /v1/shadow/report)")
	return cmd
}

// printShadowReport prints a report as a table of rules, then the examples.
func printShadowReport(w io.Writer, rep *harness.ShadowReport) error {
	span := "all records"
	if rep.Since != "" || rep.Until != "" {
		span = fmt.Sprintf("records from %s to %s", orText(rep.Since, "the start"), orText(rep.Until, "now"))
	}
	fmt.Fprintf(w, "%s: %d with shadow verdicts, %d would have had another outcome\n", span, rep.Records, rep.Changed)
	if len(rep.Rules) == 0 {
		fmt.Fprintln(w, "no shadow verdicts: nothing runs in shadow, or nothing matched")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nRULE\tSOURCE\tMATCHED\tWOULD CHANGE\tWOULD BLOCK\tWOULD ESCALATE\tSESSIONS\tTOOLS\tTRANSITIONS")
	for _, r := range rep.Rules {
		var tr []string
		for _, t := range r.Transitions {
			tr = append(tr, fmt.Sprintf("%s→%s %d", t.From, t.To, t.Count))
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", orText(r.RuleID, "(default)"), r.Source, r.Events,
			r.WouldChange, r.WouldBlock, r.WouldEscalate, r.Sessions, r.Tools, orText(strings.Join(tr, ", "), "-"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rep.Rules {
		fmt.Fprintf(w, "\n%s (%s), examples:\n", orText(r.RuleID, "(default)"), r.Source)
		for _, ex := range r.Examples {
			fmt.Fprintf(w, "  #%d %s session %s %s %s: live %s by %s, would %s%s\n", ex.ID,
				ex.Time.Format(time.RFC3339), ex.SessionID, ex.EventType, orText(ex.Tool, "-"),
				ex.Live.Decision, orText(ex.Live.RuleID, "(default)"), ex.Shadow.Decision,
				orText(prefixed(": ", ex.Shadow.Reason), ""))
		}
	}
	return nil
}

// shadowSummary is one line saying what would have changed, for tables.
func shadowSummary(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var v harness.ShadowVerdicts
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	var parts []string
	for _, r := range v.Rules {
		if r.Changes {
			parts = append(parts, orText(r.RuleID, "(default)")+" would "+r.Decision)
		}
	}
	if p := v.Policy; p != nil {
		parts = append(parts, "shadow policy: "+orText(p.RuleID, "(default)")+" would "+p.Decision)
	}
	return strings.Join(parts, "; ")
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}
