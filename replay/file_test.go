package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
)

func writeLines(t *testing.T, recs []store.AuditRecord, extra string) string {
	t.Helper()
	var b bytes.Buffer
	enc := store.NewAuditEncoder(&b)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	b.WriteString(extra)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func eventJSON(t *testing.T, ty protocol.EventType) json.RawMessage {
	t.Helper()
	ev := mkEvent(0, ty, "f1", map[string]any{"tool_name": "bash", "arguments": map[string]any{"command": "ls"}})
	b, err := json.Marshal(&ev)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Records that cannot be replayed are counted, not compared.
func TestSkippedRecords(t *testing.T) {
	at := func(i int) time.Time { return epoch.Add(time.Duration(i) * time.Second) }
	recs := []store.AuditRecord{
		{ID: 1, Time: at(1), SessionID: "f1", Outcome: "rejected", Event: json.RawMessage(`{"jsonrpc":"2.0"}`)},
		{ID: 2, Time: at(2), SessionID: "f1", Blocking: true, Outcome: "allow"},
		{ID: 3, Time: at(3), SessionID: "f1", Blocking: true, Outcome: "allow", Event: json.RawMessage(`{"event_type":"pre_action"}`)},
		{ID: 4, Time: at(4), SessionID: "f1", Blocking: true, Outcome: "allow", Event: eventJSON(t, protocol.EventQuery)},
		{ID: 5, Time: at(5), SessionID: "f1", Blocking: true, Outcome: "allow", Event: eventJSON(t, protocol.EventPreAction),
			Decision: json.RawMessage(`{"decision":"allow"}`), PolicyVersion: "v1"},
	}
	path := writeLines(t, recs, "\n\n")
	rep := run(t, NewFileSource(path), Options{Engine: engine(t, "")})
	want := Skipped{Rejected: 1, NoEvent: 1, Invalid: 1, Other: 1}
	if rep.Skipped != want || rep.Compared != 1 || rep.Records != 5 || rep.DecisionChanges != 0 {
		t.Fatalf("%+v", rep)
	}
	last, ok, err := NewFileSource(path).LastTime(context.Background())
	if err != nil || !ok || !last.Equal(at(5)) {
		t.Fatalf("last time %v %v %v", last, ok, err)
	}
}

func TestFileSourceErrors(t *testing.T) {
	eng := engine(t, "")
	at := epoch
	t.Run("ids must ascend", func(t *testing.T) {
		path := writeLines(t, []store.AuditRecord{{ID: 2, Time: at}, {ID: 2, Time: at}}, "")
		_, err := Run(context.Background(), NewFileSource(path), Options{Engine: eng})
		if err == nil || !strings.Contains(err.Error(), "ascending id order") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("bad line", func(t *testing.T) {
		path := writeLines(t, []store.AuditRecord{{ID: 1, Time: at}}, "{\"v\":9}\n")
		_, err := Run(context.Background(), NewFileSource(path), Options{Engine: eng})
		if err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		_, err := Run(context.Background(), NewFileSource(filepath.Join(t.TempDir(), "none")), Options{Engine: eng})
		if !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("empty file", func(t *testing.T) {
		path := writeLines(t, nil, "\n \r\n")
		_, ok, err := NewFileSource(path).LastTime(context.Background())
		if ok || err != nil {
			t.Fatalf("%v %v", ok, err)
		}
		rep := run(t, NewFileSource(path), Options{Engine: eng, Lookback: time.Hour})
		if rep.Records != 0 || rep.Since != "" {
			t.Fatalf("%+v", rep)
		}
	})
	t.Run("reader is read once and has no last time", func(t *testing.T) {
		src := NewReaderSource(strings.NewReader(""), "stdin")
		if _, err := Run(context.Background(), src, Options{Engine: eng, Lookback: time.Hour}); !errors.Is(err, ErrNoLastTime) {
			t.Fatalf("err %v", err)
		}
		run(t, src, Options{Engine: eng})
		if _, err := Run(context.Background(), src, Options{Engine: eng}); err == nil {
			t.Fatal("second read of a reader succeeded")
		}
	})
}

// lastLine finds the last line across read blocks, whatever the tail.
func TestLastLine(t *testing.T) {
	long := strings.Repeat("x", 200<<10)
	for _, c := range []struct{ text, want string }{
		{"", ""},
		{"a", "a"},
		{"a\nb\n", "b"},
		{"a\nb\n\n  \r\n", "b"},
		{"a\r\nb\r\n", "b"},
		{"a\n" + long + "\n", long},
		{long + "\nz", "z"},
	} {
		path := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(path, []byte(c.text), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := lastLine(f)
		f.Close()
		if err != nil || string(got) != c.want {
			t.Errorf("%.20q: got %.20q, %v", c.text, got, err)
		}
	}
}
