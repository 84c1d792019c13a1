package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/ahp-go/ahp/descriptor"
)

func init() { register(newDescriptorCmd) }

// descriptorOpts holds the flags shared by the descriptor subcommands.
type descriptorOpts struct {
	root string
}

// load reads a descriptor with the shared options.
func (o *descriptorOpts) load(path string) (*descriptor.Descriptor, error) {
	l := descriptor.Loader{RootDir: o.root}
	return l.Load(path)
}

func newDescriptorCmd() *cobra.Command {
	o := &descriptorOpts{}
	cmd := &cobra.Command{
		Use:   "descriptor",
		Short: "Validate, hash and render agent harness descriptors",
		Long: `Work with Agent Harness Descriptors (RFC-0011, aioc.agent_graph.v0).

A descriptor is a YAML or JSON file that describes an agent graph: the entry
agent, the turn limit, each agent's tools and handoffs, context defaults and
the instructions of every agent. Instruction files it names are read relative
to the descriptor and may not leave the root directory (--root, by default the
descriptor's own directory).

The format is chosen by extension: .json is JSON, .yaml and .yml are YAML, and
anything else is sniffed (JSON when it starts with '{').`,
		Example: `  ahp descriptor validate harness.yaml
  ahp descriptor validate --target example://tool/lookup_order harness.yaml
  ahp descriptor hash harness.yaml
  ahp descriptor render harness.yaml --agent router --message "Where is my order?"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.PersistentFlags().StringVar(&o.root, "root", "", "directory that instruction files may not leave (default: the descriptor's directory)")
	cmd.AddCommand(newDescriptorValidateCmd(o), newDescriptorHashCmd(o), newDescriptorRenderCmd(o))
	return cmd
}

func newDescriptorValidateCmd(o *descriptorOpts) *cobra.Command {
	var targets []string
	cmd := &cobra.Command{
		Use:   "validate FILE",
		Short: "Check a descriptor and report every problem",
		Long: `Load FILE, materialize its instruction files and check it: the shape of every
section, the entry agent, tool ids, handoff targets, {{context.PATH}}
placeholders against context.references, and where gates.

With --target, also check that the target of every tool an agent uses is one
of the given names (the tool registry of the host). Every problem is printed on
its own line on stderr, and the exit status is 1 when there is any.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := o.load(args[0])
			if err != nil {
				return reportDescriptorErr(cmd.ErrOrStderr(), args[0], err)
			}
			if cmd.Flags().Changed("target") {
				if err := d.Validate(descriptor.NewTargets(targets...)); err != nil {
					return reportDescriptorErr(cmd.ErrOrStderr(), args[0], err)
				}
			}
			entry := d.EntryAgent()
			fmt.Fprintf(cmd.OutOrStdout(), "%s: ok: %d agents, entry agent %q, %s\n", args[0], len(d.AgentIDs()), entry, d.Hash())
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&targets, "target", nil, "a tool target bound by the host (repeat or separate with commas); enables the registry check")
	return cmd
}

