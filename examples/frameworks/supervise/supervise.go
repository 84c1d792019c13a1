// Package supervise asks an AHP harness before a framework runs a tool:
// the pieces the ADK and Eino examples share. Check turns the harness's
// decision into what a tool-call hook needs: run (with the arguments to
// use) or refuse (with the reason for the model).
package supervise

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/transport"
)

// Refused is returned by Check when the tool must not run; its message is
// meant for the model.
type Refused struct{ Reason string }

func (r *Refused) Error() string { return r.Reason }

// Check sends a pre_action for tool with args and returns the arguments
// to run the tool with, or a *Refused. Anything but allow or modify
// refuses: an escalation is not waited for here, a harness that cannot be
// reached refuses (the client fails closed).
func Check(ctx context.Context, c *client.Client, tool string, args map[string]any) (map[string]any, error) {
	d, err := c.Event(ctx, protocol.EventPreAction, map[string]any{"action_type": "tool_call", "tool_name": tool, "arguments": args})
	if err != nil {
		return nil, &Refused{Reason: "ahp: no decision: " + err.Error()}
	}
	switch d.Kind {
	case protocol.DecisionAllow, protocol.DecisionModify:
		if len(d.ModifiedPayload) == 0 {
			return args, nil
		}
		var m struct {
			Arguments map[string]any `json:"arguments"`
		}
		if err := json.Unmarshal(d.ModifiedPayload, &m); err != nil || m.Arguments == nil {
			return nil, &Refused{Reason: "ahp: modified payload without arguments"}
		}
		return m.Arguments, nil
	case protocol.DecisionBlock:
		return nil, &Refused{Reason: "ahp: blocked: " + d.Reason}
	}
	return nil, &Refused{Reason: fmt.Sprintf("ahp: %s: %s", d.Kind, d.Reason)}
}

// Report sends the post_action of a finished call.
func Report(ctx context.Context, c *client.Client, tool string, args map[string]any, result any, err error) {
	p := map[string]any{"action_type": "tool_call", "tool_name": tool, "arguments": args, "success": err == nil, "result": result}
	if err != nil {
		p["error"] = err.Error()
	}
	_ = c.Notify(ctx, protocol.EventPostAction, p)
}

// Connect dials the harness at addr, or, when addr is empty, starts a demo
// harness in this process (it blocks recursive deletes and rewrites
// "ls" to "ls -l"), so that the examples run with nothing else installed.
func Connect(ctx context.Context, addr, session string) (*client.Client, error) {
	opts := client.Options{SessionID: session, AgentID: "example", Framework: "ahp-example", Timeout: 10 * time.Second}
	var c *client.Client
	if addr == "" {
		agentSide, harnessSide := transport.Pipe()
		go func() { _ = server.New(demoHarness{}, server.Options{}).ServeConn(ctx, harnessSide) }()
		c = client.New(agentSide, opts)
	} else {
		var err error
		if c, err = client.Dial(ctx, addr, transport.DialOptions{}, opts); err != nil {
			return nil, err
		}
	}
	if _, err := c.Handshake(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

type demoHarness struct{ server.BaseHandler }

func (demoHarness) HandleEvent(_ context.Context, ev *protocol.Event) (protocol.Decision, error) {
	var p struct {
		Arguments map[string]any `json:"arguments"`
	}
	if err := json.Unmarshal(ev.Payload, &p); err != nil {
		return protocol.Decision{}, errors.New("bad payload")
	}
	cmd, _ := p.Arguments["command"].(string)
	switch {
	case strings.Contains(cmd, "rm -rf"):
		return protocol.Block("recursive deletes are not allowed"), nil
	case cmd == "ls":
		b, _ := json.Marshal(map[string]any{"tool_name": "shell", "arguments": map[string]any{"command": "ls -l"}})
		return protocol.Modify(b), nil
	}
	return protocol.Allow(), nil
}
