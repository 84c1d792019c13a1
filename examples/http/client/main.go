// Command client asks an AHP harness over HTTP whether a shell command may
// run, and prints the decision. The API key comes from $AHP_API_KEY so it
// stays out of shell history.
//
//	go run ./examples/http/client -url http://127.0.0.1:8080/ahp 'ls -la'
//	AHP_API_KEY=... go run ./examples/http/client 'rm -rf /tmp/x'
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/transport"
	_ "github.com/ahp-go/ahp/transport/httptransport" // registers http:// and https://
)

func main() {
	url := flag.String("url", "http://127.0.0.1:8080/ahp", "harness endpoint")
	timeout := flag.Duration("timeout", 10*time.Second, "how long to wait for a decision")
	flag.Parse()
	command := strings.Join(flag.Args(), " ")
	if command == "" {
		command = "ls -la"
	}

	ctx, cancel := context.WithTimeout(context.Background(), *timeout+5*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, *url,
		transport.DialOptions{APIKey: os.Getenv("AHP_API_KEY"), BearerToken: os.Getenv("AHP_BEARER_TOKEN")},
		client.Options{Timeout: *timeout, SessionID: "example-session", AgentID: "example-agent"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "dial:", err)
		os.Exit(1)
	}
	defer c.Close()
	hs, err := c.Handshake(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "handshake:", err)
		os.Exit(1)
	}
	fmt.Printf("connected to %s %s\n", hs.HarnessInfo.Name, hs.HarnessInfo.Version)

	// FailClosed (the default): if the harness cannot answer, the decision
	// is a block that says why, never a silent allow.
	d, err := c.Event(ctx, protocol.EventPreAction, map[string]any{
		"tool_name": "bash", "arguments": map[string]any{"command": command},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "event:", err)
		os.Exit(1)
	}
	fmt.Printf("%q: %s", command, d.Kind)
	if d.Reason != "" {
		fmt.Printf(" (%s)", d.Reason)
	}
	fmt.Println()
	if !d.Allowed() {
		os.Exit(2)
	}
}
