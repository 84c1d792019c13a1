package observe

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/ahp-go/ahp/effects"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/transport"
)

// Decider answers approvals (the harness).
type Decider interface {
	Decide(ctx context.Context, id string, approve bool, p *transport.Principal, reason string) (store.Approval, error)
}

// Options configure a Hub.
type Options struct {
	// Store is read for snapshots of sessions the hub no longer holds,
	// for replay beyond the ring, and for run records. Required.
	Store store.Store
	// Decider answers approvals for approvers; nil refuses every answer.
	Decider Decider
	// Effects, when set, reads what a pending approval's action does (the
	// live policy's effect analysis); the approval list of the root
	// channel (ahpApprovals, ahp/approvalAdded) carries it as "effects",
	// so that an approver sees what would run, not only its words.
	Effects func(event json.RawMessage) []effects.Effect
	// PolicyVersion and PolicyRules describe the loaded policy (may be nil).
	PolicyVersion func() string
	PolicyRules   func() []string
	// ServerName and ServerVersion are sent in initialize's serverInfo.
	ServerName, ServerVersion string
	// RingSize is how many recent actions are kept for replay (4096 when 0).
	RingSize int
	// QueueSize bounds each observer's queue of messages not yet written
	// (1024 when 0). An observer whose queue overflows is told and
	// disconnected; it may reconnect and replay.
	QueueSize int
	// IndexSize bounds the replay index, which lets actions that left the
	// ring be rebuilt from the store (262144 entries when 0).
	IndexSize int
	// MaxSessions bounds the sessions held in memory (10000 when 0); the
	// least recently active is forgotten (its snapshot then comes from
	// the store).
	MaxSessions int
	// MaxObservers bounds concurrent authenticated observer connections
	// (256 when 0).
	MaxObservers int
	// MaxUnauthenticated bounds, apart from MaxObservers, the connections
	// without a usable credential (32 when 0): they are upgraded only to
	// be told -32007 or -32009, and must not crowd out observers.
	MaxUnauthenticated int
	// Logger receives the hub's log lines (discarded when nil).
	Logger *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// SharedSeq numbers the actions built from an audit record from the
	// record's ID (see AuditSeq) instead of from a counter of this
	// process, so that every hub fed the same records in ID order gives
	// them the same serverSeq: replicas on one shared store (FollowStore).
	// Recorded must then see records in increasing ID order, each once.
	SharedSeq bool
}

// frame is one published action in the ring.
type frame struct {
	seq     uint64
	channel string
	enc     *shared
}

// encoded returns f's action envelope, encoding it now if nobody has yet.
func (f *frame) encoded() json.RawMessage {
	p, _ := f.enc.get()
	return p
}

// shared is one published action, encoded once when first needed and then
// shared by every observer it is queued to and by replays. The hub only
// builds it under its lock (a copy of the op, or a root action's map);
// the encoding happens in the first observer's writer that reaches it (or
// in a replay), outside the lock and off the decision path, so that
// publishing costs the same whether nobody, one or many observers watch.
// What an op refers to (its entry, approval, run and effects) is never
// changed after it is published.
type shared struct {
	once    sync.Once
	seq     uint64
	channel string
	session string         // the session channel (which build needs)
	op      op             // the action's source, when action is nil
	action  map[string]any // a root action, built already
	params  json.RawMessage
	data    []byte
	// data[evFrom:evTo] is an ahp/recorded entry's event member, which
	// lean leaves out (recordedjson.go).
	evFrom, evTo int
	leanOnce     sync.Once
	leanData     []byte
}

// lean returns the notification as a client that asked for lean
// timeline entries gets it: an ahp/recorded entry without its event,
// any other action as get returns it.
func (a *shared) lean() []byte {
	a.once.Do(a.encode)
	if a.evFrom == a.evTo {
		return a.data
	}
	a.leanOnce.Do(func() {
		r := recordedJSON{data: a.data, evFrom: a.evFrom, evTo: a.evTo}
		a.leanData = r.lean()
	})
	return a.leanData
}

