package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/runs"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/sqlite"
)

func init() { register(newRunsCmd) }

func newRunsCmd() *cobra.Command {
	var dataDir string
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

These commands read <data-dir>/ahp.db directly, read-only; they work while
the harness runs. The rules are in docs/runs.md.`,
	}
	cmd.PersistentFlags().StringVar(&dataDir, "data-dir", defaultDataDir(), "data directory of the harness, holding ahp.db (or $AHP_DATA_DIR)")
	cmd.AddCommand(newRunsListCmd(&dataDir), newRunsShowCmd(&dataDir))
	return cmd
}

func newRunsListCmd(dataDir *string) *cobra.Command {
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
			err := withRunStore(ctx, *dataDir, func(st store.Runs) (err error) {
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

func newRunsShowCmd(dataDir *string) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show RUN_ID",
		Short: "Show one run: timeline, tasks, verification and flags",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			var rec *runs.Record
			err := withRunStore(ctx, *dataDir, func(st store.Runs) (err error) {
				rec, err = runs.Load(ctx, st, args[0])
				return err
			})
			if errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("no run %q in %s", args[0], filepath.Join(*dataDir, sqlite.FileName))
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

// withRunStore opens <dataDir>/ahp.db read-only for the length of fn.
func withRunStore(ctx context.Context, dataDir string, fn func(store.Runs) error) error {
	db, err := sqlite.Open(ctx, filepath.Join(dataDir, sqlite.FileName), sqlite.Options{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("%w (is --data-dir the harness's data directory?)", err)
	}
	err = fn(db.Runs())
	if cerr := db.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return err
}
