// Package admin is the harness's administrative HTTP API: health and
// readiness probes, Prometheus metrics, the human approval queue and policy
// reloads. Approvals and reloads require credentials with the approver or
// admin role; probes and metrics are open (the API listens on loopback by
// default). An approval is never answered with the credentials of the
// principal whose event raised it.
package admin

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/effects"
	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/transport"
)

// Decider answers approvals (the harness).
type Decider interface {
	Decide(ctx context.Context, id string, approve bool, p *transport.Principal, reason string) (store.Approval, error)
}

// Options configure the admin API.
type Options struct {
	Store    store.Store
	Decider  Decider
	Auth     auth.Authenticator // who may call the API (nil: only the local token)
	Gatherer prometheus.Gatherer
	// Reload, when set, is called by POST /v1/policy/reload.
	Reload func() error
	// Ready, when set, is consulted by /readyz besides the store.
	Ready func() error
	// Effects, when set, reads what an approval's event does (the live
	// policy's effect analysis), so that an approver sees it beside the
	// event: GET /v1/approvals and /v1/approvals/{id} carry "effects".
	Effects func(event json.RawMessage) []effects.Effect
	Logger  *slog.Logger
}

// Handler returns the admin API.
func Handler(o Options) http.Handler {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	a := &api{o: o}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", a.readyz)
	if o.Gatherer != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(o.Gatherer, promhttp.HandlerOpts{}))
	}
	mux.HandleFunc("GET /v1/approvals", a.with("approver", a.listApprovals))
	mux.HandleFunc("GET /v1/approvals/{id}", a.with("approver", a.getApproval))
	mux.HandleFunc("POST /v1/approvals/{id}/approve", a.with("approver", a.decide(true)))
	mux.HandleFunc("POST /v1/approvals/{id}/deny", a.with("approver", a.decide(false)))
	mux.HandleFunc("POST /v1/policy/reload", a.with("admin", a.reload))
	mux.HandleFunc("GET /v1/shadow/report", a.with("admin", a.shadowReport))
	return mux
}

type api struct{ o Options }

