package client

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
)

// Handshake negotiates the protocol with the harness using the identity in
// Options. It must complete before events, queries and batches are sent.
func (c *Client) Handshake(ctx context.Context) (*protocol.HandshakeResponse, error) {
	return c.HandshakeWith(ctx, handshakeRequest(c.opts))
}

// handshakeRequest is the handshake that presents the identity in o.
func handshakeRequest(o Options) *protocol.HandshakeRequest {
	caps := o.Capabilities
	if caps == nil {
		caps = []string{}
	}
	return &protocol.HandshakeRequest{
		ProtocolVersion: protocol.Version,
		AgentInfo:       protocol.AgentInfo{Framework: o.Framework, Version: o.Version, Capabilities: caps},
		SessionID:       o.SessionID,
		AgentID:         o.AgentID,
	}
}

// HandshakeWith sends the given handshake request.
func (c *Client) HandshakeWith(ctx context.Context, req *protocol.HandshakeRequest) (*protocol.HandshakeResponse, error) {
	params, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	res, err := c.call(ctx, jsonrpc.MethodHandshake, params)
	if err != nil {
		return nil, err
	}
	var resp protocol.HandshakeResponse
	if err := json.Unmarshal(res, &resp); err != nil {
		return nil, fmt.Errorf("client: bad handshake response: %w", err)
	}
	if err := protocol.CheckVersion(resp.ProtocolVersion); err != nil {
		return nil, fmt.Errorf("client: harness speaks %w", err)
	}
	c.handshake.Store(&resp)
	return &resp, nil
}

// HandshakeResponse returns the harness's handshake answer, or nil before
// the handshake.
func (c *Client) HandshakeResponse() *protocol.HandshakeResponse { return c.handshake.Load() }

func (c *Client) requireHandshake() error {
	if c.handshake.Load() == nil {
		return ErrNoHandshake
	}
	return nil
}

// NewEvent builds an event of type t with the client's session and agent
// ids, depth 0 and the current time.
func (c *Client) NewEvent(t protocol.EventType, payload any) (*protocol.Event, error) {
	raw, err := marshalPayload(payload)
	if err != nil {
		return nil, err
	}
	return &protocol.Event{
		EventType: t,
		SessionID: c.opts.SessionID,
		AgentID:   c.opts.AgentID,
		Timestamp: time.Now().UTC().Format(time.RFC3339Nano),
		Payload:   raw,
	}, nil
}

func marshalPayload(payload any) (json.RawMessage, error) {
	switch p := payload.(type) {
	case json.RawMessage:
		return p, nil
	case []byte:
		return json.RawMessage(p), nil
	case nil:
		return json.RawMessage("{}"), nil
	}
	b, err := json.Marshal(payload)
	if err != nil {
		return nil, fmt.Errorf("client: payload: %w", err)
	}
	return b, nil
}

// Event sends a generic event built from the client's identity. A blocking
// type (pre_action, pre_prompt) waits for the decision; a fire-and-forget
// type is sent as a notification and yields allow.
func (c *Client) Event(ctx context.Context, t protocol.EventType, payload any) (protocol.Decision, error) {
	ev, err := c.NewEvent(t, payload)
	if err != nil {
		return protocol.Decision{}, err
	}
	return c.SendEvent(ctx, ev)
}

// SendEvent sends a full event as given, keeping its session, agent, depth,
// context and metadata. Typed blocking events must use SendTyped.
func (c *Client) SendEvent(ctx context.Context, ev *protocol.Event) (protocol.Decision, error) {
	if err := c.requireHandshake(); err != nil {
		return protocol.Decision{}, err
	}
	if !ev.EventType.Known() {
		return protocol.Decision{}, fmt.Errorf("client: unknown event type %q", ev.EventType)
	}
	if ev.EventType.Typed() || ev.EventType == protocol.EventHandshake || ev.EventType == protocol.EventQuery {
		return protocol.Decision{}, fmt.Errorf("client: %s is not answered by a generic decision; use the typed call", ev.EventType)
	}
	params, err := json.Marshal(ev)
	if err != nil {
		return protocol.Decision{}, fmt.Errorf("client: event: %w", err)
	}
	if !ev.EventType.Blocking() {
		if err := c.notify(ctx, jsonrpc.MethodEvent, params); err != nil {
			return protocol.Decision{}, err
		}
		return protocol.Allow(), nil
	}
	res, err := c.call(ctx, jsonrpc.MethodEvent, params)
	if err != nil {
		return c.fallback(err)
	}
	var d protocol.Decision
	if err := json.Unmarshal(res, &d); err != nil {
		return c.fallback(fmt.Errorf("client: bad decision from harness: %w", err))
	}
	return d, nil
}

// fallback applies the FailMode to a failed blocking call. Errors from the
// harness itself (a JSON-RPC error response) are always returned as errors:
// the harness answered, it refused the event.
func (c *Client) fallback(err error) (protocol.Decision, error) {
	// -32001 is what network transports report when the connection was
	// lost or refused before the harness could answer: that is not an
	// answer, so the fail mode applies.
	return failWith(c.opts.FailMode, err)
}

