package hooks

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ahp-go/ahp/protocol"
)

// gateHarness counts the events it is asked about and holds each Decide
// until release is closed.
type gateHarness struct {
	calls   atomic.Int32
	entered chan struct{}
	release chan struct{}
}

func newGateHarness() *gateHarness {
	return &gateHarness{entered: make(chan struct{}, 100), release: make(chan struct{})}
}

func (g *gateHarness) Decide(ctx context.Context, ev *protocol.Event) (protocol.Decision, error) {
	g.calls.Add(1)
	g.entered <- struct{}{}
	select {
	case <-g.release:
	case <-ctx.Done():
		return protocol.Decision{}, ctx.Err()
	}
	return protocol.Decision{Kind: protocol.DecisionAllow}, nil
}

func (g *gateHarness) Confirm(ctx context.Context, ev *protocol.Event) (protocol.ConfirmationDecision, error) {
	g.calls.Add(1)
	return protocol.ConfirmationDecision{}, nil
}

func (g *gateHarness) Notify(ctx context.Context, ev *protocol.Event) error {
	g.calls.Add(1)
	return nil
}

// hookPost posts body to url, waiting at most 10 s for the answer;
// chunked sends it without a Content-Length. A failed request is status 0
// with the error.
func hookPost(url string, body []byte, chunked bool) (int, string) {
	var r io.Reader = strings.NewReader(string(body))
	if chunked {
		r = io.MultiReader(r) // hides the length: sent chunked
	}
	cl := &http.Client{Timeout: 10 * time.Second}
	resp, err := cl.Post(url, "application/json", r)
	if err != nil {
		return 0, err.Error() // no t.Fatal: called from goroutines too
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// An input over MaxBodyBytes, announced or sent chunked, is denied (status
// 200: the tools' HTTP hooks go on after any other status) without
// reaching the harness; one within the limit is decided.
func TestHTTPHandlerBodyLimit(t *testing.T) {
	g := newGateHarness()
	close(g.release)
	srv := httptest.NewServer(NewHandler(g, HandlerOptions{MaxBodyBytes: 4096}))
	defer srv.Close()
	small := withCommand(t, ClaudeCode, "PreToolUse", "ls")
	big := withCommand(t, ClaudeCode, "PreToolUse", "ls "+strings.Repeat("a", 8192))
	for _, chunked := range []bool{false, true} {
		code, body := hookPost(srv.URL+"/hooks/claude-code", big, chunked)
		if code != http.StatusOK || !strings.Contains(body, `"permissionDecision":"deny"`) || !strings.Contains(body, "limit of 4096 bytes") {
			t.Fatalf("oversized input (chunked %v): %d %s", chunked, code, body)
		}
	}
	if n := g.calls.Load(); n != 0 {
		t.Fatalf("oversized inputs reached the harness %d times", n)
	}
	if code, body := hookPost(srv.URL+"/hooks/claude-code", small, true); code != http.StatusOK || strings.Contains(body, "deny") {
		t.Fatalf("small input: %d %s", code, body)
	}
	if n := g.calls.Load(); n != 1 {
		t.Fatalf("the small input reached the harness %d times, want 1", n)
	}
}

// Past MaxInFlight calls in progress, a hook call is denied at once
// without reaching the harness; once a slot is free calls are decided.
func TestHTTPHandlerInFlightLimit(t *testing.T) {
	g := newGateHarness()
	srv := httptest.NewServer(NewHandler(g, HandlerOptions{MaxInFlight: 2, Timeout: 30 * time.Second}))
	defer srv.Close()
	url := srv.URL + "/hooks/codex"
	in := withCommand(t, Codex, "PreToolUse", "ls")
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code, body := hookPost(url, in, false); code != http.StatusOK || strings.Contains(body, "deny") {
				t.Errorf("held call: %d %s", code, body)
			}
		}()
	}
	for range 2 {
		select {
		case <-g.entered:
		case <-time.After(10 * time.Second):
			t.Fatal("the first calls did not reach the harness")
		}
	}
	code, body := hookPost(url, in, false)
	if code != http.StatusOK || !strings.Contains(body, `"permissionDecision":"deny"`) || !strings.Contains(body, "2 hook calls already") {
		t.Fatalf("call beyond MaxInFlight: %d %s", code, body)
	}
	if n := g.calls.Load(); n != 2 {
		t.Fatalf("the harness was asked %d times, want 2", n)
	}
	close(g.release)
	wg.Wait()
	if code, body := hookPost(url, in, false); code != http.StatusOK || strings.Contains(body, "deny") {
		t.Fatalf("call after the slots freed: %d %s", code, body)
	}
}