// get returns the action envelope and the whole notification, encoding
// them on the first call.
func (a *shared) get() (params json.RawMessage, data []byte) {
	a.once.Do(a.encode)
	return a.params, a.data
}

func (a *shared) encode() {
	if o := &a.op; a.action == nil && o.kind == opRecorded && o.entry != nil && o.origin == nil {
		if r, ok := encodeRecorded(a.channel, o.entry, a.seq); ok {
			a.params, a.data, a.evFrom, a.evTo = r.params, r.data, r.evFrom, r.evTo
			a.op = op{}
			return
		}
	}
	action := a.action
	if action == nil {
		action = a.op.build(a.session)
	}
	a.params, a.data = encodeAction(a.channel, action, a.seq, a.op.origin)
	a.op, a.action = op{}, nil // what it was built from is no longer needed
}

// indexEntry lets an action be rebuilt from the store.
type indexEntry struct {
	seq        uint64
	kind       opKind
	toolCall   string
	approved   bool
	how        string
	turnID     string
	dur        int64
	auditID    int64
	timeNs     int64
	eventType  string
	approvalID string
	apStatus   store.ApprovalStatus
	runID      string
}

// Hub fans the harness's records out to observers. It implements
// harness.Observer; its methods never block on an observer.
type Hub struct {
	o   Options
	log *slog.Logger

	mu         sync.Mutex
	seq        uint64
	ring       []frame // circular, ringLen valid frames ending at ringEnd-1
	ringEnd    int
	ringLen    int
	ringFloor  uint64 // the ring holds every action after this serverSeq
	lastAudit  int64  // highest audit ID seen
	sessions   map[string]*session
	indexTotal int
	subs       map[string]map[*observer]struct{}
	// lastWatched holds when channels lost their last subscriber, for
	// keepAfterUnsubscribe (kept.go).
	lastWatched map[string]time.Time
	observers   map[*observer]struct{}
	nAuthed     int // connection slots taken by authenticated observers (reserve)
	nAnon       int // and by connections without a usable credential
	evictAt     int // evictLocked waits for more sessions than this (too many pinned)
	approvals   map[string]ApprovalJSON
	terms       map[string]approvalTerms // deadline and fallback of pending approvals (ApprovalTerms)
	resolved    map[string]time.Time     // SharedSeq: approvals seen resolved (sharedapprovals.go)
	stats       *stats
	nActive     int               // sessions held that have not ended
	active      int               // activeSessions as last published
	origins     map[string]origin // approval id → the dispatch answering it (conn.go)
	reload      ReloadInfo
	started     time.Time

	runq chan runReq
}

// runReq asks the run worker to publish a run record, or every run of
// the session whose record changed when runID is empty.
type runReq struct{ sessionID, runID string }

// listedApproval is a pending approval as the root channel lists it, with
// its effects when the hub has an effect reader.
// It also carries (under _meta.ahp) the deadline and fallback the harness
// told with ApprovalTerms, and the agent's recent actions in s. h.mu must
// be held.
func (h *Hub) listedApproval(a store.Approval, s *session) ApprovalJSON {
	j := approvalJSON(a)
	if h.o.Effects != nil && len(j.Event) > 0 {
		j.Effects = h.o.Effects(a.Event)
	}
	var x ApprovalExtra
	if j.Meta != nil {
		x = j.Meta.AHP
	}
	if t, ok := h.terms[a.ID]; ok {
		d := t.deadline.UTC()
		x.Deadline, x.Fallback = &d, t.fallback
	}
	if s != nil {
		x.Recent = s.recentActions(a.AgentID)
	}
	j.Meta = &ApprovalMeta{AHP: x}
	return j
}

// approvalTerms are a pending approval's deadline and fallback.
type approvalTerms struct {
	deadline time.Time
	fallback string
}

