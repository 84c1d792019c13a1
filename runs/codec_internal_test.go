package runs

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
)

// A record over the store's size limit is stored without evidence,
// artifacts and metadata, then with fewer tasks, and says so.
func TestToStoreShrinks(t *testing.T) {
	defer func(n int) { maxRecordBytes = n }(maxRecordBytes)
	maxRecordBytes = 64 << 10
	big := strings.Repeat("x", 4<<10)
	rec := &Record{RunID: "r", SessionID: "s", Status: protocol.RunExecuting}
	for i := 0; i < 80; i++ {
		rec.Tasks = append(rec.Tasks, protocol.TaskItem{ID: "t", Title: "task", Status: "completed",
			Evidence: []protocol.EvidenceRef{{Kind: "log", Summary: big}}})
	}
	rec.recount()
	shared := rec.Tasks
	rr, err := toStore(rec, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Record) > maxRecordBytes || rr.Version != 3 || rr.Status != "executing" {
		t.Fatalf("stored %d bytes, version %d", len(rr.Record), rr.Version)
	}
	got, err := Decode(rr)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Tasks) != 80 || got.Tasks[0].Evidence != nil || got.Counts.TasksTotal != 80 {
		t.Errorf("tasks %d, evidence %v", len(got.Tasks), got.Tasks[0].Evidence)
	}
	if len(rr.Flags) != 1 || rr.Flags[0] != FlagTruncated {
		t.Errorf("flags = %v", rr.Flags)
	}
	if shared[0].Evidence == nil {
		t.Error("shrink edited a list it shares with its input")
	}

	// Titles alone too large: the list is halved until it fits.
	rec = &Record{RunID: "r", SessionID: "s"}
	for i := 0; i < 100; i++ {
		rec.Tasks = append(rec.Tasks, protocol.TaskItem{ID: "t", Title: big, Status: "pending"})
	}
	rec.recount()
	rr, err = toStore(rec, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, _ = Decode(rr)
	if len(rr.Record) > maxRecordBytes || len(got.Tasks) >= 100 || len(got.Tasks) == 0 || got.Counts.TasksTotal != 100 {
		t.Errorf("%d bytes, %d tasks kept, total %d", len(rr.Record), len(got.Tasks), got.Counts.TasksTotal)
	}

	// Nothing left to drop: refused.
	rec = &Record{RunID: "r", SessionID: "s", Prompt: strings.Repeat("p", maxRecordBytes)}
	if _, err := toStore(rec, 0); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("err = %v", err)
	}
}

func TestDecodeEmpty(t *testing.T) {
	if _, err := Decode(store.RunRecord{RunID: "r"}); err == nil {
		t.Error("empty record decoded")
	}
	if _, err := Decode(store.RunRecord{RunID: "r", Record: json.RawMessage(`{"status":"paused"}`)}); err == nil {
		t.Error("bad status decoded")
	}
}

func TestClip(t *testing.T) {
	if got := clip("héllo", 4); got != "h…" {
		t.Errorf("clip = %q", got)
	}
	if got := clip("abc", 3); got != "abc" {
		t.Errorf("clip = %q", got)
	}
	if got := clean("a\x1b[31mb\nc\u202ed", 100); got != "a [31mb c d" {
		t.Errorf("clean = %q", got)
	}
}
