package perception

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/protocol"
)

// The harness's secrets in the README's default layout: the harness runs
// in the project directory, so ./ahp-data (token, redaction key) and the
// policy and configuration files lie inside the workspace root.
const (
	tokenValue  = "ahp-admin-token-0123456789abcdef0123456789abcdef"
	keyValue    = "redaction-key-fedcba9876543210"
	policyValue = "rules: [{id: harness-policy-marker}]"
	configValue = "data_dir: ./ahp-data # harness-config-marker"
)

// harnessLayout is goProject with the harness's files inside the root;
// it returns the root and the protected paths as ahp serve lists them.
func harnessLayout(t *testing.T) (string, []string) {
	t.Helper()
	files := maps.Clone(goProject)
	files["ahp-data/admin.token"] = tokenValue + "\n"
	files["ahp-data/redact.key"] = keyValue + "\n"
	files["policy.yaml"] = policyValue + "\n"
	files["ahp.yaml"] = configValue + "\n"
	root := workspace(t, files)
	data := filepath.Join(root, "ahp-data")
	return root, []string{data, filepath.Join(data, "admin.token"), filepath.Join(root, "policy.yaml"), filepath.Join(root, "ahp.yaml")}
}

// leaked returns the harness secrets found anywhere in the answer.
func leaked(t *testing.T, d protocol.ContextPerceptionDecision) []string {
	t.Helper()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range []string{tokenValue, keyValue, "harness-policy-marker", "harness-config-marker"} {
		if strings.Contains(string(b), s) {
			out = append(out, s)
		}
	}
	return out
}

// Issue 24, item 4: with the data directory inside the workspace root, no
// context_perception request returns a harness file, however it names it:
// relative, absolute, through "..", through a symbolic link or a hard link
// inside the root, as a directory to list, as a search, as the agent's
// workspace. The rest of the root is still served.
func TestContextPerceptionNeverReturnsHarnessFiles(t *testing.T) {
	root, protected := harnessLayout(t)
	data := filepath.Join(root, "ahp-data")
	if err := os.Symlink(filepath.Join(data, "admin.token"), filepath.Join(root, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(data, filepath.Join(root, "cache")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(data, "admin.token"), filepath.Join(root, "innocent.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(root, "policy.yaml"), filepath.Join(root, "docs", "rules.txt")); err != nil {
		t.Fatal(err)
	}
	p := newPerceiver(t, Options{WorkspaceRoots: []string{root}, Protected: protected})
	loc := func(path, ws, query string) string {
		return `{"session_id":"s","intent":"retrieve","target":{"location":{"path":"` + path + `","location_type":"file"}},
			"context":{"workspace":"` + ws + `","query":"` + query + `"}}`
	}
	cases := map[string]string{
		"relative":                        loc("ahp-data/admin.token", root, ""),
		"absolute":                        loc(filepath.Join(data, "admin.token"), root, ""),
		"dot-dot":                         loc("internal/../ahp-data/admin.token", root, ""),
		"dot-dot from a subdir":           loc("../../ahp-data/admin.token", filepath.Join(root, "internal", "store"), ""),
		"redaction key":                   loc("ahp-data/redact.key", root, ""),
		"policy file":                     loc("policy.yaml", root, ""),
		"config file":                     loc("ahp.yaml", root, ""),
		"file symlink":                    loc("notes.txt", root, ""),
		"directory symlink":               loc("cache/admin.token", root, ""),
		"hard link":                       loc("innocent.txt", root, ""),
		"hard link to policy":             loc("docs/rules.txt", root, ""),
		"workspace is the data directory": loc("admin.token", data, "token"),
		"data directory listed": `{"session_id":"s","intent":"explore","target":{"location":{"path":"ahp-data","location_type":"directory"}},
			"context":{"workspace":"` + root + `","query":"ahp admin token"}}`,
		"search by content": `{"session_id":"s","intent":"locate","target":{"pattern":{"pattern":"ahp-admin-token","pattern_type":"literal"}},
			"context":{"workspace":"` + root + `"}}`,
		"search by name": `{"session_id":"s","intent":"locate","target":{"pattern":{"pattern":"admin\\.token|redact|harness-policy|harness-config","pattern_type":"regex"}},
			"context":{"workspace":"` + root + `","query":"admin token redact key policy"}}`,
	}
	for name, js := range cases {
		t.Run(name, func(t *testing.T) {
			d := perceive(t, p, event(t, js))
			if got := leaked(t, d); len(got) > 0 {
				t.Fatalf("the answer holds harness secrets %v: %v", got, snippetPaths(d))
			}
			for _, path := range snippetPaths(d) {
				if strings.HasPrefix(path, "ahp-data") || path == "policy.yaml" || path == "ahp.yaml" || path == "innocent.txt" || path == "notes.txt" {
					t.Errorf("snippet of a harness file %s", path)
				}
			}
			if ps := d.InjectedContext.ProjectSummary; ps != nil && strings.Contains(ps.StructureDescription, "ahp-data") {
				t.Errorf("the summary lists the data directory: %s", ps.StructureDescription)
			}
		})
	}
	// A named harness file says why it was not read.
	d := perceive(t, p, event(t, loc("ahp-data/admin.token", root, "")))
	if !hasSuggestion(d, "file of the harness") {
		t.Errorf("suggestions %v do not say the path is the harness's", d.InjectedContext.Suggestions)
	}
	// The rest of the root is still served.
	d = perceive(t, p, event(t, loc("internal/config/parse.go", root, "ParseConfig")))
	if got := snippetPaths(d); len(got) == 0 || got[0] != "internal/config/parse.go" {
		t.Fatalf("a project file next to the data directory is not served: %v", got)
	}
}

// A workspace root inside the data directory is refused at start: every
// file under it is the harness's.
func TestRootInsideHarnessFilesIsRefused(t *testing.T) {
	root, protected := harnessLayout(t)
	if _, err := New(Options{WorkspaceRoots: []string{filepath.Join(root, "ahp-data")}, Protected: protected}); err == nil {
		t.Fatal("a root inside the data directory was accepted")
	}
	if _, err := New(Options{WorkspaceRoots: []string{root}, Protected: protected}); err != nil {
		t.Fatalf("a root containing the data directory was refused: %v", err)
	}
}

// A harness file that does not exist yet when the perceiver is built (a
// token written later) is refused once it appears, through a link too.
func TestHarnessFileCreatedLaterIsRefused(t *testing.T) {
	root := workspace(t, goProject)
	data := filepath.Join(root, "ahp-data")
	p := newPerceiver(t, Options{WorkspaceRoots: []string{root}, Protected: []string{data, filepath.Join(data, "admin.token")}})
	writeTree(t, root, map[string]string{"ahp-data/admin.token": tokenValue})
	if err := os.Link(filepath.Join(data, "admin.token"), filepath.Join(root, "copy.txt")); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"ahp-data/admin.token", "copy.txt"} {
		d := perceive(t, p, event(t, `{"session_id":"s","intent":"retrieve","target":{"location":{"path":"`+path+`","location_type":"file"}},
			"context":{"workspace":"`+root+`","query":"ahp-admin-token"}}`))
		if got := leaked(t, d); len(got) > 0 {
			t.Fatalf("%s: the answer holds %v", path, got)
		}
	}
}
