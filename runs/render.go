package runs

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ahp-go/ahp/protocol"
)

// Text widths of the printed forms; the JSON forms are never clipped.
const (
	maxIDText   = 128
	maxLineText = 300
)

// WriteTable prints recs as a table for humans: one line per run with its
// status (followed by "(connection closed)" or "(connection lost)" while
// the agent is away, see Record.Connection), tasks done/total, checks passed/total, flag kinds and updated_at.
func WriteTable(w io.Writer, recs []*Record) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSESSION\tSTATUS\tTASKS\tCHECKS\tFLAGS\tUPDATED")
	for _, r := range recs {
		tasks, checks, flags := fmt.Sprintf("%d/%d", r.Counts.TasksDone, r.Counts.TasksTotal), "-", "-"
		if r.Verification != nil {
			checks = fmt.Sprintf("%d/%d", r.Counts.ChecksPassed, r.Counts.ChecksTotal)
		}
		if len(r.FlagKinds) > 0 {
			flags = "⚠ " + strings.Join(r.FlagKinds, ",")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", clean(r.RunID, maxIDText), clean(r.SessionID, maxIDText),
			statusText(r), tasks, checks, flags, orDash(when(r.UpdatedAt)))
	}
	return tw.Flush()
}

// WriteTree prints one record as a tree for humans: header, status
// timeline (⚠ on refused transitions), tasks with their evidence and
// artifacts, verification checks, residual risks and flags.
func WriteTree(w io.Writer, r *Record) error {
	root := &node{text: fmt.Sprintf("run %s  %s", clean(r.RunID, maxIDText), statusText(r))}
	header(root, r)
	timeline(root, r)
	tasks(root, r)
	verification(root, r)
	flags(root, r)
	return root.render(w)
}

func header(root *node, r *Record) {
	field := func(name, value string) {
		if value != "" {
			root.add(fmt.Sprintf("%-11s %s", name, value))
		}
	}
	field("session", clean(r.SessionID, maxIDText))
	field("agent", clean(r.AgentID, maxIDText))
	if !r.StartedAt.IsZero() {
		field("started", when(r.StartedAt))
	}
	field("updated", when(r.UpdatedAt))
	field("prompt", clean(r.Prompt, maxLineText))
	field("result", clean(r.ResultSummary, maxLineText))
	field("error", clean(r.Error, maxLineText))
	if c := r.Connection; c != nil {
		line := fmt.Sprintf("%s (event #%d)", clean(c.How, maxIDText), c.Seq)
		if !c.At.IsZero() {
			line += " at " + when(c.At)
		}
		if c.Error != "" {
			line += ": " + clean(c.Error, maxLineText)
		}
		field("connection", line+"; no event from the agent since")
	}
	if d := r.Descriptor; d != nil {
		field("descriptor", strings.TrimSpace(fmt.Sprintf("%s %s (%s)", clean(d.Name, maxIDText), clean(d.Version, maxIDText), clean(d.Hash, maxIDText))))
	}
	c := r.Counts
	field("events", fmt.Sprintf("%d: %d applied, %d duplicate, %d out of order, %d illegal, %d rejected",
		c.Events, c.Applied, c.Duplicates, c.OutOfOrder, c.Illegal, c.Rejected))
}

func timeline(root *node, r *Record) {
	n := root.add(fmt.Sprintf("timeline  %d entries", len(r.Timeline)))
	if d := r.Counts.TimelineDropped; d > 0 {
		n.add(fmt.Sprintf("… %d older entries dropped", d))
	}
	for _, t := range r.Timeline {
		move := "→ " + string(t.To)
		if t.From != "" {
			move = string(t.From) + " " + move
		}
		at := when(t.At)
		if at == "" {
			at = "(updated_at unreadable)"
		}
		line := fmt.Sprintf("  #%-3d %-24s %s", t.Seq, move, at)
		switch {
		case t.Illegal:
			line = "⚠" + line[1:] + "  ILLEGAL, not applied"
		case t.OutOfOrder:
			line = "⚠" + line[1:] + "  OUT OF ORDER, not applied"
		}
		e := n.add(line)
		if t.Note != "" && !t.Applied() {
			e.add(clean(t.Note, maxDetail))
		}
	}
}

var taskMarks = map[protocol.TaskStatus]string{
	"pending": "○", "in_progress": "▸", "completed": "✓", "failed": "✗", "skipped": "–", "cancelled": "⊘",
}

var checkMarks = map[protocol.VerificationStatus]string{
	"pending": "○", "running": "▸", "passed": "✓", "failed": "✗", "skipped": "–", "needs_review": "?",
}

