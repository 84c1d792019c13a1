package runs_test

import (
	"slices"
	"testing"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/runs"
)

func TestAllowedGraph(t *testing.T) {
	const (
		c, p, e, v = protocol.RunCreated, protocol.RunPlanning, protocol.RunExecuting, protocol.RunVerifying
		ok, f, x   = protocol.RunCompleted, protocol.RunFailed, protocol.RunCancelled
	)
	all := []protocol.RunStatus{c, p, e, v, ok, f, x}
	legal := map[protocol.RunStatus][]protocol.RunStatus{
		c:  {p, e, x, f},
		p:  {e, x, f},
		e:  {v, ok, f, x, p},
		v:  {ok, f, e, x},
		ok: nil, f: nil, x: nil,
	}
	for _, from := range all {
		for _, to := range all {
			want := slices.Contains(legal[from], to)
			if got := runs.Allowed(from, to); got != want {
				t.Errorf("Allowed(%s, %s) = %v, want %v", from, to, got, want)
			}
		}
		got := runs.Successors(from)
		if !slices.Equal(got, legal[from]) && !(len(got) == 0 && len(legal[from]) == 0) {
			t.Errorf("Successors(%s) = %v, want %v", from, got, legal[from])
		}
	}
	// The first status of a run may be anything known.
	for _, to := range all {
		if !runs.Allowed("", to) {
			t.Errorf("Allowed(\"\", %s) = false", to)
		}
	}
	if len(runs.Successors("")) != len(all) {
		t.Errorf("Successors(\"\") = %v", runs.Successors(""))
	}
	for _, bad := range [][2]protocol.RunStatus{{"", "paused"}, {c, "paused"}, {"paused", e}, {"", ""}} {
		if runs.Allowed(bad[0], bad[1]) {
			t.Errorf("Allowed(%q, %q) = true for an unknown status", bad[0], bad[1])
		}
	}
}

// TestTransitionsApplied runs each pair of statuses through Apply: legal
// pairs move the status and add one timeline entry; illegal ones add a
// refused entry and a flag and keep the status; a repeat adds nothing.
func TestTransitionsApplied(t *testing.T) {
	for _, fromName := range protocol.RunStatusNames {
		for _, toName := range protocol.RunStatusNames {
			from, to := protocol.RunStatus(fromName), protocol.RunStatus(toName)
			t.Run(fromName+"->"+toName, func(t *testing.T) {
				rec := new(runs.Record)
				mustApply(t, rec, lifecycle("r", "s", 1, from), runs.OutcomeApplied)
				out, err := runs.Apply(rec, ptr(lifecycle("r", "s", 2, to)))
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case from == to:
					if out != runs.OutcomeApplied || len(rec.Timeline) != 1 || len(rec.Flags) != 0 || rec.Status != from {
						t.Errorf("repeat: out %s, timeline %+v, flags %+v", out, rec.Timeline, rec.Flags)
					}
				case runs.Allowed(from, to):
					last := rec.Timeline[len(rec.Timeline)-1]
					if out != runs.OutcomeApplied || rec.Status != to || len(rec.Timeline) != 2 || !last.Applied() || last.From != from {
						t.Errorf("legal: out %s status %s timeline %+v", out, rec.Status, rec.Timeline)
					}
				default:
					last := rec.Timeline[len(rec.Timeline)-1]
					if out != runs.OutcomeIllegal || rec.Status != from || !last.Illegal || last.To != to ||
						len(rec.Flags) != 1 || rec.Flags[0].Kind != runs.FlagIllegalTransition || rec.Counts.Illegal != 1 {
						t.Errorf("illegal: out %s status %s timeline %+v flags %+v", out, rec.Status, rec.Timeline, rec.Flags)
					}
				}
			})
		}
	}
}