// maxTerms bounds the approval terms held; the harness bounds pending
// approvals far below it, so this only guards against a caller that never
// resolves them.
const maxTerms = 1 << 16

// ApprovalTerms implements harness.ApprovalTermsObserver: the deadline and
// fallback of an approval about to be announced, listed with it.
func (h *Hub) ApprovalTerms(id string, deadline time.Time, fallback string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.terms) >= maxTerms {
		return
	}
	h.terms[id] = approvalTerms{deadline: deadline, fallback: fallback}
	if j, ok := h.approvals[id]; ok { // announced before its terms (a replica)
		if j.Meta == nil {
			j.Meta = &ApprovalMeta{}
		}
		d := deadline.UTC()
		j.Meta.AHP.Deadline, j.Meta.AHP.Fallback = &d, fallback
		h.approvals[id] = j
	}
}

// New returns a Hub. Call Run to publish summaries, statistics and run
// records in the background.
func New(o Options) (*Hub, error) {
	if o.Store == nil {
		return nil, errors.New("observe: Store is required")
	}
	if o.RingSize <= 0 {
		o.RingSize = 4096
	}
	if o.QueueSize <= 0 {
		o.QueueSize = 1024
	}
	if o.IndexSize <= 0 {
		o.IndexSize = 1 << 18
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = 10000
	}
	if o.MaxObservers <= 0 {
		o.MaxObservers = 256
	}
	if o.MaxUnauthenticated <= 0 {
		o.MaxUnauthenticated = 32
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.PolicyVersion == nil {
		o.PolicyVersion = func() string { return "" }
	}
	if o.PolicyRules == nil {
		o.PolicyRules = func() []string { return nil }
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// serverSeq starts at the start time in microseconds, so that it
	// never goes back when the harness restarts: a client's lastSeen from
	// before a restart can never be mistaken for one of this run.
	seq := uint64(max(0, o.Now().UnixMicro()))
	if o.SharedSeq {
		seq = 0 // set from the audit log by Load and Recorded
	}
	return &Hub{o: o, log: log, seq: seq, ringFloor: seq, ring: make([]frame, o.RingSize), sessions: map[string]*session{},
		subs: map[string]map[*observer]struct{}{}, lastWatched: map[string]time.Time{}, observers: map[*observer]struct{}{},
		approvals: map[string]ApprovalJSON{}, origins: map[string]origin{}, terms: map[string]approvalTerms{}, stats: newStats(), started: o.Now(),
		runq: make(chan runReq, 1024)}, nil
}

// Load fills the hub with the most recent records of the store (at most
// limit) and the pending approvals, before the harness serves. Actions are
// not published for them: observers see them in snapshots.
func (h *Hub) Load(ctx context.Context, limit int) error {
	recs, err := h.o.Store.Audit().Query(ctx, store.AuditFilter{Limit: limit, Newest: true})
	if err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := range recs {
		h.lastAudit = max(h.lastAudit, recs[i].ID)
	}
	if h.o.SharedSeq {
		// Actions of later records are numbered above every loaded one;
		// a lastSeenServerSeq from before gets a snapshot.
		h.seq = max(h.seq, AuditSeq(h.lastAudit, auditSeqSlots-1))
		h.ringFloor = h.seq
	}
	for i := range recs {
		e := entryOf(&recs[i])
		s, _ := h.sessionLocked(recs[i].SessionID)
		s.recordOps(&e)
		h.applyLocked(s, e)
		s.dirty = false
	}
	h.active = h.nActive
	return nil
}

// sessionLocked returns the session id, creating it; h.mu must be held.
func (h *Hub) sessionLocked(id string) (*session, bool) {
	if s, ok := h.sessions[id]; ok {
		return s, false
	}
	s := newSession(id, h.o.Now())
	s.indexFrom = h.seq // actions before now are not in the index
	h.sessions[id] = s
	h.nActive++
	if len(h.sessions) > max(h.o.MaxSessions, h.evictAt) {
		h.evictLocked(id)
	}
	return s, true
}

// evictLocked forgets the least recently active sessions until a tenth
// of MaxSessions is free again. Sessions with subscribers or pending
// approvals are kept, and so is keep (the one being added). When too
// many are kept to get under MaxSessions, the next pass waits until
// another tenth of MaxSessions has been added, so that pinned sessions
// cannot make every new session sort them all.
func (h *Hub) evictLocked(keep string) {
	all := make([]*session, 0, len(h.sessions))
	for _, s := range h.sessions {
		if s.id != keep && len(h.subs[s.uri]) == 0 && len(h.subs[s.chatURI]) == 0 && len(s.pending) == 0 {
			all = append(all, s)
		}
	}
	sort.Slice(all, func(i, j int) bool {
		return all[i].summary.Meta.AHP.LastActivity.Before(all[j].summary.Meta.AHP.LastActivity)
	})
	n := min(len(all), len(h.sessions)-h.o.MaxSessions+max(1, h.o.MaxSessions/10))
	for _, s := range all[:max(0, n)] {
		h.indexTotal -= s.index.len()
		if s.summary.Meta.AHP.State != "ended" {
			h.nActive--
		}
		delete(h.sessions, s.id)
		h.notifyRootLocked("root/sessionRemoved", map[string]any{"channel": RootChannel, "session": s.uri})
	}
	h.evictAt = 0
	if len(h.sessions) > h.o.MaxSessions {
		h.evictAt = len(h.sessions) + max(1, h.o.MaxSessions/10)
	}
}

// reserve takes a connection slot: one of MaxObservers for an
// authenticated observer, else one of MaxUnauthenticated. The check and
// the taking happen under one lock, so concurrent upgrades never exceed
// the bounds. Each slot taken is given back with unreserve.
func (h *Hub) reserve(authed bool) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if authed {
		if h.nAuthed >= h.o.MaxObservers {
			return false
		}
		h.nAuthed++
		return true
	}
	if h.nAnon >= h.o.MaxUnauthenticated {
		return false
	}
	h.nAnon++
	return true
}

// unreserve gives back a slot reserve took.
func (h *Hub) unreserve(authed bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.unreserveLocked(authed)
}

func (h *Hub) unreserveLocked(authed bool) {
	if authed {
		h.nAuthed--
	} else {
		h.nAnon--
	}
}

// Recorded implements harness.Observer.
func (h *Hub) Recorded(rec *store.AuditRecord) {
	e := entryOf(rec)
	h.mu.Lock()
	if h.o.SharedSeq && !h.sharedSeqLocked(rec.ID) {
		h.mu.Unlock()
		return
	}
	h.lastAudit = max(h.lastAudit, rec.ID)
	s, added := h.sessionLocked(rec.SessionID)
	ops := s.recordOps(&e)
	h.applyLocked(s, e)
	h.stats.add(h.o.Now(), &e)
	if added {
		h.notifyRootLocked("root/sessionAdded", map[string]any{"channel": RootChannel, "summary": s.wire()})
		s.dirty = false
	}
	for i := range ops {
		ie := indexEntry{kind: ops[i].kind, toolCall: ops[i].toolCall, approved: ops[i].approved, how: ops[i].how,
			turnID: ops[i].turnID, dur: ops[i].dur, auditID: rec.ID, timeNs: rec.Time.UnixNano(), eventType: rec.EventType}
		h.publishLocked(s, &ops[i], ie)
	}
	if isConnectionEnded(&e) {
		h.connEndedLocked(s)
	}
	h.mu.Unlock()
	if e.RunID != "" && (e.EventType == "run_lifecycle" || e.EventType == "task_list" || e.EventType == "verification") {
		select {
		case h.runq <- runReq{rec.SessionID, e.RunID}:
		default: // the run worker is behind; the next snapshot has the record
		}
	}
}

// ApprovalChanged implements harness.Observer.
func (h *Hub) ApprovalChanged(a store.Approval) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.o.SharedSeq && !h.sharedApprovalLocked(&a) {
		return // already shown, or already cleared (heard from the store too)
	}
	s, added := h.sessionLocked(a.SessionID)
	if added {
		h.notifyRootLocked("root/sessionAdded", map[string]any{"channel": RootChannel, "summary": s.wire()})
	}
	var fx []effects.Effect
	if a.Status == store.ApprovalPending {
		h.approvals[a.ID] = h.listedApproval(a, s)
		fx = h.approvals[a.ID].Effects
	}
	ops := s.approvalOps(&a, fx)
	orig, hasOrigin := h.origins[a.ID]
	delete(h.origins, a.ID)
	for i := range ops {
		switch {
		case ops[i].kind == opInputSet:
			req, _ := json.Marshal(ops[i].inputRequest(s.uri))
			s.pending[a.ID] = pendingReq{Request: req, seq: h.seq + uint64(len(ops))}
		case ops[i].kind == opConfirmed && hasOrigin:
			ops[i].origin = &orig
		}
	}
	if a.Status != store.ApprovalPending {
		delete(s.pending, a.ID)
		delete(h.approvals, a.ID)
		delete(h.terms, a.ID)
	}
	s.dirty = true
	for i := range ops {
		ie := indexEntry{kind: ops[i].kind, toolCall: ops[i].toolCall, approved: ops[i].approved, how: ops[i].how,
			turnID: ops[i].turnID, dur: ops[i].dur, approvalID: a.ID, apStatus: a.Status}
		h.publishLocked(s, &ops[i], ie)
	}
	if a.Status == store.ApprovalPending {
		h.publishRootLocked(map[string]any{"type": "ahp/approvalAdded", "approval": h.approvals[a.ID]})
	} else {
		removed := map[string]any{"type": "ahp/approvalRemoved", "approvalId": a.ID, "status": string(a.Status)}
		if j := approvalJSON(a); j.Meta != nil {
			removed["_meta"] = j.Meta // who decided, when and why
		}
		h.publishRootLocked(removed)
	}
}

