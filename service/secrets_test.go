package service_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/admin"
	"github.com/ahp-go/ahp/auth/authtest"
	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/service"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/transport"
)

// Known secrets of TestSecretsNeverLeak. Each is distinctive, so that any
// copy of it in an output is found by a plain substring search.
const (
	agentKey      = "ahpk-AGENTKEY-5f2c9e1d7b3a4680a1b2c3d4"
	agentToken    = "ahpt-AGENTTOKEN-0e9d8c7b6a5f4e3d2c1b0a99"
	approverToken = "ahpt-APPROVER-7a6b5c4d3e2f1a0b9c8d7e6f"
	observerKey   = "ahpk-OBSERVER-1a2b3c4d5e6f7a8b9c0d1e2f"
	wrongKey      = "ahpk-WRONGKEY-atypoofarealkey42f0aa55"
	wrongToken    = "ahpt-WRONGTOKEN-99887766554433221100aa"
)

// secretOutputs collects every output of the harness a secret could land
// in, by name.
type secretOutputs map[string][]byte

func (o secretOutputs) add(name string, b []byte) { o[name] = append(o[name], b...) }

func (o secretOutputs) addf(name, format string, args ...any) {
	o.add(name, []byte(fmt.Sprintf(format+"\n", args...)))
}

// TestSecretsNeverLeak configures known secrets (a credentials file with
// API keys and bearer tokens, the admin token, a TLS private key), drives
// every transport (unix, https, wss, grpcs) and the admin API with good
// credentials and with refusals (wrong key, missing key, wrong role,
// secrets in a WebSocket URL), then searches every output for each
// secret: the service's log at debug level, every client error and HTTP
// error body, /metrics, the audit export and every file of the data
// directory (but admin.token, whose job is to hold the admin token).
func TestSecretsNeverLeak(t *testing.T) {
	dir := t.TempDir()
	ca := authtest.NewCA(t, "secrets-test-ca")
	srvLeaf := ca.Server(t)
	certFile, keyFile := srvLeaf.Write(t, dir, "server")
	creds := filepath.Join(dir, "credentials.yaml")
	writeFile(t, creds, fmt.Sprintf(`version: 1
principals:
  - id: agent-1
    roles: [agent]
    api_keys: [%q]
    bearer_tokens: [%q]
  - id: approver-1
    roles: [approver]
    bearer_tokens: [%q]
  - id: observer-1
    roles: [observer]
    api_keys: [%q]
`, agentKey, agentToken, approverToken, observerKey))
	pol := filepath.Join(dir, "policy.yaml")
	writeFile(t, pol, `rules:
  - id: ask-deploy
    priority: 100
    target: {event_types: [pre_action]}
    condition: 'event.command.startsWith("deploy")'
    outcome: {decision: escalate, reason: "a human decides deploys", await_approval: {timeout: 1h}}
`)
	c := config.Default()
	c.DataDir = filepath.Join(dir, "data")
	c.Listen = []string{"unix:" + filepath.Join(dir, "h.sock"), "https://127.0.0.1:0", "wss://127.0.0.1:0", "grpcs://127.0.0.1:0"}
	c.Admin = "http://127.0.0.1:0"
	c.Auth = config.AuthConfig{Credentials: creds, TLSCert: certFile, TLSKey: keyFile}
	c.Policy.Files = []string{pol}
	c.Approvals.Timeout = config.Duration(10 * time.Minute)
	r := start(t, c, service.Options{})
	adminToken, err := admin.LocalToken(c.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	secrets := map[string]string{
		"agent API key": agentKey, "agent bearer token": agentToken, "approver token": approverToken,
		"observer API key": observerKey, "a wrong API key": wrongKey, "a wrong token": wrongToken,
		"admin token": adminToken,
	}
	// The TLS private key: its PEM lines and its raw DER bytes.
	blk, _ := pem.Decode(srvLeaf.KeyPEM)
	for i, line := range strings.Split(string(srvLeaf.KeyPEM), "\n") {
		if len(line) >= 32 && !strings.HasPrefix(line, "-----") {
			secrets[fmt.Sprintf("TLS key PEM line %d", i)] = line
		}
	}
	secrets["TLS key DER"] = string(blk.Bytes[len(blk.Bytes)-32:])
	secrets["TLS key DER as base64"] = base64.StdEncoding.EncodeToString(blk.Bytes)[8:48]

	out := secretOutputs{}
	ctx := context.Background()
	tlsConf := &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12}
	// Every transport, accepted and refused.
	for _, listen := range c.Listen {
		addr := r.addrs[listen]
		cases := []struct {
			name  string
			dopts transport.DialOptions
		}{
			{"api key", transport.DialOptions{APIKey: agentKey, TLS: tlsConf}},
			{"bearer", transport.DialOptions{BearerToken: agentToken, TLS: tlsConf}},
			{"wrong key", transport.DialOptions{APIKey: wrongKey, TLS: tlsConf}},
			{"wrong token", transport.DialOptions{BearerToken: wrongToken, TLS: tlsConf}},
			{"missing key", transport.DialOptions{TLS: tlsConf}},
			{"wrong role", transport.DialOptions{APIKey: observerKey, TLS: tlsConf}},
		}
		for _, tc := range cases {
			d, err := driveAgent(ctx, addr, tc.dopts)
			out.addf("client results", "%s %s: %+v %v", listen, tc.name, d, err)
			if strings.HasPrefix(listen, "unix:") || tc.name == "api key" || tc.name == "bearer" {
				if err != nil || d.Kind != protocol.DecisionAllow {
					t.Errorf("%s %s: %+v %v, want allow", listen, tc.name, d, err)
				}
			} else if err == nil && d.Allowed() {
				t.Errorf("%s %s: allowed, want a refusal", listen, tc.name)
			}
		}
	}
	// The 2.4 WebSocket client's form: secrets in the URL's query.
	wsAddr := r.addrs["wss://127.0.0.1:0"]
	for _, q := range []string{"api_key=" + url.QueryEscape(agentKey), "token=" + url.QueryEscape(wrongToken), "api_key=" + url.QueryEscape(wrongKey)} {
		d, err := driveAgent(ctx, wsAddr+"?"+q, transport.DialOptions{TLS: tlsConf})
		out.addf("client results", "wss query %s: %+v %v", q[:5], d, err)
	}
	// Raw HTTP refusals of the agent listener: their bodies and headers.
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConf}, Timeout: 10 * time.Second}
	handshake := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	for _, hdr := range []map[string]string{
		{}, {"X-API-Key": wrongKey}, {"Authorization": "Bearer " + wrongToken}, {"X-API-Key": observerKey},
		{"Authorization": "Bearer " + agentToken},
	} {
		out.add("agent HTTP answers", httpDo(t, hc, "POST", r.addrs["https://127.0.0.1:0"], handshake, hdr))
	}
	out.add("agent HTTP answers", httpDo(t, hc, "POST", r.addrs["https://127.0.0.1:0"]+"?api_key="+url.QueryEscape(wrongKey), handshake, nil))

	// The admin API: an escalation answered by the approver, and refusals.
	adminURL := r.addrs["admin"]
	agent := dial(t, "unix:"+filepath.Join(dir, "h.sock"), client.Options{SessionID: "s-deploy", Timeout: time.Minute})
	decided := make(chan protocol.Decision, 1)
	go func() {
		d, _ := agent.Event(ctx, protocol.EventPreAction, bash("deploy prod"))
		decided <- d
	}()
	var id string
	waitFor(t, "a pending approval", func() bool {
		p, err := r.svc.Store().Approvals().List(ctx, store.ApprovalFilter{Status: store.ApprovalPending})
		if err == nil && len(p) == 1 {
			id = p[0].ID
		}
		return id != ""
	})
	hc2 := &http.Client{Timeout: 10 * time.Second}
	bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }
	for _, req := range []struct {
		method, path string
		hdr          map[string]string
	}{
		{"GET", "/v1/approvals", nil},
		{"GET", "/v1/approvals", bearer(wrongToken)},
		{"GET", "/v1/approvals", map[string]string{"X-API-Key": wrongKey}},
		{"GET", "/v1/approvals", bearer(agentToken)},                  // wrong role
		{"POST", "/v1/policy/reload", bearer(approverToken)},          // wrong role
		{"POST", "/v1/approvals/" + id + "/deny", bearer(agentToken)}, // wrong role
		{"GET", "/v1/approvals", bearer(approverToken)},
		{"GET", "/v1/approvals/" + id, bearer(adminToken)},
		{"POST", "/v1/policy/reload", bearer(adminToken)},
		{"GET", "/v1/shadow/report", bearer(adminToken)},
		{"GET", "/v1/status", bearer(adminToken)},
		{"GET", "/readyz", nil},
		{"POST", "/v1/approvals/" + id + "/approve", bearer(approverToken)},
	} {
		out.add("admin API answers", httpDo(t, hc2, req.method, adminURL+req.path, `{"reason":"ok"}`, req.hdr))
	}
	select {
	case d := <-decided:
		if d.Kind != protocol.DecisionAllow {
			t.Errorf("the approved escalation: %+v", d)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the escalation was not answered after its approval")
	}
	out.add("/metrics", httpDo(t, hc2, "GET", adminURL+"/metrics", "", nil))

	// The audit export, as `ahp audit export` writes it.
	recs, err := r.svc.Store().Audit().Query(ctx, store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var exp bytes.Buffer
	enc := store.NewAuditEncoder(&exp)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	out.add("audit export", exp.Bytes())
	if len(recs) < 10 {
		t.Errorf("only %d audit records: the test did not drive the harness", len(recs))
	}
	// The files the harness wrote, after an orderly stop.
	if err := r.svc.Close(); err != nil {
		t.Fatal(err)
	}
	out.add("log (debug)", []byte(r.logs.String()))
	err = filepath.WalkDir(c.DataDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == admin.TokenFile {
			return err
		}
		b, err := os.ReadFile(path)
		out.add("data dir "+d.Name(), b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	if os.Getenv("AHP_SECRETS_DUMP") != "" { // to see what was searched
		for name, b := range out {
			if !strings.HasPrefix(name, "data dir") {
				t.Logf("== %s\n%s", name, b)
			}
		}
	}
	for name, b := range out {
		if len(b) == 0 {
			t.Errorf("output %q is empty: nothing was checked", name)
		}
		for what, secret := range secrets {
			if i := bytes.Index(b, []byte(secret)); i >= 0 {
				lo, hi := max(0, i-120), min(len(b), i+len(secret)+40)
				t.Errorf("%s found in %s: …%q…", what, name, b[lo:hi])
			}
		}
	}
	for _, must := range []string{"principal", "authentication"} { // the refusals were logged, without the secrets
		if !strings.Contains(strings.ToLower(r.logs.String()+string(out["admin API answers"])), must) {
			t.Errorf("no %q in the logs or admin answers: were the refusals driven?", must)
		}
	}
	t.Logf("searched %d outputs (%d bytes) for %d secrets", len(out), func() (n int) {
		for _, b := range out {
			n += len(b)
		}
		return n
	}(), len(secrets))
}

// driveAgent dials addr, shakes hands and asks one pre_action.
func driveAgent(ctx context.Context, addr string, dopts transport.DialOptions) (protocol.Decision, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	dopts.Timeout = 5 * time.Second
	c, err := client.Dial(ctx, addr, dopts, client.Options{Timeout: 5 * time.Second, FailMode: client.FailError})
	if err != nil {
		return protocol.Decision{}, err
	}
	defer c.Close()
	if _, err := c.Handshake(ctx); err != nil {
		return protocol.Decision{}, err
	}
	return c.Event(ctx, protocol.EventPreAction, bash("ls"))
}

// httpDo sends one request and returns the status line, headers and body.
func httpDo(t *testing.T, hc *http.Client, method, u, body string, hdr map[string]string) []byte {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return []byte(fmt.Sprintf("%s %s: %v\n", method, u, err))
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	var buf bytes.Buffer
	path, _, _ := strings.Cut(u, "?") // the test's own request line, not the harness's output
	fmt.Fprintf(&buf, "%s %s: %s\n", method, path, resp.Status)
	_ = resp.Header.Write(&buf)
	buf.Write(b)
	buf.WriteByte('\n')
	return buf.Bytes()
}
