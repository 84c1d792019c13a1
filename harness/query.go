package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/transport"
)

// QueryTypes lists the query types the harness answers (docs/query.md).
// Any other type gets a null answer, except a payload with a "question"
// string (free text), which gets a best-effort check.
var QueryTypes = []string{protocol.QueryCheck, protocol.QueryBudget, protocol.QueryApproval, protocol.QueryRules, protocol.QueryPolicy}

// RoleObserver may ask about any session's budget, approvals and checks;
// other principals only about the sessions they opened (admin holds it).
const RoleObserver = "observer"

// Bounds on what a query may carry and what its answer may hold.
const (
	maxQueryTypeBytes    = 64
	maxQueryIDBytes      = 1024    // session_id and agent_id of a query
	maxQueryPayloadBytes = 1 << 20 // the payload of a query (a check's event payload included)
	maxQueryAnswerBytes  = 2 << 20 // the answer, encoded
	maxQuestionBytes     = 4 << 10 // a free-text question
)

// errQueryNotRecorded is the reason of every query answered while the audit
// log cannot take its record: no answer leaves without a trace.
const errQueryNotRecorded = "harness could not record the query (audit log unavailable); no answer (fail closed)"

// queryCall is one ahp/query in progress.
type queryCall struct {
	h       *Harness
	q       *protocol.QueryRequest
	peer    transport.Info
	start   time.Time
	summary map[string]any // what the audit record says of the answer
	se      *sealed        // set when the query was redacted for the record
}

// answer is what a query type returns: a JSON-encodable answer (nil for
// none) and a reason.
type answer struct {
	value        any
	reason       string
	alternatives []string
}

// HandleQuery answers ahp/query (docs/query.md). A query is limited per
// session, may ask only about the principal's own sessions unless it holds
// RoleObserver, is recorded in the audit log as a query (event_type
// "query", never as a decision) and changes no counter, decision or
// approval.
func (h *Harness) HandleQuery(ctx context.Context, q *protocol.QueryRequest) (protocol.QueryResponse, error) {
	c := &queryCall{h: h, q: q, peer: peerOf(ctx), start: h.now()}
	if reason := checkQueryBounds(q); reason != "" {
		return nullAnswer(reason, nil), nil
	}
	if wait, ok := h.queries.allow(q.SessionID, h.queryRate(), h.queryBurst(), c.start); !ok {
		return nullAnswer(fmt.Sprintf("query rate limit of session reached (%g per second, burst %d); retry after %d ms",
			h.queryRate(), h.queryBurst(), wait.Milliseconds()), nil), nil
	}
	if wait, ok := h.queries.allowPrincipal(principalID(c.peer), h.queryRate(), h.queryBurst(), c.start); !ok {
		return nullAnswer(fmt.Sprintf("query rate limit of principal reached (%g per second, burst %d, over all its sessions); retry after %d ms",
			h.queryRate()*principalQueryFactor, h.queryBurst()*principalQueryFactor, wait.Milliseconds()), nil), nil
	}
	if reason := h.mayAsk(ctx, c.peer, q.SessionID); reason != "" {
		c.record(ctx, "rejected", reason)
		return nullAnswer(reason, nil), nil
	}
	a := c.dispatch(ctx)
	resp := protocol.QueryResponse{Answer: jsonNull, Reason: a.reason, Alternatives: a.alternatives}
	if a.value != nil {
		b, err := json.Marshal(a.value)
		switch {
		case err != nil:
			resp.Reason = "answer could not be encoded: " + err.Error()
		case len(b) > maxQueryAnswerBytes:
			resp.Reason = fmt.Sprintf("answer too large (%d bytes, limit %d); ask a narrower question", len(b), maxQueryAnswerBytes)
		default:
			resp.Answer = b
		}
	}
	if !c.record(ctx, "", "") {
		return nullAnswer(errQueryNotRecorded, nil), nil
	}
	return resp, nil
}

var jsonNull = json.RawMessage("null")

func nullAnswer(reason string, alternatives []string) protocol.QueryResponse {
	return protocol.QueryResponse{Answer: jsonNull, Reason: reason, Alternatives: alternatives}
}

// checkQueryBounds refuses queries whose parts are larger than a query
// needs (the transport already bounds the whole message).
func checkQueryBounds(q *protocol.QueryRequest) string {
	switch {
	case len(q.QueryType) > maxQueryTypeBytes:
		return fmt.Sprintf("query_type too long (%d bytes, limit %d)", len(q.QueryType), maxQueryTypeBytes)
	case len(q.SessionID) > maxQueryIDBytes || len(q.AgentID) > maxQueryIDBytes:
		return fmt.Sprintf("session_id or agent_id too long (limit %d bytes)", maxQueryIDBytes)
	case len(q.Payload) > maxQueryPayloadBytes:
		return fmt.Sprintf("query payload too large (%d bytes, limit %d)", len(q.Payload), maxQueryPayloadBytes)
	}
	return ""
}