// actionParams is the params of an action notification: the Host
// Protocol's ActionEnvelope.
type actionParams struct {
	Channel         string  `json:"channel"`
	Action          any     `json:"action"`
	ServerSeq       uint64  `json:"serverSeq"`
	Origin          *origin `json:"origin,omitempty"`
	RejectionReason string  `json:"rejectionReason,omitempty"`
}

// encodeAction returns an action envelope and its JSON-RPC notification;
// orig is the dispatch the action answers (nil when the server's own).
func encodeAction(channel string, action any, seq uint64, orig *origin) (params json.RawMessage, data []byte) {
	p, err := json.Marshal(actionParams{Channel: channel, Action: action, ServerSeq: seq, Origin: orig})
	if err != nil {
		p, _ = json.Marshal(actionParams{Channel: channel, Action: map[string]any{"type": "ahp/unencodable", "error": err.Error()}, ServerSeq: seq})
	}
	data = make([]byte, 0, len(p)+48)
	data = append(data, `{"jsonrpc":"2.0","method":"action","params":`...)
	data = append(data, p...)
	data = append(data, '}')
	return p, data
}

// publishLocked gives o the next serverSeq, keeps it in the ring and the
// session's replay index, and queues it to the session's subscribers.
func (h *Hub) publishLocked(s *session, o *op, ie indexEntry) {
	ch := s.uri
	if o.kind.onChat() {
		ch = s.chatURI
	}
	h.seq++
	if !h.keptLocked(ch) {
		// Nobody watches: numbered, not kept (kept.go).
		if ch == s.chatURI {
			s.unkeptChat = h.seq
		} else {
			s.unkeptSession = h.seq
		}
		return
	}
	ie.seq = h.seq
	if o.kind == opRun {
		ie.runID = runIDOf(o.run)
	}
	s.index.add(ie)
	h.indexTotal++
	if h.indexTotal > h.o.IndexSize {
		h.trimIndexLocked()
	}
	h.pushLocked(&shared{seq: h.seq, channel: ch, session: s.uri, op: *o})
}

