package policy

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/ahp-go/ahp/protocol"
)

// TestResult is the outcome of one case.
type TestResult struct {
	Case     *TestCase
	Got      Result
	Failures []string // empty when the case passed
}

// Passed reports whether every expectation held.
func (r *TestResult) Passed() bool { return len(r.Failures) == 0 }

// Run evaluates the case with set and checks the expectations.
func (c *TestCase) Run(set *Set) TestResult {
	got := set.Evaluate(&c.Input)
	res := TestResult{Case: c, Got: got}
	fail := func(format string, args ...any) { res.Failures = append(res.Failures, fmt.Sprintf(format, args...)) }
	e, d := &c.Expect, &got.Decision
	if e.Guidance != nil {
		res.checkGuidance(set, *e.Guidance, fail)
	}
	if d.Kind != e.Decision {
		fail("expected decision %s, got %s (%s)", e.Decision, d.Kind, describe(&got))
	}
	if e.Rule != "" && got.RuleID != e.Rule {
		fail("expected rule %s, got %s", e.Rule, describe(&got))
	}
	if e.Matched != nil && got.Matched != *e.Matched {
		fail("expected matched %t, got %t (%s)", *e.Matched, got.Matched, describe(&got))
	}
	if e.ReasonContains != "" && !strings.Contains(d.Reason, e.ReasonContains) {
		fail("expected a reason containing %q, got %q", e.ReasonContains, d.Reason)
	}
	if e.ModifiedPayload != nil {
		var mp any
		if err := json.Unmarshal(d.ModifiedPayload, &mp); err != nil || !reflect.DeepEqual(mp, e.ModifiedPayload) {
			want, _ := json.Marshal(e.ModifiedPayload)
			fail("expected modified_payload %s, got %s", want, orNone(d.ModifiedPayload))
		}
	}
	if e.RetryAfterMs != nil && d.RetryAfterMs != *e.RetryAfterMs {
		fail("expected retry_after_ms %d, got %d", *e.RetryAfterMs, d.RetryAfterMs)
	}
	if e.EscalationTarget != "" && d.EscalationTarget != e.EscalationTarget {
		fail("expected escalation_target %q, got %q", e.EscalationTarget, d.EscalationTarget)
	}
	if e.Approval != nil {
		switch a := got.Approval; {
		case a == nil:
			fail("expected an approval wait, got none")
		case *a != *e.Approval:
			fail("expected approval %s, got %s", approvalString(e.Approval), approvalString(a))
		}
	}
	return res
}

func describe(r *Result) string {
	s := "no rule matched"
	if r.Matched {
		s = "rule " + r.RuleID
	}
	if r.Err != nil {
		s += ", evaluation error: " + r.Err.Error()
	}
	return s
}

func orNone(b []byte) string {
	if len(b) == 0 {
		return "none"
	}
	return string(b)
}

func approvalString(a *ApprovalSpec) string {
	return fmt.Sprintf("{timeout: %s, fallback: %s, approver_role: %q}", a.Timeout.Round(time.Millisecond), a.Fallback, a.ApproverRole)
}

// TestReport is the outcome of running test files.
type TestReport struct {
	Results        []TestResult
	Passed, Failed int
}

// RunTests compiles the policies once per distinct set of options (base
// with each file's options applied) and runs every case. A policy that
// does not compile is an error (a *LoadError).
func RunTests(base Options, policies []Source, files []*TestFile) (*TestReport, error) {
	rep := &TestReport{}
	sets := map[string]*Set{}
	for _, tf := range files {
		opts := tf.Options(base)
		key, err := json.Marshal(struct {
			P map[string]bool
			A map[string]any
			D protocol.DecisionKind
			R string
		}{opts.Packs, opts.Params, opts.Default, opts.DefaultReason})
		if err != nil {
			return nil, fmt.Errorf("%s: options: %w", tf.Name, err)
		}
		set := sets[string(key)]
		if set == nil {
			if set, err = Compile(opts, policies...); err != nil {
				return nil, err
			}
			sets[string(key)] = set
		}
		for i := range tf.Cases {
			r := tf.Cases[i].Run(set)
			if r.Passed() {
				rep.Passed++
			} else {
				rep.Failed++
			}
			rep.Results = append(rep.Results, r)
		}
	}
	return rep, nil
}

// checkGuidance compares the guidance entries matching the case's event
// with the expected ids.
func (r *TestResult) checkGuidance(set *Set, want []string, fail func(string, ...any)) {
	in, ok := GuidanceInputFor(r.Case.Input.Event)
	if !ok {
		fail("expected guidance %v, but the event is not a valid planning or reasoning event", want)
		return
	}
	gs, errs := set.Guidance(in)
	got := []string{}
	for _, g := range gs {
		got = append(got, g.ID)
	}
	for _, err := range errs {
		fail("%v", err)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		fail("expected guidance %v, got %v", want, got)
	}
}
