package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/service"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/transport"
)

// Outcome is what the harness did with one action.
type Outcome struct {
	Decision protocol.DecisionKind // allow, modify, block, escalate, defer
	// Escalated is set when the decision was an escalation: one answered
	// at once, one that waited for a human (denied by the bench, or still
	// waiting when the --hold time ran out).
	Escalated bool
	RuleID    string
	Reason    string
}

// Stopped reports whether the action was stopped: blocked or escalated
// (held for a human) count as stopped; allow, modify and defer do not.
func (o Outcome) Stopped() bool {
	return o.Escalated || o.Decision == protocol.DecisionBlock || o.Decision == protocol.DecisionEscalate
}

// Label is the outcome in one word: allow, modify, block, escalate, defer.
func (o Outcome) Label() string {
	if o.Escalated {
		return "escalate"
	}
	return string(o.Decision)
}

// Harness sends actions to a harness, each in a session of its own.
type Harness struct {
	c    *client.Client
	hold time.Duration

	// In-process only: the rule of each session's decision, from the
	// audit record (escalate decisions carry no metadata on the wire).
	mu    sync.Mutex
	rules map[string]string // session id -> rule id
	svc   *service.Service
	stop  func()

	packs map[string]string // rule id -> pack
	// partial: the harness listed only some of its rules.
	partial bool
}

// InProcessOptions configure a harness started by the bench.
type InProcessOptions struct {
	ConfigFile string          // a YAML configuration (default: none)
	Packs      map[string]bool // packs switched on or off over it
	DataDir    string          // the data directory (default: a temporary one, removed at the end)
}

// benchApprover answers the in-process harness's approvals: every
// escalation that waits for a human is denied at once, so that the run
// never waits and the outcome is the one a human saying no would give.
var benchApprover = &transport.Principal{ID: "bench-guard-approver", Roles: []string{"approver"}}

