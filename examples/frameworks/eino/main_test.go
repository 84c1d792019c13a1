package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/examples/frameworks/supervise"
)

// The example against the demo harness: ls runs rewritten to ls -l, the
// recursive delete is refused with the harness's reason, git status runs.
func TestExample(t *testing.T) {
	var buf bytes.Buffer
	out = &buf
	ctx := context.Background()
	c, err := supervise.Connect(ctx, "", "test")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := run(ctx, c); err != nil {
		t.Fatal(err)
	}
	got := buf.String()
	for _, want := range []string{"ran: ls -l", "ahp: blocked: recursive deletes are not allowed", "ran: git status"} {
		if !strings.Contains(got, want) {
			t.Fatalf("missing %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "ran: rm") {
		t.Fatalf("the delete ran:\n%s", got)
	}
}
