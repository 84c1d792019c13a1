package server

import (
	"context"
	"encoding/json"

	"github.com/ahp-go/ahp/intent"
	"github.com/ahp-go/ahp/protocol"
)

// Handler decides events. It has one method per event family, like the 2.4
// EventHandler. Methods may be called concurrently, also for events of one
// connection. Embed BaseHandler to get the defaults and override what you
// need. An error from a blocking method becomes a -32603 response (or, in a
// batch, a block decision carrying the error).
type Handler interface {
	// HandleEvent decides a generic blocking event: pre_action, pre_prompt,
	// and any blocking event inside a batch.
	HandleEvent(ctx context.Context, ev *protocol.Event) (protocol.Decision, error)
	// HandleNotification receives a fire-and-forget event. It is called in
	// the order the events arrived on a connection and must not block long.
	// Run contract payloads have been validated before the call.
	HandleNotification(ctx context.Context, ev *protocol.Event)
	// HandleQuery answers ahp/query.
	HandleQuery(ctx context.Context, q *protocol.QueryRequest) (protocol.QueryResponse, error)

	HandleIdle(ctx context.Context, ev *protocol.Event, p *protocol.IdlePayload) (protocol.IdleDecision, error)
	HandleIntentDetection(ctx context.Context, ev *protocol.Event, p *protocol.IntentDetectionPayload) (protocol.IntentDetectionDecision, error)
	HandleContextPerception(ctx context.Context, ev *protocol.Event, p *protocol.ContextPerceptionPayload) (protocol.ContextPerceptionDecision, error)
	HandleMemoryRecall(ctx context.Context, ev *protocol.Event, p *protocol.MemoryRecallPayload) (protocol.MemoryRecallDecision, error)
	HandlePlanning(ctx context.Context, ev *protocol.Event, p *protocol.PlanningPayload) (protocol.PlanningDecision, error)
	HandleReasoning(ctx context.Context, ev *protocol.Event, p *protocol.ReasoningPayload) (protocol.ReasoningDecision, error)
	HandleRateLimit(ctx context.Context, ev *protocol.Event, p *protocol.RateLimitPayload) (protocol.RateLimitDecision, error)
	HandleConfirmation(ctx context.Context, ev *protocol.Event, p *protocol.ConfirmationPayload) (protocol.ConfirmationDecision, error)
}

// HandshakeHandler may be implemented by a Handler that wants to see (or
// refuse) handshakes. The response it returns is sent as is; when the
// Handler does not implement it, the server answers from its Options.
type HandshakeHandler interface {
	HandleHandshake(ctx context.Context, req *protocol.HandshakeRequest, resp *protocol.HandshakeResponse) error
}

// RejectionObserver may be implemented by a Handler that wants to know
// about events the server refused (bad run contract payloads sent as
// notifications, depth violations, blocking events sent as notifications):
// such events get no response, so this is the only trace of them.
type RejectionObserver interface {
	EventRejected(ctx context.Context, raw []byte, reason string)
}

// BaseHandler implements Handler with conservative defaults: generic events
// are allowed, notifications are ignored, queries get a null answer,
// idle is allowed, intents come from the keyword classifier, context and
// memory are empty, the first offered planning strategy is chosen,
// reasoning is allowed without hints, rate limits are retried after the
// delay the agent reported, and confirmations are escalated to a human.
type BaseHandler struct{}

// HandleEvent allows.
func (BaseHandler) HandleEvent(context.Context, *protocol.Event) (protocol.Decision, error) {
	return protocol.Allow(), nil
}

// HandleNotification does nothing.
func (BaseHandler) HandleNotification(context.Context, *protocol.Event) {}

// HandleQuery answers null with a reason.
func (BaseHandler) HandleQuery(_ context.Context, q *protocol.QueryRequest) (protocol.QueryResponse, error) {
	return protocol.QueryResponse{Answer: json.RawMessage("null"), Reason: "no answer for query type " + q.QueryType}, nil
}

// HandleIdle allows.
func (BaseHandler) HandleIdle(context.Context, *protocol.Event, *protocol.IdlePayload) (protocol.IdleDecision, error) {
	return protocol.IdleDecision{Decision: "allow"}, nil
}

// HandleIntentDetection detects the intent and its target with package
// intent (phrase tables chosen by the payload's language_hint).
func (BaseHandler) HandleIntentDetection(_ context.Context, _ *protocol.Event, p *protocol.IntentDetectionPayload) (protocol.IntentDetectionDecision, error) {
	r := intent.Detect(p.Prompt, p.LanguageHint)
	d := protocol.IntentDetectionDecision{Decision: "allow", DetectedIntent: r.Intent, Confidence: r.Confidence}
	if r.Target.Name != "" {
		d.TargetHints = &protocol.TargetHints{TargetType: r.Target.Type, TargetName: r.Target.Name}
	}
	return d, nil
}

// HandleContextPerception injects nothing.
func (BaseHandler) HandleContextPerception(context.Context, *protocol.Event, *protocol.ContextPerceptionPayload) (protocol.ContextPerceptionDecision, error) {
	return protocol.ContextPerceptionDecision{Decision: "allow"}, nil
}

// HandleMemoryRecall recalls nothing.
func (BaseHandler) HandleMemoryRecall(context.Context, *protocol.Event, *protocol.MemoryRecallPayload) (protocol.MemoryRecallDecision, error) {
	return protocol.MemoryRecallDecision{Decision: "allow"}, nil
}

// HandlePlanning selects the first strategy offered, or step_by_step.
func (BaseHandler) HandlePlanning(_ context.Context, _ *protocol.Event, p *protocol.PlanningPayload) (protocol.PlanningDecision, error) {
	s := protocol.StrategyStepByStep
	if len(p.AvailableStrategies) > 0 {
		s = p.AvailableStrategies[0]
	}
	return protocol.PlanningDecision{Decision: "allow", SelectedStrategy: s}, nil
}

// HandleReasoning allows without hints.
func (BaseHandler) HandleReasoning(context.Context, *protocol.Event, *protocol.ReasoningPayload) (protocol.ReasoningDecision, error) {
	return protocol.ReasoningDecision{Decision: "allow"}, nil
}

// HandleRateLimit asks the agent to retry after the delay it reported.
func (BaseHandler) HandleRateLimit(_ context.Context, _ *protocol.Event, p *protocol.RateLimitPayload) (protocol.RateLimitDecision, error) {
	return protocol.RateLimitDecision{Decision: "retry", RetryAfterMs: p.RetryAfterMs}, nil
}

// HandleConfirmation escalates to a human.
func (BaseHandler) HandleConfirmation(context.Context, *protocol.Event, *protocol.ConfirmationPayload) (protocol.ConfirmationDecision, error) {
	return protocol.ConfirmationDecision{Decision: "escalate"}, nil
}
