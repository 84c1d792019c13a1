package store_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/store"
)

var update = flag.Bool("update", false, "rewrite golden files")

// goldenRecords cover every field, a notification without decision, JSON
// with insignificant whitespace, and strings that need escaping.
func goldenRecords() []store.AuditRecord {
	t0 := time.Date(2026, 11, 21, 9, 30, 0, 123456789, time.UTC)
	return []store.AuditRecord{
		{
			ID: 1, Time: t0, SessionID: "sess-1", AgentID: "agent-a", EventType: "pre_action", Blocking: true,
			Event:    json.RawMessage(`{"event_type":"pre_action","session_id":"sess-1","agent_id":"agent-a","timestamp":"2026-11-21T09:30:00Z","depth":0,"payload":{"tool_name":"bash","arguments":{"command":"rm -rf /tmp/x && echo <done>"}}}`),
			Decision: json.RawMessage(`{"decision":"block","reason":"destructive command"}`),
			Outcome:  "block", RuleID: "no-rm-rf", PolicyVersion: "sha256:9f2c", Principal: "key:ci-bot",
			Transport: "http", Latency: 412 * time.Microsecond, DescriptorHash: "sha256:77ab",
		},
		{
			ID: 2, Time: t0.Add(time.Second).In(time.FixedZone("CET", 3600)), SessionID: "sess-1", AgentID: "agent-a",
			EventType: "post_action",
			Event:     json.RawMessage("{\n  \"event_type\": \"post_action\",\n  \"payload\": {\"ok\": true}\n}"),
			Transport: "stdio", Latency: 3 * time.Microsecond,
		},
		{
			ID: 3, Time: t0.Add(2 * time.Second), SessionID: "sess-2", AgentID: "agent-b", EventType: "pre_prompt", Blocking: true,
			Event:    json.RawMessage(`{"event_type":"pre_prompt","payload":{"prompt":"héllo \"world\"\n"}}`),
			Decision: json.RawMessage(`{"decision":"block","reason":"no valid decision: policy error"}`),
			Outcome:  "block", PolicyVersion: "sha256:9f2c", Transport: "websocket",
			Error: "policy evaluation failed: timeout",
		},
	}
}

func TestAuditExportGolden(t *testing.T) {
	var buf bytes.Buffer
	enc := store.NewAuditEncoder(&buf)
	recs := goldenRecords()
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	golden := filepath.Join("testdata", "audit-v1.jsonl")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("export format changed (run with -update only if the change is intended and docs/audit-format.md says so)\n got:\n%s\nwant:\n%s", buf.Bytes(), want)
	}
	for i, line := range bytes.Split(bytes.TrimSuffix(want, []byte("\n")), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("line %d is not one JSON object: %v", i+1, err)
		}
		if len(m) != 17 || m["v"] != float64(1) {
			t.Errorf("line %d: %d keys, v=%v; want all 17 keys and v=1", i+1, len(m), m["v"])
		}
	}

	dec := store.NewAuditDecoder(bytes.NewReader(want))
	for i := range recs {
		var got store.AuditRecord
		if err := dec.Decode(&got); err != nil {
			t.Fatalf("decode line %d: %v", i+1, err)
		}
		w := recs[i]
		if !got.Time.Equal(w.Time) || got.Time.Location() != time.UTC {
			t.Errorf("line %d: time %v, want %v in UTC", i+1, got.Time, w.Time)
		}
		var compacted bytes.Buffer
		if len(w.Event) > 0 {
			_ = json.Compact(&compacted, w.Event)
			w.Event = compacted.Bytes()
		}
		got.Time, w.Time = time.Time{}, time.Time{}
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(w)
		if string(gj) != string(wj) {
			t.Errorf("line %d round trip:\n got %s\nwant %s", i+1, gj, wj)
		}
	}
	var extra store.AuditRecord
	if err := dec.Decode(&extra); err != io.EOF {
		t.Errorf("after the last line: %v, want io.EOF", err)
	}
}

