package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fakeApprovalsAPI answers the approvals endpoints for two pending
// approvals that share the prefix 6331 and one that does not, accepting
// only the API key "k-approver" (X-API-Key). It records the paths posted.
func fakeApprovalsAPI(t *testing.T) (*httptest.Server, func() []string) {
	t.Helper()
	ids := []string{"6331aaaa0000000000000000000000aa", "6331bbbb0000000000000000000000bb", "70000000000000000000000000000077"}
	var mu sync.Mutex
	var posted []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("X-API-Key") != "k-approver" || r.Header.Get("Authorization") != "" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"authentication required"}`))
			return
		}
		if r.Method == http.MethodPost {
			mu.Lock()
			posted = append(posted, r.URL.Path)
			mu.Unlock()
			id := strings.Split(r.URL.Path, "/")[3]
			_ = json.NewEncoder(w).Encode(map[string]string{"id": id, "status": "approved", "decided_by": "alice"})
			return
		}
		var list []map[string]string
		for _, id := range ids {
			list = append(list, map[string]string{"id": id, "status": "pending", "rule_id": "approvals.infrastructure_change", "session_id": "s-" + id[:4]})
		}
		if strings.HasPrefix(r.URL.Path, "/v1/approvals/") {
			_ = json.NewEncoder(w).Encode(list[0])
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"approvals": list})
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), posted...) }
}

// ahp approvals presents an approver's API key (flag, file or
// $AHP_ADMIN_API_KEY) as X-API-Key, and takes an id by a unique prefix.
func TestApprovalsAPIKeyAndIDPrefix(t *testing.T) {
	clearSessionMarkers(t)
	t.Setenv("AHP_ADMIN_TOKEN", "")
	t.Setenv("AHP_ADMIN_API_KEY", "")
	srv, posted := fakeApprovalsAPI(t)
	noToken := t.TempDir() // a data directory with no admin.token

	if out, err := runAhp(t, "approvals", "list", "--admin", srv.URL, "--data-dir", noToken, "--api-key", "k-approver"); err != nil || !strings.Contains(out, "6331aaaa") {
		t.Fatalf("list with --api-key: %q %v", out, err)
	}
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte("k-approver\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := runAhp(t, "approvals", "list", "--admin", srv.URL, "--data-dir", noToken, "--api-key-file", keyFile); err != nil || !strings.Contains(out, "7000") {
		t.Fatalf("list with --api-key-file: %q %v", out, err)
	}
	t.Setenv("AHP_ADMIN_API_KEY", "k-approver")
	if out, err := runAhp(t, "approvals", "show", "7000", "--admin", srv.URL, "--data-dir", noToken); err != nil || !strings.Contains(out, `"id": "6331aaaa`) {
		t.Fatalf("show with $AHP_ADMIN_API_KEY: %q %v", out, err)
	}

	// A unique prefix, with the README's "…", names one approval.
	out, err := runAhp(t, "approvals", "approve", "6331a…", "--reason", "planned", "--admin", srv.URL, "--data-dir", noToken)
	if err != nil || !strings.Contains(out, "approval 6331aaaa0000000000000000000000aa approved by alice") {
		t.Fatalf("approve by prefix: %q %v", out, err)
	}
	if _, err := runAhp(t, "approvals", "deny", "7000", "--admin", srv.URL, "--data-dir", noToken); err != nil {
		t.Fatal(err)
	}
	if p := posted(); len(p) != 2 || p[0] != "/v1/approvals/6331aaaa0000000000000000000000aa/approve" || p[1] != "/v1/approvals/70000000000000000000000000000077/deny" {
		t.Fatalf("posted: %v", p)
	}
	// An ambiguous prefix is refused, listing what it matches.
	_, err = runAhp(t, "approvals", "approve", "6331", "--admin", srv.URL, "--data-dir", noToken)
	if err == nil || !strings.Contains(err.Error(), "ambiguous") || !strings.Contains(err.Error(), "6331aaaa") || !strings.Contains(err.Error(), "6331bbbb") || len(posted()) != 2 {
		t.Fatalf("ambiguous prefix: %v, posted %v", err, posted())
	}
	// With no credential at all the error names every way to give one.
	t.Setenv("AHP_ADMIN_API_KEY", "")
	_, err = runAhp(t, "approvals", "list", "--admin", srv.URL, "--data-dir", noToken)
	if err == nil || !strings.Contains(err.Error(), "$AHP_ADMIN_API_KEY") {
		t.Fatalf("no credential: %v", err)
	}
}
