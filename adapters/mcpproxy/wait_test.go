package mcpproxy

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// childServerEnv makes the test binary run as a small MCP server on
// stdio (TestMain): a real child process for the proxy to start and stop.
const childServerEnv = "AHP_TEST_MCP_CHILD_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(childServerEnv) == "1" {
		runChildServer()
		return
	}
	os.Exit(m.Run())
}

// runChildServer serves one tool, "pid", that answers with the process
// ID, until stdin ends.
func runChildServer() {
	s := mcp.NewServer(&mcp.Implementation{Name: "child", Version: "1"}, nil)
	type in struct{}
	mcp.AddTool(s, &mcp.Tool{Name: "pid", Description: "the server's process ID"},
		func(context.Context, *mcp.CallToolRequest, in) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.Itoa(os.Getpid())}}}, nil, nil
		})
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
}

// Wait after cancelling the handler's Context ends every session and
// stops each session's MCP server process; no session starts after it.
func TestHTTPHandlerWaitStopsServers(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	handler := &HTTPHandler{
		Upstream: func(ctx context.Context) (mcp.Connection, error) {
			c := exec.Command(self)
			c.Env = append(os.Environ(), childServerEnv+"=1")
			return (&mcp.CommandTransport{Command: c}).Connect(ctx)
		},
		Options: Options{Harness: &rules{}, ServerName: "child"},
		Context: ctx,
	}
	srv := httptest.NewServer(handler)
	defer srv.Close()

	cctx, ccancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer ccancel()
	var pids []int
	for range 2 {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(cctx, &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		r, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "pid", Arguments: map[string]any{}})
		if err != nil || r.IsError {
			t.Fatalf("pid: %v %q", err, text(r))
		}
		pid, err := strconv.Atoi(text(r))
		if err != nil {
			t.Fatalf("pid answer %q", text(r))
		}
		if !alive(pid) {
			t.Fatalf("server process %d is not running during its session", pid)
		}
		pids = append(pids, pid)
	}
	if pids[0] == pids[1] {
		t.Fatalf("two sessions share the server process %d", pids[0])
	}

	cancel()
	done := make(chan struct{})
	go func() { handler.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Wait did not return after the Context was cancelled")
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("server process %d still runs after Wait", pid)
		}
	}
	// A new session after Wait is refused, and starts no process.
	if _, err := handler.start(); !errors.Is(err, errClosing) {
		t.Fatalf("session after Wait: %v, want %v", err, errClosing)
	}
}

// alive reports whether process pid exists (CommandTransport reaps its
// children, so a stopped server leaves no zombie behind).
func alive(pid int) bool {
	return syscall.Kill(pid, 0) == nil
}
