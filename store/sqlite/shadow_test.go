package sqlite

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/ahp-go/ahp/store"
)

// Shadow verdicts are stored with their record, selected by the shadow
// filters and exported in the audit line format.
func TestAuditShadowColumns(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), FileName), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	recs := []store.AuditRecord{
		{SessionID: "a", EventType: "pre_action", Outcome: "allow"},
		{SessionID: "b", EventType: "pre_action", Outcome: "allow", Shadow: json.RawMessage(`{"rules":[{"rule_id":"r","decision":"allow"}]}`)},
		{SessionID: "c", EventType: "pre_action", Outcome: "allow", Shadow: json.RawMessage(`{"rules":[{"rule_id":"r","decision":"block","changes":true}]}`), ShadowChanged: true},
	}
	for i := range recs {
		if err := db.Audit().Append(ctx, &recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	for sel, want := range map[store.ShadowSelect][]string{store.ShadowAll: {"a", "b", "c"}, store.ShadowEvaluated: {"b", "c"}, store.ShadowChanged: {"c"}} {
		got, err := db.Audit().Query(ctx, store.AuditFilter{Shadow: sel})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range got {
			ids = append(ids, r.SessionID)
		}
		if len(ids) != len(want) || (len(ids) > 0 && ids[len(ids)-1] != want[len(want)-1]) {
			t.Fatalf("filter %d: sessions %v, want %v", sel, ids, want)
		}
		for _, r := range got {
			if r.SessionID == "c" && (!r.ShadowChanged || string(r.Shadow) != string(recs[2].Shadow)) {
				t.Fatalf("record read back as %+v", r)
			}
			if r.SessionID == "a" && (r.Shadow != nil || r.ShadowChanged) {
				t.Fatalf("record without shadow read back as %+v", r)
			}
		}
	}
	var buf bytes.Buffer
	if _, err := db.Audit().Export(ctx, &buf, store.AuditFilter{Shadow: store.ShadowChanged}); err != nil {
		t.Fatal(err)
	}
	var back store.AuditRecord
	if err := store.NewAuditDecoder(&buf).Decode(&back); err != nil {
		t.Fatal(err)
	}
	if !back.ShadowChanged || string(back.Shadow) != string(recs[2].Shadow) {
		t.Fatalf("exported line read back as %+v", back)
	}
	bad := store.AuditRecord{Shadow: json.RawMessage(`{`)}
	if err := db.Audit().Append(ctx, &bad); err == nil {
		t.Fatal("invalid shadow JSON accepted")
	}
}
