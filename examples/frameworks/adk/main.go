// Command adk supervises the tool calls of a Google ADK for Go agent with
// an AHP harness, through llmagent.Config.BeforeToolCallbacks (pre_action)
// and AfterToolCallbacks (post_action). A scripted model asks for three
// shell commands, so the example runs offline:
//
//	go run ./adk                           # with a demo harness in process
//	go run ./adk -connect unix:./ahp.sock  # with ahp serve
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"log"
	"maps"
	"os"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"
	"google.golang.org/genai"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/examples/frameworks/supervise"
)

// out receives what the example prints (a buffer in the test).
var out io.Writer = os.Stdout

func main() {
	connect := flag.String("connect", os.Getenv("AHP_CONNECT"), "harness address (empty: a demo harness in this process)")
	flag.Parse()
	ctx := context.Background()
	c, err := supervise.Connect(ctx, *connect, "adk-example")
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

func run(ctx context.Context, c *client.Client) error {
	shell, err := functiontool.New(functiontool.Config{Name: "shell", Description: "runs a shell command (pretend)"},
		func(_ tool.Context, a shellArgs) (map[string]any, error) {
			return map[string]any{"output": "ran: " + a.Command}, nil
		})
	if err != nil {
		return err
	}
	a, err := llmagent.New(llmagent.Config{
		Name:  "assistant",
		Model: &scripted{calls: []string{"ls", "rm -rf /", "git status"}},
		Tools: []tool.Tool{shell},
		// Before each tool call: ask the harness. Returning a result
		// skips the tool; changing args runs it with the harness's.
		BeforeToolCallbacks: []llmagent.BeforeToolCallback{func(tc tool.Context, t tool.Tool, args map[string]any) (map[string]any, error) {
			newArgs, err := supervise.Check(tc, c, t.Name(), args)
			var refused *supervise.Refused
			if errors.As(err, &refused) {
				return map[string]any{"error": refused.Reason}, nil
			}
			// ADK runs the tool with the map it gave the callback:
			// put the harness's arguments in it.
			replacement := maps.Clone(newArgs)
			clear(args)
			maps.Copy(args, replacement)
			return nil, nil
		}},
		AfterToolCallbacks: []llmagent.AfterToolCallback{func(tc tool.Context, t tool.Tool, args, result map[string]any, err error) (map[string]any, error) {
			supervise.Report(tc, c, t.Name(), args, result, err)
			return nil, nil
		}},
	})
	if err != nil {
		return err
	}
	sessions := session.InMemoryService()
	if _, err := sessions.Create(ctx, &session.CreateRequest{AppName: "ahp-example", UserID: "u", SessionID: "s"}); err != nil {
		return err
	}
	r, err := runner.New(runner.Config{AppName: "ahp-example", Agent: a, SessionService: sessions})
	if err != nil {
		return err
	}
	for ev, err := range r.Run(ctx, "u", "s", genai.NewContentFromText("tidy up", genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			return err
		}
		if ev.Content == nil {
			continue
		}
		for _, p := range ev.Content.Parts {
			if p.FunctionResponse != nil {
				fmt.Fprintf(out, "tool %s -> %v\n", p.FunctionResponse.Name, p.FunctionResponse.Response)
			}
		}
	}
	return nil
}

// scripted is a model that asks for one shell command per turn, then ends.
type scripted struct{ calls []string }

func (s *scripted) Name() string { return "scripted" }

func (s *scripted) GenerateContent(_ context.Context, _ *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		if len(s.calls) == 0 {
			yield(&model.LLMResponse{Content: genai.NewContentFromText("done", genai.RoleModel), TurnComplete: true}, nil)
			return
		}
		cmd := s.calls[0]
		s.calls = s.calls[1:]
		part := genai.NewPartFromFunctionCall("shell", map[string]any{"command": cmd})
		yield(&model.LLMResponse{Content: genai.NewContentFromParts([]*genai.Part{part}, genai.RoleModel), TurnComplete: true}, nil)
	}
}
