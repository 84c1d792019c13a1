package policy

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"cel.dev/cel-go/common/types"

	"github.com/ahp-go/ahp/effects"
	"github.com/ahp-go/ahp/protocol"
)

// corpusInputs reads every action of the bench/guard corpus as the
// pre_action events an agent sends: shell commands through bash, Python
// both through bash and as an execute_code call, the file tools, and the
// tool calls as written. It reads the corpus format of bench/guard/README.md
// closely enough for this (bodies opened with <<TAG).
func corpusInputs(t *testing.T) []*Input {
	t.Helper()
	files, _ := filepath.Glob("../bench/guard/corpus/*/*.txt")
	var out []*Input
	add := func(tool string, args map[string]any) {
		p, err := json.Marshal(map[string]any{"tool_name": tool, "arguments": args, "cwd": "/work/proj"})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, in(&protocol.Event{EventType: protocol.EventPreAction, SessionID: "s", Payload: p}))
	}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" || line[0] == '#' || line[0] == '@' {
				continue
			}
			form, rest, _ := strings.Cut(line, " ")
			rest = strings.TrimSpace(rest)
			if i := strings.LastIndex(rest, "<<"); i >= 0 && form != "tool" && isCorpusTag(rest[i+2:]) {
				tag := rest[i+2:]
				rest = strings.TrimSpace(rest[:i])
				var body []string
				for sc.Scan() && strings.TrimRight(sc.Text(), " \t") != tag {
					body = append(body, sc.Text())
				}
				if form == "sh" || form == "py" {
					rest = strings.Join(body, "\n")
				} else {
					old, nw, _ := strings.Cut(strings.Join(body, "\n"), "\n=====\n")
					if form == "write" {
						nw = old
					}
					add("Edit", map[string]any{"file_path": rest, "old_string": old, "new_string": nw})
					add("Write", map[string]any{"file_path": rest, "content": nw})
					continue
				}
			}
			switch form {
			case "sh":
				add("bash", map[string]any{"command": rest})
			case "py":
				add("bash", map[string]any{"command": "python3 <<'EOF'\n" + rest + "\nEOF"})
				add("execute_code", map[string]any{"language": "python", "code": rest})
			case "read":
				add("Read", map[string]any{"file_path": rest})
			case "tool":
				f := strings.SplitN(rest, " ", 3)
				var args map[string]any
				if len(f) == 3 && json.Unmarshal([]byte(f[2]), &args) == nil {
					add(f[1], args)
				}
			}
		}
		fh.Close()
	}
	if len(out) < 1500 {
		t.Fatalf("only %d corpus actions read", len(out))
	}
	return out
}

// TestNeedFilterSkipsOnlyFalseRules: whenever the condition filter skips a
// rule (the action has no effect meeting what the condition needs), full
// CEL evaluation of that rule on that action is false, with no error, for
// every rule of every built-in pack and every action of the bench/guard
// corpus. A filter that skipped a true (or failing) rule would let an
// action through that the rule stops.
func TestNeedFilterSkipsOnlyFalseRules(t *testing.T) {
	packs := map[string]bool{}
	for _, n := range PackNames() {
		packs[n] = true
	}
	dir := t.TempDir()
	opts := Options{Packs: packs, Agent: effects.Context{Home: "/home/ann"}, Params: SelfProtection{
		Paths: []string{"ahp-data", "ahp-data/admin.token", "ahp.yaml"}, Cwd: dir,
		AdminAddrs: []string{"http://127.0.0.1:7700"}, PIDs: []int{4242},
	}.Params()}
	opts.Params["workspace_roots"] = []string{"/work/proj"}
	set, err := Compile(opts)
	if err != nil {
		t.Fatal(err)
	}
	withNeed := 0
	for _, r := range set.rules {
		if r.need != nil {
			withNeed++
		}
	}
	if withNeed < len(set.rules)*2/3 {
		t.Errorf("only %d of %d rules have a filter", withNeed, len(set.rules))
	}
	skipped, evaluated := 0, 0
	for _, input := range corpusInputs(t) {
		c := ctxPool.Get().(*evalCtx)
		c.set, c.in = set, *input
		for _, r := range set.rules {
			if r.cond == nil || r.need == nil {
				continue
			}
			skip := (r.kinds != 0 && c.kindMask()&r.kinds == 0) || !c.meetsAny(r.need)
			plain := false
			for _, e := range c.effects() {
				plain = plain || r.need.plainMeets(&e)
			}
			if skip == plain {
				t.Errorf("rule %s on %s: the indexed filter skips = %v, its plain reading meets = %v", r.id, input.Event.Payload, skip, plain)
			}
			if !skip {
				continue
			}
			skipped++
			v, _, err := r.cond.Eval(c.activation())
			evaluated++
			if err != nil || v != types.False {
				t.Errorf("rule %s skipped on %s, but its condition is %v (error %v); effects %+v",
					r.id, input.Event.Payload, v, err, c.effects())
			}
		}
		c.release()
	}
	if skipped < 50000 {
		t.Errorf("only %d rule evaluations skipped", skipped)
	}
	t.Logf("%d rules of %d with a filter; %d skips checked against CEL", withNeed, len(set.rules), evaluated)
}

