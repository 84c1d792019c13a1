package conformance

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// oversized sends one request larger than Options.OversizeBytes on a
// connection of its own. The server must refuse it (an error answer, or
// closing that connection) and go on serving new connections.
func oversized(ctx context.Context, r *runner) (Status, string) {
	s, err := r.open(ctx)
	if err != nil {
		return Fail, "connecting: " + err.Error()
	}
	const id = "9001" // digits: every transport's client recognises it as a request
	s.issued["s:"+id] = true
	head := `{"jsonrpc":"2.0","id":"` + id + `","method":"ahp/event","params":{"event_type":"pre_action","session_id":"conformance","agent_id":"conformance","timestamp":"2026-01-01T00:00:00Z","depth":0,"payload":{"tool_name":"write_file","arguments":{"content":"`
	tail := `"}}}}`
	msg := make([]byte, 0, r.opts.OversizeBytes+len(head)+len(tail))
	msg = append(msg, head...)
	msg = append(msg, strings.Repeat("a", r.opts.OversizeBytes)...)
	msg = append(msg, tail...)
	outcome := ""
	s.timeout = 5 * r.opts.Timeout
	if err := s.send(ctx, msg); err != nil {
		outcome = "the write failed (" + err.Error() + ")"
	} else {
		t := time.NewTimer(s.timeout)
		for outcome == "" {
			resp, err := s.read(t.C)
			switch {
			case err == errNoAnswer:
				t.Stop()
				s.close()
				return Fail, fmt.Sprintf("a message of %d bytes was neither answered nor refused", len(msg))
			case err != nil:
				outcome = "the connection was closed"
			case resp.decErr != nil:
				outcome = "answered with a non-JSON-RPC message"
			case idKey(resp.ID) != "null" && idKey(resp.ID) != "s:"+id:
				continue
			case resp.Error != nil:
				outcome = fmt.Sprintf("refused with error %d %q", resp.Error.code(), resp.Error.Message)
			default:
				t.Stop()
				s.close()
				return Fail, fmt.Sprintf("a message of %d bytes was accepted and answered: a server must bound the size of a message", len(msg))
			}
		}
		t.Stop()
	}
	s.close()
	s2, err := r.open(ctx)
	if err != nil {
		return Fail, outcome + ", then connecting again failed: " + err.Error()
	}
	defer s2.close()
	if _, why := wantResult(s2.call(ctx, "ping", map[string]any{})); why != "" {
		return Fail, outcome + ", then a new connection was not answered: " + why
	}
	return Pass, fmt.Sprintf("%d bytes %s", len(msg), outcome)
}

// slow sends a pre_action the server takes long to decide (Options.SlowTool)
// and then a ping and a quick pre_action on the same connection: both
// must be answered while the slow one is still pending.
func slow(ctx context.Context, r *runner) (Status, string) {
	if r.opts.SlowTool == "" {
		return Skip, "no slow tool given (--slow-tool): nothing is known to be slow on this server"
	}
	s, err := r.open(ctx)
	if err != nil {
		return Fail, "connecting: " + err.Error()
	}
	defer s.close()
	if _, why := wantResult(s.call(ctx, "ahp/handshake", handshakeParams("2.4"))); why != "" {
		return Fail, "handshake: " + why
	}
	slowID, pingID, quickID := s.nextID("slow"), s.nextID("ping"), s.nextID("quick")
	slowEv := event("pre_action", 0, map[string]any{"action_type": "tool_call", "tool_name": r.opts.SlowTool, "arguments": map[string]any{}})
	start := time.Now()
	for _, m := range [][]byte{
		mustRequest(slowID, "ahp/event", slowEv),
		mustRequest(pingID, "ping", map[string]any{}),
		mustRequest(quickID, "ahp/event", event("pre_action", 0, preAction)),
	} {
		if err := s.send(ctx, m); err != nil {
			return Fail, err.Error()
		}
	}
	var order []string
	t := time.NewTimer(5 * r.opts.Timeout)
	defer t.Stop()
	for len(order) < 3 {
		resp, err := s.read(t.C)
		if err != nil {
			break
		}
		switch idKey(resp.ID) {
		case "s:" + slowID:
			order = append(order, "slow")
		case "s:" + pingID:
			order = append(order, "ping")
		case "s:" + quickID:
			order = append(order, "quick")
		}
		if len(order) == 2 && order[0] != "slow" && order[1] != "slow" {
			return Pass, fmt.Sprintf("ping and pre_action answered in %v while the slow request was pending", time.Since(start).Round(time.Millisecond))
		}
	}
	if len(order) > 0 && order[0] == "slow" {
		return Fail, fmt.Sprintf("answers came in the order %s: requests wait behind a slow one (or %q is not slow)", strings.Join(order, ", "), r.opts.SlowTool)
	}
	return Fail, fmt.Sprintf("answers received: %v", order)
}