// dispatch answers by query type.
func (c *queryCall) dispatch(ctx context.Context) answer {
	switch c.q.QueryType {
	case protocol.QueryCheck:
		return c.check()
	case protocol.QueryBudget:
		return c.budget()
	case protocol.QueryApproval:
		return c.approval(ctx)
	case protocol.QueryRules:
		return c.rules()
	case protocol.QueryPolicy:
		return c.policy()
	}
	if question, ok := questionOf(c.q.Payload); ok {
		return c.freeText(question)
	}
	c.summary = map[string]any{"answered": false}
	return answer{reason: fmt.Sprintf("no answer for query type %q (this harness answers %s)", clip(c.q.QueryType, maxQueryTypeBytes), strings.Join(QueryTypes, ", ")),
		alternatives: QueryTypes}
}

// decodePayload decodes a query payload into v; an absent or null payload
// leaves v as it is.
func decodePayload(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("payload: %v", err)
	}
	return nil
}

// record writes the audit record of the query: event_type "query", no
// decision, the query as its payload and a summary of the answer as its
// metadata, all redacted. It reports whether the record is durable.
func (c *queryCall) record(ctx context.Context, outcome, errText string) bool {
	h, q := c.h, c.q
	payload, err := json.Marshal(struct {
		QueryType string          `json:"query_type"`
		Payload   json.RawMessage `json:"payload"`
	}{q.QueryType, orNull(q.Payload)})
	if err != nil {
		return false
	}
	ev := &protocol.Event{EventType: protocol.EventQuery, SessionID: q.SessionID, AgentID: q.AgentID,
		Timestamp: c.start.UTC().Format(time.RFC3339Nano), Payload: payload}
	if c.summary != nil {
		ev.Metadata, _ = json.Marshal(map[string]any{"answer": c.summary})
	}
	sv := h.seal(ev, policy.SecretsUnknown)
	if c.se != nil {
		sv.kinds.Merge(c.se.kinds)
	}
	evJSON, err := sv.ev.AppendJSON(nil)
	if err != nil {
		return false
	}
	rec := &store.AuditRecord{
		Time: c.start, SessionID: sv.ev.SessionID, AgentID: sv.ev.AgentID, EventType: string(protocol.EventQuery),
		Blocking: true, Event: evJSON, Outcome: outcome, PolicyVersion: h.opts.Engine.Version(),
		Principal: principalID(c.peer), Transport: c.peer.Transport, Latency: h.now().Sub(c.start),
		Error: sv.text(errText), DescriptorHash: h.descriptorHash(),
	}
	rec.Redacted = sv.kinds.List()
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := h.opts.Store.Audit().Append(actx, rec); err != nil {
		h.log.Error("audit append failed for a query: no answer", "error", err, "query_type", clip(q.QueryType, maxQueryTypeBytes))
		return false
	}
	h.observeRecord(rec)
	return true
}

func orNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return jsonNull
	}
	return raw
}

// clip shortens s to at most n bytes (for messages that quote input).
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// mayAsk returns why the caller may not ask about session, or "". A
// principal may ask about the sessions it opened (see sessionOwner) and
// about sessions nobody opened yet; RoleObserver (and admin) may ask about
// any.
func (h *Harness) mayAsk(ctx context.Context, peer transport.Info, session string) string {
	if peer.Principal.Has(RoleObserver) {
		return ""
	}
	owner, known, err := h.sessionOwner(ctx, session)
	switch {
	case err != nil:
		h.log.Error("session owner unknown: query refused", "error", err)
		return "harness could not tell whose session this is (audit log unavailable); query refused (fail closed)"
	case known && owner != principalID(peer):
		return fmt.Sprintf("session %q belongs to another principal: a principal may ask only about its own sessions unless it holds role %s",
			clip(session, 128), RoleObserver)
	}
	return ""
}

// sessionOwner returns the principal that opened a session: the one of
// its first handshake, else of its first audit record unless that record
// is a query (asking about a session does not claim it).
func (h *Harness) sessionOwner(ctx context.Context, session string) (string, bool, error) {
	if owner, ok := h.queries.owner(session); ok {
		return owner, true, nil
	}
	for _, f := range []store.AuditFilter{
		{SessionID: session, EventType: string(protocol.EventHandshake), Limit: 1},
		{SessionID: session, Limit: 1},
	} {
		recs, err := h.opts.Store.Audit().Query(ctx, f)
		if err != nil {
			return "", false, err
		}
		if len(recs) == 1 && recs[0].EventType != string(protocol.EventQuery) {
			h.queries.setOwner(session, recs[0].Principal)
			return recs[0].Principal, true, nil
		}
	}
	return "", false, nil
}

func (h *Harness) queryRate() float64 {
	if h.opts.QueryRate > 0 {
		return h.opts.QueryRate
	}
	return 10
}

func (h *Harness) queryBurst() int {
	if h.opts.QueryBurst > 0 {
		return h.opts.QueryBurst
	}
	return 20
}
