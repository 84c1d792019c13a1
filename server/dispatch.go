package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
)

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

func getBuf() []byte { return (*bufPool.Get().(*[]byte))[:0] }

func putBuf(b []byte) {
	if cap(b) > 64<<10 {
		return // do not keep large buffers around
	}
	bufPool.Put(&b)
}

// HandleMessage handles one raw JSON-RPC message and returns the response
// to send, or nil when there is none (a notification). It is the entry
// point for transports without a persistent stream, such as HTTP; the
// peer's info should be in ctx (see WithPeer).
func (s *Server) HandleMessage(ctx context.Context, msg []byte) []byte {
	m, derr := jsonrpc.Decode(msg)
	if derr != nil {
		return s.refuse(ctx, msg, derr)
	}
	switch m.Kind {
	case jsonrpc.KindNotification:
		s.handleNotification(ctx, &m, msg)
		return nil
	case jsonrpc.KindResponse:
		return nil
	}
	return s.handleRequest(ctx, &m, nil)
}

// refuse answers a message jsonrpc.Decode refused, or returns nil when the
// message reads as a notification (which gets no answer: it is logged,
// counted and reported to the RejectionObserver instead).
func (s *Server) refuse(ctx context.Context, msg []byte, err error) []byte {
	var de *jsonrpc.DecodeError
	if errors.As(err, &de) && de.Notification {
		s.logRefused(de.Msg, "", "")
		if s.rejObs != nil {
			s.rejObs.EventRejected(ctx, msg, de.Msg)
		}
		return nil
	}
	return decodeErrorResponse(err)
}

func decodeErrorResponse(err error) []byte {
	var de *jsonrpc.DecodeError
	if !errors.As(err, &de) {
		de = &jsonrpc.DecodeError{Code: jsonrpc.CodeInvalidRequest, Msg: err.Error()}
	}
	id := de.ID
	if id == nil {
		id = jsonrpc.Null
	}
	return jsonrpc.AppendError(nil, id, &jsonrpc.Error{Code: de.Code, Message: de.Msg})
}

func tooLargeResponse(limit int) []byte {
	return jsonrpc.AppendError(nil, jsonrpc.Null, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest,
		"Invalid Request: message larger than the limit of %d bytes", limit))
}

// handleRequest answers one request, appending the response to buf.
func (s *Server) handleRequest(ctx context.Context, m *jsonrpc.Message, buf []byte) []byte {
	if s.opts.HandlerTimeout > 0 && m.Method != jsonrpc.MethodPing {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.opts.HandlerTimeout)
		defer cancel()
	}
	var rerr *jsonrpc.Error
	start := len(buf)
	buf = jsonrpc.AppendResultStart(buf, m.ID)
	switch m.Method {
	case jsonrpc.MethodPing:
		buf = append(buf, "{}"...)
	case jsonrpc.MethodEvent:
		buf, rerr = s.handleEvent(ctx, m.Params, buf)
	case jsonrpc.MethodHandshake:
		buf, rerr = s.handleHandshake(ctx, m.Params, buf)
	case jsonrpc.MethodQuery:
		buf, rerr = s.handleQuery(ctx, m.Params, buf)
	case jsonrpc.MethodBatch:
		buf, rerr = s.handleBatch(ctx, m.Params, buf)
	default:
		rerr = jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "Method not found: %s", m.Method)
	}
	if rerr != nil {
		return jsonrpc.AppendError(buf[:start], m.ID, rerr)
	}
	return append(buf, '}')
}

func invalidParams(format string, args ...any) *jsonrpc.Error {
	return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: "+format, args...)
}

func handlerError(err error) *jsonrpc.Error {
	return jsonrpc.Errorf(jsonrpc.CodeInternalError, "Handler error: %v", err)
}

func (s *Server) handleHandshake(ctx context.Context, params json.RawMessage, buf []byte) ([]byte, *jsonrpc.Error) {
	var req protocol.HandshakeRequest
	if params == nil {
		return buf, invalidParams("missing handshake params")
	}
	if err := json.Unmarshal(params, &req); err != nil {
		return buf, invalidParams("%v", err)
	}
	if err := protocol.CheckVersion(req.ProtocolVersion); err != nil {
		return buf, jsonrpc.Errorf(jsonrpc.CodeUnsupportedProtocol, "%s", err.Error())
	}
	if s.hsObs == nil {
		// Nobody looks at the ids: no defaults to fill in.
		noteSession(ctx, req.SessionID)
		return append(buf, s.hsBytes...), nil
	}
	s.handshakeDefaults(ctx, &req)
	resp := s.hsResp
	if err := s.hsObs.HandleHandshake(ctx, &req, &resp); err != nil {
		var je *jsonrpc.Error
		if errors.As(err, &je) {
			return buf, je
		}
		return buf, handlerError(err)
	}
	noteSession(ctx, req.SessionID)
	b, err := json.Marshal(resp)
	if err != nil {
		return buf, handlerError(err)
	}
	return append(buf, b...), nil
}