func tasks(root *node, r *Record) {
	head := fmt.Sprintf("tasks  %d/%d done", r.Counts.TasksDone, r.Counts.TasksTotal)
	if !r.TasksUpdatedAt.IsZero() {
		head += "  updated " + when(r.TasksUpdatedAt)
	}
	n := root.add(head)
	for _, t := range r.Tasks {
		k := n.add(fmt.Sprintf("%s %s  %s  (%s)", mark(taskMarks[t.Status]), clean(t.ID, maxIDText), clean(t.Title, maxLineText), t.Status))
		if len(t.DependsOn) > 0 {
			deps := make([]string, len(t.DependsOn))
			for i, d := range t.DependsOn {
				deps[i] = clean(d, maxIDText)
			}
			k.add("depends on " + strings.Join(deps, ", "))
		}
		if t.Error != "" {
			k.add("error  " + clean(t.Error, maxLineText))
		}
		evidence(k, t.Evidence, t.Artifacts)
	}
}

func verification(root *node, r *Record) {
	v := r.Verification
	if v == nil {
		root.add("verification  none")
		return
	}
	head := fmt.Sprintf("verification  %s  %d/%d checks passed", v.Status, r.Counts.ChecksPassed, r.Counts.ChecksTotal)
	if !v.UpdatedAt.IsZero() {
		head += "  updated " + when(v.UpdatedAt)
	}
	n := root.add(head)
	for _, c := range v.Checks {
		k := n.add(fmt.Sprintf("%s %s  %s  (%s)", mark(checkMarks[c.Status]), clean(c.ID, maxIDText), clean(c.Subject, maxLineText), c.Status))
		if c.Command != "" {
			k.add("$ " + clean(c.Command, maxLineText))
		}
		if c.Message != "" {
			k.add("message  " + clean(c.Message, maxLineText))
		}
		evidence(k, c.Evidence, c.Artifacts)
	}
	if len(v.ResidualRisks) > 0 {
		rr := root.add(fmt.Sprintf("residual risks  %d", len(v.ResidualRisks)))
		for _, s := range v.ResidualRisks {
			rr.add(clean(s, maxLineText))
		}
	}
}

func evidence(n *node, ev []protocol.EvidenceRef, arts []protocol.ArtifactRef) {
	for _, e := range ev {
		line := fmt.Sprintf("evidence  %s: %s", clean(e.Kind, maxIDText), clean(e.Summary, maxLineText))
		if e.Artifact != nil {
			line += "  → " + artifact(*e.Artifact)
		}
		n.add(line)
	}
	for _, a := range arts {
		n.add("artifact  " + artifact(a))
	}
}

// artifact describes an artifact on one line.
func artifact(a protocol.ArtifactRef) string {
	parts := []string{clean(a.ID, maxIDText)}
	for _, s := range []string{a.Kind, a.Path, a.URI, a.Summary} {
		if s != "" {
			parts = append(parts, clean(s, maxLineText))
		}
	}
	var meta []string
	if a.MimeType != "" {
		meta = append(meta, clean(a.MimeType, maxIDText))
	}
	if a.SizeBytes != nil {
		meta = append(meta, fmt.Sprintf("%d bytes", *a.SizeBytes))
	}
	if a.SHA256 != "" {
		meta = append(meta, "sha256 "+clean(a.SHA256, 12))
	}
	if len(meta) > 0 {
		parts = append(parts, "("+strings.Join(meta, ", ")+")")
	}
	return strings.Join(parts, "  ")
}

func flags(root *node, r *Record) {
	if len(r.Flags) == 0 && r.Counts.FlagsDropped == 0 {
		root.add("flags  none")
		return
	}
	n := root.add(fmt.Sprintf("flags  %d: %s", len(r.Flags)+r.Counts.FlagsDropped, strings.Join(r.FlagKinds, ", ")))
	if d := r.Counts.FlagsDropped; d > 0 {
		n.add(fmt.Sprintf("… %d older flags dropped", d))
	}
	for _, f := range r.Flags {
		line := "⚠ " + f.Kind
		if f.Event != "" {
			line += fmt.Sprintf("  %s #%d", f.Event, f.Seq)
		}
		if !f.At.IsZero() {
			line += "  " + when(f.At)
		}
		k := n.add(line)
		if f.Detail != "" {
			k.add(clean(f.Detail, maxDetail))
		}
	}
}

// statusText is the run's status, with how its agent's connection ended
// while no event of its session has arrived since.
func statusText(r *Record) string {
	s := orDash(string(r.Status))
	if c := r.Connection; c != nil {
		s += " (connection " + clean(c.How, maxIDText) + ")"
	}
	return s
}

func mark(m string) string {
	if m == "" {
		return "·"
	}
	return m
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// when formats a record time; "" for an unknown (unparsable) one.
func when(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
