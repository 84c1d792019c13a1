package observe

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/store"
)

// A pending approval carries its event for the approver up to 64 KiB,
// and always says how large the event is.
func TestApprovalJSONCarriesTheEvent(t *testing.T) {
	ev := func(n int) json.RawMessage {
		return json.RawMessage(`{"payload":{"command":"` + strings.Repeat("x", n) + `"}}`)
	}
	mid := approvalJSON(store.Approval{ID: "a", Event: ev(20 << 10)})
	if len(mid.Event) == 0 || mid.EventBytes != len(ev(20<<10)) {
		t.Fatalf("a 20 KiB event: inline %d bytes, eventBytes %d", len(mid.Event), mid.EventBytes)
	}
	big := approvalJSON(store.Approval{ID: "b", Event: ev(70 << 10)})
	if len(big.Event) != 0 || big.EventBytes != len(ev(70<<10)) {
		t.Fatalf("a 70 KiB event: inline %d bytes, eventBytes %d", len(big.Event), big.EventBytes)
	}
}