// handshakeDefaults fills in the ids a handshake left out, from the
// connection: session_id becomes "<transport>-<n>" (n counts such
// handshakes on this Server, from 1), and agent_id the authenticated
// principal's id, else the agent framework's name, else "agent". The
// fields filled in are listed in req.Defaulted.
func (s *Server) handshakeDefaults(ctx context.Context, req *protocol.HandshakeRequest) {
	peer := PeerFromContext(ctx)
	if req.SessionID == "" {
		tr := peer.Transport
		if tr == "" {
			tr = "conn"
		}
		req.SessionID = fmt.Sprintf("%s-%d", tr, s.hsSeq.Add(1))
		req.Defaulted = append(req.Defaulted, "session_id")
	}
	if req.AgentID == "" {
		switch {
		case peer.Principal != nil && peer.Principal.ID != "":
			req.AgentID = peer.Principal.ID
		case req.AgentInfo.Framework != "":
			req.AgentID = req.AgentInfo.Framework
		default:
			req.AgentID = "agent"
		}
		req.Defaulted = append(req.Defaulted, "agent_id")
	}
}

func (s *Server) handleQuery(ctx context.Context, params json.RawMessage, buf []byte) ([]byte, *jsonrpc.Error) {
	var q protocol.QueryRequest
	if params == nil {
		return buf, invalidParams("missing query params")
	}
	if err := json.Unmarshal(params, &q); err != nil {
		return buf, invalidParams("%v", err)
	}
	resp, err := s.h.HandleQuery(ctx, &q)
	if err != nil {
		return buf, handlerError(err)
	}
	if resp.Answer == nil {
		resp.Answer = jsonrpc.Null
	}
	b, err := json.Marshal(resp)
	if err != nil {
		return buf, handlerError(err)
	}
	return append(buf, b...), nil
}

// checkEvent applies the rules every event follows whatever its method.
func (s *Server) checkEvent(ev *protocol.Event) error {
	if ev.Depth > s.opts.MaxDepth {
		return fmt.Errorf("event depth %d exceeds max_depth %d", ev.Depth, s.opts.MaxDepth)
	}
	return nil
}

func (s *Server) handleEvent(ctx context.Context, params json.RawMessage, buf []byte) ([]byte, *jsonrpc.Error) {
	var ev protocol.Event
	if params == nil {
		return buf, invalidParams("missing event params")
	}
	if err := protocol.DecodeValidEvent(params, &ev); err != nil {
		return buf, invalidParams("%v", err)
	}
	if err := s.checkEvent(&ev); err != nil {
		return buf, invalidParams("%v", err)
	}
	switch {
	case ev.EventType == protocol.EventHandshake:
		return buf, invalidParams("handshake events must be sent with method ahp/handshake")
	case ev.EventType == protocol.EventQuery:
		return buf, invalidParams("query events must be sent with method ahp/query")
	case !ev.EventType.Blocking():
		return buf, invalidParams("event type %s is fire-and-forget and must be sent as a notification", ev.EventType)
	case ev.EventType.Typed():
		return s.handleTyped(ctx, &ev, buf)
	}
	d, err := s.h.HandleEvent(ctx, &ev)
	if err != nil {
		return buf, handlerError(err)
	}
	out, err := d.AppendJSON(buf)
	if err != nil {
		return buf, handlerError(err)
	}
	return out, nil
}