// TestConditionNeedShapes: the shapes the filter reads, and shapes it must
// not read as a need (they can be true with no effect of the kind or
// program named).
func TestConditionNeedShapes(t *testing.T) {
	env, err := celEnv()
	if err != nil {
		t.Fatal(err)
	}
	params := map[string]any{"progs": []any{"mkfs", "wipefs"}, "dirs": []any{"/etc/**"}, "cmds": []any{[]any{"gh", "auth", "token"}, []any{"pass", "show"}},
		"bad": []any{[]any{"gh", 1}}}
	run := &effects.Effect{Kind: effects.Run, Program: "ls", Argv: []string{"ls", "-l"}}
	cases := []struct {
		cond string
		// need: whether a need is read; meets: whether the ls run meets it
		need, meets bool
	}{
		{`event.effects.exists(e, e.kind == "run" && e.program == "mkfs")`, true, false},
		{`event.effects.exists(e, e.kind == "run" && e.program in config.progs)`, true, false},
		{`event.effects.exists(e, e.kind == "run" && e.program.matches('^mk'))`, true, false},
		{`event.effects.exists(e, e.kind == "run" && e.program.matches('^l'))`, true, true},
		{`event.effects.exists(e, command_in(e.program, e.argv, config.cmds))`, true, false},
		{`event.effects.exists(e, e.argv.exists(a, a == "publish" || a in ["push"]))`, true, false},
		{`event.effects.exists(e, e.argv.exists(a, a == "-l"))`, true, true},
		{`event.effects.exists(e, "-l" in e.argv)`, true, true},
		{`event.effects.exists(e, e.remote == "" && (e.kind == "read" || (e.kind == "run" && e.program == "mkfs")))`, true, false},
		{`event.effects.exists(e, e.kind == "run" && (e.program == "x" || e.path == "y"))`, true, false},
		{`event.effects.exists(e, e.kind == "run" && (e.program == "x" || e.mode == "y"))`, true, true},
		{`event.effects.exists(e, e.program == "x" || e.path == "y")`, true, false},
		{`event.effects.exists(e, e.kind == "write" && path_match(e.path, ['/etc/**']))`, true, false},
		{`event.effects.exists(e, path_match(e.dest, config.dirs) || e.path in ["/a", "/b"])`, true, false},
		{`event.effects.exists(e, path_match(e.path, ['**']))`, true, false},
		{`event.effects.exists(e, e.kind == "unknown" && e.reason.matches('not known statically'))`, true, false},
		{`event.effects.exists(e, matches(e.reason, '^$'))`, true, true},
		{`event.effects.exists(e, e.path.matches('^/etc/'))`, true, false},
		{`event.effects.exists(e, e.kind == "unknown" && e.reason.startsWith("fork in"))`, true, false},
		{`event.effects.exists(e, e.limit)`, true, false},
		{`event.effects.exists(e, e.path.startsWith(""))`, false, false},
		{`event.effects.exists(e, e.program == "x") || event.effects.exists(e, e.kind == "read")`, true, false},
		{`event.effects.exists(e, e.program == "x") && event.effects.exists(e, e.kind == "run")`, true, false},
		// not needs
		{`!event.effects.exists(e, e.program == "x")`, false, false},
		{`event.effects.all(e, e.program == "x")`, false, false},
		{`event.effects.exists_one(e, e.program == "x")`, false, false},
		{`event.effects.exists(e, e.program != "x")`, false, false},
		{`event.effects.exists(e, e.argv.all(a, a == "x"))`, false, false},
		{`event.effects.exists(e, e.argv.exists(a, a == "x" && a.size() > 0))`, false, false},
		{`event.effects.exists(e, e.program == "x" || e.mode == "y")`, false, false},
		{`event.effects.exists(e, !path_match(e.path, ['/etc/**']))`, false, false},
		{`event.effects.exists(e, path_match(e.path, e.argv))`, false, false},
		{`event.effects.exists(e, path_match(e.argv[0], ['/etc/**']))`, false, false},
		{`event.effects.exists(e, e.reason.matches(e.path))`, false, false},
		{`event.effects.exists(e, e.mode.matches('x'))`, false, false},
		{`event.effects.exists(e, command_in(e.program, e.argv, config.bad))`, false, false},
		{`event.effects.exists(e, e.program in config.missing)`, false, false},
		{`event.effects.exists(e, e.program.matches(e.path))`, false, false},
		{`event.effects.exists(config, config.program == "x")`, false, false},
		{`event.tool == "bash" || event.effects.exists(e, e.program == "x")`, false, false},
	}
	for _, tc := range cases {
		ast, iss := env.Compile(tc.cond)
		if iss != nil && iss.Err() != nil {
			t.Fatalf("%s: %v", tc.cond, iss.Err())
		}
		n := conditionNeed(ast, params)
		if (n != nil) != tc.need {
			t.Errorf("%s: need read = %v, want %v (%+v)", tc.cond, n != nil, tc.need, n)
			continue
		}
		if n == nil {
			continue
		}
		if got := n.plainMeets(run) && (n.kinds() == 0 || n.kinds()&kindBitOf(run.Kind) != 0); got != tc.meets {
			t.Errorf("%s: an ls run meets it = %v, want %v", tc.cond, got, tc.meets)
		}
	}
}

