// Command eino supervises the tool calls of a CloudWeGo Eino ToolsNode
// with an AHP harness, through a tool-call middleware
// (compose.ToolsNodeConfig.ToolCallMiddlewares). The model's message with
// three tool calls is scripted, so the example runs offline:
//
//	go run ./eino                           # with a demo harness in process
//	go run ./eino -connect unix:./ahp.sock  # with ahp serve
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/examples/frameworks/supervise"
)

// out receives what the example prints (a buffer in the test).
var out io.Writer = os.Stdout

func main() {
	connect := flag.String("connect", os.Getenv("AHP_CONNECT"), "harness address (empty: a demo harness in this process)")
	flag.Parse()
	ctx := context.Background()
	c, err := supervise.Connect(ctx, *connect, "eino-example")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if err := run(ctx, c); err != nil {
		log.Fatal(err)
	}
}

type shellArgs struct {
	Command string `json:"command"`
}

// middleware asks the harness before each tool call: a refusal becomes
// the tool's result (the model reads the reason), a modification replaces
// the arguments, and a post_action reports what ran.
func middleware(c *client.Client) compose.InvokableToolMiddleware {
	return func(next compose.InvokableToolEndpoint) compose.InvokableToolEndpoint {
		return func(ctx context.Context, in *compose.ToolInput) (*compose.ToolOutput, error) {
			var args map[string]any
			if err := json.Unmarshal([]byte(in.Arguments), &args); err != nil {
				return &compose.ToolOutput{Result: "ahp: arguments are not a JSON object"}, nil
			}
			newArgs, err := supervise.Check(ctx, c, in.Name, args)
			var refused *supervise.Refused
			if errors.As(err, &refused) {
				return &compose.ToolOutput{Result: refused.Reason}, nil
			}
			b, _ := json.Marshal(newArgs)
			call := *in
			call.Arguments = string(b)
			out, err := next(ctx, &call)
			var result any
			if out != nil {
				result = out.Result
			}
			supervise.Report(ctx, c, in.Name, newArgs, result, err)
			return out, err
		}
	}
}

func run(ctx context.Context, c *client.Client) error {
	shell, err := utils.InferTool("shell", "runs a shell command (pretend)", func(_ context.Context, a shellArgs) (string, error) {
		return "ran: " + a.Command, nil
	})
	if err != nil {
		return err
	}
	node, err := compose.NewToolNode(ctx, &compose.ToolsNodeConfig{
		Tools:               []tool.BaseTool{shell},
		ToolCallMiddlewares: []compose.ToolMiddleware{{Invokable: middleware(c)}},
	})
	if err != nil {
		return err
	}
	// What a chat model would answer: three tool calls.
	msg := schema.AssistantMessage("", []schema.ToolCall{
		{ID: "1", Function: schema.FunctionCall{Name: "shell", Arguments: `{"command":"ls"}`}},
		{ID: "2", Function: schema.FunctionCall{Name: "shell", Arguments: `{"command":"rm -rf /"}`}},
		{ID: "3", Function: schema.FunctionCall{Name: "shell", Arguments: `{"command":"git status"}`}},
	})
	msgs, err := node.Invoke(ctx, msg)
	if err != nil {
		return err
	}
	for _, m := range msgs {
		fmt.Fprintf(out, "tool %s (%s) -> %s\n", m.ToolName, m.ToolCallID, m.Content)
	}
	return nil
}
