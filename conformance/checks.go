package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ahp-go/ahp/protocol"
)

// The JSON-RPC error codes of spec §7.7.
const (
	codeParse       = -32700
	codeInvalidReq  = -32600
	codeNoMethod    = -32601
	codeBadParams   = -32602
	codeUnsupported = -32000
)

// event builds the params of ahp/event.
func event(typ string, depth uint32, payload any) map[string]any {
	return map[string]any{
		"event_type": typ,
		"session_id": "conformance",
		"agent_id":   "conformance",
		"timestamp":  "2026-01-01T00:00:00Z",
		"depth":      depth,
		"payload":    payload,
	}
}

// preAction is a harmless pre_action payload.
var preAction = map[string]any{"action_type": "tool_call", "tool_name": "read_file", "arguments": map[string]any{"path": "README.md"}}

// typedSamples are valid payloads of each typed event (spec §6).
var typedSamples = []struct {
	typ     string
	payload string
	decode  func([]byte) error
}{
	{"idle", `{"idle_duration_ms":1000,"idle_reason":"waiting for input"}`, decodeInto[protocol.IdleDecision]},
	{"intent_detection", `{"session_id":"conformance","prompt":"where is main.go","workspace":"."}`, decodeInto[protocol.IntentDetectionDecision]},
	{"context_perception", `{"session_id":"conformance","intent":"locate","target":{"location":{"path":".","location_type":"workspace"}},"context":{"workspace":"."}}`, decodeInto[protocol.ContextPerceptionDecision]},
	{"memory_recall", `{"session_id":"conformance","query":"build command","memory_type":"episodic","max_results":5,"working_directory":"."}`, decodeInto[protocol.MemoryRecallDecision]},
	{"planning", `{"session_id":"conformance","task_description":"add a test","available_strategies":["step_by_step",{"custom":"mine"}]}`, decodeInto[protocol.PlanningDecision]},
	{"reasoning", `{"session_id":"conformance","reasoning_type":"chain_of_thought","problem_statement":"why does the build fail"}`, decodeInto[protocol.ReasoningDecision]},
	{"rate_limit", `{"session_id":"conformance","limit_type":"llm_token_limit","retry_after_ms":100,"current_usage":"90%"}`, decodeInto[protocol.RateLimitDecision]},
	{"confirmation", `{"session_id":"conformance","confirmation_type":"user_confirm","message":"go on?"}`, decodeInto[protocol.ConfirmationDecision]},
}

func decodeInto[T any](b []byte) error {
	var v T
	return json.Unmarshal(b, &v)
}

// fireAndForget are the event types sent as notifications (spec §4).
var fireAndForget = []string{"post_action", "post_response", "session_start", "session_end", "error", "heartbeat", "success", "run_lifecycle", "task_list", "verification"}

// blocking are the event types sent as requests through ahp/event.
var blocking = []string{"pre_action", "pre_prompt", "idle", "intent_detection", "context_perception", "memory_recall", "planning", "reasoning", "rate_limit", "confirmation"}

const (
	validRun   = `{"run_id":"r1","session_id":"conformance","status":"executing","updated_at":"2026-01-01T00:00:00Z"}`
	invalidRun = `{"run_id":"r1","session_id":"conformance","status":"exploding","updated_at":"2026-01-01T00:00:00Z"}`
	badTasks   = `{"run_id":"r1","session_id":"conformance","tasks":[{"id":"t1","title":"x","status":"someday"}],"updated_at":"2026-01-01T00:00:00Z"}`
	badVerify  = `{"run_id":"r1","session_id":"conformance","status":"passed","checks":[{"id":"c1"}],"updated_at":"2026-01-01T00:00:00Z"}`
)

func raw(s string) json.RawMessage { return json.RawMessage(s) }

// wantError judges an answer that must be the JSON-RPC error code.
func wantError(resp *response, err error, code int) (Status, string) {
	if err != nil {
		return Fail, fmt.Sprintf("want error %d, got %v", code, err)
	}
	if resp.decErr != nil {
		return Fail, "answer is not JSON-RPC: " + resp.String()
	}
	if resp.Error == nil {
		return Fail, fmt.Sprintf("want error %d, got %s", code, resp)
	}
	if resp.Error.code() != code {
		return Fail, fmt.Sprintf("want error %d, got %d %q", code, resp.Error.code(), resp.Error.Message)
	}
	return Pass, ""
}

// expectError returns wantError for code, in a form that takes the two
// results of session.call.
func expectError(code int) func(*response, error) (Status, string) {
	return func(resp *response, err error) (Status, string) { return wantError(resp, err, code) }
}

