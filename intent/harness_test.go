package intent_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store/sqlite"
)

// Issue 8 item 5, end to end: the harness's answer to the exact event of
// the report names the thing sought and its kind, not the trigger phrase
// ("target_type":"locate","target_name":"where is" before the fix).
func TestHarnessTargetHintsRegression(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "ahp.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	eng, err := policy.NewEngine(policy.Options{}, policy.Source{Name: "empty.yaml", Data: []byte("rules: []\n")})
	if err != nil {
		t.Fatal(err)
	}
	h, err := harness.New(harness.Options{Engine: eng, Store: db})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	payload := json.RawMessage(`{"session_id":"s1","prompt":"where is the config loader?","workspace":"."}`)
	var p protocol.IntentDetectionPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		t.Fatal(err)
	}
	ev := &protocol.Event{EventType: protocol.EventIntentDetection, SessionID: "s1", AgentID: "a",
		Timestamp: "2026-11-23T00:00:00Z", Payload: payload}
	d, err := h.HandleIntentDetection(ctx, ev, &p)
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	want := `"target_hints":{"target_type":"concept","target_name":"config loader"}`
	if !strings.Contains(string(out), `"detected_intent":"locate"`) || !strings.Contains(string(out), want) {
		t.Fatalf("answer %s\nwant detected_intent locate and %s", out, want)
	}
}