// publishRootLocked publishes an action on the root channel. Root actions
// are replayed from the ring only; beyond it the root gets a snapshot.
// They are few (approvals, statistics once a second, policy reloads) and
// refer to the hub's own maps, so they are encoded at once, under h.mu.
func (h *Hub) publishRootLocked(action map[string]any) {
	h.seq++
	a := &shared{seq: h.seq, channel: RootChannel, action: action}
	a.get()
	h.pushLocked(a)
}

// pushLocked keeps a in the ring and queues it (the one *shared, encoded
// or not) to the subscribers of its channel.
func (h *Hub) pushLocked(a *shared) {
	h.pushFrameLocked(frame{seq: a.seq, channel: a.channel, enc: a})
	for ob := range h.subs[a.channel] {
		ob.enqueue(outMsg{a: a})
	}
}

// pushFrameLocked keeps f in the ring.
func (h *Hub) pushFrameLocked(f frame) {
	if h.ringLen == len(h.ring) {
		h.ringFloor = h.ring[h.ringEnd].seq // the oldest frame leaves
	}
	h.ring[h.ringEnd] = f
	h.ringEnd = (h.ringEnd + 1) % len(h.ring)
	h.ringLen = min(h.ringLen+1, len(h.ring))
}

// trimIndexLocked drops the oldest half of the largest session index.
func (h *Hub) trimIndexLocked() {
	var big *session
	for _, s := range h.sessions {
		if big == nil || s.index.len() > big.index.len() {
			big = s
		}
	}
	if big == nil || big.index.len() == 0 {
		h.indexTotal = 0
		return
	}
	n, last := big.index.dropOldest(max(1, big.index.len()/2))
	big.indexFrom = last
	h.indexTotal -= n
}

