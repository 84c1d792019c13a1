package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// InterCode (princeton-nlp/intercode, MIT) recorded language-model agents
// solving shell tasks in a container: data/results/bash/MODEL/*.json.
// Each file is one run, either an object of trajectories keyed by task
// number or {"meta": …, "logs": {that object}}; a trajectory's
// turn_history.actions are the commands the agent sent, in order.

// interCodeSkip names why a recorded action is not sent: it is not a
// shell command the agent ran.
const (
	skipSubmit = "submit: InterCode's end-of-episode signal, not a command"
	skipEmpty  = "empty: the model gave no command"
)

// interCodeRejected matches a recorded observation that says the shell
// (bash, or sh in a nested sh -c) or InterCode itself refused the command
// as malformed: it never ran as written.
var interCodeRejected = regexp.MustCompile(`(?i)syntax error|unexpected EOF while looking|unexpected end of file|bad substitution|^Malformed command|did not contain bash code`)

// InterCodeLoad is what LoadInterCode read: the cases, and how many
// recorded actions were not sent, by reason.
type InterCodeLoad struct {
	Cases    []Case
	Sessions int
	Skipped  map[string]int
	// Rejected is how many of Cases are of source intercode-rejected:
	// their recorded observation says the shell or InterCode refused
	// them as malformed (a syntax error, "Malformed command"), so they
	// never ran as written. They are sent in their session like the
	// others and reported apart, without a target.
	Rejected int
}

// interCodeAction returns the shell command of one recorded action, or
// the reason it is not one. ReAct runs write a command as execute[CMD];
// plan-and-solve runs sometimes wrap it in a Markdown fence (```bash …
// ```), which the model added around the command it meant.
func interCodeAction(a string) (cmd, skip string) {
	s := strings.TrimSpace(a)
	if strings.HasPrefix(s, "execute[") && strings.HasSuffix(s, "]") {
		s = strings.TrimSpace(s[len("execute[") : len(s)-1])
	}
	if strings.HasPrefix(s, "```") {
		body := s[3:]
		if nl := strings.IndexByte(body, '\n'); nl >= 0 && !strings.ContainsAny(body[:nl], " \t") {
			body = body[nl+1:] // the fence's language tag
		}
		s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(body), "```"))
	}
	switch {
	case s == "":
		return "", skipEmpty
	case s == "submit" || strings.HasPrefix(s, "submit[") && strings.HasSuffix(s, "]"):
		return "", skipSubmit
	}
	return s, ""
}

// LoadInterCode reads InterCode's recorded bash trajectories under dir (a
// checkout, or its data/results/bash directory): every recorded action
// that is a shell command becomes an ordinary bash case, category the
// model's directory, in a session of its trajectory (Case.Session), in
// the order the agent sent them; source intercode, or intercode-rejected
// when the recorded observation says the command was refused as
// malformed (see InterCodeLoad.Rejected).
func LoadInterCode(dir, cwd string) (*InterCodeLoad, error) {
	if st, err := os.Stat(filepath.Join(dir, "data", "results", "bash")); err == nil && st.IsDir() {
		dir = filepath.Join(dir, "data", "results", "bash")
	}
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	out := &InterCodeLoad{Skipped: map[string]int{}}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("intercode %s: %w", f, err)
		}
		if logs, ok := doc["logs"]; ok {
			doc = nil
			if err := json.Unmarshal(logs, &doc); err != nil {
				return nil, fmt.Errorf("intercode %s: logs: %w", f, err)
			}
		}
		ids := make([]string, 0, len(doc))
		for k := range doc {
			ids = append(ids, k)
		}
		sort.Slice(ids, func(i, j int) bool {
			a, ea := strconv.Atoi(ids[i])
			b, eb := strconv.Atoi(ids[j])
			if ea == nil && eb == nil {
				return a < b
			}
			return ids[i] < ids[j]
		})
		model := filepath.Base(filepath.Dir(f))
		name := model + "/" + filepath.Base(f)
		for _, id := range ids {
			var tr struct {
				TurnHistory struct {
					Actions      []string `json:"actions"`
					Observations []any    `json:"observations"`
				} `json:"turn_history"`
			}
			if err := json.Unmarshal(doc[id], &tr); err != nil {
				return nil, fmt.Errorf("intercode %s[%s]: %w", name, id, err)
			}
			if len(tr.TurnHistory.Actions) == 0 {
				continue
			}
			out.Sessions++
			session := name + "[" + id + "]"
			for i, a := range tr.TurnHistory.Actions {
				cmd, skip := interCodeAction(a)
				if skip != "" {
					out.Skipped[skip]++
					continue
				}
				src := "intercode"
				if i < len(tr.TurnHistory.Observations) {
					if o, ok := tr.TurnHistory.Observations[i].(string); ok && interCodeRejected.MatchString(o) {
						src = "intercode-rejected"
						out.Rejected++
					}
				}
				out.Cases = append(out.Cases, Case{Source: src, File: fmt.Sprintf("%s turn %d", session, i+1),
					Kind: Ordinary, Category: model, Cwd: cwd, Form: FormShell, Text: cmd, Session: "intercode:" + session})
			}
		}
	}
	if len(out.Cases) == 0 {
		return nil, fmt.Errorf("intercode: no recorded bash action under %s (want data/results/bash/*/*.json)", dir)
	}
	return out, nil
}

// skippedNote is one line saying which recorded actions were not sent.
func (l *InterCodeLoad) skippedNote() string {
	var reasons []string
	total := 0
	for r, n := range l.Skipped {
		reasons = append(reasons, fmt.Sprintf("%d %s", n, r))
		total += n
	}
	sort.Strings(reasons)
	return fmt.Sprintf("intercode: %d sessions, %d actions sent (%d of them reported as intercode-rejected: the recorded shell or InterCode refused them as malformed); %d recorded actions not sent (%s)",
		l.Sessions, len(l.Cases), l.Rejected, total, strings.Join(reasons, "; "))
}
