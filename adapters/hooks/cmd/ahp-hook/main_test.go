package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/transport"
)

type blockAll struct{ server.BaseHandler }

func (blockAll) HandleEvent(context.Context, *protocol.Event) (protocol.Decision, error) {
	return protocol.Block("nothing today"), nil
}

const pre = `{"session_id":"s","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"ls"}}`

func TestRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.sock")
	l, err := transport.ListenUnix(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = server.New(blockAll{}, server.Options{}).Serve(ctx, l) }()
	defer func() { cancel(); l.Close(); <-done }()

	var out, errb bytes.Buffer
	if code := run([]string{"gemini", "--connect", "unix:" + path}, strings.NewReader(pre), &out, &errb); code != 0 ||
		strings.TrimSpace(out.String()) != `{"decision":"deny","reason":"ahp: blocked by the harness: nothing today"}` {
		t.Fatalf("exit %d %q %q", code, out.String(), errb.String())
	}
	// Fail closed: nobody listening, no address, unknown tool.
	for _, args := range [][]string{
		{"gemini", "--connect", "unix:" + filepath.Join(t.TempDir(), "none.sock"), "--timeout", "1s"},
		{"gemini", "--connect", ""},
		{"cursor", "--connect", "unix:" + path},
		{},
	} {
		out.Reset()
		errb.Reset()
		if code := run(args, strings.NewReader(pre), &out, &errb); code != 2 || out.Len() != 0 || !strings.Contains(errb.String(), "failing closed") {
			t.Fatalf("%v: exit %d %q %q", args, code, out.String(), errb.String())
		}
	}
}
