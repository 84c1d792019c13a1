package policy

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
	"go.yaml.in/yaml/v3"

	"github.com/ahp-go/ahp/protocol"
)

// rule is a compiled rule.
type rule struct {
	id       string
	pack     string
	file     string
	line     int
	priority int64
	order    int
	severity int

	eventTypes []protocol.EventType
	tools      []string // nil: any event, with or without a tool
	agents     []string // nil: any agent
	depthMin   uint32
	depthMax   uint32

	cond cel.Program // nil: always true
	// need is what the action's effects must hold for the condition to
	// be true (conditionNeed), nil when it cannot tell; kinds are the
	// effect kinds of which it needs one, 0 when any kind may do.
	need  condNeed
	kinds kindMask
	// narrow hands each exists() over event.effects of the condition only
	// the effects its body needs (narrow.go).
	narrow *narrowing
	// limit: the condition can only be true when the self_protection
	// analysis of the event reached a limit (needsLimit).
	limit  bool
	modify cel.Program // modify outcomes only

	decision protocol.Decision // the outcome, with reason and metadata
	failed   protocol.Decision // the fail-closed block for this rule
	approval *ApprovalSpec
	shadow   bool // evaluated and reported, never deciding (mode: shadow)

	description string
	private     bool   // the condition is not shown to agents
	condText    string // the condition as written, "" when none
}

// severity orders decisions for deny-overrides among rules of the same
// priority: block > escalate > defer > modify > allow.
func severityOf(k protocol.DecisionKind) int {
	switch k {
	case protocol.DecisionBlock:
		return 4
	case protocol.DecisionEscalate:
		return 3
	case protocol.DecisionDefer:
		return 2
	case protocol.DecisionModify:
		return 1
	}
	return 0
}

// Compile parses and type-checks policy sources together with the built-in
// packs the options enable, and returns the compiled set. On any problem it
// returns a *LoadError listing all of them ("file:line: rule ID: message").
func Compile(opts Options, sources ...Source) (*Set, error) {
	env, err := celEnv()
	if err != nil {
		return nil, err
	}
	ps := &problems{}
	packs := enabledPacks(opts, ps)
	params := mergeParams(packs, joinInstance(opts.Instance, opts.Params), ps)
	config, err := nativeToVal(params, 0)
	if err != nil {
		ps.add("", 0, "", "params: %v", err)
	}
	def := opts.Default
	switch def {
	case "":
		def = protocol.DecisionAllow
	case protocol.DecisionAllow, protocol.DecisionBlock:
	default:
		ps.add("", 0, "", "default decision %q: expected allow or block", def)
	}
	// The version covers the parameters without the harness's own
	// (Instance): those differ between replicas and restarts of one
	// policy. See versionHash for the rest.
	optBytes, err := json.Marshal(struct {
		Packs    []string       `json:"packs"`
		Params   map[string]any `json:"params"`
		Default  string         `json:"default"`
		Reason   string         `json:"reason"`
		Mode     Mode           `json:"mode,omitempty"`
		Settings map[string]any `json:"settings,omitempty"`
	}{packNames(packs), mergeParams(packs, opts.Params, &problems{}), string(def), opts.DefaultReason, shadowMode(opts.Mode, ps), opts.Settings})
	if err != nil {
		ps.add("", 0, "", "params: %v", err)
	}

	all := make([]Source, 0, len(packs)+len(sources))
	for _, p := range packs {
		all = append(all, p.source)
	}
	all = append(all, sources...)
	version := versionHash(all, optBytes)

	var specs []*ruleSpec
	var guidance []*Guidance
	for _, p := range packs {
		f := mapping(p.source.Name, p.node, "", ps, packFields...)
		specs = append(specs, withLines(p.source, parseRules(p.source.Name, p.Name, f["rules"], ps))...)
	}
	for _, src := range sources {
		root := parseYAML(src.Name, src.Data, ps)
		if root == nil {
			continue
		}
		if isTestFile(root) {
			ps.add(src.Name, root.Line, "", "this is a policy test file (it has cases); give it to ahp test")
			continue
		}
		f := mapping(src.Name, root, "", ps, policyFields...)
		if f["rules"] != nil || f["guidance"] == nil {
			specs = append(specs, withLines(src, parseRules(src.Name, "", f["rules"], ps))...)
		}
		guidance = append(guidance, parseGuidance(src.Name, f["guidance"], ps)...)
	}
	seenGuidance := map[string]*Guidance{}
	for _, g := range guidance {
		if first, dup := seenGuidance[g.ID]; dup {
			ps.add(g.File, g.Line, "", "guidance %s: duplicate guidance id (first defined at %s:%d)", g.ID, first.File, first.Line)
		}
		seenGuidance[g.ID] = g
	}

	seen := map[string]*ruleSpec{}
	rules := make([]*rule, 0, len(specs))
	for i, s := range specs {
		s.order = i
		if first, dup := seen[s.id]; dup {
			ps.add(s.file, s.line, s.id, "duplicate rule id (first defined at %s:%d)", first.file, first.line)
			continue
		}
		seen[s.id] = s
		if s.pack != "" && !strings.HasPrefix(s.id, s.pack+".") {
			ps.add(s.file, s.line, s.id, "a rule of pack %s must have an id starting with %q", s.pack, s.pack+".")
		}
		if r := compileRule(env, s, version, params, ps); r != nil {
			rules = append(rules, r)
		}
	}
	if err := ps.err(); err != nil {
		return nil, err
	}
	agent := opts.Agent
	if agent.FS == nil && opts.PackEnabled("self_protection") && protectsPaths(params) {
		// A running harness guards its files: let the analysis resolve
		// symbolic links on the paths it reads (see linkFS).
		agent.FS = linkFS{}
	}
	set := &Set{version: version, rules: rules, config: config, guidance: guidance, agent: agent}
	for _, p := range packs {
		set.packs = append(set.packs, p.Name)
	}
	set.def = defaultResult(def, opts.DefaultReason, version)
	set.applyMode(opts.Mode)
	set.buildIndex()
	set.buildNeeds()
	return set, nil
}

