package main

import (
	"strings"
	"testing"

	"github.com/ahp-go/ahp/auth/authtest"
)

// TestSendServeWebSocketAndGRPC runs ahp send against ahp serve over
// ws:// (headers and the 2.4 query form) and grpc://.
func TestSendServeWebSocketAndGRPC(t *testing.T) {
	bin := e2eBinary(t)
	creds := writeCredentials(t, t.TempDir())
	for _, listen := range []string{"ws://127.0.0.1:0", "grpc://127.0.0.1:0"} {
		t.Run(listen[:strings.Index(listen, ":")], func(t *testing.T) {
			addr, logs := startServeNet(t, bin, []string{"AHP_CREDENTIALS=" + creds}, "--listen", listen, "--log-level", "warn")
			scheme := listen[:strings.Index(listen, ":")]
			if !strings.HasPrefix(addr, scheme+"://127.0.0.1:") {
				t.Fatalf("address %q", addr)
			}
			key := []string{"AHP_API_KEY=" + e2eAgentKey}
			out, errOut, code := sendNet(t, bin, key, "--connect", addr, "pre_action", rmRoot)
			if code != 2 || !strings.Contains(out, `"decision":"block"`) {
				t.Fatalf("rm -rf /: exit %d, %s %s", code, out, errOut)
			}
			out, _, code = sendNet(t, bin, key, "--connect", addr, "pre_action", lsCmd)
			if code != 0 || !strings.Contains(out, `"decision":"allow"`) {
				t.Fatalf("ls: exit %d, %s", code, out)
			}
			if _, errOut, code := sendNet(t, bin, key, "--connect", addr, "post_action", `{"tool_name":"bash"}`); code != 0 {
				t.Fatalf("notification: exit %d, %s", code, errOut)
			}
			if scheme == "ws" {
				// The 2.4 client's form: the key in the URL query.
				if out, errOut, code := sendNet(t, bin, nil, "--connect", addr+"?api_key="+e2eAgentKey, "pre_action", lsCmd); code != 0 {
					t.Fatalf("query api_key: exit %d, %s %s", code, out, errOut)
				}
			}
			for name, env := range map[string][]string{
				"no key":       nil,
				"wrong key":    {"AHP_API_KEY=wrong-key"},
				"observer key": {"AHP_API_KEY=" + e2eObserverKey},
			} {
				_, errOut, code := sendNet(t, bin, env, "--connect", addr, "pre_action", lsCmd)
				if code != 1 {
					t.Errorf("%s: exit %d", name, code)
				}
				if !strings.Contains(errOut, "401") && !strings.Contains(errOut, "403") &&
					!strings.Contains(errOut, "Unauthenticated") && !strings.Contains(errOut, "PermissionDenied") {
					t.Errorf("%s: stderr %q does not say why", name, errOut)
				}
				if strings.Contains(errOut, "wrong-key") {
					t.Errorf("%s: stderr reveals the key", name)
				}
			}
			if l := logs(); strings.Contains(l, e2eAgentKey) || strings.Contains(l, "wrong-key") {
				t.Fatalf("server logs reveal a secret:\n%s", l)
			}
		})
	}
}

// TestSendServeMutualTLSWebSocketAndGRPC runs ahp send with a client
// certificate against wss:// and grpcs:// listeners that require one.
func TestSendServeMutualTLSWebSocketAndGRPC(t *testing.T) {
	bin := e2eBinary(t)
	dir := t.TempDir()
	creds := writeCredentials(t, dir)
	ca := authtest.NewCA(t, "e2e CA")
	caFile := ca.WriteCA(t, dir, "ca.crt")
	srvCert, srvKey := ca.Server(t).Write(t, dir, "server")
	cliCert, cliKey := ca.Client(t, "agent-7").Write(t, dir, "client")
	strCert, strKey := ca.Client(t, "stranger").Write(t, dir, "stranger")
	for _, listen := range []string{"wss://127.0.0.1:0", "grpcs://127.0.0.1:0"} {
		scheme := listen[:strings.Index(listen, ":")]
		t.Run(scheme, func(t *testing.T) {
			addr, _ := startServeNet(t, bin, nil, "--listen", listen, "--credentials", creds,
				"--tls-cert", srvCert, "--tls-key", srvKey, "--client-ca", caFile, "--log-level", "warn")
			if !strings.HasPrefix(addr, scheme+"://") {
				t.Fatalf("address %q", addr)
			}
			out, errOut, code := sendNet(t, bin, nil, "--connect", addr, "--cert", cliCert, "--key", cliKey, "--ca", caFile, "pre_action", rmRoot)
			if code != 2 || !strings.Contains(out, `"decision":"block"`) {
				t.Fatalf("mTLS: exit %d, %s %s", code, out, errOut)
			}
			if _, _, code := sendNet(t, bin, nil, "--connect", addr, "--cert", strCert, "--key", strKey, "--ca", caFile, "pre_action", lsCmd); code != 1 {
				t.Fatalf("unmapped certificate: exit %d", code)
			}
			if _, _, code := sendNet(t, bin, nil, "--connect", addr, "--ca", caFile, "--api-key", e2eAgentKey, "pre_action", lsCmd); code != 1 {
				t.Fatalf("no client certificate: exit %d", code)
			}
		})
	}
}
