// Package harness turns the protocol server into the ahp product: it
// decides events with policies, waits for humans where a rule says so,
// records every event and decision durably, and answers the typed harness
// points.
package harness

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/ahp-go/ahp/intent"
	"github.com/ahp-go/ahp/internal/jsonscan"
	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/redact"
	"github.com/ahp-go/ahp/runs"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/transport"
)

// Options configure a Harness.
type Options struct {
	// Engine decides generic events (and gates typed ones). Required.
	Engine *policy.Engine
	// Store records every event and decision, keeps approvals and facts.
	// Required.
	Store store.Store
	// ReplicaID names this process in a shared store's replica registry;
	// it is stored with every approval this harness raises
	// (store.Approval.Replica), so that a live replica can expire them if
	// this process stops without a clean shutdown. Empty without one.
	ReplicaID string
	// ApprovalTimeout applies to escalations whose rule names no timeout
	// (5 minutes when 0).
	ApprovalTimeout time.Duration
	// ApprovalFallback is the decision when nobody answers an approval in
	// time and the rule names no fallback: allow or block (block when "").
	ApprovalFallback protocol.DecisionKind
	// DeferIdleWhilePending answers idle with defer while approvals wait.
	DeferIdleWhilePending bool
	// MemoryMaxResults bounds the facts memory_recall returns (20 when 0).
	MemoryMaxResults int
	// Perceiver answers context_perception; nil answers with configured
	// nothing (an empty allow).
	Perceiver Perceiver
	// Supervisor, when set, enforces an Agent Harness Descriptor before the
	// policy runs; its hash goes into every audit record.
	Supervisor *DescriptorSupervisor
	// Runs, when set, reduces run_lifecycle, task_list and verification
	// notifications into run records.
	Runs *runs.Reducer
	// Metrics, when set, receives the harness's measurements.
	Metrics *Metrics
	// Redactor replaces secrets with [REDACTED:kind:fingerprint] markers in
	// everything the harness stores or logs about an event. When nil, a
	// Redactor with the built-in detectors and a key made for this process
	// is used (fingerprints then differ between runs).
	Redactor *redact.Redactor
	// Observer, when set, is told of every audit record and approval as
	// it is stored (redacted, as stored).
	Observer Observer
	// Notifier, when set, is told of the approval changes this harness
	// records itself (see Notifier), to tell people outside the dashboard.
	Notifier Notifier
	// QueryRate bounds the ahp/query requests a session may make per
	// second (a token bucket of QueryBurst); 10 per second and a burst of
	// 20 when 0. See docs/query.md.
	QueryRate  float64
	QueryBurst int
	// Shadow, when set, evaluates a candidate policy beside the live one
	// and records where they disagree (docs/shadow.md).
	Shadow *ShadowPolicy
	// Memory configures the memories the harness keeps from what agents
	// do and how memory_recall scopes them (docs/cognitive.md).
	Memory MemoryOptions
	// IntentLLM, when set, lets an OpenAI-compatible LLM classify
	// intent_detection prompts within its timeout, the phrase tables
	// deciding otherwise; prompts are redacted before they are sent. Its
	// Redact field is set by New.
	IntentLLM *intent.LLMOptions
	// Logger receives the harness's log lines (discarded when nil).
	Logger *slog.Logger
	// Now is the clock (time.Now when nil). It is called from concurrent
	// decisions and from background work (memory capture, retention), so
	// it must be safe for concurrent use.
	Now func() time.Time
}

// Perceiver answers context_perception events.
type Perceiver interface {
	Perceive(ctx context.Context, p *protocol.ContextPerceptionPayload) (protocol.ContextPerceptionDecision, error)
}

// Harness is the server.Handler of ahp serve: it decides events with the
// policy engine, waits for humans when a rule asks for approval, records
// every event and decision durably, and answers the typed harness points.
type Harness struct {
	server.BaseHandler
	opts      Options
	log       *slog.Logger
	now       func() time.Time
	sessions  *Sessions
	approvals *approvalWaiters
	met       *Metrics
	red       *redact.Redactor
	queries   queryState // rate limits and session owners of ahp/query
	memory    *memoryKeeper
	llm       *intent.LLM // nil: the phrase tables classify intents
}

