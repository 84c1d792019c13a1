package replay

import (
	"context"
	"strings"
	"time"

	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
)

// Run replays src under opts.Engine and returns the report. It reads the
// records once, in ID order: notifications update the session counters,
// blocking events are evaluated with the counters as they stood before
// the event and then update them (see CounterMode), exactly as the live
// harness does. Generic blocking events (pre_action, pre_prompt) update
// the counters; typed ones are evaluated only, as in the harness.
func Run(ctx context.Context, src Source, opts Options) (*Report, error) {
	opts, err := opts.check()
	if err != nil {
		return nil, err
	}
	since := opts.Since
	if opts.Lookback > 0 {
		last, ok, err := src.LastTime(ctx)
		if err != nil {
			return nil, err
		}
		if ok {
			since = last.Add(-opts.Lookback)
		}
	}
	r := &runner{
		opts: opts, since: since,
		sessions: harness.NewSessions(opts.MaxSessions),
		versions: map[string]int{},
		rules:    map[string]*ruleAcc{},
		rep: &Report{
			Input: src.Name(), NewPolicyVersion: opts.Engine.Version(), Counters: opts.Counters,
			SessionID: opts.SessionID, Since: timeText(since), Until: timeText(opts.Until),
			OldPolicyVersions: []VersionCount{}, Changes: []Change{},
		},
	}
	rd := startReader(ctx, src, &opts)
	defer rd.stop()
	for batch := range rd.batches {
		for i := range batch {
			r.record(&batch[i])
		}
		rd.release(batch)
	}
	if rd.err != nil {
		return nil, rd.err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.rep.Rules = summarize(r.rules)
	return r.rep, nil
}

func timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// runner is the state of one replay.
type runner struct {
	opts     Options
	since    time.Time
	sessions *harness.Sessions
	rep      *Report
	versions map[string]int // index in rep.OldPolicyVersions
	rules    map[string]*ruleAcc
}

// record replays one record.
func (r *runner) record(it *item) {
	rec, ev := &it.rec, &it.ev
	rep := r.rep
	rep.Records++
	switch {
	case rec.Outcome == "rejected":
		rep.Skipped.Rejected++
		return
	case len(rec.Event) == 0:
		rep.Skipped.NoEvent++
		return
	}
	if rec.EventType != "" && !protocol.EventType(rec.EventType).Known() {
		// The harness's own records (harness_start, connection_ended, …)
		// are not agent events: nothing to re-decide.
		rep.Skipped.Other++
		return
	}
	if it.evErr != nil {
		rep.Skipped.Invalid++
		return
	}
	t := ev.EventType
	switch {
	case !t.Blocking():
		rep.Notifications++
		r.sessions.Observe(ev, "")
		return
	case t != protocol.EventPreAction && t != protocol.EventPrePrompt && !t.Typed():
		rep.Skipped.Other++
		return
	}
	compare := r.since.IsZero() || !rec.Time.Before(r.since)
	if !compare && r.opts.Counters == CountersRecorded {
		// Only the counters matter here, and they use the record.
		rep.BeforeSince++
		if !t.Typed() {
			r.sessions.Observe(ev, protocol.DecisionKind(rec.Outcome))
		}
		return
	}
	in := policy.Input{
		Event:     ev,
		Principal: policy.Principal{ID: rec.Principal, Roles: r.opts.PrincipalRoles[rec.Principal]},
		Session:   r.sessions.State(ev.SessionID),
		Transport: rec.Transport,
	}
	res := r.opts.Engine.Evaluate(&in)
	old, human := oldVerdict(rec, t)
	if !t.Typed() {
		r.sessions.Observe(ev, r.counterKind(rec, &res, human))
	}
	if !compare {
		rep.BeforeSince++
		return
	}
	rep.Compared++
	if t.Typed() {
		rep.Typed++
	}
	r.version(rec.PolicyVersion)
	nv := newVerdict(&res, t)
	if t == protocol.EventPlanning || t == protocol.EventReasoning {
		old.Guidance = parseRecorded(rec.Decision).Guidance
		if nv.Decision == "allow" {
			nv.Guidance = r.guidance(ev)
		}
	}
	var kind ChangeKind
	switch {
	case old.Decision != nv.Decision:
		kind = DecisionChanged
		rep.DecisionChanges++
	case old.RuleID != nv.RuleID:
		kind = RuleChanged
		rep.RuleChanges++
	case strings.Join(old.Guidance, "\x00") != strings.Join(nv.Guidance, "\x00"):
		kind = GuidanceChanged
		rep.GuidanceChanges++
	default:
		return
	}
	if kind != GuidanceChanged {
		r.tally(kind, &old, &nv)
	}
	if old.Reason == "" {
		old.Reason = parseRecorded(rec.Decision).Reason
	}
	if len(rep.Changes) >= r.opts.MaxListed {
		rep.Unlisted++
		return
	}
	c := Change{
		ID: rec.ID, Time: rec.Time.UTC(), SessionID: rec.SessionID, AgentID: rec.AgentID,
		EventType: string(t), Kind: kind, Old: old, New: nv, OldPolicyVersion: rec.PolicyVersion,
	}
	describe(ev, &c)
	rep.Changes = append(rep.Changes, c)
}

// counterKind is the decision kind the counters observe for a generic
// blocking event.
func (r *runner) counterKind(rec *store.AuditRecord, res *policy.Result, human bool) protocol.DecisionKind {
	if r.opts.Counters == CountersRecorded {
		return protocol.DecisionKind(rec.Outcome)
	}
	k := res.Decision.Kind
	if k != protocol.DecisionEscalate || res.Approval == nil {
		return k
	}
	// The live harness observes the answer of the approval, which a replay
	// cannot ask for: reuse the recorded answer when this event went to a
	// human then too, else assume nobody answers.
	switch {
	case human:
		return protocol.DecisionKind(rec.Outcome)
	case res.Approval.Fallback != "":
		return res.Approval.Fallback
	default:
		return r.opts.ApprovalFallback
	}
}

// version counts one compared event of a recorded policy version.
func (r *runner) version(v string) {
	i, ok := r.versions[v]
	if !ok {
		i = len(r.rep.OldPolicyVersions)
		r.versions[v] = i
		r.rep.OldPolicyVersions = append(r.rep.OldPolicyVersions, VersionCount{Version: v})
	}
	r.rep.OldPolicyVersions[i].Events++
}

// tally adds a change to the summaries of the rules involved.
func (r *runner) tally(kind ChangeKind, old, nv *Verdict) {
	ids := []string{old.RuleID}
	if nv.RuleID != old.RuleID {
		ids = append(ids, nv.RuleID)
	}
	for _, id := range ids {
		a := r.rules[id]
		if a == nil {
			a = &ruleAcc{RuleSummary: RuleSummary{RuleID: id}, trans: map[[2]string]int64{}}
			r.rules[id] = a
		}
		a.Events++
		if kind == DecisionChanged {
			a.DecisionChanges++
		} else {
			a.RuleChanges++
		}
		a.trans[[2]string{old.Decision, nv.Decision}]++
	}
}

// guidance returns the ids of the new policy's guidance entries that apply
// to a planning or reasoning event.
func (r *runner) guidance(ev *protocol.Event) []string {
	in, ok := policy.GuidanceInputFor(ev)
	if !ok {
		return nil
	}
	gs, _ := r.opts.Engine.Set().Guidance(in)
	var ids []string
	for _, g := range gs {
		ids = append(ids, g.ID)
	}
	return ids
}
