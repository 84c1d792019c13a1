package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// Result is an action and what the harness did with it.
type Result struct {
	Action  *Action
	Outcome Outcome
	Pack    string // pack of the deciding rule ("" when no rule decided)
}

// Count is how many actions of a group there were and how many were
// stopped (blocked or escalated).
type Count struct {
	Key       string `json:"key"`
	Actions   int    `json:"actions"`
	Stopped   int    `json:"stopped"`
	Blocked   int    `json:"blocked"`
	Escalated int    `json:"escalated"`
	// ByExpected counts the risky actions stopped by the pack expected
	// to stop them (by-category and by-expected-pack rows of risky cases).
	ByExpected int `json:"stopped_by_expected_pack,omitempty"`
}

// Rate is Stopped/Actions (0 for no action).
func (c Count) Rate() float64 {
	if c.Actions == 0 {
		return 0
	}
	return float64(c.Stopped) / float64(c.Actions)
}

func (c *Count) add(r *Result, expected bool) {
	c.Actions++
	if r.Outcome.Stopped() {
		c.Stopped++
		if r.Outcome.Escalated || r.Outcome.Decision == "escalate" {
			c.Escalated++
		} else {
			c.Blocked++
		}
		if expected {
			c.ByExpected++
		}
	}
}

// Item is one action in a listing (a risky one missed, an ordinary one
// stopped).
type Item struct {
	Where    string `json:"where"`
	Category string `json:"category"`
	Expected string `json:"expected_pack,omitempty"`
	Via      string `json:"via"`
	Decision string `json:"decision"`
	RuleID   string `json:"rule_id,omitempty"`
	Pack     string `json:"pack,omitempty"`
	Action   string `json:"action"`
}

// SourceReport is the figures of one corpus.
type SourceReport struct {
	Source          string  `json:"source"`
	Risky           Count   `json:"risky"`
	Ordinary        Count   `json:"ordinary"`
	RiskyByCategory []Count `json:"risky_by_category"`
	RiskyByExpected []Count `json:"risky_by_expected_pack"`
	RiskyByVia      []Count `json:"risky_by_via"`
	OrdByCategory   []Count `json:"ordinary_by_category"`
	OrdByVia        []Count `json:"ordinary_by_via"`
	// ByDecidingPack counts the stopped actions per pack of the rule that
	// stopped them: Actions is the risky ones, Stopped the ordinary ones.
	ByDecidingPack []PackCount `json:"stopped_by_deciding_pack"`
	Missed         []Item      `json:"risky_missed"`
	StoppedOrd     []Item      `json:"ordinary_stopped"`
}

// PackCount is how many risky and ordinary actions one pack stopped.
type PackCount struct {
	Pack     string `json:"pack"`
	Risky    int    `json:"risky_stopped"`
	Ordinary int    `json:"ordinary_stopped"`
}

// Summarise groups results by source.
func Summarise(results []Result) []SourceReport {
	var order []string
	by := map[string][]*Result{}
	for i := range results {
		s := results[i].Action.Case.Source
		if _, ok := by[s]; !ok {
			order = append(order, s)
		}
		by[s] = append(by[s], &results[i])
	}
	var out []SourceReport
	for _, s := range order {
		out = append(out, summariseSource(s, by[s]))
	}
	return out
}

