package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ahp-go/ahp/store"
)

func init() { register(newMemoryCmd) }

func newMemoryCmd() *cobra.Command {
	var sf storeFlags
	cmd := &cobra.Command{
		Use:   "memory",
		Short: "Manage the facts the harness recalls (memory_recall)",
		Long: `Manage the facts a harness keeps for memory_recall events. A fact is global
(every session recalls it), belongs to one project (--workspace), or belongs
to one session. People add facts here; the harness also keeps memories of
what agents do (success summaries, errors, policy blocks, approval decisions,
intent prompts; see docs/cognitive.md). A memory_recall finds facts by
full-text search of their content, weighed by recency. "list" shows where
each fact came from: its origin (human, policy, agent), kind and source.

These commands open the harness's store directly (list reads only); they
work while the harness runs. The store is found as ahp serve finds it:
--store (a postgres:// URL, or an SQLite file), else the store of --config,
else <data-dir>/ahp.db.`,
	}
	sf.register(cmd.PersistentFlags())
	cmd.AddCommand(newMemoryAddCmd(&sf), newMemoryListCmd(&sf), newMemoryDeleteCmd(&sf))
	return cmd
}

// withMemory opens the facts of the store sf names for the length of fn.
func withMemory(ctx context.Context, sf *storeFlags, readOnly bool, fn func(store.Memory) error) error {
	return sf.withStore(ctx, storeOpen{write: !readOnly}, func(db store.Store, _ storeTarget) error { return fn(db.Memory()) })
}

func newMemoryAddCmd(sf *storeFlags) *cobra.Command {
	var f store.Fact
	var confidence float64
	cmd := &cobra.Command{
		Use:   "add TEXT",
		Short: "Add a fact, global or for one session",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.Content, f.Confidence = args[0], float32(confidence)
			if err := f.Validate(); err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			if err := withMemory(ctx, sf, false, func(m store.Memory) error { return m.Add(ctx, &f) }); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "added fact %d (%s)\n", f.ID, scope(f.SessionID))
			return nil
		},
	}
	cmd.Flags().StringVar(&f.SessionID, "session", "", "the session the fact belongs to (default: global)")
	cmd.Flags().StringVar(&f.Workspace, "workspace", "", "the project (workspace path) the fact belongs to (default: every project)")
	cmd.Flags().StringVar(&f.Source, "source", "cli", "where the fact comes from")
	cmd.Flags().Float64Var(&confidence, "confidence", 1, "confidence in the fact, 0 to 1")
	return cmd
}

func newMemoryListCmd(sf *storeFlags) *cobra.Command {
	var (
		q      store.FactQuery
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List facts, newest first, or search them with --query (most relevant first)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if q.Limit < 1 || q.Limit > store.MaxQueryLimit {
				return fmt.Errorf("--limit %d: want 1 to %d", q.Limit, store.MaxQueryLimit)
			}
			q.AnySession = q.SessionID == ""
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			var facts []store.Fact
			err := withMemory(ctx, sf, true, func(m store.Memory) (err error) {
				facts, err = m.Search(ctx, q)
				return err
			})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetEscapeHTML(false)
				for _, f := range facts {
					if err := enc.Encode(factJSON{ID: f.ID, SessionID: f.SessionID, Workspace: f.Workspace, Content: f.Content,
						Source: f.Source, Origin: f.Origin, Kind: f.Kind, Confidence: f.Confidence,
						Created: f.Created.UTC().Format(time.RFC3339Nano)}); err != nil {
						return err
					}
				}
				return nil
			}
			if len(facts) == 0 {
				fmt.Fprintln(out, "no facts")
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSCOPE\tWORKSPACE\tORIGIN\tKIND\tCONFIDENCE\tSOURCE\tCREATED\tCONTENT")
			for _, f := range facts {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%.2f\t%s\t%s\t%s\n", f.ID, cell(sessionOrGlobal(f.SessionID), 36),
					cell(orDash(f.Workspace), 30), f.Origin, f.Kind, f.Confidence, cell(f.Source, 28), f.Created.UTC().Format(time.RFC3339),
					cell(f.Content, 80))
			}
			return tw.Flush()
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&q.Text, "query", "", "full-text search of the facts' content")
	fl.StringVar(&q.SessionID, "session", "", "only facts this session recalls: its own and the global ones (default: all facts)")
	fl.IntVar(&q.Limit, "limit", 50, "show at most this many facts")
	fl.BoolVar(&asJSON, "json", false, "print one JSON object per line")
	return cmd
}

func newMemoryDeleteCmd(sf *storeFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "delete ID",
		Short: "Delete one fact",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || id <= 0 {
				return fmt.Errorf("fact id %q: want a positive number", args[0])
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			if err := withMemory(ctx, sf, false, func(m store.Memory) error { return m.Delete(ctx, id) }); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "deleted fact %d\n", id)
			return nil
		},
	}
}

// factJSON is the line format of ahp memory list --json.
type factJSON struct {
	ID         int64   `json:"id"`
	SessionID  string  `json:"session_id"`
	Workspace  string  `json:"workspace"`
	Content    string  `json:"content"`
	Source     string  `json:"source"`
	Origin     string  `json:"origin"`
	Kind       string  `json:"kind"`
	Confidence float32 `json:"confidence"`
	Created    string  `json:"created"`
}

func sessionOrGlobal(session string) string {
	if session == "" {
		return "global"
	}
	return session
}

func scope(session string) string {
	if session == "" {
		return "global"
	}
	return "session " + session
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
