package admin

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/store"
)

// GET /v1/approvals lists at most ?limit= approvals (100 by default, 1000
// at most) and leaves out events over 64 KiB, saying their size; GET of
// one approval has its event whole.
func TestApprovalListBounded(t *testing.T) {
	srv, db, tok, _ := setup(t)
	ctx := context.Background()
	big := json.RawMessage(`{"payload":{"command":"` + strings.Repeat("x", 70<<10) + `"}}`)
	base := time.Now().Add(-time.Hour)
	for i := range 120 {
		a := &store.Approval{ID: "a" + strconv.Itoa(1000+i), Created: base.Add(time.Duration(i) * time.Second),
			SessionID: "s", AgentID: "a", RuleID: "r", Reason: "deploy"}
		if i == 0 {
			a.Event = big
		}
		if err := db.Approvals().Create(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	list := func(q string) (int, []ApprovalJSON) {
		code, body := do(t, "GET", srv.URL+"/v1/approvals"+q, tok, "")
		var out struct {
			Approvals []ApprovalJSON `json:"approvals"`
		}
		_ = json.Unmarshal([]byte(body), &out)
		return code, out.Approvals
	}
	if code, got := list(""); code != 200 || len(got) != defaultApprovalList {
		t.Fatalf("default list: %d, %d approvals", code, len(got))
	}
	code, got := list("?limit=5")
	if code != 200 || len(got) != 5 || got[0].ID != "a1000" || got[0].Event != nil || got[0].EventBytes != len(big) {
		t.Fatalf("limit 5: %d, %+v", code, got)
	}
	for _, bad := range []string{"0", "1001", "x"} {
		if code, _ := list("?limit=" + bad); code != http.StatusBadRequest {
			t.Errorf("limit=%s: %d", bad, code)
		}
	}
	code, body := do(t, "GET", srv.URL+"/v1/approvals/a1000", tok, "")
	var one ApprovalJSON
	if err := json.Unmarshal([]byte(body), &one); err != nil || code != 200 || len(one.Event) < len(big) || one.EventBytes != 0 {
		t.Fatalf("get one: %d, event %d bytes, %v", code, len(one.Event), err)
	}
}