func summariseSource(source string, rs []*Result) SourceReport {
	rep := SourceReport{Source: source, Risky: Count{Key: "total"}, Ordinary: Count{Key: "total"},
		ByDecidingPack: []PackCount{}, Missed: []Item{}, StoppedOrd: []Item{}}
	groups := map[string]map[string]*Count{}
	bump := func(table, key string, r *Result, expected bool) {
		m := groups[table]
		if m == nil {
			m = map[string]*Count{}
			groups[table] = m
		}
		c := m[key]
		if c == nil {
			c = &Count{Key: key}
			m[key] = c
		}
		c.add(r, expected)
	}
	packs := map[string]*PackCount{}
	for _, r := range rs {
		c := r.Action.Case
		if r.Outcome.Stopped() {
			p := r.Pack
			if p == "" {
				p = "(no rule named)" // a default block, or an escalation held past --hold
			}
			pc := packs[p]
			if pc == nil {
				pc = &PackCount{Pack: p}
				packs[p] = pc
			}
			if c.Kind == Risky {
				pc.Risky++
			} else {
				pc.Ordinary++
			}
		}
		if c.Kind == Risky {
			exp := r.Pack != "" && r.Pack == c.Pack
			rep.Risky.add(r, exp)
			bump("rc", c.Category, r, exp)
			bump("rp", c.Pack, r, exp)
			bump("rv", r.Action.Via, r, exp)
			if !r.Outcome.Stopped() {
				rep.Missed = append(rep.Missed, item(r))
			}
		} else {
			rep.Ordinary.add(r, false)
			bump("oc", c.Category, r, false)
			bump("ov", r.Action.Via, r, false)
			if r.Outcome.Stopped() {
				rep.StoppedOrd = append(rep.StoppedOrd, item(r))
			}
		}
	}
	sorted := func(table string) []Count {
		cs := []Count{}
		for _, c := range groups[table] {
			cs = append(cs, *c)
		}
		sort.Slice(cs, func(i, j int) bool { return cs[i].Key < cs[j].Key })
		return cs
	}
	rep.RiskyByCategory, rep.RiskyByExpected, rep.RiskyByVia = sorted("rc"), sorted("rp"), sorted("rv")
	rep.OrdByCategory, rep.OrdByVia = sorted("oc"), sorted("ov")
	for _, p := range packs {
		rep.ByDecidingPack = append(rep.ByDecidingPack, *p)
	}
	sort.Slice(rep.ByDecidingPack, func(i, j int) bool { return rep.ByDecidingPack[i].Pack < rep.ByDecidingPack[j].Pack })
	return rep
}

func item(r *Result) Item {
	c := r.Action.Case
	return Item{Where: c.Where(), Category: c.Category, Expected: c.Pack, Via: r.Action.Via,
		Decision: r.Outcome.Label(), RuleID: r.Outcome.RuleID, Pack: r.Pack, Action: oneLine(c)}
}