// handleTyped parses a typed payload and calls the matching handler method.
func (s *Server) handleTyped(ctx context.Context, ev *protocol.Event, buf []byte) ([]byte, *jsonrpc.Error) {
	p, err := protocol.ValidatePayload(ev.EventType, ev.Payload)
	if err != nil {
		return buf, invalidParams("%v", err)
	}
	var d any
	switch p := p.(type) {
	case *protocol.IdlePayload:
		d, err = s.h.HandleIdle(ctx, ev, p)
	case *protocol.IntentDetectionPayload:
		d, err = s.h.HandleIntentDetection(ctx, ev, p)
	case *protocol.ContextPerceptionPayload:
		d, err = s.h.HandleContextPerception(ctx, ev, p)
	case *protocol.MemoryRecallPayload:
		d, err = s.h.HandleMemoryRecall(ctx, ev, p)
	case *protocol.PlanningPayload:
		d, err = s.h.HandlePlanning(ctx, ev, p)
	case *protocol.ReasoningPayload:
		d, err = s.h.HandleReasoning(ctx, ev, p)
	case *protocol.RateLimitPayload:
		d, err = s.h.HandleRateLimit(ctx, ev, p)
	case *protocol.ConfirmationPayload:
		d, err = s.h.HandleConfirmation(ctx, ev, p)
	default:
		return buf, handlerError(fmt.Errorf("no handler for %s", ev.EventType))
	}
	if err != nil {
		return buf, handlerError(err)
	}
	b, err := json.Marshal(d)
	if err != nil {
		return buf, handlerError(err)
	}
	return append(buf, b...), nil
}

// handleNotification applies the notification rules and passes the event on.
func (s *Server) handleNotification(ctx context.Context, m *jsonrpc.Message, raw []byte) {
	if m.Method != jsonrpc.MethodEvent {
		return // unknown notifications (and ping without id) are ignored
	}
	var ev protocol.Event
	reject := func(reason string) {
		s.logRefused(reason, string(ev.EventType), ev.SessionID)
		if s.rejObs != nil {
			s.rejObs.EventRejected(ctx, raw, reason)
		}
	}
	if m.Params == nil {
		reject("missing event params")
		return
	}
	if err := protocol.DecodeValidEvent(m.Params, &ev); err != nil {
		reject(err.Error())
		return
	}
	if err := s.checkEvent(&ev); err != nil {
		reject(err.Error())
		return
	}
	if ev.EventType.Blocking() {
		reject("event type " + string(ev.EventType) + " is blocking and must be sent as a request")
		return
	}
	if ev.EventType.RunContract() {
		if _, err := protocol.ValidatePayload(ev.EventType, ev.Payload); err != nil {
			reject(err.Error())
			return
		}
	}
	s.h.HandleNotification(ctx, &ev)
}

func (s *Server) handleBatch(ctx context.Context, params json.RawMessage, buf []byte) ([]byte, *jsonrpc.Error) {
	if params == nil {
		return buf, invalidParams("missing batch params")
	}
	var raw struct {
		Events []json.RawMessage `json:"events"`
	}
	if err := json.Unmarshal(params, &raw); err != nil {
		return buf, invalidParams("%v", err)
	}
	if raw.Events == nil {
		return buf, invalidParams("missing field events")
	}
	if len(raw.Events) > s.opts.BatchSize {
		return buf, invalidParams("batch of %d events exceeds batch_size %d", len(raw.Events), s.opts.BatchSize)
	}
	evs := make([]protocol.Event, len(raw.Events))
	for i, r := range raw.Events {
		if err := protocol.DecodeValidEvent(r, &evs[i]); err != nil {
			return buf, invalidParams("events[%d]: %v", i, err)
		}
		if !evs[i].EventType.Batchable() {
			return buf, invalidParams("events[%d]: event type %s cannot be batched", i, evs[i].EventType)
		}
		if err := s.checkEvent(&evs[i]); err != nil {
			return buf, invalidParams("events[%d]: %v", i, err)
		}
	}
	buf = append(buf, `{"decisions":[`...)
	for i := range evs {
		if i > 0 {
			buf = append(buf, ',')
		}
		d := s.batchDecision(ctx, &evs[i])
		out, err := d.AppendJSON(buf)
		if err != nil {
			out, _ = protocol.Block("invalid decision from handler: " + err.Error()).AppendJSON(buf)
		}
		buf = out
	}
	return append(buf, "]}"...), nil
}

// batchDecision decides one batch item; failures become block (fail closed).
func (s *Server) batchDecision(ctx context.Context, ev *protocol.Event) protocol.Decision {
	if ev.EventType.RunContract() {
		if _, err := protocol.ValidatePayload(ev.EventType, ev.Payload); err != nil {
			return protocol.Block("invalid payload: " + err.Error())
		}
	}
	if !ev.EventType.Blocking() {
		s.h.HandleNotification(ctx, ev)
		return protocol.Allow()
	}
	d, err := s.h.HandleEvent(ctx, ev)
	if err != nil {
		return protocol.Block("handler error: " + err.Error())
	}
	return d
}
