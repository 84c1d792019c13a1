package server

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// An agent sending bad notifications in a loop writes one log line per
// refusedLogEvery, and a line never repeats more than maxLoggedField
// bytes of any value the agent chose.
func TestRefusedNotificationsLogBounded(t *testing.T) {
	var logs bytes.Buffer
	s := New(BaseHandler{}, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	huge := strings.Repeat("x", 1<<20)
	bad := []byte(`{"jsonrpc":"2.0","method":"ahp/event","params":{"event_type":"` + huge +
		`","session_id":"` + huge + `","agent_id":"a","timestamp":"t","depth":0,"payload":{}}}`)
	for range 50 {
		if out := s.HandleMessage(context.Background(), bad); out != nil {
			t.Fatalf("a notification was answered: %.200s", out)
		}
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "notification refused") {
		t.Fatalf("%d log lines for 50 refusals within %s, want 1", len(lines), refusedLogEvery)
	}
	if len(lines[0]) > 4*maxLoggedField {
		t.Fatalf("a log line of %d bytes", len(lines[0]))
	}
	// After the interval, the next line counts the refusals in between.
	var l refusedLog
	now := time.Now()
	l.allow(now)
	l.allow(now.Add(time.Second))
	l.allow(now.Add(2 * time.Second))
	if ok, n := l.allow(now.Add(refusedLogEvery + time.Second)); !ok || n != 2 {
		t.Fatalf("after the interval: %v, %d unlogged; want true, 2", ok, n)
	}
}
