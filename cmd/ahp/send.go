package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/transport"
)

// Exit codes of ahp send.
const (
	exitAllow = 0 // allow or modify (and any typed decision that lets the agent go on)
	exitFail  = 1 // the event could not be sent or answered
	exitBlock = 2 // block (and typed refusals: block, reject, skip)
	exitLater = 3 // defer or escalate: not now, ask again or ask a human
)

type sendOptions struct {
	connect  []string
	session  string
	agent    string
	depth    uint32
	timeout  time.Duration
	metadata string
	dial     transport.DialOptions
}

func init() { register(newSendCmd) }

func newSendCmd() *cobra.Command {
	o := &sendOptions{}
	cmd := &cobra.Command{
		Use:   "send --connect ADDRESS EVENT_TYPE PAYLOAD_JSON | query QUERY_TYPE [PAYLOAD_JSON]",
		Short: "Send one event to a harness and print its decision",
		Long: `Send one event to a harness and print the decision as JSON on stdout.

ahp send connects, performs the handshake, sends the event and exits.
Fire-and-forget event types (post_action, session_start, ...) are sent as
notifications and print nothing. pre_action and pre_prompt carry
metadata.escalation.wait_ms (--timeout less 2 s): a rule that holds the
event for an approval answers block by then rather than outlive ahp send.

ahp send query QUERY_TYPE [PAYLOAD_JSON] sends ahp/query instead and prints
the response ({"answer": ..., "reason": ...}); see docs/query.md for the
query types (check, budget, approval, rules, policy). A check exits like
the event it checks; a null answer exits 1.

Addresses:
  stdio:'PROGRAM ARGS'   start the harness program and talk over its stdin/stdout
  unix:PATH              a harness listening on a Unix socket
  http://HOST:PORT       HTTP (POST /ahp); https:// with TLS
  ws://HOST:PORT         WebSocket (/ahp); wss:// with TLS
  grpc://HOST:PORT       gRPC (ahp.v1.Harness); grpcs:// with TLS

Several replicas of one harness: repeat --connect or give a comma-separated
list (AHP_CONNECT too). ahp send uses the first that answers and moves to
the next when one cannot be reached; an event whose answer was lost with
its connection is sent again only when it is blocking (a notification is
not). With none answering it exits 1, never 0.

Credentials for network harnesses come from --api-key, --bearer and
--cert/--key/--ca, or better from $AHP_API_KEY, $AHP_BEARER_TOKEN, $AHP_CERT,
$AHP_KEY and $AHP_CA, so that secrets stay out of shell history.

Exit codes:
  0  allow or modify (typed events: any answer that lets the agent go on)
  1  error: the event could not be sent or was refused as invalid
  2  block (typed events: block, reject, skip)
  3  defer or escalate (typed events: idle defer, confirmation escalate)`,
		Example: `  ahp send --connect unix:./ahp.sock pre_action '{"tool_name":"bash","arguments":{"command":"rm -rf /"}}'
  ahp send --connect 'stdio:ahp serve --listen stdio' pre_prompt '{"prompt":"hello"}'
  ahp send --connect unix:./ahp.sock intent_detection '{"session_id":"s","prompt":"where is main.go","workspace":"."}'
  ahp send --connect http://10.0.0.11:8443,http://10.0.0.12:8443 pre_action '{"tool_name":"bash","arguments":{"command":"ls"}}'
  ahp send --connect unix:./ahp.sock query check '{"event_type":"pre_action","payload":{"tool_name":"bash","arguments":{"command":"rm -rf /"}}}'`,
		Args: sendArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] == sendQueryWord {
				return runSendQuery(cmd, o, args[1:])
			}
			return runSend(cmd, o, args[0], args[1])
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.connect, "connect", envConnect(), "harness address; repeat it or separate addresses by commas for replicas (or $AHP_CONNECT; default: ahp serve's default socket)")
	f.StringVar(&o.session, "session", "ahp-send", "session_id of the event")
	f.StringVar(&o.agent, "agent", "ahp-send", "agent_id of the event")
	f.Uint32Var(&o.depth, "depth", 0, "depth of the event (0 for a top-level agent)")
	f.DurationVar(&o.timeout, "timeout", 10*time.Second, "how long to wait for the harness")
	f.StringVar(&o.metadata, "metadata", "", "metadata object (JSON) to attach to the event")
	addDialFlags(f, &o.dial)
	return cmd
}

