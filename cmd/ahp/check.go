package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/notify"
	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
)

func init() { register(newCheckCmd) }

func newCheckCmd() *cobra.Command {
	var (
		pf         policyFlags
		configFile string
	)
	cmd := &cobra.Command{
		Use:   "check [--config FILE] POLICY...",
		Short: "Compile and type-check policy files",
		Long: `check compiles policy files (and directories of them) together with the
enabled built-in packs, type-checks every CEL expression, and reports each
problem as "file:line: rule ID: message". It exits 1 when there is any.

Test files (files with a top-level "cases" list) found in a directory are
skipped; run them with "ahp test".

With --config, the configuration file of ahp serve is checked too: every
setting, its redaction section (field paths and detector patterns), and
each notification sink's url_file or url_env (read from this machine and
this environment, as ahp serve would read them).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && configFile == "" {
				return fmt.Errorf("requires at least 1 policy file, or --config")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if configFile != "" {
				c, err := config.Load(configFile)
				if err != nil {
					return exitWith(1, err.Error())
				}
				// Resolve each sink's url_file / url_env as serve will, so a
				// missing file or unset variable is found here, not at start-up.
				// The errors name the sink, file or variable, never the URL.
				if _, err := notify.SinksFromConfig(c.Notifications, nil); err != nil {
					return exitWith(1, configFile+": "+err.Error())
				}
				fmt.Fprintf(cmd.OutOrStdout(), "OK: configuration %s (redaction: %d field paths, %d patterns; notifications: %d sinks)\n",
					configFile, len(c.Redaction.Fields), len(c.Redaction.Patterns), len(c.Notifications.Sinks))
				if len(args) == 0 {
					return nil
				}
			}
			opts, err := pf.options()
			if err != nil {
				return err
			}
			paths, err := expandPolicyArgs(args)
			if err != nil {
				return err
			}
			srcs, err := policy.ReadFiles(paths...)
			if err != nil {
				return err
			}
			var policies []policy.Source
			for i, s := range srcs {
				if policy.IsTestFile(s) && !explicit(args, paths[i]) {
					continue
				}
				policies = append(policies, s)
			}
			set, err := policy.Compile(opts, policies...)
			if err != nil {
				return reportLoadError(cmd.OutOrStdout(), err)
			}
			packs := "none"
			if p := set.Packs(); len(p) > 0 {
				packs = strings.Join(p, ", ")
			}
			files := "files"
			if len(policies) == 1 {
				files = "file"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "OK: %d %s, %d rules (packs: %s), policy version %s\n",
				len(policies), files, len(set.RuleIDs()), packs, set.Version())
			return nil
		},
	}
	pf.register(cmd)
	cmd.Flags().StringVar(&configFile, "config", "", "also check this ahp serve configuration file (its redaction rules among the rest)")
	return cmd
}

// reportLoadError prints policy problems one per line and asks for exit
// code 1; other errors pass through.
func reportLoadError(w io.Writer, err error) error {
	var le *policy.LoadError
	if !errors.As(err, &le) {
		return err
	}
	for _, p := range le.Problems {
		fmt.Fprintln(w, p.String())
	}
	noun := "problems"
	if len(le.Problems) == 1 {
		noun = "problem"
	}
	return exitWith(1, fmt.Sprintf("%d %s", len(le.Problems), noun))
}

// policyFlags are the flags check and test share.
type policyFlags struct {
	packs  []string
	params []string
	def    string
}

func (pf *policyFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringSliceVar(&pf.packs, "packs", nil,
		"built-in packs to enable, exactly (\"none\" for none); default: the packs that are on by default ("+
			strings.Join(defaultPacks(), ", ")+"); all: "+strings.Join(policy.PackNames(), ", "))
	cmd.Flags().StringArrayVar(&pf.params, "param", nil,
		"pack parameter NAME=VALUE, VALUE in YAML (e.g. workspace_roots=[/work]); repeatable")
	cmd.Flags().StringVar(&pf.def, "default", "allow", "decision when no rule matches: allow or block")
}

func defaultPacks() []string {
	var out []string
	for _, p := range policy.Packs() {
		if p.Default {
			out = append(out, p.Name)
		}
	}
	return out
}

// options turns the flags into policy options.
func (pf *policyFlags) options() (policy.Options, error) {
	opts := policy.Options{Default: protocol.DecisionKind(pf.def)}
	if pf.packs != nil {
		opts.Packs = map[string]bool{}
		for _, name := range policy.PackNames() {
			opts.Packs[name] = false
		}
		for _, name := range pf.packs {
			if name = strings.TrimSpace(name); name != "" && name != "none" {
				opts.Packs[name] = true
			}
		}
	}
	for _, kv := range pf.params {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return opts, fmt.Errorf("--param %q: expected NAME=VALUE", kv)
		}
		var v any
		if err := yaml.Unmarshal([]byte(val), &v); err != nil {
			return opts, fmt.Errorf("--param %s: value is not valid YAML: %w", name, err)
		}
		if opts.Params == nil {
			opts.Params = map[string]any{}
		}
		opts.Params[name] = v
	}
	return opts, nil
}

// expandPolicyArgs replaces each directory argument by the .yaml and .yml
// files directly inside it, sorted.
func expandPolicyArgs(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		fi, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			out = append(out, a)
			continue
		}
		entries, err := os.ReadDir(a)
		if err != nil {
			return nil, err
		}
		var files []string
		for _, e := range entries {
			if ext := filepath.Ext(e.Name()); !e.IsDir() && (ext == ".yaml" || ext == ".yml") {
				files = append(files, filepath.Join(a, e.Name()))
			}
		}
		sort.Strings(files)
		out = append(out, files...)
	}
	return out, nil
}

// explicit reports whether path was named on the command line (not found
// in a directory).
func explicit(args []string, path string) bool {
	for _, a := range args {
		if a == path {
			return true
		}
	}
	return false
}
