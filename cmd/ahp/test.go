package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ahp-go/ahp/policy"
)

func init() { register(newTestCmd) }

func newTestCmd() *cobra.Command {
	var (
		pf      policyFlags
		verbose bool
	)
	cmd := &cobra.Command{
		Use:   "test POLICY... TESTS...",
		Short: "Run policy test cases",
		Long: `test compiles the policy files and runs the cases of the test files
against them: each case gives an event (and optionally the principal, the
session counters and the transport) and the decision it expects. Files and
directories may come in any order; a file with a top-level "cases" list is a
test file, any other is a policy. A test file's own "options" (packs, params,
default) apply to its cases.

Each failing case is printed with its file and line; the last line is
"N passed, N failed". The exit code is 1 when a case failed or a file has
errors.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
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
			out := cmd.OutOrStdout()
			var (
				policies []policy.Source
				files    []*policy.TestFile
				problems []policy.Problem
			)
			for _, s := range srcs {
				if !policy.IsTestFile(s) {
					policies = append(policies, s)
					continue
				}
				tf, err := policy.ParseTestFile(s)
				var le *policy.LoadError
				switch {
				case errors.As(err, &le):
					problems = append(problems, le.Problems...)
				case err != nil:
					return err
				default:
					files = append(files, tf)
				}
			}
			if len(problems) > 0 {
				return reportLoadError(out, &policy.LoadError{Problems: problems})
			}
			if len(files) == 0 {
				return fmt.Errorf("no test files among the arguments (a test file has a top-level \"cases\" list)")
			}
			rep, err := policy.RunTests(opts, policies, files)
			if err != nil {
				return reportLoadError(out, err)
			}
			for _, r := range rep.Results {
				c := r.Case
				if r.Passed() {
					if verbose {
						fmt.Fprintf(out, "ok   %s:%d: %s\n", c.File, c.Line, c.Name)
					}
					continue
				}
				for _, f := range r.Failures {
					fmt.Fprintf(out, "FAIL %s:%d: %s: %s\n", c.File, c.Line, c.Name, f)
				}
			}
			fmt.Fprintf(out, "%d passed, %d failed\n", rep.Passed, rep.Failed)
			if rep.Failed > 0 {
				return exitWith(1, "")
			}
			return nil
		},
	}
	pf.register(cmd)
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "also print the cases that pass")
	return cmd
}
