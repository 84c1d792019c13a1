package replay

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ahp-go/ahp/protocol"
)

func TestFilters(t *testing.T) {
	path, _ := teamDB(t)
	src := openStore(t, path)
	eng := engine(t, changedPolicy)
	all := run(t, src, Options{Engine: eng})
	recs := allRecords(t, src)
	last := recs[len(recs)-1].Time

	t.Run("session", func(t *testing.T) {
		rep := run(t, src, Options{Engine: eng, SessionID: "s03"})
		var n int64
		for _, r := range recs {
			if r.SessionID == "s03" {
				n++
			}
		}
		if rep.Records != n || rep.SessionID != "s03" || len(rep.Changes) == 0 {
			t.Fatalf("records %d, want %d; changes %d", rep.Records, n, len(rep.Changes))
		}
		for _, c := range rep.Changes {
			if c.SessionID != "s03" {
				t.Fatalf("change of session %s", c.SessionID)
			}
		}
	})
	t.Run("since and until", func(t *testing.T) {
		since, until := epoch.Add(time.Second), epoch.Add(2*time.Second)
		rep := run(t, src, Options{Engine: eng, Since: since, Until: until})
		var want []int64
		for _, c := range all.Changes {
			if !c.Time.Before(since) && c.Time.Before(until) {
				want = append(want, c.ID)
			}
		}
		var got []int64
		for _, c := range rep.Changes {
			got = append(got, c.ID)
		}
		if len(want) == 0 || !equalIDs(got, want) || rep.BeforeSince == 0 {
			t.Fatalf("got %v want %v (before since %d)", got, want, rep.BeforeSince)
		}
		if rep.Since != "2026-11-21T09:00:01Z" || rep.Until != "2026-11-21T09:00:02Z" {
			t.Fatalf("since %q until %q", rep.Since, rep.Until)
		}
	})
	t.Run("look-back from the last record", func(t *testing.T) {
		rep := run(t, src, Options{Engine: eng, Lookback: time.Second})
		if want := last.Add(-time.Second).UTC().Format(time.RFC3339Nano); rep.Since != want {
			t.Fatalf("since %s, want %s", rep.Since, want)
		}
		for _, c := range rep.Changes {
			if c.Time.Before(last.Add(-time.Second)) {
				t.Fatalf("change #%d at %s is before the window", c.ID, c.Time)
			}
		}
		if len(rep.Changes) == 0 {
			t.Fatal("no change in the window")
		}
	})
	t.Run("options", func(t *testing.T) {
		for _, o := range []Options{
			{},
			{Engine: eng, Since: epoch, Lookback: time.Hour},
			{Engine: eng, Lookback: -time.Hour},
			{Engine: eng, Counters: "sometimes"},
			{Engine: eng, ApprovalFallback: protocol.DecisionModify},
		} {
			if _, err := Run(context.Background(), src, o); err == nil {
				t.Errorf("%+v: no error", o)
			}
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := Run(ctx, src, Options{Engine: eng}); !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v", err)
		}
	})
}

func equalIDs(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestPrincipalRoles(t *testing.T) {
	const policyText = `
rules:
  - id: interns-no-deploy
    target: {event_types: [pre_action], tools: ["deploy*"]}
    condition: '"intern" in principal.roles'
    outcome: {decision: block, reason: "interns may not deploy"}
`
	events := []sent{{principal: "bob", roles: []string{"intern"}, transport: "http",
		ev: mkEvent(0, protocol.EventPreAction, "p1", map[string]any{"tool_name": "deploy_app", "arguments": map[string]any{}})}}
	src := openStore(t, record(t, policyText, events))
	eng := engine(t, policyText)
	if rep := run(t, src, Options{Engine: eng}); rep.DecisionChanges != 1 {
		t.Fatalf("without roles: %d changes, want 1 (roles are not recorded)", rep.DecisionChanges)
	}
	if rep := run(t, src, Options{Engine: eng, PrincipalRoles: map[string][]string{"bob": {"intern"}}}); rep.DecisionChanges != 0 {
		t.Fatalf("with roles: %+v", rep.Changes)
	}
}

func TestExceeds(t *testing.T) {
	r := &Report{DecisionChanges: 2, RuleChanges: 3}
	for _, c := range []struct {
		max    int64
		strict bool
		want   bool
	}{{0, false, true}, {2, false, false}, {4, true, true}, {5, true, false}} {
		if got := r.Exceeds(c.max, c.strict); got != c.want {
			t.Errorf("Exceeds(%d, %v) = %v", c.max, c.strict, got)
		}
	}
}