// indexChunk is how many entries one chunk of a session index holds.
const indexChunk = 256

// sessionIndex is a session's replay index, kept in chunks so that it
// grows without copying what it holds and drops its oldest entries
// without moving the rest.
type sessionIndex struct {
	chunks [][]indexEntry // oldest first; only the last grows
	n      int
}

func (x *sessionIndex) len() int { return x.n }

func (x *sessionIndex) add(e indexEntry) {
	// A chunk starts small and grows as a slice does up to indexChunk
	// entries (most sessions hold a handful); then the next one starts.
	if k := len(x.chunks); k == 0 || len(x.chunks[k-1]) >= indexChunk {
		x.chunks = append(x.chunks, nil)
	}
	last := &x.chunks[len(x.chunks)-1]
	*last = append(*last, e)
	x.n++
}

// dropOldest drops the n oldest entries (all of them when there are
// fewer) and returns how many it dropped and the seq of the last one.
func (x *sessionIndex) dropOldest(n int) (int, uint64) {
	dropped, lastSeq := 0, uint64(0)
	for dropped < n && len(x.chunks) > 0 {
		c := x.chunks[0]
		if m := n - dropped; m < len(c) {
			lastSeq = c[m-1].seq
			clear(c[:m])
			x.chunks[0] = c[m:]
			dropped += m
			break
		}
		lastSeq = c[len(c)-1].seq
		dropped += len(c)
		x.chunks[0] = nil
		x.chunks = x.chunks[1:]
	}
	x.n -= dropped
	return dropped, lastSeq
}

