package policy

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"cel.dev/cel-go/common/types/ref"

	"github.com/ahp-go/ahp/protocol"
)

func TestGlob(t *testing.T) {
	cases := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "anything", true}, {"*", "", true}, {"bash", "bash", true}, {"bash", "Bash", false},
		{"shell*", "shell_exec", true}, {"shell*", "myshell", false}, {"*_exec", "shell_exec", true},
		{"mcp__*__delete_*", "mcp__github__delete_repo", true}, {"a?c", "abc", true}, {"a?c", "ac", false},
		{"*a*b*", "xxaxxbxx", true}, {"*a*b", "xxaxxbxxc", false}, {"gh/*", "gh/a/b", true},
	}
	for _, c := range cases {
		if got := globMatch(c.pattern, c.s); got != c.want {
			t.Errorf("glob(%q, %q) = %t", c.pattern, c.s, got)
		}
	}
}

// action_paths and action_hosts are the paths and hosts of the payload's
// effects (package effects reads the command through a real shell parser):
// quoted words, wrappers and sh -c are read; words in quoted text and the
// program run are not paths; echo of a URL reaches no host; ~ with no home
// sent is UnknownHome.
func TestActionPathsAndHosts(t *testing.T) {
	payload := func(cmd string) ref.Val {
		b, _ := json.Marshal(map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": cmd}, "cwd": "/w"})
		return decodeValue(string(b), 0, nil)
	}
	paths := actionPaths(payload(`FOO=1 sudo -E rm -rf "/a b" && /usr/bin/env python3 -c 'open("/etc/x", "w")'; bash -c "cat ../up" > out.txt; mv x ~/y; git commit -m "rm /etc/passwd"`))
	want := []string{"/a b", "/etc/x", "/w/out.txt", "/up", "/w/x", UnknownHome + "/y"}
	if !slices.Equal(paths, want) {
		t.Fatalf("paths %q, want %q", paths, want)
	}
	hosts := actionHosts(payload(`curl -H "Host: x" -o out https://API.Example.com:8443/x && wget -q http://1.2.3.4/a; ` +
		`nc -w 3 evil.org 80; "curl" localhost:8080/health; echo https://not-a-request.com`))
	wantHosts := []string{"api.example.com", "1.2.3.4", "evil.org", "localhost"}
	if !slices.Equal(hosts, wantHosts) {
		t.Fatalf("hosts %q\nwant  %q", hosts, wantHosts)
	}
}

func TestHostAllowed(t *testing.T) {
	allow := []string{"github.com", "*.example.com", "LOCALHOST"}
	for h, want := range map[string]bool{
		"github.com": true, "GitHub.com.": true, "api.github.com": false, "a.example.com": true,
		"a.b.example.com": true, "example.com": false, "badexample.com": false, "localhost": true, "": false,
	} {
		if got := hostAllowed(h, allow); got != want {
			t.Errorf("hostAllowed(%q) = %t", h, got)
		}
	}
	if !hostAllowed("anything.io", []string{"*"}) || hostAllowed("x.io", nil) {
		t.Error("wildcard or empty list")
	}
	for u, want := range map[string]string{
		"https://User@Example.COM:8080/p?q": "example.com", "example.com/x": "example.com", "http://[::1]:80/": "::1",
		"": "", "https://": "",
	} {
		if got := urlHost(u); got != want {
			t.Errorf("urlHost(%q) = %q, want %q", u, got, want)
		}
	}
}

func TestPathWithin(t *testing.T) {
	roots := []string{"/work/repo/", "~/scratch"}
	for p, want := range map[string]bool{
		"/work/repo": true, "/work/repo/a/b": true, "/work/repo/../other": false, "/work/repository": false,
		"src/x.go": true, "./src/../x": true, "../x": false, "~/scratch/a": true, "~/scratch/../.ssh": false,
		"~/.ssh": false, "/": false, "": false,
	} {
		if got := pathWithin(p, roots); got != want {
			t.Errorf("pathWithin(%q) = %t, want %t", p, got, want)
		}
	}
	if !pathWithin("/anything", []string{"/"}) || pathWithin("/x", nil) {
		t.Error("root / or no roots")
	}
}

func TestSecretsDetectionAndRedaction(t *testing.T) {
	text := "aws AKIAIOSFODNN7EXAMPLE and api_key: 'abcd1234efgh5678' and token=short1 and xoxp-1234567890-abc"
	found := map[string]bool{}
	secretKindsIn(text, found)
	if !found["aws_access_key"] || !found["api_key"] || !found["slack_token"] || len(found) != 3 {
		t.Fatalf("kinds %v", found)
	}
	got := redactString(text)
	want := "aws [REDACTED:aws_access_key] and api_key: '[REDACTED:api_key]' and token=short1 and [REDACTED:slack_token]"
	if got != want {
		t.Fatalf("redacted\n got %s\nwant %s", got, want)
	}
	if indexFold("xxPRIVATE KEY", "private key") != 2 || indexFold("abc", "abcd") != -1 {
		t.Fatal("indexFold")
	}
}

// TestFunctionsFromCEL calls each added function through CEL.
func TestFunctionsFromCEL(t *testing.T) {
	opts := noPacks()
	opts.Params = map[string]any{"roots": []string{"/w"}, "hosts": []string{"*.corp.io"}}
	set := mustCompile(t, opts, `
rules:
  - id: all
    condition: |
      glob(event.tool, "sh*") && glob(event.tool, ["x", "shell"]) &&
      path_within("/w/a", config.roots) && !path_within("/etc", "/w") &&
      url_host("https://Git.Corp.io/x") == "git.corp.io" && host_allowed("git.corp.io", config.hosts) &&
      shell_command(payload) == event.command &&
      action_paths(payload) == ["/etc/x"] &&
      action_hosts(payload) == ["git.corp.io"] &&
      secret_kinds(payload) == ["github_token"] && has_secret(payload) && !has_secret("hello") &&
      redact_secrets(payload.arguments.command).contains("[REDACTED:github_token]") &&
      redact_secrets(payload).arguments.path == "/tmp/f"
    outcome: {decision: block, reason: ok}
  - id: bad-arg
    condition: glob(event.tool, 3)
    target: {tools: [other]}
    outcome: {decision: allow}
`)
	tok := "ghp_" + strings.Repeat("Zz09", 9)
	r := eval(set, action("shell", map[string]any{"path": "/tmp/f", "command": "curl -H 'Authorization: token " + tok + "' https://git.corp.io/api > /etc/x"}))
	if r.RuleID != "all" || r.Err != nil {
		t.Fatalf("got %+v", r)
	}
	if r := eval(set, action("other", nil)); r.Decision.Kind != protocol.DecisionBlock || r.Err == nil {
		t.Fatalf("bad argument must fail closed: %+v", r)
	}
}
