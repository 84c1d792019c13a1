package auth

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ahp-go/ahp/auth/authtest"
	"github.com/ahp-go/ahp/server"
)

// refusals reads ahp_auth_refusals_total{transport,reason} from reg.
func refusals(t *testing.T, reg *prometheus.Registry, transport, reason string) float64 {
	t.Helper()
	return authtest.Refusals(t, reg, transport, reason)
}

func TestMiddleware(t *testing.T) {
	st := mustParse(t, testFile())
	reg := prometheus.NewRegistry()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	var reached atomic.Int32
	var gotQuery, gotPrincipal, gotTransport string
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		info := server.PeerFromContext(r.Context())
		gotPrincipal, gotTransport, gotQuery = info.Principal.ID, info.Transport, r.URL.RawQuery
		w.WriteHeader(http.StatusNoContent)
	})
	h := Middleware(st, MiddlewareOptions{Transport: "ws", AllowQuery: true, RequireRole: RoleAgent, Logger: log, Registerer: reg}, next)
	hNoQuery := Middleware(st, MiddlewareOptions{RequireRole: RoleAgent, Registerer: reg}, next)

	do := func(h http.Handler, target string, hdr map[string]string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, target, nil)
		for k, v := range hdr {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}

	w := do(h, "/ahp", nil)
	if w.Code != 401 || w.Header().Get("WWW-Authenticate") != `Bearer realm="ahp"` || reached.Load() != 0 {
		t.Fatalf("missing: %d %q", w.Code, w.Header().Get("WWW-Authenticate"))
	}
	w = do(h, "/ahp", map[string]string{"X-API-Key": "wrong"})
	if w.Code != 401 || !strings.Contains(w.Header().Get("WWW-Authenticate"), `error="invalid_token"`) || reached.Load() != 0 {
		t.Fatalf("wrong key: %d %q", w.Code, w.Header().Get("WWW-Authenticate"))
	}
	w = do(h, "/ahp", map[string]string{"X-API-Key": observerKey})
	if w.Code != 403 || reached.Load() != 0 {
		t.Fatalf("observer: %d", w.Code)
	}
	w = do(h, "/ahp", map[string]string{"Authorization": "bearer " + agentToken})
	if w.Code != 204 || gotPrincipal != "build-agent" || gotTransport != "ws" {
		t.Fatalf("bearer: %d %q %q", w.Code, gotPrincipal, gotTransport)
	}
	// Admin holds the agent role.
	w = do(h, "/ahp", map[string]string{"Authorization": "Bearer " + adminToken})
	if w.Code != 204 || gotPrincipal != "root" {
		t.Fatalf("admin: %d %q", w.Code, gotPrincipal)
	}
	// Query credentials: accepted where allowed, stripped, warned once.
	for range 3 {
		w = do(h, "/ahp?api_key="+agentKey+"&x=1", nil)
		if w.Code != 204 || gotQuery != "x=1" {
			t.Fatalf("query key: %d %q", w.Code, gotQuery)
		}
	}
	if n := strings.Count(logs.String(), "URL query"); n != 1 {
		t.Fatalf("query warning logged %d times: %s", n, logs.String())
	}
	if strings.Contains(logs.String(), agentKey) || strings.Contains(logs.String(), "wrong") && strings.Contains(logs.String(), "X-API-Key: wrong") {
		t.Fatalf("logs reveal a secret: %s", logs.String())
	}
	w = do(hNoQuery, "/ahp?token="+agentToken, nil)
	if w.Code != 401 {
		t.Fatalf("query token where not allowed: %d", w.Code)
	}
	// A header wins over the query.
	w = do(h, "/ahp?api_key=wrong", map[string]string{"X-API-Key": agentKey})
	if w.Code != 204 {
		t.Fatalf("header over query: %d", w.Code)
	}

	for reason, want := range map[string]float64{ReasonMissing: 1, ReasonInvalid: 1, ReasonForbidden: 1} {
		if got := refusals(t, reg, "ws", reason); got != want {
			t.Errorf("ws %s refusals = %v, want %v", reason, got, want)
		}
	}
	if got := refusals(t, reg, "http", ReasonMissing); got != 1 {
		t.Errorf("http missing refusals = %v", got)
	}
}

func TestNewMetricsShared(t *testing.T) {
	reg := prometheus.NewRegistry()
	a, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	a.Refused("http", ReasonInvalid)
	b.Refused("http", ReasonInvalid)
	if got := refusals(t, reg, "http", ReasonInvalid); got != 2 {
		t.Fatalf("shared counter = %v", got)
	}
	var nilM *Metrics
	nilM.Refused("x", "y") // must not panic
}