// New returns a Harness. Call Start before serving and Close after.
func New(opts Options) (*Harness, error) {
	if opts.Engine == nil || opts.Store == nil {
		return nil, errors.New("harness: Engine and Store are required")
	}
	if opts.ApprovalTimeout <= 0 {
		opts.ApprovalTimeout = 5 * time.Minute
	}
	if opts.ApprovalFallback == "" {
		opts.ApprovalFallback = protocol.DecisionBlock
	}
	if opts.MemoryMaxResults <= 0 {
		opts.MemoryMaxResults = 20
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	red := opts.Redactor
	if red == nil {
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("harness: redaction key: %w", err)
		}
		var err error
		if red, err = redact.New(redact.Options{Key: key}); err != nil {
			return nil, err
		}
	}
	h := &Harness{
		opts: opts, log: log, now: opts.Now,
		sessions:  NewSessions(100000),
		approvals: newApprovalWaiters(),
		met:       opts.Metrics,
		red:       red,
	}
	h.memory = newMemoryKeeper(h)
	if opts.IntentLLM != nil {
		lo := *opts.IntentLLM
		lo.Redact = func(s string) string { out, _ := red.String(s); return out }
		var err error
		if h.llm, err = intent.NewLLM(lo); err != nil {
			return nil, fmt.Errorf("harness: %w", err)
		}
	}
	return h, nil
}

// Start prepares the harness: approvals still pending from a previous run
// are marked expired, because the requests that waited for them are gone
// (their records stay for audit).
func (h *Harness) Start(ctx context.Context) error {
	before, why := h.now(), "harness restarted: the waiting request is gone, fallback applied"
	if h.Replicated() {
		// Other replicas may have agents waiting on younger approvals.
		before, why = before.Add(-staleApprovalAge), "pending for over "+staleApprovalAge.String()+" on a shared store: the waiting request is gone, fallback applied"
	}
	expired, err := h.opts.Store.Approvals().ExpirePending(ctx, before, why)
	if err != nil {
		return fmt.Errorf("harness: expire pending approvals: %w", err)
	}
	if len(expired) > 0 {
		h.log.Warn("pending approvals expired at start", "count", len(expired))
	}
	for _, a := range expired {
		h.notifyApproval(ApprovalNotice{Approval: a})
	}
	return nil
}

// Engine returns the policy engine (for reloads).
func (h *Harness) Engine() *policy.Engine { return h.opts.Engine }

// peerOf returns the connection info of the caller.
func peerOf(ctx context.Context) transport.Info { return server.PeerFromContext(ctx) }

func principalID(p transport.Info) string {
	if p.Principal == nil {
		return ""
	}
	return p.Principal.ID
}

// HandleEvent decides a generic blocking event.
func (h *Harness) HandleEvent(ctx context.Context, ev *protocol.Event) (protocol.Decision, error) {
	start := h.now()
	peer := peerOf(ctx)
	// With replicas, the session's counters are read and updated under
	// its lock, so that requests spread over replicas count as one.
	lease, err := h.leaseSession(ctx, ev.SessionID)
	if err != nil {
		return h.failClosedShared(ctx, ev, peer, start, err), nil
	}
	res := h.genericResult(ev, peer, false)
	// Decided: from here on only the redacted event is kept.
	sv := h.seal(ev, res.PayloadSecrets)
	se := &sv
	d := res.Decision
	var approvalErr string
	// The agent's escalation hint (metadata.escalation) is read only for
	// an escalation: decoding the metadata costs a JSON decode per event.
	if res.Approval != nil && d.Kind == protocol.DecisionEscalate {
		if hint := escalationHint(ev.Metadata); !hint.AsksUser {
			lease.release() // a human may take minutes: the session is not held meanwhile
			d, approvalErr = h.awaitApproval(ctx, se, peer, &res, hint.wait())
			if lease, err = h.leaseSession(ctx, ev.SessionID); err != nil {
				lease = nil
				d, approvalErr = protocol.Block("harness could not update the session's shared counters; failing closed"), "session state: "+err.Error()
			}
		}
	}
	h.sessions.Observe(ev, d.Kind)
	if err := lease.save(ctx); err != nil {
		d, approvalErr = protocol.Block("harness could not update the session's shared counters; failing closed"), "session state: "+err.Error()
	}
	errText := approvalErr
	if res.Err != nil {
		errText = res.Err.Error()
	}
	if err := h.record(ctx, se, peer, start, d, &res, errText); err != nil {
		h.log.Error("audit append failed: failing closed", "error", err, "session_id", se.ev.SessionID)
		return protocol.Block("harness could not record the decision (audit log unavailable); failing closed"), nil
	}
	h.met.decided(ev.EventType, d.Kind, res.RuleID, h.now().Sub(start))
	h.rememberBlock(se.ev, &res, d)
	return d, nil
}

