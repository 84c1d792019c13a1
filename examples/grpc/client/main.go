// Command client is an agent that asks a harness over gRPC before it
// acts. It opens one Stream RPC, on which many requests may be in flight,
// sends its API key as x-api-key metadata (read from $AHP_API_KEY, never
// from a flag), performs the handshake, and asks about two shell
// commands. It also shows the unary Call RPC, whose deadline is the
// client timeout.
//
//	go run ./examples/grpc/server &
//	go run ./examples/grpc/client -addr grpc://127.0.0.1:9090
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/transport"
	"github.com/ahp-go/ahp/transport/grpctransport" // also registers grpc:// and grpcs://
)

func main() {
	addr := flag.String("addr", "grpc://127.0.0.1:9090", "harness address (grpc:// or grpcs://)")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dopts := transport.DialOptions{APIKey: os.Getenv("AHP_API_KEY"), Timeout: 5 * time.Second}
	copts := client.Options{SessionID: "example-session", AgentID: "example-agent", Timeout: 5 * time.Second}

	// The stream: one long-lived RPC, reconnected if the harness restarts.
	c, err := client.Dial(ctx, *addr, dopts, copts)
	if err != nil {
		fail("connect", err)
	}
	defer c.Close()
	ask(ctx, c, "stream")

	// The unary form: one Call RPC per request, each with a deadline.
	cc, err := grpctransport.NewClientConn(*addr, dopts)
	if err != nil {
		fail("connect", err)
	}
	defer cc.Close()
	u := client.New(cc.Unary(), copts)
	defer u.Close()
	ask(ctx, u, "unary")
}

func ask(ctx context.Context, c *client.Client, how string) {
	hs, err := c.Handshake(ctx)
	if err != nil {
		fail("handshake", err)
	}
	fmt.Printf("[%s] connected to %s %s\n", how, hs.HarnessInfo.Name, hs.HarnessInfo.Version)
	for _, cmd := range []string{"ls -la", "rm -rf /"} {
		d, err := c.Event(ctx, protocol.EventPreAction, map[string]any{
			"action_type": "tool_call", "tool_name": "bash",
			"arguments": map[string]string{"command": cmd},
		})
		if err != nil {
			fail("event", err)
		}
		fmt.Printf("[%s] %-10s -> %s %s\n", how, cmd, d.Kind, d.Reason)
	}
}

func fail(what string, err error) {
	fmt.Fprintln(os.Stderr, what+":", err)
	os.Exit(1)
}