// isCorpusTag: a body's tag is two or more capital letters.
func isCorpusTag(s string) bool {
	if len(s) < 2 {
		return false
	}
	for _, r := range s {
		if r < 'A' || r > 'Z' {
			return false
		}
	}
	return true
}

// plainMeets is what the need means, read from its maps and patterns
// directly (meetsAny reads the same through the set's needIndex).
func (n condNeed) plainMeets(e *effects.Effect) bool {
	bit := kindBitOf(e.Kind)
	for _, t := range n {
		if t.kinds != 0 && t.kinds&bit == 0 {
			continue
		}
		all := true
		for _, p := range t.progs {
			all = all && p.plainMeets(e)
		}
		for _, p := range t.paths {
			all = all && p.plainMeets(e)
		}
		if all {
			return true
		}
	}
	return false
}

func (p *effectNeed) plainMeets(e *effects.Effect) bool {
	if p.names[e.Program] {
		return true
	}
	for _, re := range p.res {
		if re.MatchString(e.Program) {
			return true
		}
	}
	for _, a := range e.Argv {
		if p.words[a] {
			return true
		}
	}
	return false
}

// plainMeets is path_match of the field over the patterns one by one,
// its being one of the strings, or the regular expression alone.
func (p *pathNeed) plainMeets(e *effects.Effect) bool {
	if p.argvLists != nil {
		// argv_names_path: a word after the program, or a part of it
		// between spaces or after "=", that a pattern matches.
		for i, a := range e.Argv {
			if i == 0 || !strings.ContainsAny(a, "/.") {
				continue
			}
			for _, part := range strings.FieldsFunc(a, func(r rune) bool { return r == ' ' || r == '=' }) {
				for _, l := range p.argvLists {
					for _, el := range l.elems {
						if pathMatch(strings.Join(el, "/"), part) {
							return true
						}
					}
				}
			}
		}
		return false
	}
	s := p.text(e)
	if p.lits != nil {
		return p.lits[s]
	}
	if p.re != nil {
		return regexp.MustCompile(p.re.String()).MatchString(s)
	}
	if p.flag {
		return e.Limit
	}
	if p.prefix != "" {
		return len(s) >= len(p.prefix) && s[:len(p.prefix)] == p.prefix
	}
	for _, pat := range p.pats {
		if pathMatch(pat, s) {
			return true
		}
	}
	return false
}

func kindBitOf(k effects.Kind) kindMask {
	b, _ := kindBit(string(k))
	return b
}
