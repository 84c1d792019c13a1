// Package mcpproxy is a supervising MCP proxy: it sits between an MCP
// client and an MCP server, passes every message through unchanged, except
// that each tools/call is first decided by an AHP harness (pre_action) and
// reported after it returns (post_action), and tools/list answers can be
// narrowed to an allow-list. A tools/call is judged on one reading of its
// params, the exact one MCP servers make: params another reader could
// read differently are refused, never forwarded, and a tools/call sent as
// a notification (no id, so no answer) is dropped. It works on the connections of the official
// Go SDK (github.com/modelcontextprotocol/go-sdk), so any of its transports
// can sit on either side.
package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ahp-go/ahp/adapters/hooks"
	"github.com/ahp-go/ahp/internal/jsonscan"
	"github.com/ahp-go/ahp/internal/textcut"
	"github.com/ahp-go/ahp/protocol"
)

// Options configure a Proxy.
type Options struct {
	// Harness decides the tool calls (required).
	Harness hooks.Harness
	// ServerName names the MCP server in every event's payload ("server").
	ServerName string
	// SessionID and AgentID are the events' AHP session and agent ids
	// ("mcp-proxy" for the agent when empty).
	SessionID, AgentID string
	// AllowTools, when not nil, is the tool allow-list: tools/list shows
	// only these tools, and calls to others are refused without asking
	// the harness.
	AllowTools map[string]bool
	// Timeout bounds one decision, an escalation's wait for a human
	// included (5 minutes when 0).
	Timeout time.Duration
	// Logger receives what goes wrong (discarded when nil).
	Logger *slog.Logger
}