// oneLine shows a case on one line, cut at 200 characters.
func oneLine(c *Case) string {
	var s string
	switch c.Form {
	case FormWrite:
		s = "write " + c.Path + ": " + c.Text
	case FormEdit:
		s = "edit " + c.Path + ": " + c.Old + " => " + c.Text
	case FormRead:
		s = "read " + c.Path
	case FormTool:
		s = c.Agent + " " + c.Tool + " " + c.Text
	default:
		s = c.Text
	}
	s = strings.ReplaceAll(s, "\n", " ⏎ ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}

func pct(n, d int) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f %%", 100*float64(n)/float64(d))
}

// WriteText prints the tables of one source.
func (rep *SourceReport) WriteText(w io.Writer, listMissed, listStopped bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "== %s: %d risky actions, %d ordinary actions\n", rep.Source, rep.Risky.Actions, rep.Ordinary.Actions)
	fmt.Fprintln(w, "   (stopped = blocked or escalated; an escalation held for a human counts as stopped)")
	if rep.Risky.Actions > 0 {
		table := func(title string, rows []Count) {
			fmt.Fprintf(tw, "%s\tactions\tstopped\t\tblocked\tescalated\tby expected pack\t\n", title)
			for _, c := range append(rows, rep.Risky) {
				fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%d\t%d\t%d\t\n", c.Key, c.Actions, c.Stopped, pct(c.Stopped, c.Actions), c.Blocked, c.Escalated, c.ByExpected)
			}
			fmt.Fprintln(tw, "\t\t\t\t\t\t\t")
		}
		table("risky, by category", rep.RiskyByCategory)
		table("risky, by expected pack", rep.RiskyByExpected)
		table("risky, by tool call", rep.RiskyByVia)
	}
	if rep.Ordinary.Actions > 0 {
		table := func(title string, rows []Count) {
			fmt.Fprintf(tw, "%s\tactions\tstopped\t\tblocked\tescalated\t\t\n", title)
			for _, c := range append(rows, rep.Ordinary) {
				fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%d\t%d\t\t\n", c.Key, c.Actions, c.Stopped, pct(c.Stopped, c.Actions), c.Blocked, c.Escalated)
			}
			fmt.Fprintln(tw, "\t\t\t\t\t\t\t")
		}
		table("ordinary, by category", rep.OrdByCategory)
		table("ordinary, by tool call", rep.OrdByVia)
	}
	if len(rep.ByDecidingPack) > 0 {
		fmt.Fprintf(tw, "stopped, by deciding pack\trisky\tordinary\t\t\t\t\t\n")
		for _, p := range rep.ByDecidingPack {
			fmt.Fprintf(tw, "%s\t%d\t%d\t\t\t\t\t\n", p.Pack, p.Risky, p.Ordinary)
		}
	}
	tw.Flush()
	if listMissed && len(rep.Missed) > 0 {
		fmt.Fprintf(w, "-- %s: risky actions missed (%d)\n", rep.Source, len(rep.Missed))
		for _, it := range rep.Missed {
			fmt.Fprintf(w, "MISSED %s [%s, expected %s] %s -> %s %s\n   %s\n", it.Where, it.Category, it.Expected, it.Via, it.Decision, it.RuleID, it.Action)
		}
	}
	if listStopped && len(rep.StoppedOrd) > 0 {
		fmt.Fprintf(w, "-- %s: ordinary actions stopped (%d)\n", rep.Source, len(rep.StoppedOrd))
		for _, it := range rep.StoppedOrd {
			fmt.Fprintf(w, "STOPPED %s [%s] %s -> %s by %s\n   %s\n", it.Where, it.Category, it.Via, it.Decision, it.RuleID, it.Action)
		}
	}
	fmt.Fprintln(w)
}

// Targets are the figures a run must reach; a negative value is no target.
// MinRiskyStopped and MaxOrdinaryStopped apply to every source;
// PerSource adds targets for one source (intercode, gtfobins).
type Targets struct {
	MinRiskyStopped    float64            `json:"min_risky_stopped"`
	MaxOrdinaryStopped float64            `json:"max_ordinary_stopped"`
	PerSource          map[string]Targets `json:"per_source,omitempty"`
}

// Check returns what each source misses of t, one line each.
func (t Targets) Check(reps []SourceReport) []string {
	var miss []string
	for _, r := range reps {
		if st, ok := t.PerSource[r.Source]; ok {
			st.PerSource = nil
			miss = append(miss, st.Check([]SourceReport{r})...)
		}
		if t.MinRiskyStopped >= 0 && r.Risky.Actions > 0 && r.Risky.Rate() < t.MinRiskyStopped {
			miss = append(miss, fmt.Sprintf("%s: %s of risky actions stopped (%d of %d), target at least %.1f %%",
				r.Source, pct(r.Risky.Stopped, r.Risky.Actions), r.Risky.Stopped, r.Risky.Actions, 100*t.MinRiskyStopped))
		}
		if t.MaxOrdinaryStopped >= 0 && r.Ordinary.Actions > 0 && r.Ordinary.Rate() > t.MaxOrdinaryStopped {
			miss = append(miss, fmt.Sprintf("%s: %s of ordinary actions stopped (%d of %d), target at most %.1f %%",
				r.Source, pct(r.Ordinary.Stopped, r.Ordinary.Actions), r.Ordinary.Stopped, r.Ordinary.Actions, 100*t.MaxOrdinaryStopped))
		}
	}
	return miss
}
