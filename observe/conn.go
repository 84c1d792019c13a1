package observe

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/transport"
)

// writeTimeout bounds one write to an observer; an observer that does not
// read for this long is disconnected.
const writeTimeout = 10 * time.Second

// maxSubscriptionsPerConn bounds the subscriptions of one observer
// connection (over all its requests): a subscribed session cannot be
// forgotten by the hub, so the bound keeps MaxSessions meaningful.
const maxSubscriptionsPerConn = 256

// StatusOverflow is the WebSocket close code of an observer whose queue
// overflowed (it may reconnect and replay).
const StatusOverflow websocket.StatusCode = 4008

// observer is one connected observer.
type observer struct {
	h       *Hub
	ws      *websocket.Conn
	p       *transport.Principal // nil when not authenticated
	authErr *rpcError            // why p is nil, or why it may not observe
	q       chan outMsg
	kick    chan struct{} // an answer to a request waits in q: do not pace (1 slot)
	cork    *corkConn     // batches the writes of several messages into one
	// arrays: the client asked (initialize or reconnect with
	// _meta.ahp.batchMessages) for the messages queued together to come
	// as one JSON-RPC batch, a JSON array, in one WebSocket message
	// (batch.go). Written by the reader, read by the writer.
	arrays atomic.Bool
	arrBuf []byte // the writer's buffer for such arrays
	// lean: the client asked (_meta.ahp.leanTimeline) for timeline
	// entries without their event, which it fetches with ahp/event when
	// a person opens one (event.go). Written by the reader.
	lean atomic.Bool

	failOnce sync.Once
	failed   chan struct{}
	failWhy  string
	done     chan struct{}

	// Guarded by h.mu.
	subs    map[string]bool
	holding bool
	held    []outMsg

	// Used by the reader goroutine only.
	initialized bool
	clientID    string
}

// outMsg is one queued message: its bytes, or a published action that
// the writer encodes (once for all observers) when it gets to it.
type outMsg struct {
	b []byte
	a *shared
}

// bytes returns the message to write, lean (without a timeline entry's
// event) when the client asked for it.
func (m outMsg) bytes(lean bool) []byte {
	switch {
	case m.a == nil:
		return m.b
	case lean:
		return m.a.lean()
	}
	_, b := m.a.get()
	return b
}

// enqueue queues an outgoing message without ever blocking; h.mu must be
// held. A full queue disconnects the observer.
func (o *observer) enqueue(m outMsg) {
	if o.holding {
		if len(o.held) >= cap(o.q) {
			o.fail("observer queue overflow: more than " + itoa(int64(cap(o.q))) + " messages not yet written")
			return
		}
		o.held = append(o.held, m)
		return
	}
	o.queue(m)
}

// send queues b without taking h.mu (answers that need no ordering). An
// answer is never held back by the pacing of batches: it ends the wait.
func (o *observer) send(b []byte) {
	o.queue(outMsg{b: b})
	select {
	case o.kick <- struct{}{}:
	default:
	}
}

func (o *observer) queue(m outMsg) {
	select {
	case o.q <- m:
	default:
		o.fail("observer queue overflow: more than " + itoa(int64(cap(o.q))) + " messages not yet written")
	}
}

// release queues first, then every message held back since hold; h.mu
// must be held.
func (o *observer) release(first []byte) {
	o.holding = false
	held := o.held
	o.held = nil
	o.send(first)
	for _, m := range held {
		o.queue(m)
	}
}

// fail disconnects the observer after telling it why (once).
func (o *observer) fail(why string) {
	o.failOnce.Do(func() {
		o.failWhy = why
		close(o.failed)
	})
}

// shutdown ends the connection (the harness stops).
func (o *observer) shutdown(why string) {
	o.fail(why)
}

// maxBatch bounds how many queued messages one batch writes (with one
// write deadline and, through cork, one write to the socket).
const maxBatch = 128

// linger is how long the writer of a busy observer waits after a message
// for more to write with it, and busyGap how recent the previous write
// must be for the observer to count as busy. A person's dashboard draws
// a few times a second, so a few milliseconds more are not seen; on a channel
// that gets thousands of actions a second, it turns one write (a system
// call and a wake-up of the peer) per action into one per batch.
const (
	linger  = 10 * time.Millisecond
	busyGap = 30 * time.Millisecond
)