func TestAuditDecoderErrors(t *testing.T) {
	for name, c := range map[string]struct {
		in, want string
	}{
		"no version":      {`{"id":1,"time":"2026-11-21T09:30:00Z"}`, "format version 0"},
		"future version":  {`{"v":2,"id":1,"time":"2026-11-21T09:30:00Z"}`, "format version 2"},
		"bad time":        {`{"v":1,"id":1,"time":"yesterday"}`, "time"},
		"not json":        {`{"v":1,`, "line 1"},
		"second line bad": {"{\"v\":1,\"id\":1,\"time\":\"2026-11-21T09:30:00Z\"}\n\n[]", "line 3"},
	} {
		t.Run(name, func(t *testing.T) {
			dec := store.NewAuditDecoder(strings.NewReader(c.in))
			var err error
			for err == nil {
				var r store.AuditRecord
				err = dec.Decode(&r)
			}
			if err == io.EOF || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Decode error = %v, want one mentioning %q", err, c.want)
			}
		})
	}
	long := `{"v":1,"id":1,"time":"2026-11-21T09:30:00Z","error":"` + strings.Repeat("x", store.MaxAuditLineBytes) + `"}`
	var r store.AuditRecord
	if err := store.NewAuditDecoder(strings.NewReader(long)).Decode(&r); err == nil || err == io.EOF {
		t.Errorf("overlong line: %v, want an error", err)
	}
	unknown := `{"v":1,"id":7,"time":"2026-11-21T09:30:00Z","added_later":{"x":1}}`
	if err := store.NewAuditDecoder(strings.NewReader(unknown)).Decode(&r); err != nil || r.ID != 7 {
		t.Errorf("a line with an unknown key: %v (id %d), want it read", err, r.ID)
	}
}

func TestValidate(t *testing.T) {
	far := time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)
	invalid := map[string]error{
		"audit event json":    (&store.AuditRecord{Event: json.RawMessage(`{`)}).Validate(),
		"audit field size":    (&store.AuditRecord{RuleID: strings.Repeat("r", store.MaxAuditFieldBytes+1)}).Validate(),
		"audit time":          (&store.AuditRecord{Time: far}).Validate(),
		"approval event":      (&store.Approval{Event: json.RawMessage(`nope`)}).Validate(),
		"resolution status":   store.Resolution{Status: store.ApprovalPending}.Validate(),
		"fact confidence":     (&store.Fact{Content: "x", Confidence: 2}).Validate(),
		"fact query size":     store.FactQuery{Text: strings.Repeat("q", store.MaxFactQueryBytes+1)}.Validate(),
		"run event no run":    (&store.RunEvent{Payload: json.RawMessage(`{}`)}).Validate(),
		"run record flags":    (&store.RunRecord{RunID: "r", Flags: []string{""}}).Validate(),
		"run record too many": (&store.RunRecord{RunID: "r", Flags: make([]string, store.MaxRunFlags+1)}).Validate(),
	}
	for name, err := range invalid {
		if !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	valid := map[string]error{
		"audit notification": (&store.AuditRecord{EventType: "heartbeat"}).Validate(),
		"fact":               (&store.Fact{Content: "x", Confidence: 1}).Validate(),
		"run record":         (&store.RunRecord{RunID: "r", Record: json.RawMessage(`{"a":1}`)}).Validate(),
	}
	for name, err := range valid {
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestQueryLimits(t *testing.T) {
	for in, want := range map[int]int{0: store.MaxQueryLimit, -5: store.MaxQueryLimit, 10: 10, store.MaxQueryLimit + 1: store.MaxQueryLimit} {
		if got := (store.AuditFilter{Limit: in}).QueryLimit(); got != want {
			t.Errorf("AuditFilter{Limit: %d}.QueryLimit() = %d, want %d", in, got, want)
		}
	}
}
