// Command client is an agent that asks a harness over WebSocket before it
// acts. It sends its API key in the X-API-Key header of the upgrade
// request (read from $AHP_API_KEY, never from a flag), performs the
// handshake, and asks about two shell commands. The connection reconnects
// by itself if the harness restarts: calls in flight fail at once, later
// calls go through the new connection.
//
//	go run ./examples/websocket/server &
//	go run ./examples/websocket/client -url ws://127.0.0.1:8081/ahp
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
	_ "github.com/ahp-go/ahp/transport/wstransport" // ws:// and wss:// addresses
)

func main() {
	url := flag.String("url", "ws://127.0.0.1:8081/ahp", "harness address (ws:// or wss://)")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	c, err := client.Dial(ctx, *url,
		transport.DialOptions{APIKey: os.Getenv("AHP_API_KEY"), Timeout: 5 * time.Second},
		client.Options{SessionID: "example-session", AgentID: "example-agent", Timeout: 5 * time.Second})
	if err != nil {
		fmt.Fprintln(os.Stderr, "connect:", err)
		os.Exit(1)
	}
	defer c.Close()
	hs, err := c.Handshake(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "handshake:", err)
		os.Exit(1)
	}
	fmt.Printf("connected to %s %s\n", hs.HarnessInfo.Name, hs.HarnessInfo.Version)

	for _, cmd := range []string{"ls -la", "rm -rf /"} {
		d, err := c.Event(ctx, protocol.EventPreAction, map[string]any{
			"action_type": "tool_call", "tool_name": "bash",
			"arguments": map[string]string{"command": cmd},
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "event:", err)
			os.Exit(1)
		}
		fmt.Printf("%-10s -> %s %s\n", cmd, d.Kind, d.Reason)
	}
}