// arrayPace is the shortest time between two writes to a client that
// asked for batches (batch.go), while messages keep coming: a message
// that finds the previous write older than this goes out at once, the
// next ones wait for the rest of arrayPace and go out together, as one
// array. A dashboard draws its timeline ten times a second, so at most
// 20 messages a second lose nothing a person sees, and they spare the
// harness a write (a system call and a wake-up of the peer) and the
// browser a message (a hand-over between its processes, an event, a
// parse and a frame) per few actions: at thousands of actions a second
// those are most of what an observer costs the agents.
const arrayPace = 50 * time.Millisecond

// paceArrays waits, for a client that asked for batches and was written
// to less than arrayPace ago, until arrayPace has passed since then, or
// until its queue is half full (so that pacing never makes it overflow),
// or until an answer to one of its requests is queued (a person waits for
// it), or until the connection ends.
func (o *observer) paceArrays(last time.Time) {
	select {
	case <-o.kick: // an answer queued since the last write goes out now
		return
	default:
	}
	for {
		wait := arrayPace - time.Since(last)
		if wait <= 0 || len(o.q) >= cap(o.q)/2 {
			return
		}
		select {
		case <-time.After(min(wait, arrayPace/5)):
		case <-o.kick:
			return
		case <-o.failed:
			return
		case <-o.done:
			return
		}
	}
}

