package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/runs"
	"github.com/ahp-go/ahp/store"
)

func init() { register(newRunsCmd) }

func newRunsCmd() *cobra.Command {
	var sf storeFlags
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "Show the runs a harness has recorded",
		Long: `Show the run records a harness reduced from run_lifecycle, task_list and
verification events: each run's status timeline, latest task list with its
evidence and artifacts, verification checks, residual risks, and the
anomalies flagged on the way (illegal transitions, out-of-order, duplicate
or conflicting snapshots, a lost agent connection). A run whose agent's
connection ended while it was open shows "(connection closed)" or
"(connection lost)" after its status until the agent reports again.

These commands read the harness's store directly, read-only; they work
while the harness runs. The store is found as ahp serve finds it: --store
(a postgres:// URL, or an SQLite file), else the store of --config, else
<data-dir>/ahp.db. The rules are in docs/runs.md.`,
	}
	sf.register(cmd.PersistentFlags())
	cmd.AddCommand(newRunsListCmd(&sf), newRunsShowCmd(&sf))
	return cmd
}

func newRunsListCmd(sf *storeFlags) *cobra.Command {
	var (
		f      store.RunFilter
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List runs, most recently updated first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.Status != "" && !slices.Contains(protocol.RunStatusNames, f.Status) {
				return fmt.Errorf("--status %q: want one of %s", f.Status, strings.Join(protocol.RunStatusNames, ", "))
			}
			if f.Limit < 0 || f.Limit > store.MaxQueryLimit {
				return fmt.Errorf("--limit %d: want 1 to %d, or 0 for %d", f.Limit, store.MaxQueryLimit, store.MaxQueryLimit)
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			var recs []*runs.Record
			err := withRunStore(ctx, sf, func(st store.Runs, _ storeTarget) (err error) {
				recs, err = runs.List(ctx, st, f)
				return err
			})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				for _, r := range recs {
					if err := enc.Encode(r); err != nil {
						return err
					}
				}
				return nil
			}
			if len(recs) == 0 {
				fmt.Fprintln(out, "no runs")
				return nil
			}
			return runs.WriteTable(out, recs)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.SessionID, "session", "", "only runs of this session")
	fl.StringVar(&f.Status, "status", "", "only runs in this status ("+strings.Join(protocol.RunStatusNames, ", ")+")")
	fl.BoolVar(&f.FlaggedOnly, "flagged", false, "only runs with at least one flag")
	fl.IntVar(&f.Limit, "limit", 100, "at most this many runs")
	fl.BoolVar(&asJSON, "json", false, "print one JSON record per line")
	return cmd
}

func newRunsShowCmd(sf *storeFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show RUN_ID",
		Short: "Show one run: timeline, tasks, verification and flags",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			var rec *runs.Record
			var where storeTarget
			err := withRunStore(ctx, sf, func(st store.Runs, t storeTarget) (err error) {
				where = t
				rec, err = runs.Load(ctx, st, args[0])
				return err
			})
			if errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("no run %q in %s", args[0], where)
			}
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(rec)
			}
			return runs.WriteTree(out, rec)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the record as JSON")
	return cmd
}

// withRunStore opens the run records of the store sf names, read-only,
// for the length of fn.
func withRunStore(ctx context.Context, sf *storeFlags, fn func(store.Runs, storeTarget) error) error {
	return sf.withStore(ctx, storeOpen{}, func(db store.Store, t storeTarget) error { return fn(db.Runs(), t) })
}