// Proxy relays messages between client (the MCP client's side) and server
// (the MCP server's side) until either side closes or ctx ends. Both
// connections are closed on return.
func Proxy(ctx context.Context, client, server mcp.Connection, opts Options) error {
	if opts.Harness == nil {
		return errors.New("mcpproxy: no harness")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Minute
	}
	if opts.AgentID == "" {
		opts.AgentID = "mcp-proxy"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := &proxy{opts: opts, client: client, server: server, calls: map[string]*call{}, lists: map[string]bool{}}
	errc := make(chan error, 2)
	go func() { errc <- p.fromClient(ctx) }()
	go func() { errc <- p.fromServer(ctx) }()
	err := <-errc
	cancel()
	client.Close()
	server.Close()
	<-errc
	p.wg.Wait()
	return err
}

type proxy struct {
	opts           Options
	client, server mcp.Connection
	wg             sync.WaitGroup

	mu    sync.Mutex
	calls map[string]*call // tools/call requests forwarded, by id
	lists map[string]bool  // tools/list requests forwarded, by id
}

// call is a tools/call on its way.
type call struct {
	tool string
	args json.RawMessage
	ev   *protocol.Event
}

func idKey(id jsonrpc.ID) string { return fmt.Sprintf("%T:%v", id.Raw(), id.Raw()) }

// fromClient relays the client's messages to the server, stopping each
// tools/call for a decision first.
func (p *proxy) fromClient(ctx context.Context) error {
	for {
		msg, err := p.client.Read(ctx)
		if err != nil {
			return err
		}
		req, ok := msg.(*jsonrpc.Request)
		if ok && !req.IsCall() && req.Method == "tools/call" {
			// A tools/call without an id gets no answer, so it cannot be
			// refused; it is not forwarded either, as nothing would
			// report it to the harness.
			p.opts.Logger.Warn("mcp-proxy: dropped a tools/call sent as a notification (no id); it was not forwarded to the server")
			continue
		}
		if ok && req.IsCall() {
			switch req.Method {
			case "tools/call":
				// Decided on its own goroutine: a call that waits for a
				// human must not hold up the others.
				p.wg.Add(1)
				go func() {
					defer p.wg.Done()
					p.toolCall(ctx, req)
				}()
				continue
			case "tools/list":
				if p.opts.AllowTools != nil {
					p.mu.Lock()
					p.lists[idKey(req.ID)] = true
					p.mu.Unlock()
				}
			}
		}
		if err := p.server.Write(ctx, msg); err != nil {
			return err
		}
	}
}

// fromServer relays the server's messages to the client, narrowing
// tools/list answers and reporting finished tool calls.
func (p *proxy) fromServer(ctx context.Context) error {
	for {
		msg, err := p.server.Read(ctx)
		if err != nil {
			return err
		}
		if resp, ok := msg.(*jsonrpc.Response); ok {
			key := idKey(resp.ID)
			p.mu.Lock()
			c, list := p.calls[key], p.lists[key]
			delete(p.calls, key)
			delete(p.lists, key)
			p.mu.Unlock()
			if list && resp.Error == nil {
				resp.Result = p.filterList(resp.Result)
			}
			if c != nil {
				p.report(ctx, c, resp)
			}
		}
		if err := p.client.Write(ctx, msg); err != nil {
			return err
		}
	}
}

// callParams are the parts of tools/call params the proxy reads; the
// other members are kept as they came.
type callParams struct {
	Name      string
	Arguments json.RawMessage
}

// readCall reads name and arguments from tools/call params exactly, the
// way MCP servers read them (member names matched exactly). Params that
// another reader could read differently are refused: malformed JSON, an
// I-JSON profile problem (a duplicated member, names that differ only in
// case, invalid UTF-8, a lone surrogate, a number out of range), a member
// named like "name" or "arguments" in another letter case, a missing,
// empty or non-string name, or arguments that are not an object.
func readCall(params json.RawMessage) (callParams, error) {
	var c callParams
	if len(params) == 0 {
		return c, errors.New("the call has no params")
	}
	if err := jsonscan.Check(params); err != nil {
		var pe *jsonscan.ProfileError
		if errors.As(err, &pe) {
			return c, fmt.Errorf("the params can be read in more than one way: %v", pe)
		}
		return c, errors.New("the params are not well-formed JSON")
	}
	var haveName bool
	err := jsonscan.ObjectValid(params, func(key, val []byte) error {
		if want, ok := jsonscan.CaseVariant(key, "name", "arguments"); ok {
			return fmt.Errorf("the params have a member %q, which some servers read as %q", jsonscan.ReportedKey(key), want)
		}
		switch string(key) {
		case "name":
			n, ok := jsonscan.String(val)
			if !ok {
				return errors.New("the tool name is not a string")
			}
			c.Name, haveName = n, true
		case "arguments":
			switch jsonscan.Kind(val) {
			case '{':
				c.Arguments = json.RawMessage(val)
			case 'n':
				c.Arguments = nil
			default:
				return errors.New("the arguments are not an object")
			}
		}
		return nil
	})
	switch {
	case errors.Is(err, jsonscan.ErrNotObject):
		return c, errors.New("the params are not an object")
	case errors.Is(err, jsonscan.ErrSyntax):
		return c, errors.New("the params are not well-formed JSON")
	case err != nil:
		return c, err
	case !haveName:
		return c, errors.New("the params have no tool name")
	case c.Name == "":
		return c, errors.New("the tool name is empty")
	}
	return c, nil
}

func (p *proxy) toolCall(ctx context.Context, req *jsonrpc.Request) {
	params, err := readCall(req.Params)
	if err != nil {
		// Never forwarded: what the server would run cannot be judged.
		p.refuse(ctx, req, "ahp: tools/call refused: "+err.Error())
		return
	}
	if p.opts.AllowTools != nil && !p.opts.AllowTools[params.Name] {
		p.refuse(ctx, req, fmt.Sprintf("ahp: tool %q is not in the allow-list of this proxy", params.Name))
		return
	}
	args := params.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	ev := p.event(protocol.EventPreAction, params.Name, args, nil)
	ev.Metadata = escalationWait(p.opts.Timeout)
	dctx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
	defer cancel()
	d, err := p.opts.Harness.Decide(dctx, ev)
	if err != nil {
		p.refuse(ctx, req, "ahp: no decision from the harness, failing closed: "+err.Error())
		return
	}
	switch d.Kind {
	case protocol.DecisionAllow:
		if len(d.ModifiedPayload) > 0 && string(d.ModifiedPayload) != "null" {
			p.modified(ctx, req, params, d.ModifiedPayload, ev)
			return
		}
		p.forwardCall(ctx, req, params.Name, args, ev)
	case protocol.DecisionModify:
		p.modified(ctx, req, params, d.ModifiedPayload, ev)
	case protocol.DecisionBlock:
		if id, rule, expired := expiredApproval(d); expired {
			p.refuse(ctx, req, "ahp: approval needed ("+rule+", approval "+id+"): no approver answered in time")
			return
		}
		p.refuse(ctx, req, "ahp: blocked by the harness: "+orDefault(d.Reason, "no reason given"))
	case protocol.DecisionDefer:
		p.refuse(ctx, req, fmt.Sprintf("ahp: deferred by the harness: %s; retry in %d ms", orDefault(d.Reason, "not now"), d.RetryAfterMs))
	case protocol.DecisionEscalate:
		p.escalate(dctx, ctx, req, params.Name, args, ev, orDefault(d.Reason, "the harness asks for a human decision"))
	default:
		p.refuse(ctx, req, fmt.Sprintf("ahp: the harness answered %q, which cannot be mapped; failing closed", d.Kind))
	}
}

// escalate waits in the harness's approval queue; only an approval lets
// the call through.
func (p *proxy) escalate(dctx, ctx context.Context, req *jsonrpc.Request, tool string, args json.RawMessage, ev *protocol.Event, reason string) {
	payload, _ := json.Marshal(protocol.ConfirmationPayload{
		SessionID:        ev.SessionID,
		ConfirmationType: protocol.ConfirmationType{Name: "safety_confirm"},
		Message:          fmt.Sprintf("MCP tool %s of %s with %s: %s", tool, orDefault(p.opts.ServerName, "the server"), showArguments(args), reason),
		Options:          []string{"approve", "reject"},
	})
	cev := *ev
	cev.EventType = protocol.EventConfirmation
	cev.Payload = payload
	cd, err := p.opts.Harness.Confirm(dctx, &cev)
	switch {
	case err != nil:
		p.refuse(ctx, req, "ahp: approval needed ("+reason+") but none came: "+err.Error())
	case cd.Decision == "approve":
		p.forwardCall(ctx, req, tool, args, ev)
	case cd.Decision == "reject":
		p.refuse(ctx, req, "ahp: rejected by an approver: "+orDefault(cd.Reason, "no reason given"))
	default:
		p.refuse(ctx, req, "ahp: approval needed ("+reason+"): no approver answered in time")
	}
}

// modified forwards the call with the harness's arguments; a change the
// proxy cannot make (another tool, no arguments object) is refused.
func (p *proxy) modified(ctx context.Context, req *jsonrpc.Request, params callParams, payload json.RawMessage, ev *protocol.Event) {
	var m struct {
		ToolName  *string         `json:"tool_name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(payload, &m) != nil || json.Unmarshal(m.Arguments, &obj) != nil || obj == nil {
		p.refuse(ctx, req, "ahp: the harness modified the call without an arguments object; failing closed")
		return
	}
	if m.ToolName != nil && *m.ToolName != params.Name {
		p.refuse(ctx, req, "ahp: the harness changed the tool name, which the proxy does not do; failing closed")
		return
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(req.Params, &all); err != nil {
		p.refuse(ctx, req, "ahp: cannot rewrite the call's params; failing closed")
		return
	}
	all["arguments"] = m.Arguments
	np, err := json.Marshal(all)
	if err != nil {
		p.refuse(ctx, req, "ahp: cannot rewrite the call's params; failing closed")
		return
	}
	out := *req
	out.Params = np
	p.forwardCall(ctx, &out, params.Name, m.Arguments, ev)
}

func (p *proxy) forwardCall(ctx context.Context, req *jsonrpc.Request, tool string, args json.RawMessage, ev *protocol.Event) {
	p.mu.Lock()
	p.calls[idKey(req.ID)] = &call{tool: tool, args: args, ev: ev}
	p.mu.Unlock()
	p.forward(ctx, req)
}

func (p *proxy) forward(ctx context.Context, req *jsonrpc.Request) {
	if err := p.server.Write(ctx, req); err != nil {
		p.opts.Logger.Warn("mcp-proxy: cannot forward to the server", "method", req.Method, "error", err)
	}
}

// refuse answers a tools/call with a tool error carrying reason.
func (p *proxy) refuse(ctx context.Context, req *jsonrpc.Request, reason string) {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: reason}}, IsError: true}
	b, err := json.Marshal(res)
	if err != nil {
		p.opts.Logger.Error("mcp-proxy: cannot encode a refusal", "error", err)
		return
	}
	if err := p.client.Write(ctx, &jsonrpc.Response{ID: req.ID, Result: b}); err != nil {
		p.opts.Logger.Warn("mcp-proxy: cannot answer the client", "error", err)
	}
}

// report sends the post_action of a finished tool call.
func (p *proxy) report(ctx context.Context, c *call, resp *jsonrpc.Response) {
	success, problem := resultSuccess(resp)
	extra := map[string]any{"success": success}
	if problem != "" {
		extra["result_problem"] = problem
	}
	if resp.Error != nil {
		extra["error"] = resp.Error.Error()
	} else if len(resp.Result) <= 64<<10 {
		extra["result"] = json.RawMessage(resp.Result)
	} else {
		extra["result_truncated"] = true
	}
	ev := p.event(protocol.EventPostAction, c.tool, c.args, extra)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := p.opts.Harness.Notify(nctx, ev); err != nil {
			p.opts.Logger.Warn("mcp-proxy: post_action not recorded", "tool", c.tool, "error", err)
		}
	}()
}

// resultSuccess reads a tools/call answer's isError exactly, as MCP
// clients read it. A result that could be read in more than one way (an
// I-JSON profile problem, an "isError" in another letter case, an isError
// that is not a boolean) does not count as a success; problem says why.
func resultSuccess(resp *jsonrpc.Response) (success bool, problem string) {
	if resp.Error != nil {
		return false, ""
	}
	if err := jsonscan.Check(resp.Result); err != nil {
		var pe *jsonscan.ProfileError
		if errors.As(err, &pe) {
			return false, "the result can be read in more than one way: " + pe.Error()
		}
		return false, "the result is not well-formed JSON"
	}
	isError := false
	err := jsonscan.ObjectValid(resp.Result, func(key, val []byte) error {
		if _, ok := jsonscan.CaseVariant(key, "isError"); ok {
			return fmt.Errorf("the result has a member %q, which some clients read as \"isError\"", jsonscan.ReportedKey(key))
		}
		if string(key) == "isError" {
			switch jsonscan.Kind(val) {
			case 't':
				isError = true
			case 'f', 'n':
			default:
				return errors.New("the result's isError is not a boolean")
			}
		}
		return nil
	})
	switch {
	case errors.Is(err, jsonscan.ErrNotObject):
		return false, "the result is not an object"
	case err != nil:
		return false, err.Error()
	}
	return !isError, ""
}

func (p *proxy) event(t protocol.EventType, tool string, args json.RawMessage, extra map[string]any) *protocol.Event {
	payload := map[string]any{"action_type": "tool_call", "tool_name": tool, "arguments": args, "agent": "mcp-proxy"}
	if p.opts.ServerName != "" {
		payload["server"] = p.opts.ServerName
	}
	for k, v := range extra {
		payload[k] = v
	}
	raw, _ := json.Marshal(payload)
	return &protocol.Event{EventType: t, SessionID: p.opts.SessionID, AgentID: p.opts.AgentID,
		Timestamp: time.Now().UTC().Format(time.RFC3339Nano), Payload: raw}
}

// filterList keeps only allowed tools in a tools/list result.
func (p *proxy) filterList(result json.RawMessage) json.RawMessage {
	var all map[string]json.RawMessage
	var tools []json.RawMessage
	if json.Unmarshal(result, &all) != nil || json.Unmarshal(all["tools"], &tools) != nil {
		return result
	}
	kept := tools[:0]
	for _, t := range tools {
		var n struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(t, &n) == nil && p.opts.AllowTools[n.Name] {
			kept = append(kept, t)
		}
	}
	all["tools"], _ = json.Marshal(kept)
	out, err := json.Marshal(all)
	if err != nil {
		return result
	}
	return out
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// maxShownArguments bounds how much of a call's arguments an approval
// message shows.
const maxShownArguments = 64 << 10

// showArguments returns the arguments as an approver should see them:
// whole when they fit in maxShownArguments bytes, else cut at a UTF-8
// boundary with the number of bytes left out said plainly, so a harmless
// head never passes for the whole command.
func showArguments(args json.RawMessage) string {
	head, left := textcut.Head(string(args), maxShownArguments)
	if left == 0 {
		return head
	}
	return fmt.Sprintf("%s… [%d more bytes not shown]", head, left)
}