// writeLoop writes queued messages until the connection ends. When the
// observer is busy or behind, the messages queued are written as one
// batch: each is still its own WebSocket message (the wire is the same),
// but they share one deadline and reach the socket in one write. A client
// that asked for batches gets them as one array, at most one about every
// arrayPace.
func (o *observer) writeLoop(ctx context.Context) {
	var last time.Time
	for {
		select {
		case m := <-o.q:
			now := time.Now()
			switch {
			case o.arrays.Load():
				o.paceArrays(last)
				now = time.Now()
			case len(o.q) == 0 && now.Sub(last) < busyGap:
				time.Sleep(linger)
			}
			last = now
			wctx, cancel := context.WithTimeout(ctx, writeTimeout)
			o.cork.hold()
			var err error
			if o.arrays.Load() {
				err = o.writeArray(wctx, m)
			} else {
				err = o.ws.Write(wctx, websocket.MessageText, m.bytes(o.lean.Load()))
			batch:
				for n := 1; err == nil && n < maxBatch; n++ {
					select {
					case m = <-o.q:
						err = o.ws.Write(wctx, websocket.MessageText, m.bytes(o.lean.Load()))
					default:
						break batch
					}
				}
			}
			if err == nil {
				err = o.cork.flush(writeTimeout)
			}
			cancel()
			if err != nil {
				o.fail("write failed")
				_ = o.ws.CloseNow()
				return
			}
		case <-o.failed:
			// Tell the observer (briefly: it may be the one not reading).
			b, _ := json.Marshal(notification{JSONRPC: "2.0", Method: "ahp/disconnected",
				Params: map[string]any{"channel": RootChannel, "reason": o.failWhy}})
			wctx, cancel := context.WithTimeout(ctx, time.Second)
			err := o.ws.Write(wctx, websocket.MessageText, b)
			cancel()
			if err == nil {
				_ = o.ws.Close(StatusOverflow, truncate(o.failWhy, 120))
			}
			_ = o.ws.CloseNow()
			return
		case <-o.done:
			return
		}
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// readLoop reads and answers requests until the connection ends.
func (o *observer) readLoop(ctx context.Context) {
	o.ws.SetReadLimit(maxRequestBytes)
	for {
		typ, data, err := o.ws.Read(ctx)
		if err != nil {
			return
		}
		if typ != websocket.MessageText {
			o.replyError(nil, errorf(CodeInvalidRequest, "send JSON-RPC messages as text frames"))
			continue
		}
		if stop := o.handle(ctx, data); stop {
			// Let the writer send what was queued, then close.
			time.Sleep(100 * time.Millisecond)
			o.fail("closed after a refused request")
			return
		}
	}
}

func (o *observer) reply(id json.RawMessage, result any) {
	if id == nil {
		return
	}
	b, err := json.Marshal(response{JSONRPC: "2.0", ID: id, Result: result})
	if err != nil {
		o.replyError(id, errorf(CodeInternalError, "result could not be encoded: "+err.Error()))
		return
	}
	o.send(b)
}

func (o *observer) replyError(id json.RawMessage, e *rpcError) {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(errorResponse{JSONRPC: "2.0", ID: id, Error: *e})
	o.send(b)
}

// handle answers one message; it returns true when the connection must
// close (refused authentication, unsupported version).
func (o *observer) handle(ctx context.Context, data []byte) bool {
	var req request
	if err := json.Unmarshal(data, &req); err != nil || req.JSONRPC != "2.0" || req.Method == "" {
		o.replyError(nil, errorf(CodeParseError, "not a JSON-RPC 2.0 message"))
		return false
	}
	var base struct {
		Channel string `json:"channel"`
	}
	if len(req.Params) > 0 {
		if err := json.Unmarshal(req.Params, &base); err != nil {
			o.replyError(req.ID, errorf(CodeInvalidParams, "params must be an object with a channel"))
			return false
		}
	}
	if req.Method == "ping" {
		o.reply(req.ID, nil)
		return false
	}
	if o.authErr != nil {
		o.replyError(req.ID, o.authErr)
		return true
	}
	if base.Channel == "" {
		o.replyError(req.ID, errorf(CodeInvalidParams, "params.channel is required"))
		return false
	}
	result, rerr, stop := o.dispatch(ctx, &req, base.Channel)
	switch {
	case rerr != nil:
		o.replyError(req.ID, rerr)
	case result != nil:
		o.reply(req.ID, *result)
	}
	return stop
}

// answered marks a result that was already queued (in order with held
// actions), so handle must not reply again.
var answered *any

func (o *observer) dispatch(ctx context.Context, req *request, channel string) (*any, *rpcError, bool) {
	h := o.h
	switch req.Method {
	case "initialize":
		var p struct {
			ProtocolVersions     []string   `json:"protocolVersions"`
			ClientID             string     `json:"clientId"`
			InitialSubscriptions []string   `json:"initialSubscriptions"`
			Meta                 clientMeta `json:"_meta"`
		}
		if err := json.Unmarshal(req.Params, &p); err != nil || channel != RootChannel {
			return nil, errorf(CodeInvalidParams, "initialize needs {channel: \"ahp-root://\", protocolVersions: [...], clientId}"), false
		}
		v, ok := negotiate(p.ProtocolVersions[:min(len(p.ProtocolVersions), 32)])
		if !ok {
			e := errorf(CodeUnsupportedVersion, "no offered protocol version is supported")
			e.Data = map[string]any{"supportedVersions": SupportedVersions}
			return nil, e, true
		}
		if len(p.InitialSubscriptions) > maxSubscriptionsPerQuery {
			return nil, errorf(CodeInvalidParams, "too many initialSubscriptions"), false
		}
		if e := o.tooManySubs(p.InitialSubscriptions...); e != nil {
			return nil, e, false
		}
		o.initialized, o.clientID = true, truncate(p.ClientID, 256)
		o.arrays.Store(p.Meta.AHP.BatchMessages)
		o.lean.Store(p.Meta.AHP.LeanTimeline)
		h.initialize(ctx, o, req.ID, v, p.InitialSubscriptions)
		return answered, nil, false
	case "reconnect":
		var p struct {
			ClientID      string     `json:"clientId"`
			LastSeen      *uint64    `json:"lastSeenServerSeq"`
			Subscriptions []string   `json:"subscriptions"`
			Meta          clientMeta `json:"_meta"`
		}
		if err := json.Unmarshal(req.Params, &p); err != nil || channel != RootChannel || p.LastSeen == nil {
			return nil, errorf(CodeInvalidParams, "reconnect needs {channel: \"ahp-root://\", clientId, lastSeenServerSeq, subscriptions: [URI]}"), false
		}
		if len(p.Subscriptions) > maxSubscriptionsPerQuery {
			return nil, errorf(CodeInvalidParams, "too many subscriptions"), false
		}
		if e := o.tooManySubs(p.Subscriptions...); e != nil {
			return nil, e, false
		}
		o.initialized, o.clientID = true, truncate(p.ClientID, 256)
		o.arrays.Store(p.Meta.AHP.BatchMessages)
		o.lean.Store(p.Meta.AHP.LeanTimeline)
		h.reconnect(ctx, o, req.ID, *p.LastSeen, p.Subscriptions)
		return answered, nil, false
	}
	if !o.initialized {
		return nil, errorf(CodeInvalidRequest, "send initialize (or reconnect) first"), false
	}
	switch req.Method {
	case "subscribe":
		if e := o.tooManySubs(channel); e != nil {
			return nil, e, false
		}
		if err := h.subscribe(ctx, o, req.ID, channel); err != nil {
			return nil, err, false
		}
		return answered, nil, false
	case "unsubscribe":
		h.mu.Lock()
		delete(o.subs, channel)
		h.dropSubscriberLocked(o, channel)
		h.mu.Unlock()
		return nil, nil, false
	case "listSessions":
		var p struct {
			Limit  int    `json:"limit"`
			Cursor string `json:"cursor"`
		}
		_ = json.Unmarshal(req.Params, &p)
		r, err := h.listSessions(p.Limit, p.Cursor)
		if err != nil {
			return nil, err, false
		}
		var res any = r
		return &res, nil, false
	case "ahp/answerApproval", "approvals/answer":
		var p struct {
			ApprovalID string `json:"approvalId"`
			Approve    *bool  `json:"approve"`
			Reason     string `json:"reason"`
		}
		if err := json.Unmarshal(req.Params, &p); err != nil || p.ApprovalID == "" || p.Approve == nil {
			return nil, errorf(CodeInvalidParams, req.Method+" needs {channel, approvalId, approve: bool, reason}"), false
		}
		a, err := o.answer(ctx, p.ApprovalID, *p.Approve, p.Reason, nil)
		if err != nil {
			return nil, err, false
		}
		var res any = a
		return &res, nil, false
	case "dispatchAction":
		o.dispatchAction(ctx, req.Params, channel)
		return nil, nil, false
	case "ahp/event":
		var p struct {
			AuditID int64 `json:"auditId"`
		}
		if err := json.Unmarshal(req.Params, &p); err != nil || p.AuditID <= 0 {
			return nil, errorf(CodeInvalidParams, "ahp/event needs {channel: a session channel, auditId}"), false
		}
		r, err := h.event(ctx, channel, p.AuditID)
		if err != nil {
			return nil, err, false
		}
		var res any = r
		return &res, nil, false
	}
	return nil, errorf(CodeMethodNotFound, "unknown method "+truncate(req.Method, 64)), false
}

// tooManySubs refuses a request that would leave o with more than
// maxSubscriptionsPerConn subscriptions. Only o's reader adds to o.subs,
// so the count cannot grow between this check and the subscribing.
func (o *observer) tooManySubs(chs ...string) *rpcError {
	o.h.mu.Lock()
	n := len(o.subs)
	seen := make(map[string]bool, len(chs))
	for _, ch := range chs {
		if !o.subs[ch] && !seen[ch] {
			seen[ch] = true
			n++
		}
	}
	o.h.mu.Unlock()
	if n > maxSubscriptionsPerConn {
		return errorf(CodeInvalidRequest, "too many subscriptions: one connection may hold "+itoa(maxSubscriptionsPerConn)+
			" (it holds "+itoa(int64(len(o.subs)))+"); unsubscribe from some first")
	}
	return nil
}

// answer decides an approval for an approver.
// orig, when set, is the dispatch that answers: the confirmation the hub
// publishes carries it as its origin.
func (o *observer) answer(ctx context.Context, id string, approve bool, reason string, orig *origin) (ApprovalJSON, *rpcError) {
	if !canApprove(o.p) {
		return ApprovalJSON{}, errorf(CodePermissionDenied, "principal "+o.p.ID+" may watch but not answer approvals (role approver required)")
	}
	o.h.mu.Lock()
	decider := o.h.o.Decider
	o.h.mu.Unlock()
	if decider == nil {
		return ApprovalJSON{}, errorf(CodePermissionDenied, "this harness takes no answers from observers")
	}
	if len(reason) > 16<<10 {
		return ApprovalJSON{}, errorf(CodeInvalidParams, "reason is longer than 16 KiB")
	}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if orig != nil {
		o.h.mu.Lock()
		o.h.origins[id] = *orig
		o.h.mu.Unlock()
		defer func() {
			o.h.mu.Lock()
			delete(o.h.origins, id)
			o.h.mu.Unlock()
		}()
	}
	a, err := decider.Decide(dctx, id, approve, o.p, reason)
	if err != nil {
		return ApprovalJSON{}, decideError(err)
	}
	return approvalJSON(a), nil
}

// dispatchAction takes the Host Protocol's way of answering a
// confirmation: chat/toolCallConfirmed on a tool call waiting for an
// approval, dispatched on the session's chat channel (or, as earlier
// versions of ahp did, on its session channel). An accepted action comes
// back as the confirmation the hub publishes, with this dispatch as its
// origin; a refused one is echoed to the dispatcher alone with a
// rejectionReason.
func (o *observer) dispatchAction(ctx context.Context, params json.RawMessage, channel string) {
	var p struct {
		ClientSeq uint64          `json:"clientSeq"`
		Action    json.RawMessage `json:"action"`
	}
	var a struct {
		Type          string `json:"type"`
		ToolCallID    string `json:"toolCallId"`
		Approved      *bool  `json:"approved"`
		ReasonMessage any    `json:"reasonMessage"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.Action) == 0 || json.Unmarshal(p.Action, &a) != nil {
		o.reject(channel, p.ClientSeq, p.Action, "dispatchAction needs {channel, clientSeq, action}")
		return
	}
	sid := sessionIDOf(channel)
	o.h.mu.Lock()
	s := o.h.sessions[sid]
	id, isApproval := stringsCut(a.ToolCallID, "ap-")
	waits := false
	if s != nil && isApproval {
		// The harness waits for the approval (its tool call may have been
		// cancelled in the chat when its turn ended; the agent still
		// waits, and the session's inputNeeded still lists it).
		_, waits = s.pending[id]
	}
	o.h.mu.Unlock()
	if s == nil {
		return // an action on a channel that does not exist is ignored (no echo)
	}
	var rerr *rpcError
	switch {
	case a.Type != "chat/toolCallConfirmed" || a.Approved == nil:
		rerr = errorf(CodeInvalidParams, "only chat/toolCallConfirmed {turnId, toolCallId, approved} may be dispatched here")
	case !waits:
		rerr = errorf(CodeNotFound, "tool call not pending confirmation")
	default:
		reason := ""
		switch r := a.ReasonMessage.(type) {
		case string:
			reason = r
		case map[string]any:
			reason, _ = r["markdown"].(string)
		}
		_, rerr = o.answer(ctx, id, *a.Approved, reason, &origin{ClientID: o.clientID, ClientSeq: p.ClientSeq})
	}
	if rerr != nil {
		o.reject(channel, p.ClientSeq, p.Action, rerr.Message)
	}
}

// reject echoes a refused dispatch to its dispatcher: the action as it
// was sent, the dispatch as its origin, and why.
func (o *observer) reject(channel string, clientSeq uint64, action json.RawMessage, why string) {
	if len(action) == 0 || !json.Valid(action) {
		action = json.RawMessage("null")
	}
	o.h.mu.Lock()
	seq := o.h.seq
	o.h.mu.Unlock()
	b, _ := json.Marshal(notification{JSONRPC: "2.0", Method: "action", Params: actionParams{Channel: channel,
		Action: action, ServerSeq: seq, Origin: &origin{ClientID: o.clientID, ClientSeq: clientSeq}, RejectionReason: why}})
	o.send(b)
}

func stringsCut(s, prefix string) (string, bool) {
	if len(s) > len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):], true
	}
	return "", false
}

// canObserve reports whether p may watch: observer, approver or admin,
// and never a principal that holds the agent role.
func canObserve(p *transport.Principal) bool {
	return p != nil && !slices.Contains(p.Roles, "agent") && (p.Has("observer") || p.Has("approver"))
}

// canApprove reports whether p may answer approvals.
func canApprove(p *transport.Principal) bool { return canObserve(p) && p.Has("approver") }

// decideError maps the Decider's errors to protocol errors.
func decideError(err error) *rpcError {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return errorf(CodeNotFound, "no such approval")
	case errors.Is(err, store.ErrAlreadyDecided):
		return errorf(CodeConflict, err.Error())
	case errors.Is(err, harness.ErrNotApprover), errors.Is(err, harness.ErrSelfApproval):
		return errorf(CodePermissionDenied, err.Error())
	}
	return errorf(CodeInternalError, "the approval could not be answered: "+err.Error())
}