// genericResult is the verdict on a generic blocking event: the
// descriptor's refusal, else the policy's decision. With preview set (an
// ahp/query check) it has no side effect: no turn is counted and no metric
// moves; the verdict is the same.
func (h *Harness) genericResult(ev *protocol.Event, peer transport.Info, preview bool) policy.Result {
	var reason string
	if sup := h.opts.Supervisor; sup != nil {
		if preview {
			reason = sup.Preview(ev)
		} else {
			reason = sup.Check(ev)
		}
	}
	if reason != "" {
		res := policy.Result{Decision: protocol.Block(reason), RuleID: "descriptor"}
		res.Decision.Metadata, _ = json.Marshal(map[string]string{"rule_id": "descriptor", "descriptor_hash": h.descriptorHash()})
		return res
	}
	if preview {
		in := h.policyInput(ev, peer)
		return h.opts.Engine.Set().Evaluate(&in)
	}
	return h.evaluate(ev, peer)
}

// evaluate runs the policy engine on ev.
func (h *Harness) evaluate(ev *protocol.Event, peer transport.Info) policy.Result {
	in := h.policyInput(ev, peer)
	res := h.opts.Engine.Evaluate(&in)
	h.shadowPolicy(&in, &res)
	return res
}

// policyInput is what the policy sees of ev.
func (h *Harness) policyInput(ev *protocol.Event, peer transport.Info) policy.Input {
	in := policy.Input{Event: ev, Session: h.sessions.State(ev.SessionID), Transport: peer.Transport}
	if peer.Principal != nil {
		in.Principal = policy.Principal{ID: peer.Principal.ID, Roles: peer.Principal.Roles}
	}
	return in
}

// record appends the audit record of a blocking event and waits until it
// is durable. The event, the decision and the error are stored redacted.
func (h *Harness) record(ctx context.Context, se *sealed, peer transport.Info, start time.Time, d any, res *policy.Result, errText string) error {
	ev := se.ev
	evJSON, err := ev.AppendJSON(make([]byte, 0, len(ev.Payload)+256))
	if err != nil {
		return err
	}
	var dJSON []byte
	var outcome string
	if gd, ok := d.(protocol.Decision); ok {
		// The generic decision encodes itself exactly; no second pass.
		dJSON, err = gd.AppendJSON(make([]byte, 0, 128))
		outcome = string(gd.Kind)
	} else {
		dJSON, err = json.Marshal(d)
		outcome = decisionTag(dJSON)
	}
	if err != nil {
		return err
	}
	dJSON = se.decision(dJSON)
	errText = se.text(errText)
	shadow, shadowChanged := h.shadowRecord(se, res)
	rec := &store.AuditRecord{
		Time: start, SessionID: ev.SessionID, AgentID: ev.AgentID, EventType: string(ev.EventType),
		Blocking: true, Event: evJSON, Decision: dJSON, Outcome: outcome, RuleID: res.RuleID,
		PolicyVersion: h.opts.Engine.Version(), Principal: principalID(peer), Transport: peer.Transport,
		Latency: h.now().Sub(start), Error: errText, DescriptorHash: h.descriptorHash(),
		Redacted: se.kinds.List(), Shadow: shadow, ShadowChanged: shadowChanged,
	}
	// The agent may have gone away; the record is still owed to the audit
	// log, so it is not tied to the request's context.
	if err := h.opts.Store.Audit().Append(context.WithoutCancel(ctx), rec); err != nil {
		return err
	}
	h.observeRecord(rec)
	return nil
}

