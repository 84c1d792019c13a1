package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ahp-go/ahp/descriptor"
	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/redact"
	"github.com/ahp-go/ahp/service"
	"github.com/ahp-go/ahp/store/sqlite"
)

func newAuditRedactCmd(sf *storeFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "redact",
		Short: "Rewrite stored records with the current redaction rules and compact the database",
		Long: `redact applies the current redaction rules (the built-in secret detectors,
and the redaction section and descriptor of --config) to everything already
stored in <data-dir>/ahp.db: audit records, approvals, memory facts and run
records. Each secret becomes [REDACTED:kind:fingerprint], with the
fingerprint key of the data directory (created if absent). It then rebuilds
the facts index, empties the WAL and compacts the file (VACUUM), so that no
copy of a removed secret is left in free pages.

Use it on databases written before redaction existed, or after adding
field paths or detectors. It may run while the harness runs (compaction
then waits for the harness's writes); it needs free disk space about the
size of the database. It rewrites SQLite stores only.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := sf.loadConfig()
			if err != nil {
				return err
			}
			t := target(cfg)
			if t.url != "" {
				return fmt.Errorf("audit redact rewrites SQLite stores only; %s is a PostgreSQL database", t)
			}
			var sup *harness.DescriptorSupervisor
			if cfg.Descriptor != "" {
				d, err := descriptor.Load(cfg.Descriptor)
				if err != nil {
					return err
				}
				sup = harness.NewDescriptorSupervisor(d)
			}
			red, err := service.NewRedactor(cfg, sup)
			if err != nil {
				return err
			}
			db, err := sqlite.Open(cmd.Context(), t.path, sqlite.Options{})
			if err != nil {
				return fmt.Errorf("%w (is --data-dir the harness's data directory?)", err)
			}
			st, err := db.Redact(cmd.Context(), storeRedaction(red))
			if cerr := db.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "redacted %d audit records, %d approvals, %d facts, %d run events, %d run records; database compacted\n",
				st.Audit, st.Approvals, st.Facts, st.RunEvents, st.Runs)
			return nil
		},
	}
	return cmd
}

// storeRedaction adapts a Redactor to the store's rewriting.
func storeRedaction(r *redact.Redactor) sqlite.Redaction {
	return sqlite.Redaction{
		Text: func(s string) (string, []string) {
			out, k := r.String(s)
			return out, k.List()
		},
		Event: func(b []byte) ([]byte, []string) {
			out, k := r.EventJSON(b)
			return out, k.List()
		},
		JSON: func(b []byte) ([]byte, []string) {
			out, k := r.Decision(b)
			return out, k.List()
		},
	}
}
