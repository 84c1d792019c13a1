package main

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/protocol"
)

// sendEventArgs checks the arguments of ahp send EVENT_TYPE PAYLOAD_JSON,
// naming what is missing rather than counting arguments.
func sendEventArgs(_ *cobra.Command, args []string) error {
	switch len(args) {
	case 0:
		return fmt.Errorf("missing EVENT_TYPE and PAYLOAD_JSON, as in: ahp send pre_action '{\"tool_name\":\"bash\",\"arguments\":{\"command\":\"ls\"}}' (event types: %s)", sendableEventTypes())
	case 1:
		return fmt.Errorf("missing PAYLOAD_JSON after %s (a JSON object, '{}' for none)", args[0])
	case 2:
		return nil
	}
	return fmt.Errorf("too many arguments: want EVENT_TYPE PAYLOAD_JSON, got %d arguments (quote the JSON as one argument)", len(args))
}

// sendableEventTypes lists the event types ahp send sends.
func sendableEventTypes() string {
	var names []string
	for _, t := range protocol.AllEventTypes {
		if t != protocol.EventHandshake && t != protocol.EventQuery {
			names = append(names, string(t))
		}
	}
	return strings.Join(names, ", ")
}

// unknownEventType is the error of an event type ahp send does not know.
func unknownEventType(typ string) string {
	return fmt.Sprintf("unknown event type %q; want one of %s (or: ahp send query QUERY_TYPE)", typ, sendableEventTypes())
}

// checkNotification checks the payload of a fire-and-forget event before it
// is sent: a harness cannot answer a notification, so one it drops as
// invalid would otherwise be reported as sent.
func checkNotification(t protocol.EventType, payload []byte) error {
	if _, err := protocol.ValidatePayload(t, payload); err != nil {
		return fmt.Errorf("%s: PAYLOAD_JSON is not a valid %s payload, nothing sent: %v", t, t, err)
	}
	return nil
}

// noHarnessMessage rewrites a failure to reach any harness as one line per
// address with its cause, and asks whether the harness runs.
func noHarnessMessage(err error, addrs []string, context string) string {
	if !errors.Is(err, client.ErrNoHarness) {
		return context + err.Error()
	}
	var b strings.Builder
	b.WriteString("no harness answered")
	var multi interface{ Unwrap() []error }
	var causes []error
	if errors.As(err, &multi) {
		for _, e := range multi.Unwrap() {
			if e != client.ErrNoHarness {
				causes = append(causes, e)
			}
		}
	}
	for _, c := range causes {
		addr, cause := "", c.Error()
		for _, a := range addrs {
			if strings.HasPrefix(cause, a+": ") && len(a) > len(addr) {
				addr = a
			}
		}
		if addr == "" {
			fmt.Fprintf(&b, "\n  %s", rootCause(c, ""))
			continue
		}
		fmt.Fprintf(&b, "\n  %s: %s", addr, rootCause(c, addr))
	}
	b.WriteString("\nis `ahp serve` running? Start it (ahp serve), or give its address with --connect or $AHP_CONNECT")
	return b.String()
}

// rootCause returns the short reason of a connection failure: the
// operating system's (connect: connection refused), else the message
// without the address it repeats.
func rootCause(err error, addr string) string {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err.Error()
	}
	if addr == "" {
		return err.Error()
	}
	return strings.TrimPrefix(err.Error(), addr+": ")
}
