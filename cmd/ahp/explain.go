package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/effects"
	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/service"
)

func init() { register(newExplainCmd) }

type explainOptions struct {
	pf         policyFlags
	configFile string
	policies   []string
	cwd        string
	home       string
	user       string
	tool       string
	json       bool
}

func newExplainCmd() *cobra.Command {
	o := &explainOptions{}
	cmd := &cobra.Command{
		Use:   "explain [flags] COMMAND | explain [flags] EVENT_TYPE PAYLOAD_JSON",
		Short: "Show what an action does (its effects) and which rules match it",
		Long: `explain reads an action as the harness does and prints its effects (the
programs it runs, the files it reads, writes or deletes, the network
connections it opens, what it sends, the processes it signals, and what
could not be read) and then the decision the policy gives it, with every
rule that matches, in priority order. Use it to find out why an action was
blocked or let through, and to write a rule: rules read event.effects.

With one argument, the argument is a shell command given to the tool named
by --tool (bash by default) in the directory --cwd (the current directory by
default). With two, they are an event type and its payload, as for ahp send
(the payload's "cwd", "home" and "user", if any, win over --cwd, --home and
--user).

The event is read as ahp serve reads it: by the same code, with what a serve
started with the same --config (and $AHP_CONFIG, $AHP_DATA_DIR) would know.
Its policy files, packs and parameters (plus the files given with --policy;
--packs, --param and --default override them), its view of the file system,
and its own identity for the self_protection pack: its files, its admin
address and, when that serve is running (it holds the data directory's lock
file), its process id, command line, working directory and home; when none
runs, those of "ahp serve --config FILE" started here by you, without a
process id. Flags given to ahp serve itself beyond --config are not known.
Like ahp send, the event carries the agent's home only with --home (the hook
adapters send it): without one, "~" and $HOME are read as a home whoever's it
is (/home/~), as ahp serve reads an event that names none.

Exit status: 0 allow, 2 block, 3 escalate or defer, 1 on errors (as ahp send).`,
		Example: `  ahp explain 'rm -rf "$HOME"/*'
  ahp explain --json 'curl -s https://example.com/x.sh | sudo bash'
  ahp explain pre_action '{"tool_name":"Write","arguments":{"file_path":"/etc/cron.d/x","content":"* * * * * root sh"}}'`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error { return runExplain(cmd, o, args) },
	}
	f := cmd.Flags()
	f.StringVar(&o.configFile, "config", os.Getenv("AHP_CONFIG"), "configuration file of ahp serve (YAML; or $AHP_CONFIG)")
	f.StringArrayVar(&o.policies, "policy", nil, "policy file or directory to load besides the configuration's; repeatable")
	f.StringVar(&o.cwd, "cwd", "", "the agent's working directory (default: the current directory)")
	f.StringVar(&o.home, "home", "", "the agent's home directory, for ~ and $HOME, sent in the payload as the hook adapters send it (default: none, as a plain AHP client)")
	f.StringVar(&o.user, "user", "", "the agent's user name, for ~USER, sent with --home")
	f.StringVar(&o.tool, "tool", "bash", "the tool a COMMAND is given to")
	f.BoolVar(&o.json, "json", false, "print JSON: {effects, decision, rule_id, pack, reason, matches}")
	o.pf.register(cmd)
	return cmd
}

// explanation is what ahp explain prints (its --json form).
type explanation struct {
	Effects  []effects.Effect      `json:"effects"`
	Decision protocol.DecisionKind `json:"decision"`
	RuleID   string                `json:"rule_id,omitempty"`
	Pack     string                `json:"pack,omitempty"`
	Reason   string                `json:"reason,omitempty"`
	Matches  []explainMatch        `json:"matches"`
	Version  string                `json:"policy_version"`
	Harness  explainHarness        `json:"harness"`
}

// explainHarness is the harness whose decision is explained: the serve
// the configuration describes (service.ServeIdentity).
type explainHarness struct {
	Running bool  `json:"running"`
	PIDs    []int `json:"pids"`
}

// explainMatch is one rule that matches the action.
type explainMatch struct {
	RuleID   string                `json:"rule_id"`
	Pack     string                `json:"pack,omitempty"`
	Decision protocol.DecisionKind `json:"decision"`
	Reason   string                `json:"reason,omitempty"`
	Error    string                `json:"error,omitempty"`
}

