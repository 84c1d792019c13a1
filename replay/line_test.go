package replay

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/sqlite"
)

// sameAsStore checks decodeLine against the store's decoder on one line:
// when decodeLine accepts a line, the store's decoder must accept it too
// and give the same record.
func sameAsStore(t *testing.T, line []byte) (fast bool) {
	t.Helper()
	var got, want store.AuditRecord
	if !decodeLine(line, &got) {
		return false
	}
	if err := want.UnmarshalJSON(line); err != nil {
		t.Fatalf("decodeLine accepted what the store refuses (%v): %s", err, line)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeLine differs from the store's decoder on %s:\n got %+v\nwant %+v", line, got, want)
	}
	return true
}

func TestDecodeLineMatchesTheStoreDecoder(t *testing.T) {
	path, _ := teamDB(t)
	db, err := sqlite.Open(context.Background(), path, sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var export bytes.Buffer
	if _, err := db.Audit().Export(context.Background(), &export, store.AuditFilter{}); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range bytes.Split(bytes.TrimSpace(export.Bytes()), []byte("\n")) {
		if !sameAsStore(t, line) {
			t.Fatalf("decodeLine declined an exported line: %s", line)
		}
		n++
	}
	if n < 1000 {
		t.Fatalf("only %d lines", n)
	}
	for _, c := range lineCases {
		fast := sameAsStore(t, []byte(c.line))
		if fast != c.fast {
			t.Errorf("%s: fast path %v, want %v", c.line, fast, c.fast)
		}
	}
}

const baseLine = `{"v":1,"id":7,"time":"2026-11-21T09:00:00.5Z","session_id":"s","agent_id":"a","event_type":"pre_action","blocking":true,"outcome":"allow","rule_id":"","policy_version":"p","principal":"x","transport":"unix","latency_ns":12,"descriptor_hash":"","error":"","event":{"k":[1, 2]},"decision":null}`

var lineCases = []struct {
	line string
	fast bool
}{
	{baseLine, true},
	{strings.Replace(baseLine, `"v":1,`, `"extra":{"a":"\n"},"v":1,`, 1), true},
	{strings.Replace(baseLine, `"session_id":"s"`, `"session_id":"s\u00e9"`, 1), false},
	{strings.Replace(baseLine, `"session_id":"s"`, `"SESSION_ID":"s"`, 1), false},
	{strings.Replace(baseLine, `"session_id":"s"`, `"session_id":null`, 1), false},
	{strings.Replace(baseLine, `"id":7`, `"id":7.0`, 1), false},
	{strings.Replace(baseLine, `"id":7`, `"id":"7"`, 1), false},
	{strings.Replace(baseLine, `"blocking":true`, `"blocking":1`, 1), false},
	{strings.Replace(baseLine, `"v":1`, `"v":2`, 1), false},
	{strings.Replace(baseLine, `"time":"2026-11-21T09:00:00.5Z"`, `"time":"yesterday"`, 1), false},
	{strings.Replace(baseLine, `"blocking":true`, `"blocking":true,"blocking":false`, 1), true},
	{`{"v":1`, false},
	{`[]`, false},
}

// FuzzDecodeLine holds decodeLine to the store's decoder on any input.
func FuzzDecodeLine(f *testing.F) {
	for _, c := range lineCases {
		f.Add(c.line)
	}
	f.Fuzz(func(t *testing.T, line string) {
		sameAsStore(t, []byte(line))
	})
}
