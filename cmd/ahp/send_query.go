package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ahp-go/ahp/protocol"
)

// sendQueryWord selects the query form of ahp send.
const sendQueryWord = "query"

// sendArgs accepts EVENT_TYPE PAYLOAD_JSON, or query QUERY_TYPE [PAYLOAD_JSON].
func sendArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 && args[0] == sendQueryWord {
		if len(args) < 2 || len(args) > 3 {
			return fmt.Errorf("usage: ahp send query QUERY_TYPE [PAYLOAD_JSON] (got %d arguments after query)", len(args)-1)
		}
		return nil
	}
	return sendEventArgs(cmd, args)
}

// runSendQuery sends one ahp/query and prints the response. A check exits
// like the event it checks (2 block, 3 defer or escalate); a null answer
// exits 1.
func runSendQuery(cmd *cobra.Command, o *sendOptions, args []string) error {
	addrs := connectAddrs(o.connect)
	if len(addrs) == 0 {
		return exitWith(exitFail, "--connect is required (or set AHP_CONNECT)")
	}
	queryType, payload := args[0], "{}"
	if len(args) == 2 {
		payload = args[1]
	}
	if !json.Valid([]byte(payload)) {
		return exitWith(exitFail, "PAYLOAD_JSON is not valid JSON")
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout+5*time.Second)
	defer cancel()
	defer stdioDataDir(addrs)()
	c, err := o.dialHarness(ctx, addrs)
	if err != nil {
		return err
	}
	defer c.Close()
	qr, err := c.Query(ctx, queryType, json.RawMessage(payload))
	if err != nil {
		return exitWith(exitFail, err.Error())
	}
	b, _ := json.Marshal(qr)
	fmt.Fprintln(cmd.OutOrStdout(), string(b))
	if a := bytes.TrimSpace(qr.Answer); len(a) == 0 || bytes.Equal(a, []byte("null")) {
		return exitWith(exitFail, "")
	}
	var check struct {
		Decision *protocol.Decision `json:"decision"`
	}
	if json.Unmarshal(qr.Answer, &check) == nil && check.Decision != nil {
		switch check.Decision.Kind {
		case protocol.DecisionBlock:
			return exitWith(exitBlock, "")
		case protocol.DecisionDefer, protocol.DecisionEscalate:
			return exitWith(exitLater, "")
		}
	}
	return nil
}
