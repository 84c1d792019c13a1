package main

import (
	"runtime/debug"
	"testing"
)

// TestServeGCDefault: without GOGC in the environment ahp serve sets the
// collector's target to serveGCPercent; with GOGC set it leaves it alone.
func TestServeGCDefault(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)

	if got := setServeGC(func(string) (string, bool) { return "", false }); got != serveGCPercent {
		t.Fatalf("setServeGC without GOGC = %d, want %d", got, serveGCPercent)
	}
	if now := debug.SetGCPercent(100); now != serveGCPercent {
		t.Fatalf("collector target without GOGC = %d, want %d", now, serveGCPercent)
	}

	env := func(k string) (string, bool) {
		if k == "GOGC" {
			return "150", true
		}
		return "", false
	}
	if got := setServeGC(env); got != 0 {
		t.Fatalf("setServeGC with GOGC set = %d, want 0 (left alone)", got)
	}
	if now := debug.SetGCPercent(100); now != 100 {
		t.Fatalf("collector target with GOGC set = %d, want 100 (unchanged)", now)
	}
}
