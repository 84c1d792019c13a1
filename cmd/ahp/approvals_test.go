package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ahp-go/ahp/admin"
)

// approve and deny refuse to run inside a supervised agent's session, before
// any request reaches the admin API; list still works.
func TestApprovalsRefuseInsideSupervisedSession(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodGet {
			_, _ = w.Write([]byte(`{"approvals":[]}`))
			return
		}
		_, _ = w.Write([]byte(`{"id":"1","status":"approved","decided_by":"local-admin"}`))
	}))
	defer srv.Close()
	for _, marker := range []string{admin.SessionEnv, "CLAUDECODE", "GEMINI_CLI"} {
		t.Run(marker, func(t *testing.T) {
			clearSessionMarkers(t)
			t.Setenv(marker, "1")
			for _, verb := range []string{"approve", "deny"} {
				_, err := runAhp(t, "approvals", verb, "1", "--reason", "ok", "--admin", srv.URL, "--token", "x")
				if err == nil || !strings.Contains(err.Error(), "supervised agent session") || !strings.Contains(err.Error(), marker) {
					t.Fatalf("%s inside a session: %v", verb, err)
				}
			}
			if calls.Load() != 0 {
				t.Fatalf("the admin API was called %d times", calls.Load())
			}
			if _, err := runAhp(t, "approvals", "list", "--admin", srv.URL, "--token", "x"); err != nil {
				t.Fatalf("list inside a session: %v", err)
			}
			calls.Store(0)
		})
	}
	clearSessionMarkers(t)
	out, err := runAhp(t, "approvals", "approve", "1", "--admin", srv.URL, "--token", "x")
	if err != nil || !strings.Contains(out, "approved by local-admin") {
		t.Fatalf("outside a session: %q %v", out, err)
	}
}

func clearSessionMarkers(t *testing.T) {
	for _, k := range sessionMarkers {
		t.Setenv(k, "")
	}
}