// wantResult judges an answer that must be a result; it returns the result.
func wantResult(resp *response, err error) (json.RawMessage, string) {
	switch {
	case err != nil:
		return nil, err.Error()
	case resp.decErr != nil:
		return nil, "answer is not JSON-RPC: " + resp.String()
	case resp.Error != nil:
		return nil, fmt.Sprintf("want a result, got error %d %q", resp.Error.code(), resp.Error.Message)
	case resp.Result == nil:
		return nil, "want a result, got " + resp.String()
	}
	return resp.Result, ""
}

// onMain runs f on the shared handshaken connection.
func onMain(f func(ctx context.Context, r *runner, s *session) (Status, string)) func(context.Context, *runner) (Status, string) {
	return func(ctx context.Context, r *runner) (Status, string) {
		s, why := r.session(ctx)
		if s == nil {
			return Fail, why
		}
		return f(ctx, r, s)
	}
}

// onFresh runs f on a connection of its own, closed afterwards.
func onFresh(f func(ctx context.Context, r *runner, s *session) (Status, string)) func(context.Context, *runner) (Status, string) {
	return func(ctx context.Context, r *runner) (Status, string) {
		s, err := r.open(ctx)
		if err != nil {
			return Fail, "connecting: " + err.Error()
		}
		defer s.close()
		return f(ctx, r, s)
	}
}

// echoID sends ping with the given id and checks the answer carries it
// back with the same JSON type and value.
func echoID(id any) func(ctx context.Context, r *runner, s *session) (Status, string) {
	return func(ctx context.Context, _ *runner, s *session) (Status, string) {
		idJSON, _ := json.Marshal(id)
		key := idKey(idJSON)
		s.issued[key] = true
		if err := s.send(ctx, mustRequest(id, "ping", map[string]any{})); err != nil {
			return Fail, err.Error()
		}
		resp, err := s.await(key)
		if err != nil {
			for k, r := range s.stash {
				if len(k) > 2 && len(key) > 2 && k[2:] == key[2:] {
					return Fail, fmt.Sprintf("sent id %s, got %s back", idJSON, r.ID)
				}
			}
			return Fail, fmt.Sprintf("no answer carrying id %s (%v)", idJSON, err)
		}
		if !bytes.Equal(bytes.TrimSpace(resp.ID), idJSON) && idKey(resp.ID) != key {
			return Fail, fmt.Sprintf("sent id %s, got %s", idJSON, resp.ID)
		}
		return Pass, fmt.Sprintf("id %s echoed", idJSON)
	}
}

// rawError sends msg and waits for an error answer carrying id (or null).
func rawError(msg string, id string, code int) func(ctx context.Context, r *runner, s *session) (Status, string) {
	return func(ctx context.Context, _ *runner, s *session) (Status, string) {
		if id != "" {
			s.issued["s:"+id] = true
		}
		if err := s.send(ctx, []byte(msg)); err != nil {
			return Fail, err.Error()
		}
		t := time.NewTimer(s.timeout)
		defer t.Stop()
		for {
			resp, err := s.read(t.C)
			if err != nil {
				return Fail, fmt.Sprintf("want error %d, got %v", code, err)
			}
			k := idKey(resp.ID)
			if resp.decErr == nil && k != "null" && k != "s:"+id && s.issued[k] {
				s.keep(k, resp)
				continue
			}
			if k != "null" && (id == "" || k != "s:"+id) {
				return Fail, fmt.Sprintf("want error %d with id %s, got %s", code, orNull(id), resp)
			}
			return wantError(resp, nil, code)
		}
	}
}

func orNull(id string) string {
	if id == "" {
		return "null"
	}
	return `"` + id + `" or null`
}