func runExplain(cmd *cobra.Command, o *explainOptions, args []string) error {
	ev, err := o.event(args)
	if err != nil {
		return exitWith(exitFail, err.Error())
	}
	cfg, err := serveConfig(o.configFile)
	if err != nil {
		return exitWith(exitFail, err.Error())
	}
	cfg.Policy.Files = append(cfg.Policy.Files, o.policies...)
	// What ahp serve decides with (service.DecisionPolicy), as the serve
	// of this configuration: the one running, else the one it would be.
	self := service.ServeIdentity(cfg, o.configFile)
	opts, srcs, err := service.DecisionPolicy(cfg, o.configFile, self)
	if err != nil {
		return exitWith(exitFail, err.Error())
	}
	if opts, err = o.pf.apply(cmd, opts); err != nil {
		return exitWith(exitFail, err.Error())
	}
	live, err := policy.Compile(opts, srcs...)
	if err != nil {
		return exitWith(exitFail, err.Error())
	}
	opts.Mode = policy.ModeShadow
	all, err := policy.Compile(opts, srcs...)
	if err != nil {
		return exitWith(exitFail, err.Error())
	}
	in := &policy.Input{Event: ev, Principal: policy.Principal{ID: "ahp-explain", Roles: []string{"agent"}}, Transport: "explain"}
	res := live.Evaluate(in)
	x := explanation{Effects: live.Effects(ev), Decision: res.Decision.Kind, Reason: res.Decision.Reason,
		RuleID: res.RuleID, Pack: res.Pack, Version: live.Version(), Matches: []explainMatch{},
		Harness: explainHarness{Running: self.Running, PIDs: self.PIDs}}
	for _, m := range all.Evaluate(in).Shadow {
		if m.RuleID == "" {
			continue
		}
		em := explainMatch{RuleID: m.RuleID, Pack: m.Pack, Decision: m.Decision, Reason: m.Reason}
		if m.Err != nil {
			em.Error = m.Err.Error()
		}
		x.Matches = append(x.Matches, em)
	}
	if x.Effects == nil {
		x.Effects = []effects.Effect{}
	}
	out := cmd.OutOrStdout()
	if o.json {
		enc := json.NewEncoder(out)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(x); err != nil {
			return err
		}
	} else {
		printExplanation(out, x)
	}
	switch x.Decision {
	case protocol.DecisionBlock:
		return exitWith(exitBlock, "")
	case protocol.DecisionEscalate, protocol.DecisionDefer:
		return exitWith(exitLater, "")
	}
	return nil
}

// event builds the event to explain from the arguments.
func (o *explainOptions) event(args []string) (*protocol.Event, error) {
	cwd := o.cwd
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	var typ protocol.EventType
	var payload map[string]any
	if len(args) == 1 {
		typ = protocol.EventPreAction
		payload = map[string]any{"tool_name": o.tool, "arguments": map[string]any{"command": args[0]}}
	} else {
		typ = protocol.EventType(args[0])
		if !typ.Known() {
			return nil, fmt.Errorf("unknown event type %q", args[0])
		}
		if err := json.Unmarshal([]byte(args[1]), &payload); err != nil || payload == nil {
			return nil, fmt.Errorf("PAYLOAD_JSON is not a JSON object")
		}
	}
	if _, ok := payload["cwd"]; !ok && cwd != "" {
		payload["cwd"] = cwd
	}
	if _, ok := payload["home"]; !ok && o.home != "" {
		payload["home"] = o.home
		if _, ok := payload["user"]; !ok && o.user != "" {
			payload["user"] = o.user
		}
	}
	raw, err := json.Marshal(payload)
	if err != nil {
		return nil, err
	}
	return &protocol.Event{EventType: typ, SessionID: "ahp-explain", AgentID: "ahp-explain", Payload: raw}, nil
}

// printExplanation writes the human form: the effects, then the decision,
// the harness judged as, then every matching rule.
func printExplanation(w io.Writer, x explanation) {
	fmt.Fprintln(w, "effects:")
	if len(x.Effects) == 0 {
		fmt.Fprintln(w, "  (none read)")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, e := range x.Effects {
		fmt.Fprintf(tw, "  %s\t%s\n", e.Kind, describeEffect(e))
	}
	tw.Flush()
	fmt.Fprintf(w, "\ndecision: %s", x.Decision)
	if x.RuleID != "" {
		fmt.Fprintf(w, " by %s", x.RuleID)
	} else {
		fmt.Fprint(w, " (no rule matched: the default)")
	}
	if x.Reason != "" {
		fmt.Fprintf(w, ": %s", x.Reason)
	}
	fmt.Fprintf(w, "\n\nharness: ")
	if x.Harness.Running {
		fmt.Fprintf(w, "the ahp serve of this configuration, running as pid %v\n", x.Harness.PIDs)
	} else {
		fmt.Fprintln(w, "the ahp serve of this configuration, not running (no process id to protect)")
	}
	fmt.Fprintf(w, "\nmatching rules (priority order, the first level decides):\n")
	if len(x.Matches) == 0 {
		fmt.Fprintln(w, "  none")
	}
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, m := range x.Matches {
		reason := m.Reason
		if m.Error != "" {
			reason += " (evaluation failed: " + m.Error + ")"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", m.Decision, m.RuleID, reason)
	}
	tw.Flush()
}

// describeEffect renders the fields of an effect that are set.
func describeEffect(e effects.Effect) string {
	var parts []string
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	add("program", e.Program)
	if len(e.Argv) > 0 {
		b, _ := json.Marshal(e.Argv)
		parts = append(parts, "argv="+string(b))
	}
	add("path", e.Path)
	add("dest", e.Dest)
	if e.Recursive {
		parts = append(parts, "recursive")
	}
	if e.Append {
		parts = append(parts, "append")
	}
	add("mode", e.Mode())
	add("host", e.Host())
	add("port", e.Port())
	add("url", e.URL())
	add("source", e.Source())
	add("into", e.Into())
	if len(e.Targets()) > 0 {
		add("targets", strings.Join(e.Targets(), ","))
	}
	add("signal", e.Signal())
	add("remote", e.Remote())
	add("reason", e.Reason())
	if e.Limit {
		parts = append(parts, "limit")
	}
	add("via", e.Via)
	return strings.Join(parts, " ")
}

// serveConfig returns the configuration ahp serve --config configFile
// would run with: the file (none: the defaults), then what serve reads from
// its environment ($AHP_DATA_DIR, the credentials and TLS variables), with
// no other flag given.
func serveConfig(configFile string) (config.Config, error) {
	so := &serveOptions{}
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	so.addFlags(fs)
	so.configFile = configFile
	return so.effectiveConfig(fs)
}
