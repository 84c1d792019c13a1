package service_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/ahp-go/ahp/admin"
	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/service"
	"github.com/ahp-go/ahp/store"
)

// TestApprovalShowsEffects: an action held by the approvals pack (turned
// on here) is listed by the admin API with what it does (its effects), so that an
// approver (ahp approvals show, the dashboard) sees more than the words.
func TestApprovalShowsEffects(t *testing.T) {
	dir := t.TempDir()
	c := config.Default()
	c.DataDir = filepath.Join(dir, "data")
	c.Listen = []string{"unix:" + filepath.Join(dir, "h.sock")}
	c.Admin = "http://127.0.0.1:0"
	c.Approvals.Timeout = config.Duration(time.Minute)
	c.Policy.Packs = map[string]bool{"approvals": true}
	r := start(t, c, service.Options{})
	agent := dial(t, "unix:"+filepath.Join(dir, "h.sock"), client.Options{SessionID: "s-infra", Timeout: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() {
		_, _ = agent.Event(ctx, protocol.EventPreAction, bash(`"/usr/local/bin/terraform" -chdir=prod apply -auto-approve`))
	}()
	var id string
	for id == "" && ctx.Err() == nil {
		p, err := r.svc.Store().Approvals().List(ctx, store.ApprovalFilter{Status: store.ApprovalPending})
		if err != nil {
			t.Fatal(err)
		}
		if len(p) > 0 {
			id = p[0].ID
		}
		time.Sleep(10 * time.Millisecond)
	}
	tok, err := admin.LocalToken(c.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.addrs["admin"]+"/v1/approvals/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var ap admin.ApprovalJSON
	if err := json.Unmarshal(body, &ap); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %s %v", resp.StatusCode, body, err)
	}
	if ap.RuleID != "approvals.infrastructure_change" {
		t.Fatalf("rule %q", ap.RuleID)
	}
	found := false
	for _, e := range ap.Effects {
		if e.Kind == "run" && e.Program == "terraform" && e.Path == "/usr/local/bin/terraform" {
			found = true
		}
	}
	if !found {
		t.Fatalf("the approval does not show the terraform run: %s", body)
	}
}
