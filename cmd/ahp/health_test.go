package main

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHealthProbe: ahp health exits 0 when /healthz answers 200, and 1
// (with the status) when /readyz does not, or when nothing listens.
func TestHealthProbe(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/healthz":
			_, _ = w.Write([]byte("ok\n"))
		case "/readyz":
			http.Error(w, "store: cannot write", http.StatusServiceUnavailable)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	out, err := runAhp(t, "health", "--admin", srv.URL)
	if err != nil || out != srv.URL+"/healthz: ok\n" {
		t.Fatalf("healthz: %q, %v", out, err)
	}
	_, err = runAhp(t, "health", "--admin", srv.URL+"/", "--ready")
	var ec exitCoder
	if !errors.As(err, &ec) || ec.ExitCode() != 1 || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "store: cannot write") {
		t.Fatalf("readyz 503: %v", err)
	}
	addr := srv.URL
	srv.Close()
	_, err = runAhp(t, "health", "--admin", addr, "--timeout", "1s")
	if !errors.As(err, &ec) || ec.ExitCode() != 1 || !strings.Contains(err.Error(), "is ahp serve running") {
		t.Fatalf("nothing listening: %v", err)
	}
	_, err = runAhp(t, "health", "--admin", "unix:/x.sock")
	if !errors.As(err, &ec) || ec.ExitCode() != 1 || !strings.Contains(err.Error(), "want an http://") {
		t.Fatalf("not an http address: %v", err)
	}
}
