package observe

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/sqlite"
)

// BenchmarkRecordedNoObservers is the cost the hub adds to every decision
// when no observer is connected (the harness calls Recorded on the
// decision path).
func BenchmarkRecordedNoObservers(b *testing.B) {
	h := benchHub(b)
	rec := store.AuditRecord{ID: 1, Time: time.Now(), SessionID: "sess-0001", AgentID: "agent-main", EventType: "pre_action",
		Blocking: true, Outcome: "allow", PolicyVersion: "sha256:abc", Transport: "unix", Latency: 300 * time.Microsecond,
		Event:    json.RawMessage(`{"event_type":"pre_action","session_id":"sess-0001","agent_id":"agent-main","timestamp":"2026-11-21T10:00:00.000Z","depth":0,"payload":{"action_type":"tool_call","tool_name":"bash","arguments":{"command":"ls -la /workspace/project"}}}`),
		Decision: json.RawMessage(`{"decision":"allow","metadata":{"policy_version":"sha256:abc"}}`)}
	b.ReportAllocs()
	for b.Loop() {
		rec.ID++
		h.Recorded(&rec)
	}
}

// BenchmarkRecordedConnectionEndedNoObservers is the cost of the record the
// harness writes when an agent connection ends (once per event for agents
// that connect per event, like ahp send) when no observer is connected.
func BenchmarkRecordedConnectionEndedNoObservers(b *testing.B) {
	h := benchHub(b)
	rec := store.AuditRecord{ID: 1, Time: time.Now(), SessionID: "sess-0001", EventType: "connection_ended",
		PolicyVersion: "sha256:abc", Transport: "unix", Principal: "agent-main",
		Event: json.RawMessage(`{"connection":"closed","session_id":"sess-0001","transport":"unix"}`)}
	b.ReportAllocs()
	for b.Loop() {
		rec.ID++
		h.Recorded(&rec)
	}
}

func benchHub(b *testing.B) *Hub {
	b.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "ahp.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	h, err := New(Options{Store: db, Now: time.Now, RingSize: 4096, IndexSize: 1 << 16})
	if err != nil {
		b.Fatal(err)
	}
	return h
}

// readEventFields reads what encoding/json would, for stored events of the
// shapes the harness writes (and PostgreSQL's jsonb spacing).
func TestReadEventFieldsAgreesWithEncodingJSON(t *testing.T) {
	type want struct {
		Depth   uint32 `json:"depth"`
		Payload struct {
			ToolName  string `json:"tool_name"`
			RunID     string `json:"run_id"`
			AgentInfo struct {
				Framework string `json:"framework"`
			} `json:"agent_info"`
		} `json:"payload"`
	}
	for _, ev := range []string{
		`{"event_type":"pre_action","session_id":"s","agent_id":"a","timestamp":"t","depth":3,"payload":{"tool_name":"b\u0061sh","arguments":{"tool_name":"inner"}}}`,
		`{"event_type": "run_lifecycle", "depth": 0, "payload": {"run_id": "r-1", "status": "planning"}}`,
		`{"event_type":"handshake","depth":0,"payload":{"agent_info":{"framework":"a3s-code","version":"1"},"protocol_version":"2.0"}}`,
		`{"event_type":"post_action","depth":1,"payload":"not an object"}`,
		`{"depth":4294967295,"payload":{"tool_name":7}}`,
	} {
		var w want
		_ = json.Unmarshal([]byte(ev), &w)
		got := readEventFields([]byte(ev))
		if got.Depth != w.Depth || got.ToolName != w.Payload.ToolName || got.RunID != w.Payload.RunID || got.Framework != w.Payload.AgentInfo.Framework {
			t.Errorf("%s: got %+v, encoding/json %+v", ev, got, w)
		}
		// The chat's tool input comes from this scan: it must be what a
		// scan of its own finds.
		e := entryOf(&store.AuditRecord{Event: json.RawMessage(ev)})
		if string(e.payload) != string(payloadOf([]byte(ev))) {
			t.Errorf("%s: payload %q, scanned alone %q", ev, e.payload, payloadOf([]byte(ev)))
		}
	}
}