// failWith applies mode to err, the failure of a blocking generic event.
func failWith(mode FailMode, err error) (protocol.Decision, error) {
	if je, ok := err.(*jsonrpc.Error); ok && je.Code != jsonrpc.CodeTransportError {
		return protocol.Decision{}, err
	}
	switch mode {
	case FailClosed:
		return protocol.Block("harness unavailable, failing closed: " + err.Error()), nil
	case FailOpen:
		meta, _ := json.Marshal(map[string]any{"ahp_fail_open": true, "reason": err.Error()})
		return protocol.Decision{Kind: protocol.DecisionAllow, Metadata: meta}, nil
	}
	return protocol.Decision{}, err
}

// Notify sends a fire-and-forget event built from the client's identity.
func (c *Client) Notify(ctx context.Context, t protocol.EventType, payload any) error {
	ev, err := c.NewEvent(t, payload)
	if err != nil {
		return err
	}
	return c.NotifyEvent(ctx, ev)
}

// NotifyEvent sends a full fire-and-forget event as given.
func (c *Client) NotifyEvent(ctx context.Context, ev *protocol.Event) error {
	if err := c.requireHandshake(); err != nil {
		return err
	}
	if ev.EventType.Blocking() {
		return fmt.Errorf("client: %s is blocking and must be sent as a request", ev.EventType)
	}
	params, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("client: event: %w", err)
	}
	return c.notify(ctx, jsonrpc.MethodEvent, params)
}

// SendTyped sends a full typed event (idle, intent_detection, ...) and
// decodes its specialized decision into out, which must point to the
// matching decision type (for example *protocol.IdleDecision).
func (c *Client) SendTyped(ctx context.Context, ev *protocol.Event, out any) error {
	if err := c.requireHandshake(); err != nil {
		return err
	}
	if !ev.EventType.Typed() {
		return fmt.Errorf("client: %s is not a typed event", ev.EventType)
	}
	params, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("client: event: %w", err)
	}
	res, err := c.call(ctx, jsonrpc.MethodEvent, params)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(res, out); err != nil {
		return fmt.Errorf("client: bad %s decision from harness: %w", ev.EventType, err)
	}
	return nil
}

// Typed sends a typed event built from c's identity and returns its
// decision, for example:
//
//	d, err := client.Typed[protocol.IdleDecision](ctx, c, protocol.EventIdle, payload)
func Typed[D any](ctx context.Context, c *Client, t protocol.EventType, payload any) (D, error) {
	var d D
	ev, err := c.NewEvent(t, payload)
	if err != nil {
		return d, err
	}
	err = c.SendTyped(ctx, ev, &d)
	return d, err
}

// Batch sends events in one ahp/batch request and returns one decision per
// event, in order. Non-batchable events are refused before sending.
func (c *Client) Batch(ctx context.Context, events []protocol.Event) ([]protocol.Decision, error) {
	if err := c.requireHandshake(); err != nil {
		return nil, err
	}
	for i := range events {
		if !events[i].EventType.Batchable() {
			return nil, fmt.Errorf("client: events[%d]: event type %s cannot be batched", i, events[i].EventType)
		}
	}
	if events == nil {
		events = []protocol.Event{}
	}
	params, err := json.Marshal(protocol.BatchRequest{Events: events})
	if err != nil {
		return nil, fmt.Errorf("client: batch: %w", err)
	}
	res, err := c.call(ctx, jsonrpc.MethodBatch, params)
	if err != nil {
		return nil, err
	}
	var br protocol.BatchResponse
	if err := json.Unmarshal(res, &br); err != nil {
		return nil, fmt.Errorf("client: bad batch response: %w", err)
	}
	if len(br.Decisions) != len(events) {
		return nil, fmt.Errorf("client: batch response has %d decisions for %d events", len(br.Decisions), len(events))
	}
	return br.Decisions, nil
}

// Query sends ahp/query with the client's identity.
func (c *Client) Query(ctx context.Context, queryType string, payload any) (*protocol.QueryResponse, error) {
	if err := c.requireHandshake(); err != nil {
		return nil, err
	}
	raw, err := marshalPayload(payload)
	if err != nil {
		return nil, err
	}
	params, err := json.Marshal(protocol.QueryRequest{SessionID: c.opts.SessionID, AgentID: c.opts.AgentID, QueryType: queryType, Payload: raw})
	if err != nil {
		return nil, err
	}
	res, err := c.call(ctx, jsonrpc.MethodQuery, params)
	if err != nil {
		return nil, err
	}
	var qr protocol.QueryResponse
	if err := json.Unmarshal(res, &qr); err != nil {
		return nil, fmt.Errorf("client: bad query response: %w", err)
	}
	return &qr, nil
}
