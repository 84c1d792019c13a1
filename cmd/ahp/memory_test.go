package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestMemoryCommands(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"Builds use make, never go build directly", "--source", "readme"},
		{"Session one works on the billing service", "--session", "s1", "--confidence", "0.5"},
		{"Session two works on the search service", "--session", "s2"},
	} {
		out, err := runAhp(t, append([]string{"memory", "add", "--data-dir", dir}, args...)...)
		if err != nil || !strings.HasPrefix(out, "added fact ") {
			t.Fatalf("memory add %v: %q, %v", args, out, err)
		}
	}
	if _, err := runAhp(t, "memory", "add", "--data-dir", dir, "x", "--confidence", "3"); err == nil {
		t.Error("confidence 3 accepted")
	}

	out, err := runAhp(t, "memory", "list", "--data-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 4 || !strings.Contains(lines[3], "global") || !strings.Contains(out, "0.50") {
		t.Errorf("list:\n%s", out)
	}

	out, err = runAhp(t, "memory", "list", "--data-dir", dir, "--query", "which service?", "--session", "s1", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got []factJSON
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var f factJSON
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		got = append(got, f)
	}
	if len(got) != 1 || got[0].SessionID != "s1" || got[0].Confidence != 0.5 || got[0].Created == "" {
		t.Errorf("search for s1 = %+v; want only s1's service fact", got)
	}

	if out, err := runAhp(t, "memory", "delete", "--data-dir", dir, "1"); err != nil || !strings.Contains(out, "deleted fact 1") {
		t.Fatalf("delete: %q, %v", out, err)
	}
	if _, err := runAhp(t, "memory", "delete", "--data-dir", dir, "1"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("second delete: %v", err)
	}
	if out, _ := runAhp(t, "memory", "list", "--data-dir", dir, "--query", "make build"); !strings.Contains(out, "no facts") {
		t.Errorf("deleted fact still listed:\n%s", out)
	}
}
