package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/store/sqlite"
)

// emptyDataDir returns a data directory holding an empty audit log.
func emptyDataDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	db, err := sqlite.Open(t.Context(), filepath.Join(dir, sqlite.FileName), sqlite.Options{Sync: sqlite.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Every --since takes the same durations: shadow-report's own help
// example (7d) used to be refused while replay took it.
func TestSinceTakesDays(t *testing.T) {
	dir := emptyDataDir(t)
	for _, args := range [][]string{
		{"audit", "shadow-report", "--since", "7d"},
		{"audit", "query", "--since", "7d", "--until", "1d"},
		{"audit", "export", "--since", "30d"},
	} {
		if _, err := runAhp(t, append(args, "--data-dir", dir)...); err != nil {
			t.Errorf("%s: %v", strings.Join(args, " "), err)
		}
	}
	_, err := runAhp(t, "audit", "shadow-report", "--since", "7 days", "--data-dir", dir)
	if err == nil || !strings.Contains(err.Error(), "7d") {
		t.Fatalf("a bad duration names the forms taken: %v", err)
	}
}

// ahp check --config refuses what ahp serve refuses: a listen address of
// an unknown scheme, or without its target.
func TestCheckConfigListen(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.yaml", "listen: [stdio, \"unix:/tmp/x.sock\", \"http://127.0.0.1:8080\", \"grpcs://0.0.0.0:9443\"]\n")
	if out, err := runAhp(t, "check", "--config", good); err != nil || !strings.Contains(out, "OK: configuration") {
		t.Fatalf("good listen: %q %v", out, err)
	}
	for body, want := range map[string]string{
		"listen: [\"tcp://127.0.0.1:9\"]\n": `listen "tcp://127.0.0.1:9": unknown scheme`,
		"listen: [\"unix:\"]\n":             `listen "unix:": needs a path`,
		"listen: [\"http://\"]\n":           `listen "http://": needs a host and port`,
		"listen: [\"127.0.0.1:8080\"]\n":    `unknown scheme`,
	} {
		_, err := runAhp(t, "check", "--config", write("bad.yaml", body))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
}
