package main

import (
	"bytes"
	"log/slog"
	"regexp"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/effects"
)

// TestVersionStamp: what a release build stamps with -ldflags -X is what
// ahp version prints (commit shortened to 12 characters), and without a
// stamp the version is never empty.
func TestVersionStamp(t *testing.T) {
	defer func(v, c, d string) { version, commit, date = v, c, d }(version, commit, date)

	version, commit, date = "v1.2.3", "0123456789abcdef0123456789abcdef01234567", "2026-01-02T03:04:05Z"
	out, err := runAhp(t, "version")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^ahp v1\.2\.3, commit 0123456789ab, 2026-01-02T03:04:05Z, go[0-9.a-z]+ \(protocol 2\.4\)\npython: (read \(tree-sitter-python\)|NOT read, parser none \(built without cgo\); .*)\n$`).MatchString(out) {
		t.Fatalf("stamped: %q", out)
	}
	if buildVersion() != "v1.2.3" {
		t.Fatalf("buildVersion() = %q", buildVersion())
	}

	version, commit, date = "", "", ""
	s := readBuildStamp()
	if s.Version == "" || s.Go == "" {
		t.Fatalf("unstamped: %+v", s)
	}
	// A test binary has no module version and no VCS stamp: "dev".
	if s.Version != "dev" {
		t.Logf("unstamped version %q (from build info)", s.Version)
	}
}

// TestVersionPythonLine: ahp version's second line and ahp serve's start-up
// log say whether this binary reads Python, as the effects reader answers:
// "python: read" only when a parse works, a warning in the log otherwise.
func TestVersionPythonLine(t *testing.T) {
	out, err := runAhp(t, "version")
	if err != nil {
		t.Fatal(err)
	}
	name, ok := effects.PythonReader()
	want := "\npython: read (" + name + ")\n"
	if !ok {
		want = "\npython: NOT read, parser " + name + "; "
	}
	if !strings.Contains(out, want) {
		t.Fatalf("ahp version = %q, want it to contain %q", out, want)
	}
	var buf bytes.Buffer
	warnNoPython(slog.New(slog.NewTextHandler(&buf, nil)))
	if logged := strings.Contains(buf.String(), "reads no Python code"); logged == ok {
		t.Fatalf("reads Python %v, start-up log %q", ok, buf.String())
	}
}