// readDecisionFields reads what encoding/json would, for stored decisions
// of the shapes the harness writes (and PostgreSQL's jsonb spacing).
func TestReadDecisionFieldsAgreesWithEncodingJSON(t *testing.T) {
	type want struct {
		Reason   string `json:"reason"`
		Metadata struct {
			ApprovalID string `json:"approval_id"`
		} `json:"metadata"`
	}
	for _, d := range []string{
		`{"decision":"block","reason":"recursive delete of / or the home directory","metadata":{"rule_id":"destructive_shell.rm_root_or_home","policy_version":"sha256:1"}}`,
		`{"decision": "escalate", "reason": "needs a human \u2014 \"prod\"", "metadata": {"approval_id": "ap-7", "approval_id_note": "x"}}`,
		`{"decision":"allow"}`,
		`{"decision":"allow","reason":"","metadata":null}`,
		`{"decision":"modify","reason":7,"metadata":{"approval_id":8}}`,
		`{"reason":"first","reason":"second"}`,
	} {
		var w want
		_ = json.Unmarshal([]byte(d), &w)
		var e Entry
		readDecisionFields([]byte(d), &e)
		reason, approvalID := e.Reason, e.ApprovalID
		if reason != w.Reason || approvalID != w.Metadata.ApprovalID {
			t.Errorf("%s: got %q %q, encoding/json %q %q", d, reason, approvalID, w.Reason, w.Metadata.ApprovalID)
		}
	}
}

// The timeline keeps showing the last maxTimeline entries, in order, while
// it holds up to twice that.
func TestTimelineShowsTheLastEntries(t *testing.T) {
	s := newSession("x", time.Unix(0, 0))
	for i := range 3*maxTimeline + 7 {
		s.apply(Entry{AuditID: int64(i)})
		shown := s.shown()
		want := min(i+1, maxTimeline)
		if len(shown) != want || shown[len(shown)-1].AuditID != int64(i) || shown[0].AuditID != int64(i+1-want) {
			t.Fatalf("after %d entries: %d shown, from %d to %d", i+1, len(shown), shown[0].AuditID, shown[len(shown)-1].AuditID)
		}
		if len(s.timeline) > 2*maxTimeline {
			t.Fatalf("timeline holds %d entries", len(s.timeline))
		}
	}
	if tl := s.state().Meta.AHP.Timeline; len(tl) != maxTimeline || tl[0].AuditID != 2*maxTimeline+7 {
		t.Fatalf("state: %d entries from %d", len(tl), tl[0].AuditID)
	}
}

// A session index in chunks answers as a plain slice would: what is after
// a seq, how many there are, and what dropping the oldest leaves.
func TestSessionIndexMatchesSlice(t *testing.T) {
	// A session with one action (an idle agent's handshake) keeps room
	// for about that, not for a whole chunk.
	var one sessionIndex
	one.add(indexEntry{seq: 1})
	if c := cap(one.chunks[0]); c > 8 {
		t.Fatalf("one entry takes room for %d", c)
	}
	var x sessionIndex
	var model []indexEntry
	seq := uint64(0)
	rng := uint64(7)
	next := func(n uint64) uint64 { rng = rng*6364136223846793005 + 1442695040888963407; return (rng >> 33) % n }
	for step := range 5000 {
		switch next(10) {
		case 0:
			n := int(next(uint64(len(model)+2))) + 1
			dropped, last := x.dropOldest(n)
			want := min(n, len(model))
			if dropped != want || (want > 0 && last != model[want-1].seq) {
				t.Fatalf("step %d: dropOldest(%d) = %d, %d; want %d", step, n, dropped, last, want)
			}
			model = model[want:]
		default:
			seq += next(3) + 1
			x.add(indexEntry{seq: seq})
			model = append(model, indexEntry{seq: seq})
		}
		if x.len() != len(model) {
			t.Fatalf("step %d: len %d, want %d", step, x.len(), len(model))
		}
		from := uint64(0)
		if len(model) > 0 {
			from = model[int(next(uint64(len(model))))].seq
		}
		got := x.after(from, false)
		var want []indexEntry
		for _, e := range model {
			if e.seq > from {
				want = append(want, e)
			}
		}
		if len(got) != len(want) || (len(got) > 0 && (got[0].seq != want[0].seq || got[len(got)-1].seq != want[len(want)-1].seq)) {
			t.Fatalf("step %d: after(%d) gave %d entries, want %d", step, from, len(got), len(want))
		}
		for i, c := range x.chunks {
			if len(c) > indexChunk || cap(c) > 2*indexChunk {
				t.Fatalf("chunk %d holds %d entries in room for %d", i, len(c), cap(c))
			}
		}

	}
}