// decisionTag returns the "decision" member of a decision's JSON.
func decisionTag(d json.RawMessage) string {
	var t struct {
		Decision string `json:"decision"`
	}
	_ = json.Unmarshal(d, &t)
	return t.Decision
}

// HandleNotification records a fire-and-forget event and updates the
// session counters.
func (h *Harness) HandleNotification(ctx context.Context, ev *protocol.Event) {
	if lease, err := h.leaseSession(ctx, ev.SessionID); err != nil {
		h.log.Warn("shared session counters not updated by a notification", "event_type", string(ev.EventType), "error", err)
		h.sessions.Observe(ev, "")
	} else {
		h.sessions.Observe(ev, "")
		if err := lease.save(ctx); err != nil {
			h.log.Warn("shared session counters not saved", "event_type", string(ev.EventType), "error", err)
		}
	}
	if h.opts.Supervisor != nil {
		h.opts.Supervisor.Observe(ev)
	}
	// Nothing is decided for a notification: what outlives it is redacted.
	sv := h.seal(ev, policy.SecretsUnknown)
	se := &sv
	h.rememberNotification(se.ev)
	if h.opts.Runs != nil && ev.EventType.RunContract() {
		if err := h.opts.Runs.Observe(ctx, se.ev); err != nil {
			h.log.Warn("run record not updated", "event_type", string(ev.EventType), "session_id", se.ev.SessionID, "error", se.text(err.Error()))
		}
	}
	peer := peerOf(ctx)
	evJSON, err := se.ev.AppendJSON(make([]byte, 0, len(se.ev.Payload)+256))
	if err != nil {
		return
	}
	rec := &store.AuditRecord{
		Time: h.now(), SessionID: se.ev.SessionID, AgentID: se.ev.AgentID, EventType: string(ev.EventType),
		Event: evJSON, PolicyVersion: h.opts.Engine.Version(), Principal: principalID(peer), Transport: peer.Transport,
		DescriptorHash: h.descriptorHash(), Redacted: se.kinds.List(),
	}
	if err := h.opts.Store.Audit().AppendAsync(ctx, rec); err != nil {
		h.log.Error("audit append failed for a notification", "error", err, "event_type", string(ev.EventType))
	} else {
		h.observeRecord(rec)
	}
	h.met.notified(ev.EventType)
}

// EventRejected records events the server refused (they get no answer).
func (h *Harness) EventRejected(ctx context.Context, raw []byte, reason string) {
	peer := peerOf(ctx)
	var ev protocol.Event
	// Only a message that reads one way (I-JSON) lends its identifiers to
	// the record or is kept in it; one with duplicated members or invalid
	// UTF-8 is recorded by its reason alone.
	oneReading := jsonscan.Check(raw) == nil
	if oneReading {
		_ = json.Unmarshal(raw, &struct {
			Params *protocol.Event `json:"params"`
		}{&ev})
	}
	raw, rev, reason, kinds := h.sealRejected(raw, &ev, reason)
	rec := &store.AuditRecord{
		Time: h.now(), SessionID: rev.SessionID, AgentID: rev.AgentID, EventType: string(ev.EventType),
		Outcome: "rejected", PolicyVersion: h.opts.Engine.Version(), Principal: principalID(peer),
		Transport: peer.Transport, Error: reason, Redacted: kinds,
	}
	if oneReading && len(raw) <= store.MaxAuditJSONBytes {
		rec.Event = raw
	}
	if err := h.opts.Store.Audit().AppendAsync(ctx, rec); err != nil {
		h.log.Error("audit append failed for a rejected event", "error", err)
	} else {
		h.observeRecord(rec)
	}
	h.met.rejected()
}

// descriptorHash returns the hash of the enforced descriptor, or "".
func (h *Harness) descriptorHash() string {
	if h.opts.Supervisor == nil {
		return ""
	}
	return h.opts.Supervisor.Descriptor().Hash()
}
