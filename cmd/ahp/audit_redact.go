package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/descriptor"
	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/redact"
	"github.com/ahp-go/ahp/service"
	"github.com/ahp-go/ahp/store/sqlite"
)

func newAuditRedactCmd(dataDir *string) *cobra.Command {
	var configFile string
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
size of the database.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg := config.Default()
			cfg.DataDir = *dataDir
			if configFile != "" {
				var err error
				if cfg, err = config.Load(configFile); err != nil {
					return err
				}
				if cmd.Flags().Changed("data-dir") {
					cfg.DataDir = *dataDir
				}
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
			db, err := sqlite.Open(cmd.Context(), filepath.Join(cfg.DataDir, sqlite.FileName), sqlite.Options{})
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
	cmd.Flags().StringVar(&configFile, "config", os.Getenv("AHP_CONFIG"), "configuration file of the harness: its redaction rules, descriptor and data_dir (or $AHP_CONFIG)")
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
