package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/auth/authtest"
)

// startServeNet runs ahp serve with args and env until the test ends and
// returns the address it prints ("http://127.0.0.1:PORT/ahp").
func startServeNet(t *testing.T, bin string, env []string, args ...string) (string, func() string) {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(bin, append([]string{"serve", "--admin", "off", "--data-dir", filepath.Join(dir, "data")}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var all bytes.Buffer
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			mu.Lock()
			all.WriteString(line + "\n")
			mu.Unlock()
			if rest, ok := strings.CutPrefix(line, "ahp: harness listening on "); ok {
				select {
				case addrc <- rest:
				default:
				}
			}
		}
	}()
	logs := func() string {
		mu.Lock()
		defer mu.Unlock()
		return all.String()
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Error("serve did not stop on SIGINT")
		}
		pw.Close()
	}
	t.Cleanup(stop)
	select {
	case addr := <-addrc:
		return addr, logs
	case <-time.After(20 * time.Second):
		stop()
		t.Fatalf("serve did not start; stderr:\n%s", logs())
	}
	return "", nil
}

// sendNet runs ahp send with extra environment and returns stdout, stderr
// and the exit code.
func sendNet(t *testing.T, bin string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"send", "--timeout", "5s"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out.String()), errb.String(), code
}

const (
	e2eAgentKey    = "e2e-agent-key-0123456789abcdef"
	e2eObserverKey = "e2e-observer-key-0123456789abcdef"
)

func writeCredentials(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "credentials.yaml")
	data := `version: 1
principals:
  - id: ci-agent
    roles: [agent]
    api_keys: ["` + auth.HashSecret(e2eAgentKey) + `"]
  - id: dashboard
    roles: [observer]
    api_keys: ["` + auth.HashSecret(e2eObserverKey) + `"]
  - id: cert-agent
    roles: [agent]
mtls:
  - common_name: agent-7
    principal: cert-agent
`
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSendServeHTTP(t *testing.T) {
	bin := e2eBinary(t)
	dir := t.TempDir()
	creds := writeCredentials(t, dir)
	addr, logs := startServeNet(t, bin, []string{"AHP_CREDENTIALS=" + creds}, "--listen", "http://127.0.0.1:0", "--log-level", "warn")
	if !strings.HasPrefix(addr, "http://127.0.0.1:") || !strings.HasSuffix(addr, "/ahp") {
		t.Fatalf("address %q", addr)
	}
	key := []string{"AHP_API_KEY=" + e2eAgentKey}
	out, _, code := sendNet(t, bin, key, "--connect", addr, "pre_action", rmRoot)
	if code != 2 || !strings.Contains(out, `"decision":"block"`) {
		t.Fatalf("rm -rf /: exit %d, %s", code, out)
	}
	out, _, code = sendNet(t, bin, key, "--connect", addr, "pre_action", lsCmd)
	if code != 0 || !strings.HasPrefix(out, `{"decision":"allow"`) {
		t.Fatalf("ls: exit %d, %s", code, out)
	}
	if _, errOut, code := sendNet(t, bin, key, "--connect", addr, "post_action", `{"tool_name":"bash"}`); code != 0 {
		t.Fatalf("notification: exit %d, %s", code, errOut)
	}
	// The flag works too (the environment is preferred for secrets).
	if out, _, code = sendNet(t, bin, nil, "--connect", addr, "--api-key", e2eAgentKey, "pre_action", lsCmd); code != 0 {
		t.Fatalf("--api-key: exit %d, %s", code, out)
	}
	refused := map[string][]string{
		"no key":       nil,
		"wrong key":    {"AHP_API_KEY=wrong-key"},
		"observer key": {"AHP_API_KEY=" + e2eObserverKey},
	}
	for name, env := range refused {
		_, errOut, code := sendNet(t, bin, env, "--connect", addr, "pre_action", lsCmd)
		if code != 1 {
			t.Errorf("%s: exit %d", name, code)
		}
		if !strings.Contains(errOut, "401") && !strings.Contains(errOut, "403") {
			t.Errorf("%s: stderr %q does not say why", name, errOut)
		}
		if strings.Contains(errOut, "wrong-key") {
			t.Errorf("%s: stderr reveals the key", name)
		}
	}
	if l := logs(); strings.Contains(l, e2eAgentKey) || strings.Contains(l, "wrong-key") || strings.Contains(l, e2eObserverKey) {
		t.Fatalf("server logs reveal a secret:\n%s", l)
	}
}

func TestSendServeHTTPSMutualTLS(t *testing.T) {
	bin := e2eBinary(t)
	dir := t.TempDir()
	creds := writeCredentials(t, dir)
	ca := authtest.NewCA(t, "e2e CA")
	caFile := ca.WriteCA(t, dir, "ca.crt")
	srvCert, srvKey := ca.Server(t).Write(t, dir, "server")
	cliCert, cliKey := ca.Client(t, "agent-7").Write(t, dir, "client")
	strCert, strKey := ca.Client(t, "stranger").Write(t, dir, "stranger")
	addr, _ := startServeNet(t, bin, nil, "--listen", "https://127.0.0.1:0", "--credentials", creds,
		"--tls-cert", srvCert, "--tls-key", srvKey, "--client-ca", caFile, "--log-level", "warn")
	if !strings.HasPrefix(addr, "https://") {
		t.Fatalf("address %q", addr)
	}
	out, errOut, code := sendNet(t, bin, nil, "--connect", addr, "--cert", cliCert, "--key", cliKey, "--ca", caFile, "pre_action", lsCmd)
	if code != 0 || !strings.HasPrefix(out, `{"decision":"allow"`) {
		t.Fatalf("mTLS: exit %d, %s %s", code, out, errOut)
	}
	env := []string{"AHP_CERT=" + cliCert, "AHP_KEY=" + cliKey, "AHP_CA=" + caFile}
	if _, errOut, code := sendNet(t, bin, env, "--connect", addr, "pre_action", rmRoot); code != 2 {
		t.Fatalf("mTLS from the environment: exit %d, %s", code, errOut)
	}
	if _, _, code := sendNet(t, bin, nil, "--connect", addr, "--cert", strCert, "--key", strKey, "--ca", caFile, "pre_action", lsCmd); code != 1 {
		t.Fatalf("unmapped certificate: exit %d", code)
	}
	if _, _, code := sendNet(t, bin, nil, "--connect", addr, "--ca", caFile, "--api-key", e2eAgentKey, "pre_action", lsCmd); code != 1 {
		t.Fatalf("no client certificate: exit %d", code)
	}
}
