package hooks

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// The keys and hashes Codex CLI 0.169.0 itself reports for
// testdata/codex-trust/hooks.json read from /tmp/cx1/home/hooks.json (its
// app-server's hooks/list, currentHash): matchers, a status message,
// characters Go's JSON encoder escapes and serde_json does not, control
// characters, a missing and a zero timeout, async, additionalContextLimit
// (default, custom, and ignored for Stop), a matcher Codex drops (Stop).
var codexOracle = map[string]string{
	"/tmp/cx1/home/hooks.json:pre_tool_use:0:0":       "sha256:42af1ba5e6436e505ead6f7695ecd635fffa4bb9a73055a5b6d958a204f91b28",
	"/tmp/cx1/home/hooks.json:pre_tool_use:1:0":       "sha256:6d18c93e08c260963dd25fcf405a5aee0ff9d3d4f3c60f4628b2248a9bac599f",
	"/tmp/cx1/home/hooks.json:pre_tool_use:1:1":       "sha256:129c4c7874d5cef7c942b09369954b89e87d03441886547a219fb4edfcba5513",
	"/tmp/cx1/home/hooks.json:user_prompt_submit:0:0": "sha256:2fbd1282f5a16bce4cd1eed2468bad65896f5360b7f32b0ac2090386c2f3dc58",
	"/tmp/cx1/home/hooks.json:stop:0:0":               "sha256:b3b6c8c1ca913ac73d1a4d0fec652f01945967775a850cedb4fc8206652afb8f",
}

func TestCodexHookHashMatchesCodex(t *testing.T) {
	doc, err := os.ReadFile("testdata/codex-trust/hooks.json")
	if err != nil {
		t.Fatal(err)
	}
	hooks, err := CodexCommandHooks("/tmp/cx1/home/hooks.json", doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(hooks) != len(codexOracle) {
		t.Fatalf("%d hooks, want %d", len(hooks), len(codexOracle))
	}
	for _, h := range hooks {
		if want := codexOracle[h.Key]; h.Hash != want {
			t.Errorf("%s: hash %s, Codex computes %s", h.Key, h.Hash, want)
		}
	}
	// Two hashes Codex 0.169.0 reported for "echo hi", timeout 120.
	to := uint64(120)
	if got := (CodexCommandHook{Event: "PreToolUse", Command: "echo hi", Timeout: &to}).Hash(); got != "sha256:abc12255f06fa7268b452d4535701708c26e8a178ac988c87cb1bf08e675f243" {
		t.Errorf("echo hi: %s", got)
	}
	adapter, err := CodexAdapterHooks("/tmp/cx1/home/hooks.json", doc)
	if err != nil || len(adapter) != 1 || adapter[0].Key != "/tmp/cx1/home/hooks.json:user_prompt_submit:0:0" {
		t.Fatalf("adapter hooks: %v %+v", err, adapter)
	}
}

func TestTrustCodexHooks(t *testing.T) {
	trust := []CodexTrust{
		{Key: "/h/.codex/hooks.json:pre_tool_use:0:0", Hash: "sha256:aa"},
		{Key: "/h/.codex/hooks.json:stop:1:0", Hash: "sha256:bb"},
	}
	t.Run("new file", func(t *testing.T) {
		out, changed, err := TrustCodexHooks(nil, trust)
		if err != nil || !changed {
			t.Fatal(err, changed)
		}
		st, err := CodexHookStates(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range trust {
			if ok, why := CodexTrusted(st, tr); !ok {
				t.Errorf("%s: %s\n%s", tr.Key, why, out)
			}
		}
		again, changed, err := TrustCodexHooks(out, trust)
		if err != nil || changed || string(again) != string(out) {
			t.Errorf("second run changed the file: %v %v", changed, err)
		}
	})
	t.Run("keeps the rest, edits in place", func(t *testing.T) {
		in := `# my settings
model = "gpt-5" # the model

[hooks.state."/h/.codex/hooks.json:pre_tool_use:0:0"]
enabled = false
trusted_hash = "sha256:old"

[projects."/w"]
trust_level = "trusted"
`
		out, changed, err := TrustCodexHooks([]byte(in), trust)
		if err != nil || !changed {
			t.Fatal(err, changed)
		}
		s := string(out)
		for _, want := range []string{"# my settings\n", `model = "gpt-5" # the model`, "[projects.\"/w\"]\ntrust_level = \"trusted\"\n",
			"[hooks.state.\"/h/.codex/hooks.json:pre_tool_use:0:0\"]\nenabled = true\ntrusted_hash = \"sha256:aa\"\n",
			"[hooks.state.\"/h/.codex/hooks.json:stop:1:0\"]\ntrusted_hash = \"sha256:bb\"\n"} {
			if !strings.Contains(s, want) {
				t.Errorf("lacks %q:\n%s", want, s)
			}
		}
		if strings.Contains(s, "sha256:old") {
			t.Errorf("old hash kept:\n%s", s)
		}
	})
	t.Run("inline table: refused with the lines to add", func(t *testing.T) {
		in := `hooks = { state = { other = { enabled = true } } }` + "\n"
		_, _, err := TrustCodexHooks([]byte(in), trust)
		if !errors.Is(err, ErrTrustNotWritable) || !strings.Contains(err.Error(), `trusted_hash = "sha256:aa"`) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("invalid file", func(t *testing.T) {
		if _, _, err := TrustCodexHooks([]byte("model = \n"), trust); !errors.Is(err, ErrInvalidSettings) {
			t.Fatalf("err = %v", err)
		}
	})
}