// StartInProcess starts a harness with the service package: the default
// configuration (or the given file), its built-in packs, a temporary
// data directory, one Unix socket, no admin API. Escalations are denied
// by the bench as soon as they are stored.
func StartInProcess(ctx context.Context, o InProcessOptions) (*Harness, error) {
	cfg := config.Default()
	if o.ConfigFile != "" {
		var err error
		if cfg, err = config.Load(o.ConfigFile); err != nil {
			return nil, err
		}
	}
	tmp, err := os.MkdirTemp("", "guard-")
	if err != nil {
		return nil, err
	}
	cleanup := func() { _ = os.RemoveAll(tmp) }
	cfg.DataDir = filepath.Join(tmp, "data")
	if o.DataDir != "" {
		cfg.DataDir = o.DataDir
	}
	sock := filepath.Join(tmp, "h.sock")
	cfg.Listen = []string{"unix:" + sock}
	cfg.Admin = ""
	cfg.Log.Level = "error"
	cfg.Telemetry = config.TelemetryConfig{}
	if cfg.Policy.Packs == nil {
		cfg.Policy.Packs = map[string]bool{}
	}
	for k, v := range o.Packs {
		cfg.Policy.Packs[k] = v
	}
	h := &Harness{rules: map[string]string{}}
	svc, err := service.New(cfg, service.Options{ConfigFile: o.ConfigFile})
	if err != nil {
		cleanup()
		return nil, err
	}
	h.svc = svc
	svc.Observe(&benchObserver{h: h})
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	go func() { done <- svc.Run(runCtx) }()
	h.stop = func() {
		cancel()
		<-done
		_ = svc.Close()
		cleanup()
	}
	c, err := dialRetry(ctx, "unix:"+sock, 10*time.Second)
	if err != nil {
		h.stop()
		return nil, err
	}
	h.c = c
	if err := h.loadPacks(ctx); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

// Connect uses the harness at addr. An escalation that waits for a human
// there is counted as escalated (stopped) when no answer came within
// hold; the request is then abandoned.
func Connect(ctx context.Context, addr string, hold time.Duration) (*Harness, error) {
	c, err := dialRetry(ctx, addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	h := &Harness{c: c, hold: hold}
	if err := h.loadPacks(ctx); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

func dialRetry(ctx context.Context, addr string, within time.Duration) (*client.Client, error) {
	deadline := time.Now().Add(within)
	for {
		c, err := client.Dial(ctx, addr, transport.DialOptions{}, client.Options{
			SessionID: "bench-guard", AgentID: "bench-guard", FailMode: client.FailError, Timeout: 11 * time.Minute})
		if err == nil {
			if _, err = c.Handshake(ctx); err == nil {
				return c, nil
			}
			c.Close()
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("connect %s: %w", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// loadPacks asks the harness which pack each rule belongs to.
func (h *Harness) loadPacks(ctx context.Context) error {
	h.packs = map[string]string{}
	a, err := h.c.Rules(ctx, protocol.RulesQuery{})
	var na *client.NoAnswerError
	if errors.As(err, &na) {
		return nil // the prefix of the rule id says it
	}
	if err != nil {
		return err
	}
	for _, r := range a.Rules {
		h.packs[r.ID] = r.Pack
	}
	// A list cut short cannot say which packs are on: every risky action
	// is then counted (EnabledPacks answers nil).
	h.partial = a.Total > len(a.Rules)
	return nil
}

// PackOf returns the pack of a rule: as the harness said, else the rule
// id's prefix before its first dot for a built-in pack's id, else
// "(policy file)"; "" for no rule.
func (h *Harness) PackOf(rule string) string {
	if rule == "" {
		return ""
	}
	if p, ok := h.packs[rule]; ok {
		if p == "" {
			return "(policy file)"
		}
		return p
	}
	if i := strings.IndexByte(rule, '.'); i > 0 {
		return rule[:i]
	}
	return rule
}

// Close closes the connection and stops an in-process harness.
func (h *Harness) Close() {
	if h.c != nil {
		h.c.Close()
	}
	if h.stop != nil {
		h.stop()
	}
}

// Send sends one action as a pre_action event in session sid and returns
// what the harness decided.
func (h *Harness) Send(ctx context.Context, sid string, a *Action) (Outcome, error) {
	ev := &protocol.Event{
		EventType: protocol.EventPreAction, SessionID: sid, AgentID: "bench-guard",
		Timestamp: time.Now().UTC().Format(time.RFC3339Nano), Payload: a.Payload,
	}
	sctx := ctx
	if h.hold > 0 {
		var cancel context.CancelFunc
		sctx, cancel = context.WithTimeout(ctx, h.hold)
		defer cancel()
	}
	d, err := h.c.SendEvent(sctx, ev)
	if err != nil {
		if h.hold > 0 && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return Outcome{Decision: protocol.DecisionEscalate, Escalated: true, Reason: "held for a human past " + h.hold.String()}, nil
		}
		return Outcome{}, err
	}
	o := Outcome{Decision: d.Kind, Reason: d.Reason}
	var meta struct {
		RuleID     string `json:"rule_id"`
		ApprovalID string `json:"approval_id"`
	}
	if len(d.Metadata) > 0 {
		_ = json.Unmarshal(d.Metadata, &meta)
	}
	o.RuleID = meta.RuleID
	o.Escalated = meta.ApprovalID != "" || d.Kind == protocol.DecisionEscalate
	if h.svc != nil {
		h.mu.Lock()
		if r, ok := h.rules[sid]; ok {
			o.RuleID = r
			delete(h.rules, sid)
		}
		h.mu.Unlock()
	}
	return o, nil
}

// benchObserver notes the rule of every decision and denies every
// approval of the in-process harness as soon as it is stored.
type benchObserver struct{ h *Harness }

func (o *benchObserver) Recorded(rec *store.AuditRecord) {
	if rec.EventType != string(protocol.EventPreAction) || !rec.Blocking {
		return
	}
	o.h.mu.Lock()
	o.h.rules[rec.SessionID] = rec.RuleID
	o.h.mu.Unlock()
}

func (o *benchObserver) ApprovalChanged(a store.Approval) {
	if a.Status != store.ApprovalPending || o.h.svc == nil {
		return
	}
	svc := o.h.svc
	// Observers must return at once: the answer goes from a goroutine.
	go func() {
		_, _ = svc.Harness().Decide(context.Background(), a.ID, false, benchApprover, "bench/guard: denied")
	}()
}