func runSend(cmd *cobra.Command, o *sendOptions, typ, payload string) error {
	addrs := connectAddrs(o.connect)
	if len(addrs) == 0 {
		return exitWith(exitFail, "--connect is required (or set AHP_CONNECT)")
	}
	t := protocol.EventType(typ)
	if !t.Known() {
		return exitWith(exitFail, unknownEventType(typ))
	}
	if t == protocol.EventHandshake || t == protocol.EventQuery {
		return exitWith(exitFail, fmt.Sprintf("%s is not sent as an event", typ))
	}
	if !json.Valid([]byte(payload)) {
		return exitWith(exitFail, "PAYLOAD_JSON is not valid JSON")
	}
	if !t.Blocking() {
		if err := checkNotification(t, []byte(payload)); err != nil {
			return exitWith(exitFail, err.Error())
		}
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout+5*time.Second)
	defer cancel()
	defer stdioDataDir(addrs)()
	c, err := o.dialHarness(ctx, addrs)
	if err != nil {
		return err
	}
	defer c.Close()
	ev, err := c.NewEvent(t, json.RawMessage(payload))
	if err != nil {
		return exitWith(exitFail, err.Error())
	}
	ev.Depth = o.depth
	if o.metadata != "" {
		if !json.Valid([]byte(o.metadata)) {
			return exitWith(exitFail, "--metadata is not valid JSON")
		}
		ev.Metadata = json.RawMessage(o.metadata)
	}
	if t.Blocking() && !t.Typed() {
		if ev.Metadata, err = withEscalationWait(ev.Metadata, o.timeout); err != nil {
			return exitWith(exitFail, err.Error())
		}
	}
	out := cmd.OutOrStdout()
	if !t.Blocking() {
		if err := c.NotifyEvent(ctx, ev); err != nil {
			return exitWith(exitFail, err.Error())
		}
		// Ping so that the notification has left before we close. A
		// harness without ping (the a3s-ahp 2.4 crate's servers) answers
		// "Method not found": an answer all the same, after the
		// notification on an ordered connection.
		if err := c.Ping(ctx); err != nil && !isMethodNotFound(err) {
			return exitWith(exitFail, err.Error())
		}
		fmt.Fprintln(cmd.ErrOrStderr(), "ahp: notification sent")
		return nil
	}
	if t.Typed() {
		var raw json.RawMessage
		if err := c.SendTyped(ctx, ev, &raw); err != nil {
			return exitWith(exitFail, err.Error())
		}
		fmt.Fprintln(out, string(raw))
		return typedExit(raw)
	}
	d, err := c.SendEvent(ctx, ev)
	if err != nil {
		return exitWith(exitFail, err.Error())
	}
	b, _ := json.Marshal(d)
	fmt.Fprintln(out, string(b))
	switch d.Kind {
	case protocol.DecisionBlock:
		return exitWith(exitBlock, "")
	case protocol.DecisionDefer, protocol.DecisionEscalate:
		return exitWith(exitLater, "")
	}
	return nil
}

// typedExit maps a typed decision to an exit code by its tag.
// dialHarness dials the first harness of addrs that answers (failing over to
// the next ones) and performs the handshake. Its errors are exit errors.
func (o *sendOptions) dialHarness(ctx context.Context, addrs []string) (*client.Failover, error) {
	if err := finishDialFlags(&o.dial); err != nil {
		return nil, exitWith(exitFail, err.Error())
	}
	o.dial.Timeout = o.timeout
	c, err := client.DialAny(ctx, addrs, o.dial, client.Options{
		Timeout: o.timeout, FailMode: client.FailError,
		SessionID: o.session, AgentID: o.agent, Framework: "ahp-send", Version: buildVersion(),
	})
	if err != nil {
		return nil, exitWith(exitFail, noHarnessMessage(err, addrs, ""))
	}
	if _, err := c.Handshake(ctx); err != nil {
		_ = c.Close()
		return nil, exitWith(exitFail, noHarnessMessage(err, addrs, "handshake: "))
	}
	return c, nil
}

func typedExit(raw json.RawMessage) error {
	var tag struct {
		Decision string `json:"decision"`
	}
	_ = json.Unmarshal(raw, &tag)
	switch tag.Decision {
	case "block", "reject", "skip":
		return exitWith(exitBlock, "")
	case "defer", "escalate":
		return exitWith(exitLater, "")
	}
	return nil
}

// isMethodNotFound reports whether err is the harness's JSON-RPC answer
// "Method not found" (-32601).
func isMethodNotFound(err error) bool {
	var je *jsonrpc.Error
	return errors.As(err, &je) && je.Code == jsonrpc.CodeMethodNotFound
}