// with authenticates the caller and requires role.
func (a *api) with(role string, next func(http.ResponseWriter, *http.Request, *transport.Principal)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		creds := auth.FromHTTPRequest(r, false)
		var p *transport.Principal
		var err error
		if a.o.Auth == nil {
			err = auth.ErrUnauthenticated
		} else {
			p, err = a.o.Auth.Authenticate(r.Context(), creds)
		}
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="ahp-admin"`)
			writeError(w, http.StatusUnauthorized, "authentication required: present an approver's or admin's credential: a bearer token (Authorization: Bearer) or an API key (X-API-Key)")
			return
		}
		if !p.Has(role) {
			writeError(w, http.StatusForbidden, fmt.Sprintf("principal %s lacks role %s", p.ID, role))
			return
		}
		next(w, r, p)
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}

func (a *api) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	if err := a.o.Store.Ping(ctx); err != nil {
		writeError(w, http.StatusServiceUnavailable, "store not ready: "+err.Error())
		return
	}
	if a.o.Ready != nil {
		if err := a.o.Ready(); err != nil {
			writeError(w, http.StatusServiceUnavailable, err.Error())
			return
		}
	}
	_, _ = w.Write([]byte("ready\n"))
}

// ApprovalJSON is an approval as the API shows it.
type ApprovalJSON struct {
	ID             string          `json:"id"`
	Created        time.Time       `json:"created"`
	SessionID      string          `json:"session_id"`
	AgentID        string          `json:"agent_id"`
	RequestedBy    string          `json:"requested_by,omitempty"`
	Replica        string          `json:"replica,omitempty"` // the replica that raised it (shared store)
	RuleID         string          `json:"rule_id"`
	Reason         string          `json:"reason"`
	Status         string          `json:"status"`
	DecidedBy      string          `json:"decided_by,omitempty"`
	DecidedAt      *time.Time      `json:"decided_at,omitempty"`
	DecisionReason string          `json:"decision_reason,omitempty"`
	Event          json.RawMessage `json:"event,omitempty"`
	// EventBytes is the event's size when a list left the event out (over
	// maxListedEventBytes); GET /v1/approvals/{id} has it whole.
	EventBytes int `json:"event_bytes,omitempty"`
	// Effects is what the event's action does, as the harness's policy
	// reads it (absent when the API has no effect reader).
	Effects []effects.Effect `json:"effects,omitempty"`
}

// withEffects adds the effects of the approval's event.
func (a *api) withEffects(j ApprovalJSON, event json.RawMessage) ApprovalJSON {
	if a.o.Effects != nil && len(event) > 0 {
		j.Effects = a.o.Effects(event)
	}
	return j
}

// Bounds of GET /v1/approvals: how many approvals one answer lists
// (?limit=, default and most), and the largest event it carries inline.
const (
	defaultApprovalList = 100
	maxApprovalList     = 1000
	maxListedEventBytes = 64 << 10
)

// FromApproval converts a stored approval.
func FromApproval(a store.Approval) ApprovalJSON {
	out := ApprovalJSON{ID: a.ID, Created: a.Created, SessionID: a.SessionID, AgentID: a.AgentID,
		RequestedBy: a.RequestedBy, Replica: a.Replica, RuleID: a.RuleID, Reason: a.Reason, Status: string(a.Status), DecidedBy: a.DecidedBy,
		DecisionReason: a.DecisionReason, Event: a.Event}
	if !a.DecidedAt.IsZero() {
		t := a.DecidedAt
		out.DecidedAt = &t
	}
	return out
}

func (a *api) listApprovals(w http.ResponseWriter, r *http.Request, _ *transport.Principal) {
	f := store.ApprovalFilter{Status: store.ApprovalStatus(r.URL.Query().Get("status")), SessionID: r.URL.Query().Get("session"),
		Limit: defaultApprovalList}
	if f.Status != "" && !f.Status.Valid() {
		writeError(w, http.StatusBadRequest, "status must be pending, approved, denied or expired")
		return
	}
	if l := r.URL.Query().Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > maxApprovalList {
			writeError(w, http.StatusBadRequest, "limit must be a number from 1 to "+strconv.Itoa(maxApprovalList))
			return
		}
		f.Limit = n
	}
	list, err := a.o.Store.Approvals().List(r.Context(), f)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	out := make([]ApprovalJSON, 0, len(list))
	for _, ap := range list {
		j := a.withEffects(FromApproval(ap), ap.Event)
		if len(j.Event) > maxListedEventBytes {
			j.Event, j.EventBytes = nil, len(ap.Event)
		}
		out = append(out, j)
	}
	writeJSON(w, http.StatusOK, map[string]any{"approvals": out})
}

func (a *api) getApproval(w http.ResponseWriter, r *http.Request, _ *transport.Principal) {
	ap, err := a.o.Store.Approvals().Get(r.Context(), r.PathValue("id"))
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, "no approval "+r.PathValue("id"))
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, a.withEffects(FromApproval(ap), ap.Event))
}

// maxReasonBytes bounds the body of a decision.
const maxReasonBytes = 16 << 10

func (a *api) decide(approve bool) func(http.ResponseWriter, *http.Request, *transport.Principal) {
	return func(w http.ResponseWriter, r *http.Request, p *transport.Principal) {
		var body struct {
			Reason string `json:"reason"`
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxReasonBytes)
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil && !errors.Is(err, io.EOF) {
			writeError(w, http.StatusBadRequest, "body must be JSON like {\"reason\": \"...\"}")
			return
		}
		// The decider refuses self-approval too; checking the stored
		// requester here keeps the refusal whatever decider is plugged in.
		cur, err := a.o.Store.Approvals().Get(r.Context(), r.PathValue("id"))
		if err == nil && cur.RequestedBy != "" && cur.RequestedBy == p.ID {
			a.o.Logger.Warn("self-approval refused", "approval_id", cur.ID, "principal", p.ID)
			writeError(w, http.StatusForbidden, fmt.Sprintf("principal %s raised approval %s and cannot answer it", p.ID, cur.ID))
			return
		}
		var ap store.Approval
		if err == nil {
			ap, err = a.o.Decider.Decide(r.Context(), r.PathValue("id"), approve, p, body.Reason)
		}
		switch {
		case errors.Is(err, store.ErrNotFound):
			writeError(w, http.StatusNotFound, "no approval "+r.PathValue("id"))
		case errors.Is(err, store.ErrAlreadyDecided):
			writeError(w, http.StatusConflict, err.Error())
		case errors.Is(err, harness.ErrNotApprover) || errors.Is(err, harness.ErrSelfApproval):
			writeError(w, http.StatusForbidden, err.Error())
		case err != nil:
			writeError(w, http.StatusInternalServerError, err.Error())
		default:
			writeJSON(w, http.StatusOK, a.withEffects(FromApproval(ap), ap.Event))
		}
	}
}

func (a *api) reload(w http.ResponseWriter, _ *http.Request, p *transport.Principal) {
	if a.o.Reload == nil {
		writeError(w, http.StatusNotImplemented, "reload is not configured")
		return
	}
	if err := a.o.Reload(); err != nil {
		writeError(w, http.StatusUnprocessableEntity, "new policy refused, the old one keeps running: "+err.Error())
		return
	}
	a.o.Logger.Info("policy reloaded through the admin API", "by", p.ID)
	writeJSON(w, http.StatusOK, map[string]string{"status": "reloaded"})
}

// TokenFile is the name of the local admin token inside the data directory.
const TokenFile = "admin.token"

// SessionEnv is the environment variable in which hook adapters pass the
// identity of the supervised session to the tool calls they supervise,
// where the agent lets them. `ahp approvals approve|deny` refuses to run
// when it is set: an agent must not answer approvals.
const SessionEnv = "AHP_SESSION_ID"

// LocalToken returns the local admin token kept in dataDir, creating it
// (32 random bytes, hex, mode 0600) when absent. Whoever can read the data
// directory can administer the harness. The token is for humans at the
// harness's machine: never hand it to an agent, and run agents as a user
// that cannot read the data directory (docs/security.md).
func LocalToken(dataDir string) (string, error) {
	path := filepath.Join(dataDir, TokenFile)
	if b, err := os.ReadFile(path); err == nil {
		tok := strings.TrimSpace(string(b))
		if len(tok) >= 32 {
			return tok, nil
		}
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return "", err
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	tok := hex.EncodeToString(raw[:])
	if err := os.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
		return "", err
	}
	return tok, nil
}

// TokenAuthenticator accepts the local admin token as the principal
// "local-admin" (a human operator) with roles admin and approver, comparing in constant time;
// anything else goes to next (which may be nil).
func TokenAuthenticator(token string, next auth.Authenticator) auth.Authenticator {
	want := sha256.Sum256([]byte(token))
	return auth.AuthenticatorFunc(func(ctx context.Context, c auth.Credentials) (*transport.Principal, error) {
		got := sha256.Sum256([]byte(c.Bearer))
		if c.Bearer != "" && subtle.ConstantTimeCompare(got[:], want[:]) == 1 {
			return &transport.Principal{ID: "local-admin", Roles: []string{"admin", "approver"}}, nil
		}
		if next != nil {
			return next.Authenticate(ctx, c)
		}
		return nil, auth.ErrUnauthenticated
	})
}
