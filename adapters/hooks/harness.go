package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/transport"
)

// Harness is what the adapter asks: a harness reached over a connection
// (DialHarness) or served in the same process (ServerHarness).
type Harness interface {
	// Decide sends a blocking generic event (pre_action, pre_prompt).
	Decide(ctx context.Context, ev *protocol.Event) (protocol.Decision, error)
	// Confirm sends a confirmation event, which waits in the harness's
	// approval queue for a human.
	Confirm(ctx context.Context, ev *protocol.Event) (protocol.ConfirmationDecision, error)
	// Notify sends a fire-and-forget event and returns once it has left.
	Notify(ctx context.Context, ev *protocol.Event) error
}

// DialHarness is a Harness reached at an address (see transport.Dial). It
// connects on first use, with the handshake naming the first event's
// session and agent, and keeps the connection until Close.
type DialHarness struct {
	Addr    string
	Dial    transport.DialOptions
	Timeout time.Duration // bounds every wait for the harness
	Version string        // agent_info.version in the handshake

	mu sync.Mutex
	c  *client.Client
}

func (d *DialHarness) conn(ctx context.Context, ev *protocol.Event) (*client.Client, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.c != nil {
		return d.c, nil
	}
	dopts := d.Dial
	if dopts.Timeout == 0 {
		dopts.Timeout = d.Timeout
	}
	c, err := client.Dial(ctx, d.Addr, dopts, client.Options{
		Timeout: d.Timeout, FailMode: client.FailError,
		SessionID: ev.SessionID, AgentID: ev.AgentID, Framework: "ahp-hook", Version: d.Version,
	})
	if err != nil {
		return nil, fmt.Errorf("cannot reach the harness at %s (is `ahp serve` running there?): %w", d.Addr, err)
	}
	if _, err := c.Handshake(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("handshake: %w", err)
	}
	d.c = c
	return c, nil
}

// Decide implements Harness.
func (d *DialHarness) Decide(ctx context.Context, ev *protocol.Event) (protocol.Decision, error) {
	c, err := d.conn(ctx, ev)
	if err != nil {
		return protocol.Decision{}, err
	}
	return c.SendEvent(ctx, ev)
}

// Confirm implements Harness.
func (d *DialHarness) Confirm(ctx context.Context, ev *protocol.Event) (protocol.ConfirmationDecision, error) {
	var out protocol.ConfirmationDecision
	c, err := d.conn(ctx, ev)
	if err != nil {
		return out, err
	}
	err = c.SendTyped(ctx, ev, &out)
	return out, err
}

// Notify implements Harness. It pings after the notification so that it
// has left before the process exits.
func (d *DialHarness) Notify(ctx context.Context, ev *protocol.Event) error {
	c, err := d.conn(ctx, ev)
	if err != nil {
		return err
	}
	if err := c.NotifyEvent(ctx, ev); err != nil {
		return err
	}
	var je *jsonrpc.Error
	if err := c.Ping(ctx); err != nil && !(errors.As(err, &je) && je.Code == jsonrpc.CodeMethodNotFound) {
		return err
	}
	return nil
}

// Close closes the connection, if one was made.
func (d *DialHarness) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.c == nil {
		return nil
	}
	err := d.c.Close()
	d.c = nil
	return err
}

// MessageHandler handles one raw JSON-RPC message, as *server.Server does;
// the caller's identity travels in ctx (server.WithPeer).
type MessageHandler interface {
	HandleMessage(ctx context.Context, msg []byte) []byte
}

// ServerHarness asks a harness served in the same process.
type ServerHarness struct{ H MessageHandler }

// Decide implements Harness.
func (s ServerHarness) Decide(ctx context.Context, ev *protocol.Event) (protocol.Decision, error) {
	var d protocol.Decision
	err := s.call(ctx, ev, &d)
	return d, err
}

// Confirm implements Harness.
func (s ServerHarness) Confirm(ctx context.Context, ev *protocol.Event) (protocol.ConfirmationDecision, error) {
	var d protocol.ConfirmationDecision
	err := s.call(ctx, ev, &d)
	return d, err
}

// Notify implements Harness.
func (s ServerHarness) Notify(ctx context.Context, ev *protocol.Event) error {
	params, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	if resp := s.H.HandleMessage(ctx, jsonrpc.AppendRequest(nil, nil, jsonrpc.MethodEvent, params)); resp != nil {
		m, err := jsonrpc.Decode(resp)
		if err == nil && m.Error != nil {
			return m.Error
		}
	}
	return nil
}

func (s ServerHarness) call(ctx context.Context, ev *protocol.Event, out any) error {
	params, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	resp := s.H.HandleMessage(ctx, jsonrpc.AppendRequest(nil, json.RawMessage(`"1"`), jsonrpc.MethodEvent, params))
	m, err := jsonrpc.Decode(resp)
	switch {
	case err != nil:
		return fmt.Errorf("invalid answer from the harness: %w", err)
	case m.Error != nil:
		return m.Error
	case m.Result == nil:
		return errors.New("the harness answered with neither result nor error")
	}
	return json.Unmarshal(m.Result, out)
}
