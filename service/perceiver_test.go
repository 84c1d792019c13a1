package service_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/admin"
	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/service"
)

// Issue 24, item 4, through the harness: the README's default layout (the
// harness started in the project, ./ahp-data and the policy file inside
// it, context.workspace_roots: [the project]) answers no context_perception
// request with the admin token or the policy, while project files are
// still served.
func TestContextPerceptionNeverReturnsTheAdminToken(t *testing.T) {
	project := t.TempDir()
	writeFile(t, filepath.Join(project, "main.go"), "package main\n\n// ParseConfig reads the configuration.\nfunc ParseConfig() {}\n")
	pol := filepath.Join(project, "policy.yaml")
	writeFile(t, pol, "# policy-marker-7f3a\nrules: []\n")
	c := config.Default()
	c.DataDir = filepath.Join(project, "ahp-data")
	c.Listen = []string{"unix:" + filepath.Join(project, "ahp.sock")}
	c.Admin = "http://127.0.0.1:0"
	c.Policy.Files = []string{pol}
	c.Context.WorkspaceRoots = []string{project}
	r := start(t, c, service.Options{})
	tok, err := admin.LocalToken(c.DataDir)
	if err != nil || len(tok) < 16 {
		t.Fatalf("admin token: %q, %v", tok, err)
	}
	if err := os.Link(filepath.Join(c.DataDir, admin.TokenFile), filepath.Join(project, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	cl := dial(t, r.addrs[c.Listen[0]], client.Options{SessionID: "s1"})
	ask := func(payload string) (protocol.ContextPerceptionDecision, string) {
		t.Helper()
		ev, err := cl.NewEvent(protocol.EventContextPerception, json.RawMessage(payload))
		if err != nil {
			t.Fatal(err)
		}
		var d protocol.ContextPerceptionDecision
		if err := cl.SendTyped(context.Background(), ev, &d); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(d)
		return d, string(b)
	}
	loc := func(path string) string {
		return `{"session_id":"s1","intent":"retrieve","target":{"location":{"path":"` + path + `","location_type":"file"}},"context":{"workspace":"` + project + `"}}`
	}
	for _, payload := range []string{
		loc("ahp-data/admin.token"),
		loc(filepath.Join(c.DataDir, admin.TokenFile)),
		loc("./ahp-data/../ahp-data/admin.token"),
		loc("notes.txt"),
		loc("policy.yaml"),
		`{"session_id":"s1","intent":"locate","target":{"pattern":{"pattern":"` + tok[:12] + `","pattern_type":"literal"}},"context":{"workspace":"` + project + `"}}`,
		`{"session_id":"s1","intent":"explore","target":{"location":{"path":"ahp-data","location_type":"directory"}},"context":{"workspace":"` + project + `","query":"admin token"}}`,
	} {
		_, answer := ask(payload)
		if strings.Contains(answer, tok) || strings.Contains(answer, "policy-marker-7f3a") {
			t.Errorf("%s: the answer holds a harness file: %s", payload, answer)
		}
	}
	d, answer := ask(loc("main.go"))
	if len(d.InjectedContext.FileContents) == 0 || !strings.Contains(answer, "ParseConfig") {
		t.Fatalf("a project file is not served: %s", answer)
	}
}
