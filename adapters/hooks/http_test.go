package hooks

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/server"
)

func TestHTTPHandler(t *testing.T) {
	srv := httptest.NewServer(NewHandler(ServerHarness{H: server.New(ruleHandler{}, server.Options{})}, HandlerOptions{}))
	defer srv.Close()
	post := func(path string, body []byte) (int, string) {
		resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post("/hooks/claude-code", withCommand(t, ClaudeCode, "PreToolUse", "rm -rf build")); code != 200 || body != claudeDeny {
		t.Fatalf("claude: %d %s", code, body)
	}
	if code, body := post("/hooks/gemini", withCommand(t, Gemini, "BeforeTool", "ls")); code != 200 || body != `{}` {
		t.Fatalf("gemini: %d %s", code, body)
	}
	// A failure is a deny in JSON, with status 200: the tools' HTTP hooks
	// treat any other status as "go on".
	if code, body := post("/hooks/codex", []byte("garbage")); code != 200 || !strings.Contains(body, `"permissionDecision":"deny"`) {
		t.Fatalf("codex garbage: %d %s", code, body)
	}
	if code, _ := post("/hooks/cursor", []byte("{}")); code != 404 {
		t.Fatalf("unknown tool: %d", code)
	}
}
