package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/runs/runstest"
	"github.com/ahp-go/ahp/transport"
)

// A scripted session of run notifications sent to a live harness (with a
// duplicate, out-of-order snapshots and an illegal transition) becomes the
// expected run record, shown by ahp runs show.
func TestRunsFromLiveHarness(t *testing.T) {
	bin := e2eBinary(t)
	dir := t.TempDir()
	srv, sock, stderr := startServe(t, bin, dir)
	ctx := context.Background()
	conn, err := transport.Dial(ctx, "unix:"+sock, transport.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(conn, client.Options{SessionID: runstest.SessionID, AgentID: runstest.AgentID, FailMode: client.FailError})
	if _, err := c.Handshake(ctx); err != nil {
		t.Fatal(err)
	}
	for _, ev := range runstest.Session() {
		if err := c.NotifyEvent(ctx, &ev); err != nil {
			t.Fatal(err)
		}
	}
	// Notifications are handled in order before this request is answered.
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
	_ = srv.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- srv.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = srv.Process.Kill()
		t.Fatalf("harness did not stop: %s", stderr.String())
	}

	show := exec.Command(bin, "runs", "show", runstest.RunID, "--data-dir", filepath.Join(dir, "data"))
	var out, errb bytes.Buffer
	show.Stdout, show.Stderr = &out, &errb
	if err := show.Run(); err != nil {
		t.Fatalf("runs show: %v: %s", err, errb.String())
	}
	text := out.String()
	for _, want := range []string{runstest.RunID, "completed", "illegal", "out_of_order", "duplicate"} {
		if !strings.Contains(text, want) {
			t.Errorf("runs show lacks %q:\n%s", want, text)
		}
	}
	jsonOut, err := exec.Command(bin, "runs", "show", runstest.RunID, "--json", "--data-dir", filepath.Join(dir, "data")).Output()
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Status string `json:"status"`
		Counts struct {
			Duplicates int `json:"duplicates"`
			OutOfOrder int `json:"out_of_order"`
			Illegal    int `json:"illegal"`
		} `json:"counts"`
	}
	if err := json.Unmarshal(jsonOut, &rec); err != nil {
		t.Fatalf("runs show --json: %v\n%s", err, jsonOut)
	}
	if rec.Status != "completed" || rec.Counts.Duplicates != 2 || rec.Counts.OutOfOrder != 2 || rec.Counts.Illegal != 1 {
		t.Fatalf("run record: %+v\n%s", rec, jsonOut)
	}
}