// checks is every check, in the order they run.
var checks = []check{
	{"§2", "ping answered before the handshake", onFresh(func(ctx context.Context, _ *runner, s *session) (Status, string) {
		res, why := wantResult(s.call(ctx, "ping", map[string]any{}))
		if why != "" {
			return Fail, why
		}
		var obj map[string]any
		if json.Unmarshal(res, &obj) != nil || len(obj) != 0 {
			return Fail, "want result {}, got " + truncate(res)
		}
		return Pass, ""
	})},
	{"§3", "handshake 2.4 answered with a HandshakeResponse", onFresh(func(ctx context.Context, _ *runner, s *session) (Status, string) {
		res, why := wantResult(s.call(ctx, "ahp/handshake", handshakeParams("2.4")))
		if why != "" {
			return Fail, why
		}
		var hs protocol.HandshakeResponse
		if err := json.Unmarshal(res, &hs); err != nil {
			return Fail, "result does not decode as a HandshakeResponse: " + err.Error()
		}
		if hs.ProtocolVersion != "2.4" {
			return Fail, fmt.Sprintf("protocol_version is %q, want \"2.4\"", hs.ProtocolVersion)
		}
		return Pass, fmt.Sprintf("harness %s %s", hs.HarnessInfo.Name, hs.HarnessInfo.Version)
	})},
	{"§3", "minimal handshake (protocol_version 2.0, agent_info without capabilities) accepted", onFresh(func(ctx context.Context, _ *runner, s *session) (Status, string) {
		p := map[string]any{"protocol_version": "2.0", "agent_info": map[string]any{"framework": "curl", "version": "1"}}
		if _, why := wantResult(s.call(ctx, "ahp/handshake", p)); why != "" {
			return Fail, why
		}
		return Pass, ""
	})},
	{"§3", "unsupported major version rejected with -32000", onFresh(func(ctx context.Context, _ *runner, s *session) (Status, string) {
		return expectError(codeUnsupported)(s.call(ctx, "ahp/handshake", handshakeParams("3.0")))
	})},
	{"§1", "string id echoed as the same string", onMain(echoID("6f1c2d1e-8f3b-4c7a-9a51-0d2b3c4d5e6f"))},
	{"§1", "number id echoed as the same number", onMain(echoID(7))},
	{"§1", "number id 0 echoed (a valid id, not a notification)", onMain(echoID(0))},
	{"§1", "every answer carries jsonrpc \"2.0\"", onMain(func(ctx context.Context, _ *runner, s *session) (Status, string) {
		resp, err := s.call(ctx, "ping", nil)
		if err != nil {
			return Fail, err.Error()
		}
		if resp.JSONRPC == nil || *resp.JSONRPC != "2.0" {
			return Fail, "answer without jsonrpc \"2.0\": " + resp.String()
		}
		return Pass, ""
	})},
	{"§7.7", "malformed JSON answered with -32700 and id null", onFresh(rawError(`{"jsonrpc":"2.0","id":"bad-1","method":"ping"`, "", codeParse))},
	{"§7.7", "a method that is not a string answered with -32600", onFresh(rawError(`{"jsonrpc":"2.0","id":"bad-2","method":42}`, "bad-2", codeInvalidReq))},
	{"§7.7", "jsonrpc \"1.0\" answered with -32600", onFresh(rawError(`{"jsonrpc":"1.0","id":"bad-3","method":"ping"}`, "bad-3", codeInvalidReq))},
	{"§2", "unknown method answered with -32601", onMain(func(ctx context.Context, _ *runner, s *session) (Status, string) {
		return expectError(codeNoMethod)(s.call(ctx, "ahp/no_such_method", map[string]any{}))
	})},
	{"§2", "unknown notification ignored (not answered)", onMain(func(ctx context.Context, _ *runner, s *session) (Status, string) {
		if err := s.silent(ctx, notification("ahp/no_such_method", map[string]any{})); err != nil {
			return Fail, err.Error()
		}
		return Pass, ""
	})},
	{"§2", "ahp/query answered with a QueryResponse", onMain(func(ctx context.Context, _ *runner, s *session) (Status, string) {
		p := map[string]any{"session_id": "conformance", "agent_id": "conformance", "query_type": "check", "payload": map[string]any{"question": "may I read README.md?"}}
		res, why := wantResult(s.call(ctx, "ahp/query", p))
		if why != "" {
			return Fail, why
		}
		var q map[string]json.RawMessage
		if json.Unmarshal(res, &q) != nil {
			return Fail, "result is not an object: " + string(res)
		}
		if _, ok := q["answer"]; !ok {
			return Fail, "result has no answer: " + string(res)
		}
		var qr protocol.QueryResponse
		if err := json.Unmarshal(res, &qr); err != nil {
			return Fail, "result does not decode as a QueryResponse: " + err.Error()
		}
		return Pass, ""
	})},
	{"§7.6", "event without event_type answered with -32602", onMain(func(ctx context.Context, _ *runner, s *session) (Status, string) {
		ev := event("pre_action", 0, preAction)
		delete(ev, "event_type")
		return expectError(codeBadParams)(s.call(ctx, "ahp/event", ev))
	})},
	{"§7.6", "typed payload that does not parse answered with -32602", onMain(func(ctx context.Context, _ *runner, s *session) (Status, string) {
		return expectError(codeBadParams)(s.call(ctx, "ahp/event", event("planning", 0, raw(`{"session_id":"conformance","available_strategies":"all"}`))))
	})},
	{"§7.3", "every fire-and-forget event sent as a request refused with -32602", onMain(func(ctx context.Context, _ *runner, s *session) (Status, string) {
		var bad []string
		for _, typ := range fireAndForget {
			payload := any(map[string]any{})
			if typ == "run_lifecycle" {
				payload = raw(validRun)
			}
			if st, why := expectError(codeBadParams)(s.call(ctx, "ahp/event", event(typ, 0, payload))); st != Pass {
				bad = append(bad, typ+": "+why)
				if s.dead != nil {
					break
				}
			}
		}
		if len(bad) > 0 {
			return Fail, strings.Join(bad, "; ")
		}
		return Pass, fmt.Sprintf("%d event types", len(fireAndForget))
	})},
	{"§7.2", "every blocking event sent as a notification refused (not answered, connection usable)", onMain(func(ctx context.Context, _ *runner, s *session) (Status, string) {
		for _, typ := range blocking {
			if err := s.silent(ctx, notification("ahp/event", event(typ, 0, preAction))); err != nil {
				return Fail, typ + ": " + err.Error()
			}
		}
		return Pass, "the refusal itself is not visible on the wire"
	})},
	{"§4", "handshake and query events refused through ahp/event", onMain(func(ctx context.Context, _ *runner, s *session) (Status, string) {
		for _, typ := range []string{"handshake", "query"} {
			resp, err := s.call(ctx, "ahp/event", event(typ, 0, map[string]any{}))
			if err != nil {
				return Fail, typ + ": " + err.Error()
			}
			if resp.Error == nil {
				return Fail, typ + ": want an error, got " + resp.String()
			}
		}
		return Pass, ""
	})},
	{"§7.1", "event at max_depth accepted", onMain(func(ctx context.Context, r *runner, s *session) (Status, string) {
		if _, why := wantResult(s.call(ctx, "ahp/event", event("pre_action", r.maxDepth, preAction))); why != "" {
			return Fail, fmt.Sprintf("depth %d: %s", r.maxDepth, why)
		}
		return Pass, fmt.Sprintf("max_depth %d", r.maxDepth)
	})},
	{"§7.1", "request deeper than max_depth refused with -32602", onMain(func(ctx context.Context, r *runner, s *session) (Status, string) {
		return expectError(codeBadParams)(s.call(ctx, "ahp/event", event("pre_action", r.maxDepth+1, preAction)))
	})},
	{"§7.1", "notification deeper than max_depth dropped (not answered)", onMain(func(ctx context.Context, r *runner, s *session) (Status, string) {
		if err := s.silent(ctx, notification("ahp/event", event("post_action", r.maxDepth+1, map[string]any{}))); err != nil {
			return Fail, err.Error()
		}
		return Pass, ""
	})},
	{"§7.4", "invalid run_lifecycle notification refused (not answered)", onMain(func(ctx context.Context, _ *runner, s *session) (Status, string) {
		if err := s.silent(ctx, notification("ahp/event", event("run_lifecycle", 0, raw(invalidRun)))); err != nil {
			return Fail, err.Error()
		}
		return Pass, "the refusal itself is not visible on the wire"
	})},
	{"§5", "pre_action and pre_prompt answered with a Decision", onMain(func(ctx context.Context, _ *runner, s *session) (Status, string) {
		var kinds []string
		for _, ev := range []map[string]any{event("pre_action", 0, preAction), event("pre_prompt", 0, map[string]any{"prompt": "hello"})} {
			res, why := wantResult(s.call(ctx, "ahp/event", ev))
			if why != "" {
				return Fail, ev["event_type"].(string) + ": " + why
			}
			var d protocol.Decision
			if err := json.Unmarshal(res, &d); err != nil {
				return Fail, fmt.Sprintf("%s: %s does not decode as a Decision: %v", ev["event_type"], res, err)
			}
			kinds = append(kinds, string(d.Kind))
		}
		return Pass, strings.Join(kinds, ", ")
	})},
	{"§5", "every typed event answered with its typed decision", onMain(func(ctx context.Context, r *runner, s *session) (Status, string) {
		var bad []string
		for _, ts := range typedSamples {
			resp, err := s.call(ctx, "ahp/event", event(ts.typ, 0, raw(ts.payload)))
			res, why := wantResult(resp, err)
			if errors.Is(err, errNoAnswer) {
				// Say what the server needs rather than only that it was
				// silent: a harness may rightly hold an event for a human.
				why = fmt.Sprintf("no answer within %v: the suite needs each typed event answered without a human; "+
					"a server that holds this one for an approval must be configured to answer it at once (docs/conformance.md, \"What a server needs\")", r.opts.Timeout)
			}
			if why == "" {
				if err := ts.decode(res); err != nil {
					why = fmt.Sprintf("%s does not decode: %v", res, err)
				}
			}
			if why != "" {
				bad = append(bad, ts.typ+": "+why)
				if s.dead != nil {
					break
				}
			}
		}
		if len(bad) > 0 {
			return Fail, strings.Join(bad, "; ")
		}
		return Pass, fmt.Sprintf("%d typed events", len(typedSamples))
	})},
	{"§7.5", "batch answered with one decision per event", onMain(func(ctx context.Context, _ *runner, s *session) (Status, string) {
		evs := []any{event("pre_action", 0, preAction), event("post_action", 0, map[string]any{}), event("pre_prompt", 0, map[string]any{"prompt": "hi"})}
		ds, why := batchDecisions(ctx, s, evs)
		if why != "" {
			return Fail, why
		}
		if len(ds) != len(evs) {
			return Fail, fmt.Sprintf("%d events, %d decisions", len(evs), len(ds))
		}
		return Pass, ""
	})},
	{"§7.4", "run-contract payloads validated in a batch (bad ones block, in order)", onMain(func(ctx context.Context, _ *runner, s *session) (Status, string) {
		evs := []any{event("run_lifecycle", 0, raw(validRun)), event("task_list", 0, raw(badTasks)), event("run_lifecycle", 0, raw(validRun)), event("verification", 0, raw(badVerify)), event("run_lifecycle", 0, raw(invalidRun))}
		want := []bool{false, true, false, true, true}
		ds, why := batchDecisions(ctx, s, evs)
		if why != "" {
			return Fail, why
		}
		if len(ds) != len(evs) {
			return Fail, fmt.Sprintf("%d events, %d decisions", len(evs), len(ds))
		}
		for i, d := range ds {
			if (d.Kind == protocol.DecisionBlock) != want[i] {
				return Fail, fmt.Sprintf("decision %d is %s; want block only for the invalid payloads (1, 3, 4)", i, d.Kind)
			}
		}
		return Pass, ""
	})},
	{"§7.5", "batch larger than batch_size refused with -32602", onMain(func(ctx context.Context, r *runner, s *session) (Status, string) {
		evs := make([]any, r.batchSize+1)
		for i := range evs {
			evs[i] = event("post_action", 0, map[string]any{})
		}
		st, why := expectError(codeBadParams)(s.call(ctx, "ahp/batch", map[string]any{"events": evs}))
		if st == Pass {
			why = fmt.Sprintf("batch_size %d", r.batchSize)
		}
		return st, why
	})},
	{"§7.5", "non-batchable event in a batch refused with -32602", onMain(func(ctx context.Context, _ *runner, s *session) (Status, string) {
		evs := []any{event("pre_action", 0, preAction), event("idle", 0, raw(typedSamples[0].payload))}
		return expectError(codeBadParams)(s.call(ctx, "ahp/batch", map[string]any{"events": evs}))
	})},
	{"§7.6", "handler failure answered with -32603", func(context.Context, *runner) (Status, string) {
		return Skip, "a handler failure cannot be caused from the wire on an arbitrary server"
	}},
	{"§1", "50 pipelined requests each answered with its own id", onMain(func(ctx context.Context, _ *runner, s *session) (Status, string) {
		ids := make([]string, 50)
		for i := range ids {
			ids[i] = s.nextID("pipe")
			if err := s.send(ctx, mustRequest(ids[i], "ping", map[string]any{})); err != nil {
				return Fail, err.Error()
			}
		}
		for _, id := range ids {
			if _, why := wantResult(s.await("s:" + id)); why != "" {
				return Fail, id + ": " + why
			}
		}
		return Pass, ""
	})},
	{"§1", "oversized message refused without harm to the server", oversized},
	{"§1", "requests answered while another is slow", slow},
	{"§9", "credentials checked on network transports", func(context.Context, *runner) (Status, string) {
		return Skip, "needs the server's credential set-up; the suite connects with the credentials it was given"
	}},
}

// batchDecisions sends ahp/batch and decodes the decisions.
func batchDecisions(ctx context.Context, s *session, evs []any) ([]protocol.Decision, string) {
	res, why := wantResult(s.call(ctx, "ahp/batch", map[string]any{"events": evs}))
	if why != "" {
		return nil, why
	}
	var out struct {
		Decisions []protocol.Decision `json:"decisions"`
	}
	if err := json.Unmarshal(res, &out); err != nil {
		return nil, fmt.Sprintf("result %s does not decode: %v", truncate(res), err)
	}
	if out.Decisions == nil {
		return nil, "result has no decisions: " + truncate(res)
	}
	return out.Decisions, ""
}

func truncate(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}