// withLines gives specs the lines of their source, for error columns.
func withLines(src Source, specs []*ruleSpec) []*ruleSpec {
	lines := strings.Split(string(src.Data), "\n")
	for _, s := range specs {
		s.lines = lines
	}
	return specs
}

// compileRule compiles the CEL of one rule and precomputes its decision.
func compileRule(env *cel.Env, s *ruleSpec, version string, params map[string]any, ps *problems) *rule {
	r := &rule{
		id: s.id, pack: s.pack, file: s.file, line: s.line, priority: s.priority, order: s.order,
		severity: severityOf(s.outcome.kind), eventTypes: s.eventTypes, tools: s.tools, agents: s.agents,
		depthMin: s.depthMin, depthMax: s.depthMax, approval: s.outcome.approval, shadow: s.shadow,
		description: s.description, private: s.private,
	}
	if s.condition != nil {
		r.condText = s.condition.Value
	}
	ok := true
	if s.condition != nil {
		r.narrow = &narrowing{params: params}
		r.cond, ok = compileExpr(env, s, s.condition, "condition", true, r.narrow, ps)
		r.need = conditionNeed(s.condAST, params)
		r.kinds = r.need.kinds()
		r.limit = needsLimit(s.condAST)
	}
	if s.outcome.modified != nil {
		var mok bool
		r.modify, mok = compileExpr(env, s, s.outcome.modified, "outcome.modified_payload", false, nil, ps)
		ok = ok && mok
	}
	if !ok {
		return nil
	}
	meta := ruleMetadata(s.id, version)
	r.decision = protocol.Decision{
		Kind: s.outcome.kind, Reason: s.outcome.reason, Metadata: meta,
		RetryAfterMs: s.outcome.retry, EscalationTarget: s.outcome.target,
	}
	if r.decision.Kind == protocol.DecisionEscalate && r.decision.EscalationTarget == "" && r.approval != nil {
		r.decision.EscalationTarget = r.approval.ApproverRole
	}
	r.failed = protocol.Decision{
		Kind:     protocol.DecisionBlock,
		Reason:   fmt.Sprintf("policy rule %s could not be evaluated; blocked (fail closed)", s.id),
		Metadata: meta,
	}
	return r
}