// after returns the entries with a seq above seq, oldest first, of the
// chat channel's actions (chat) or of the session channel's.
func (x *sessionIndex) after(seq uint64, chat bool) []indexEntry {
	var es []indexEntry
	for _, c := range x.chunks {
		if len(c) == 0 || c[len(c)-1].seq <= seq {
			continue
		}
		for _, e := range c {
			if e.seq > seq && e.kind.onChat() == chat {
				es = append(es, e)
			}
		}
	}
	return es
}

// notifyRootLocked sends a catalogue notification to root subscribers.
func (h *Hub) notifyRootLocked(method string, params any) {
	if len(h.subs[RootChannel]) == 0 {
		return
	}
	b, err := json.Marshal(notification{JSONRPC: "2.0", Method: method, Params: params})
	if err != nil {
		return
	}
	for ob := range h.subs[RootChannel] {
		ob.enqueue(outMsg{b: b})
	}
}

// PolicyReloaded records the result of a policy reload and tells root
// subscribers.
func (h *Hub) PolicyReloaded(err error) {
	r := ReloadInfo{At: h.o.Now().UTC(), OK: err == nil, Version: h.o.PolicyVersion()}
	if err != nil {
		r.Error = err.Error()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reload = r
	h.publishRootLocked(map[string]any{"type": "ahp/policyChanged", "policy": h.policyLocked()})
}

// Run publishes changed session summaries (every 250ms), statistics
// (every second) and run records until ctx ends.
func (h *Hub) Run(ctx context.Context) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	n := 0
	for {
		select {
		case <-ctx.Done():
			h.closeAll()
			return
		case r := <-h.runq:
			h.publishRun(ctx, r)
		case <-tick.C:
			n++
			h.flushSummaries()
			if n%4 == 0 {
				h.publishStats()
			}
		}
	}
}

func (h *Hub) flushSummaries() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.sessions {
		if s.dirty {
			s.dirty = false
			h.notifyRootLocked("root/sessionSummaryChanged", map[string]any{"channel": RootChannel, "session": s.uri, "changes": s.wire()})
		}
	}
	h.activeChangedLocked()
}

func (h *Hub) publishStats() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sweepWatchedLocked()
	if !h.stats.changed {
		return
	}
	h.stats.changed = false
	// The rules' hits since the start ride along, so that the policy page
	// counts live without a policyChanged per decision.
	h.publishRootLocked(map[string]any{"type": "ahp/statsChanged", "stats": h.stats.json(h.o.Now()),
		"_meta": map[string]any{"ahp": map[string]any{"ruleHits": copyCounts(h.stats.hits)}}})
}

func (h *Hub) publishRun(ctx context.Context, r runReq) {
	if r.runID == "" {
		h.publishSessionRuns(ctx, r.sessionID)
		return
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	rec, err := h.o.Store.Runs().Get(rctx, r.runID)
	cancel()
	if err != nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s, _ := h.sessionLocked(r.sessionID)
	b := runJSON(rec)
	s.runs[r.runID] = b
	h.publishLocked(s, &op{kind: opRun, run: b}, indexEntry{kind: opRun})
}

func runIDOf(b json.RawMessage) string {
	var r struct {
		RunID string `json:"runId"`
	}
	_ = json.Unmarshal(b, &r)
	return r.RunID
}

// closeAll disconnects every observer (the harness is stopping).
func (h *Hub) closeAll() {
	h.mu.Lock()
	obs := make([]*observer, 0, len(h.observers))
	for ob := range h.observers {
		obs = append(obs, ob)
	}
	h.mu.Unlock()
	for _, ob := range obs {
		ob.shutdown("the harness is stopping")
	}
}

// Observers returns how many observers are connected.
func (h *Hub) Observers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.observers)
}

// ServerSeq returns the last serverSeq published.
func (h *Hub) ServerSeq() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seq
}

// SetDecider sets the Decider that answers approvals (when the harness is
// built after the hub).
func (h *Hub) SetDecider(d Decider) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.o.Decider = d
}