func newDescriptorHashCmd(o *descriptorOpts) *cobra.Command {
	var canonical bool
	cmd := &cobra.Command{
		Use:   "hash FILE",
		Short: "Print the descriptor hash (sha256 of its canonical JSON)",
		Long: `Load and check FILE, then print its hash: "sha256:" and the hex SHA-256 of the
canonical JSON (RFC 8785) of the materialized descriptor, that is with
instruction files and sequences replaced by their content. The same content
gives the same hash whatever its key order and whether it is YAML or JSON,
and the same hash as the aioc 0.2.8 reference loader (YAML read with js-yaml
4's default schema; see docs/descriptor.md for the compatibility notes).

With --canonical, print the canonical JSON itself instead.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := o.load(args[0])
			if err != nil {
				return reportDescriptorErr(cmd.ErrOrStderr(), args[0], err)
			}
			out := cmd.OutOrStdout()
			if canonical {
				if _, err := out.Write(append(d.CanonicalJSON(), '\n')); err != nil {
					return err
				}
				return nil
			}
			fmt.Fprintln(out, d.Hash())
			return nil
		},
	}
	cmd.Flags().BoolVar(&canonical, "canonical", false, "print the canonical JSON instead of its hash")
	return cmd
}

func newDescriptorRenderCmd(o *descriptorOpts) *cobra.Command {
	var (
		agent   string
		ctxJSON string
		message string
		now     string
	)
	cmd := &cobra.Command{
		Use:   "render FILE",
		Short: "Print the resolved instructions of each agent, or of one",
		Long: `Load FILE, build a run context and print the instructions each agent would get.

The context starts from the defaults of context.fields ("{{input.message}}"
becomes --message, "{{runtime.now_iso}}" the time given by --now or the
current time); the JSON object given with --context is then merged over it.
Where gates and placeholders are resolved against that context.

Without --agent, every agent is printed under a "=== ID ===" heading, in id
order; with --agent only that agent's text is printed, without heading.
Resolution errors (a missing required path, a where gate that is not a
boolean) go to stderr and make the exit status 1.`,
		Example: `  ahp descriptor render harness.yaml
  ahp descriptor render harness.yaml --agent qna --context '{"prompt":{"includeCompanyContext":true}}'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in := descriptor.ContextInput{Message: message}
			if ctxJSON != "" {
				if err := json.Unmarshal([]byte(ctxJSON), &in.Overrides); err != nil || in.Overrides == nil {
					return exitWith(2, "--context must be a JSON object (for example '{\"user\":{\"name\":\"Ada\"}}')")
				}
			}
			if now != "" {
				t, err := time.Parse(time.RFC3339Nano, now)
				if err != nil {
					return exitWith(2, fmt.Sprintf("--now must be an RFC 3339 time: %v", err))
				}
				in.Now = func() time.Time { return t }
			}
			d, err := o.load(args[0])
			if err != nil {
				return reportDescriptorErr(cmd.ErrOrStderr(), args[0], err)
			}
			ids := d.AgentIDs()
			if agent != "" {
				if _, ok := d.Agent(agent); !ok {
					return exitWith(1, fmt.Sprintf("%s: unknown agent %q (agents: %v)", args[0], agent, ids))
				}
				ids = []string{agent}
			}
			ctx, err := d.NewContext(in)
			if err != nil {
				return exitWith(1, err.Error())
			}
			out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
			failed := 0
			for i, id := range ids {
				text, err := d.ResolveInstructions(id, ctx)
				if err != nil {
					failed++
					for _, p := range descriptor.ProblemsOf(err) {
						fmt.Fprintf(errw, "%s: %s\n", args[0], p.Error())
					}
					continue
				}
				if agent != "" {
					fmt.Fprintln(out, text)
					continue
				}
				if i > 0 {
					fmt.Fprintln(out)
				}
				fmt.Fprintf(out, "=== %s ===\n%s\n", id, text)
			}
			if failed > 0 {
				return exitWith(1, fmt.Sprintf("%s: the instructions of %d agent(s) could not be resolved", args[0], failed))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&agent, "agent", "", "render only this agent (by descriptor id)")
	f.StringVar(&ctxJSON, "context", "", "JSON object merged over the context defaults")
	f.StringVar(&message, "message", "", "user message substituted for {{input.message}} defaults")
	f.StringVar(&now, "now", "", "time substituted for {{runtime.now_iso}} defaults (RFC 3339; default: now)")
	return cmd
}

// reportDescriptorErr prints each problem of err on its own line and returns
// an error that makes the command exit with status 1.
func reportDescriptorErr(w io.Writer, file string, err error) error {
	var de *descriptor.Error
	if !errors.As(err, &de) {
		return exitWith(1, err.Error())
	}
	for _, p := range de.Problems {
		fmt.Fprintf(w, "%s: %s\n", file, p.Error())
	}
	return exitWith(1, fmt.Sprintf("%s: %d problem(s)", file, len(de.Problems)))
}
