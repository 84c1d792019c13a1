package perception

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/protocol"
)

// writeTree creates files (slash-separated path → content) under dir.
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// workspace returns a new temporary directory holding files.
func workspace(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, files)
	return dir
}

// newPerceiver builds a Perceiver or fails the test.
func newPerceiver(t testing.TB, opts Options) *Perceiver {
	t.Helper()
	p, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

// event decodes a context_perception payload as the server would, so that
// defaults (include_sources true, ...) apply as on the wire.
func event(t testing.TB, js string) *protocol.ContextPerceptionPayload {
	t.Helper()
	var pl protocol.ContextPerceptionPayload
	if err := json.Unmarshal([]byte(js), &pl); err != nil {
		t.Fatalf("payload %s: %v", js, err)
	}
	return &pl
}

// perceive calls Perceive and checks that the decision survives a round
// trip through its wire form.
func perceive(t testing.TB, p *Perceiver, pl *protocol.ContextPerceptionPayload) protocol.ContextPerceptionDecision {
	t.Helper()
	d, err := p.Perceive(context.Background(), pl)
	if err != nil {
		t.Fatalf("Perceive: %v", err)
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatalf("marshal decision: %v", err)
	}
	var back protocol.ContextPerceptionDecision
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("decision %s does not decode: %v", b, err)
	}
	if back.Decision != d.Decision {
		t.Fatalf("round trip changed decision %q to %q", d.Decision, back.Decision)
	}
	return d
}

// snippetPaths lists the paths of the decision's file snippets.
func snippetPaths(d protocol.ContextPerceptionDecision) []string {
	var out []string
	for _, s := range d.InjectedContext.FileContents {
		out = append(out, s.Path)
	}
	return out
}

// hasSuggestion reports a suggestion containing sub.
func hasSuggestion(d protocol.ContextPerceptionDecision, sub string) bool {
	for _, s := range d.InjectedContext.Suggestions {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// metaOf decodes the decision's metadata.
func metaOf(t testing.TB, d protocol.ContextPerceptionDecision) answerMeta {
	t.Helper()
	var m answerMeta
	if err := json.Unmarshal(d.Metadata, &m); err != nil {
		t.Fatalf("metadata %s: %v", d.Metadata, err)
	}
	return m
}

// goProject is a small Go project used by several tests.
var goProject = map[string]string{
	"README.md": "# shop\n\nAn example service.\n",
	"go.mod":    "module example.com/shop\n\ngo 1.26\n",
	"Makefile":  "test:\n\tgo test ./...\n",
	"cmd/shop/main.go": `package main

import "example.com/shop/internal/config"

func main() {
	cfg, err := config.ParseConfig("shop.yaml")
	if err != nil {
		panic(err)
	}
	_ = cfg
}
`,
	"internal/config/parse.go": `package config

import "os"

// Config is the service configuration.
type Config struct {
	Addr string
}

// ParseConfig reads the configuration file at path.
func ParseConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return &Config{Addr: string(b)}, nil
}
`,
	"internal/store/db.go": `package store

// DB wraps the database handle.
type DB struct{}

// Open connects to postgres.
func Open(dsn string) (*DB, error) { return &DB{}, nil }

// RetryPolicy says how failed queries are retried.
type RetryPolicy struct {
	Attempts int
}
`,
	"internal/store/retry_test.go": `package store

import "testing"

func TestRetry(t *testing.T) {
	_ = RetryPolicy{Attempts: 3}
}
`,
	"internal/handler/handler.go": `package handler

// Serve answers requests.
func Serve() {}
`,
	"docs/design.md": "# Design\n\nThe store retries with a RetryPolicy.\n",
}
