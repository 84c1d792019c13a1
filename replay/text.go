package replay

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// textTime is the time format of report lines (UTC, milliseconds).
const textTime = "2006-01-02T15:04:05.000Z"

// Text limits: long fields are cut so that each change stays one line.
const (
	textIDBytes      = 64
	textDetailBytes  = 80
	textAnswerBytes  = 60
	textVersionBytes = 80
)

// WriteText writes the report for people: a header, one line per changed
// event (decision changes first, then rule changes), and a table by rule.
// The output depends only on the report.
func (r *Report) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	r.writeHeader(bw)
	r.writeChanges(bw, DecisionChanged, r.DecisionChanges, "decision changes")
	r.writeChanges(bw, RuleChanged, r.RuleChanges, "rule changes, same decision")
	if r.GuidanceChanges > 0 {
		r.writeChanges(bw, GuidanceChanged, r.GuidanceChanges, "guidance changes (planning and reasoning), same decision")
	}
	if r.Unlisted > 0 {
		fmt.Fprintf(bw, "\n(%d more changed events not listed)\n", r.Unlisted)
	}
	if len(r.Rules) > 0 {
		fmt.Fprintf(bw, "\nby rule (a change between two rules counts for both):\n")
		tw := tabwriter.NewWriter(bw, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  RULE\tEVENTS\tDECISION\tRULE ONLY\tOLD → NEW")
		for _, s := range r.Rules {
			trans := make([]string, 0, len(s.Transitions))
			for _, t := range s.Transitions {
				trans = append(trans, fmt.Sprintf("%s→%s %d", t.From, t.To, t.Count))
			}
			fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%s\n", ruleName(s.RuleID), s.Events, s.DecisionChanges, s.RuleChanges, strings.Join(trans, ", "))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func (r *Report) writeHeader(w io.Writer) {
	fmt.Fprintf(w, "input:              %s\n", clean(r.Input, 4096))
	fmt.Fprintf(w, "records:            %d (%d blocking compared, %d of them typed; %d notifications; %d before --since, counters only; %d skipped)\n",
		r.Records, r.Compared, r.Typed, r.Notifications, r.BeforeSince, r.Skipped.Total())
	if r.Skipped.Total() > 0 {
		fmt.Fprintf(w, "skipped:            %d rejected by the server, %d without event, %d undecodable, %d other\n",
			r.Skipped.Rejected, r.Skipped.NoEvent, r.Skipped.Invalid, r.Skipped.Other)
	}
	if len(r.OldPolicyVersions) == 0 {
		fmt.Fprintf(w, "old policy versions: none\n")
	}
	for i, v := range r.OldPolicyVersions {
		label := "old policy versions:"
		if i > 0 {
			label = strings.Repeat(" ", len(label))
		}
		fmt.Fprintf(w, "%s %s (%d events)\n", label, orDash(clean(v.Version, textVersionBytes)), v.Events)
	}
	fmt.Fprintf(w, "new policy version: %s\n", r.NewPolicyVersion)
	fmt.Fprintf(w, "counters:           %s\n", r.Counters)
	if r.SessionID != "" || r.Since != "" || r.Until != "" {
		var f []string
		if r.SessionID != "" {
			f = append(f, "session "+strconv.Quote(r.SessionID))
		}
		if r.Since != "" {
			f = append(f, "since "+r.Since)
		}
		if r.Until != "" {
			f = append(f, "until "+r.Until)
		}
		fmt.Fprintf(w, "filter:             %s\n", strings.Join(f, ", "))
	}
}

func (r *Report) writeChanges(w io.Writer, kind ChangeKind, total int64, title string) {
	fmt.Fprintf(w, "\n%s: %d\n", title, total)
	for i := range r.Changes {
		c := &r.Changes[i]
		if c.Kind != kind {
			continue
		}
		fmt.Fprintf(w, "#%d  %s  %s  %s  old: %s  →  new: %s%s\n",
			c.ID, c.Time.UTC().Format(textTime), orDash(clean(c.SessionID, textIDBytes)), clean(c.EventType, textIDBytes),
			verdictText(&c.Old), verdictText(&c.New), detailText(c))
	}
}

// verdictText renders a verdict: "block [skip] (rule a; evaluation failed)".
func verdictText(v *Verdict) string {
	var b strings.Builder
	b.WriteString(clean(v.Decision, textIDBytes))
	if v.Answer != "" && v.Answer != v.Decision {
		b.WriteString(" [" + clean(v.Answer, textAnswerBytes) + "]")
	}
	b.WriteString(" (")
	if v.RuleID == "" {
		b.WriteString("default")
	} else {
		b.WriteString("rule " + clean(v.RuleID, textIDBytes*2))
	}
	if v.Error != "" {
		b.WriteString("; evaluation failed")
	}
	b.WriteString(")")
	if len(v.Guidance) > 0 {
		b.WriteString(" guidance " + clean(strings.Join(v.Guidance, ","), textAnswerBytes))
	}
	return b.String()
}

func detailText(c *Change) string {
	var parts []string
	if c.Tool != "" {
		parts = append(parts, "tool: "+clean(c.Tool, textIDBytes))
	}
	if c.Command != "" {
		parts = append(parts, "command: "+strconv.Quote(shorten(c.Command, textDetailBytes)))
	}
	if c.Prompt != "" {
		parts = append(parts, "prompt: "+strconv.Quote(shorten(c.Prompt, textDetailBytes)))
	}
	if len(parts) == 0 {
		return ""
	}
	return "  [" + strings.Join(parts, ", ") + "]"
}

func ruleName(id string) string {
	if id == "" {
		return "(default)"
	}
	return clean(id, textIDBytes*2)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// clean shortens s and replaces control characters, so that a field can
// neither break a line nor move the terminal's cursor.
func clean(s string, n int) string {
	s = shorten(s, n)
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '?'
		}
		return r
	}, s)
}

// WriteJSON writes the report as one indented JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