// compileExpr compiles one CEL expression held by a YAML node, reporting
// errors at their line in the file.
func compileExpr(env *cel.Env, s *ruleSpec, n *yaml.Node, what string, wantBool bool, narrow *narrowing, ps *problems) (cel.Program, bool) {
	ast, iss := env.Compile(n.Value)
	if iss != nil && iss.Err() != nil {
		// The first error is the one to fix; the rest often follow from it.
		errs := iss.Errors()
		more := ""
		if len(errs) > 1 {
			more = fmt.Sprintf(" (and %d more)", len(errs)-1)
		}
		line, col := exprPos(n, s.lines, errs[0].Location)
		ps.add(s.file, line, s.id, "%s: %s (column %d)%s", what, errs[0].Message, col, more)
		return nil, false
	}
	if wantBool {
		if t := ast.OutputType(); !t.IsExactType(cel.BoolType) && !t.IsExactType(cel.DynType) {
			ps.add(s.file, n.Line, s.id, "%s: must be a bool expression, but it is %s", what, t)
			return nil, false
		}
	}
	if !checkPatterns(ast, s, n, what, ps) {
		return nil, false
	}
	if what == "condition" {
		s.condAST = ast
	}
	opts := programOptions
	if narrow != nil {
		narrow.read(ast)
		if len(narrow.byID) > 0 || strings.Contains(s.condition.Value, "path_match") ||
			strings.Contains(s.condition.Value, "command_in") {
			opts = append(opts[:len(opts):len(opts)], cel.CustomDecoratorV2(narrow.decorate))
		}
	}
	prg, err := env.Program(ast, opts...)
	if err != nil {
		ps.add(s.file, n.Line, s.id, "%s: %v", what, err)
		return nil, false
	}
	return prg, true
}

// checkPatterns compiles the constant patterns of matches() calls so that a
// bad regular expression is reported at its position.
func checkPatterns(ast *cel.Ast, s *ruleSpec, n *yaml.Node, what string, ps *problems) bool {
	ok := true
	native := ast.NativeRep()
	celast.PostOrderVisit(native.Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		if e.Kind() != celast.CallKind || e.AsCall().FunctionName() != "matches" {
			return
		}
		args := e.AsCall().Args()
		pat := args[len(args)-1]
		if pat.Kind() != celast.LiteralKind {
			return
		}
		str, isStr := pat.AsLiteral().(types.String)
		if !isStr {
			return
		}
		if _, err := regexp.Compile(string(str)); err != nil {
			line, col := exprPos(n, s.lines, native.SourceInfo().GetStartLocation(pat.ID()))
			ps.add(s.file, line, s.id, "%s: bad regular expression (column %d): %v", what, col, err)
			ok = false
		}
	}))
	return ok
}

// exprPos maps a position inside an expression to a line and column of the
// file, using the file's text to find the indentation of block scalars.
func exprPos(n *yaml.Node, lines []string, loc common.Location) (int, int) {
	line := exprLine(n, loc.Line())
	col := loc.Column() + 1
	switch {
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		if line-1 < len(lines) {
			l := lines[line-1]
			col += len(l) - len(strings.TrimLeft(l, " \t"))
		}
	case loc.Line() <= 1:
		col += n.Column - 1
		if n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) != 0 {
			col++
		}
	}
	return line, col
}

// ruleMetadata is the Decision.Metadata of a rule's decisions.
func ruleMetadata(id, version string) json.RawMessage {
	b, _ := json.Marshal(struct {
		RuleID        string `json:"rule_id,omitempty"`
		PolicyVersion string `json:"policy_version"`
	}{id, version})
	return b
}

// defaultResult is the result when no rule matches.
func defaultResult(kind protocol.DecisionKind, reason, version string) Result {
	d := protocol.Decision{Kind: kind, Metadata: ruleMetadata("", version)}
	if kind == protocol.DecisionBlock {
		d.Reason = reason
		if d.Reason == "" {
			d.Reason = "no policy rule allows this event"
		}
	}
	return Result{Decision: d}
}

// isTestFile reports whether a parsed file is a policy test file.
func isTestFile(root *yaml.Node) bool {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "cases" {
			return true
		}
	}
	return false
}
