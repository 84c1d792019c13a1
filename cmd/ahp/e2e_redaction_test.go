package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/redact"
	"github.com/ahp-go/ahp/transport"
)

// liveSecrets are sent to a running harness by TestRedactionEndToEnd: one
// of every built-in detector kind, a value at an operator-defined field
// path and one at a descriptor field declared redact: true.
var liveSecrets = map[string]string{
	"github_token":   "ghp_Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8",
	"aws_access_key": "AKIAZZZZEXAMPLE12345",
	"aws_secret_key": "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFy",
	"private_key":    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7",
	"slack_token":    "xoxp-9876543210-zyxwvutsrqpo",
	"slack_webhook":  "T11111111/B22222222/YYYYYYYYYYYYYYYYYYYYYYYY",
	"google_api_key": "AIzaSyZ9876543210zyxwvutsrqponmlkjihgfe",
	"stripe_key":     "sk_live_9876543210zyxwvutsrqpo",
	"api_key":        "p0o9i8u7y6t5r4e3w2q1",
	"operator_field": "correct-horse-battery-staple",
	"descriptor":     "078-05-1120-hidden",
}

func secretList() []string {
	out := make([]string, 0, len(liveSecrets))
	for _, s := range liveSecrets {
		out = append(out, s)
	}
	return out
}

const redactionDescriptor = `descriptor_version: aioc.agent_graph.v0
runtime: {entry_agent: worker}
tools:
  bash: {target: "t://bash"}
  http: {target: "t://http"}
context:
  fields:
    "customer.ssn": {type: string, redact: true}
agents:
  worker:
    tools: [bash, http]
`

// TestRedactionEndToEnd sends secrets of every detector kind, an
// operator-defined field and a descriptor redact field through pre_action
// arguments, pre_prompt, post_action results, envelope metadata, an
// escalation waiting for approval, a memory_recall query and an ahp/query
// to ahp serve, then reads the raw bytes of every file in the data
// directory (database, WAL, shared memory, while the harness runs and after
// it stopped), the export, the observer stream (live actions and
// snapshots) and the log (at debug level): no secret appears
// anywhere, and the same secret has the same fingerprint in every record.
// Replay of the redacted records decides as the harness did live.
func TestRedactionEndToEnd(t *testing.T) {
	bin := e2eBinary(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	sock := filepath.Join(dir, "h.sock")
	cfg := filepath.Join(dir, "ahp.yaml")
	desc := filepath.Join(dir, "harness.yaml")
	if err := os.WriteFile(desc, []byte(redactionDescriptor), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte("data_dir: "+data+"\ndescriptor: "+desc+`
redaction:
  fields: [arguments.password]
policy: {packs: {approvals: true}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	admin := "127.0.0.1:" + strconv.Itoa(freePort(t))
	srv := exec.Command(bin, "serve", "--config", cfg, "--listen", "unix:"+sock, "--log-level", "debug", "--admin", "http://"+admin)
	srv.Dir = dir
	logs := &syncBuffer{}
	srv.Stderr, srv.Stdout = logs, logs
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		_ = srv.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- srv.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = srv.Process.Kill()
			t.Error("serve did not stop on SIGINT")
		}
	}
	defer stop()
	deadline := time.Now().Add(20 * time.Second)
	for !accepting(sock) {
		if time.Now().After(deadline) {
			t.Fatalf("harness never accepted; log: %s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	// An observer watches from the start: everything it is sent is kept.
	observed := &syncBuffer{}
	tokenBytes, err := os.ReadFile(filepath.Join(data, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(string(tokenBytes))
	observe := func(subs ...string) *websocket.Conn {
		ws, _, err := websocket.Dial(ctx, "ws://"+admin+"/observe", &websocket.DialOptions{
			HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
		if err != nil {
			t.Fatal(err)
		}
		ws.SetReadLimit(64 << 20)
		go func() {
			for {
				_, b, err := ws.Read(ctx)
				if err != nil {
					return
				}
				_, _ = observed.Write(append(b, '\n'))
			}
		}()
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
			"channel": "ahp-root://", "protocolVersions": []string{"1.0.0"}, "clientId": "redaction-test", "initialSubscriptions": subs}})
		if err := ws.Write(ctx, websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
		return ws
	}
	live := observe("ahp-root://")
	defer live.CloseNow()
	dial := func() *client.Client {
		c, err := client.Dial(ctx, "unix:"+sock, transport.DialOptions{}, client.Options{SessionID: "redact-s", AgentID: "worker", Timeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Handshake(ctx); err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := dial()
	defer c.Close()
	send := func(typ protocol.EventType, payload string, meta string) protocol.Decision {
		t.Helper()
		ev, err := c.NewEvent(typ, json.RawMessage(payload))
		if err != nil {
			t.Fatal(err)
		}
		if meta != "" {
			ev.Metadata = json.RawMessage(meta)
		}
		d, err := c.SendEvent(ctx, ev)
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		return d
	}
	s := liveSecrets
	privateKey := `-----BEGIN RSA PRIVATE KEY-----\n` + s["private_key"] + `\n-----END RSA PRIVATE KEY-----`

	// pre_action arguments: a token, and an operator-defined field.
	d := send(protocol.EventPreAction, `{"tool_name":"bash","arguments":{"command":"echo start"}}`, "")
	if d.Kind != protocol.DecisionAllow {
		t.Fatalf("first call: %+v", d)
	}
	// The session exists now: the observer follows it live.
	sb, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "subscribe", "params": map[string]any{"channel": "ahp-session:/redact-s"}})
	if err := live.Write(ctx, websocket.MessageText, sb); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return strings.Contains(observed.String(), `"id":2`) })
	d = send(protocol.EventPreAction, `{"tool_name":"bash","arguments":{"command":"curl -H 'Authorization: token `+s["github_token"]+`' https://api.github.com","password":"`+s["operator_field"]+`"}}`, "")
	if d.Kind != protocol.DecisionBlock {
		t.Fatalf("token in arguments: %+v", d)
	}
	// More kinds in one tool call.
	d = send(protocol.EventPreAction, `{"tool_name":"http","arguments":{"url":"https://hooks.slack.com/services/`+s["slack_webhook"]+`","headers":{"X":"`+s["slack_token"]+`"},"google":"`+s["google_api_key"]+`","stripe":"`+s["stripe_key"]+`","body":"api_key=`+s["api_key"]+`"}}`, "")
	if d.Kind != protocol.DecisionBlock {
		t.Fatalf("secrets in http arguments: %+v", d)
	}
	// pre_prompt: an AWS key pair.
	d = send(protocol.EventPrePrompt, `{"prompt":"use `+s["aws_access_key"]+` with aws_secret_access_key=`+s["aws_secret_key"]+`"}`, "")
	if d.Kind != protocol.DecisionBlock {
		t.Fatalf("AWS pair in prompt: %+v", d)
	}
	// pre_prompt: a private key.
	d = send(protocol.EventPrePrompt, `{"prompt":"here: `+privateKey+`"}`, "")
	if d.Kind != protocol.DecisionBlock {
		t.Fatalf("private key in prompt: %+v", d)
	}
	// Envelope metadata (not looked at by the secrets rules): a token and the
	// descriptor's redact field.
	d = send(protocol.EventPreAction, `{"tool_name":"bash","arguments":{"command":"ls"}}`,
		`{"customer":{"ssn":"`+s["descriptor"]+`"},"note":"`+s["slack_token"]+`"}`)
	if d.Kind != protocol.DecisionAllow {
		t.Fatalf("clean call with secrets in metadata: %+v", d)
	}
	// post_action result (a notification).
	ev, _ := c.NewEvent(protocol.EventPostAction, json.RawMessage(`{"tool_name":"bash","result":"`+privateKey+`"}`))
	if err := c.NotifyEvent(ctx, ev); err != nil {
		t.Fatal(err)
	}
	// memory_recall query (a typed event) and ahp/query.
	rev, _ := c.NewEvent(protocol.EventMemoryRecall, json.RawMessage(`{"session_id":"redact-s","query":"`+s["github_token"]+`","memory_type":"fact","max_results":3,"working_directory":"."}`))
	var md protocol.MemoryRecallDecision
	if err := c.SendTyped(ctx, rev, &md); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Query(ctx, "lookup "+s["stripe_key"], json.RawMessage(`{"k":"api_key=`+s["api_key"]+`"}`)); err != nil {
		t.Fatal(err)
	}

	// An escalation waiting for approval, its metadata holding the token of
	// the first call: the approval is stored while the agent waits.
	ec := dial()
	escDone := make(chan protocol.Decision, 1)
	go func() {
		ev, _ := ec.NewEvent(protocol.EventPreAction, json.RawMessage(`{"tool_name":"bash","arguments":{"command":"terraform apply -auto-approve"}}`))
		ev.Metadata = json.RawMessage(`{"deploy_token":"` + s["github_token"] + `","customer":{"ssn":"` + s["descriptor"] + `"}}`)
		d, _ := ec.SendEvent(ctx, ev)
		escDone <- d
	}()
	waitFor(t, func() bool { return strings.Contains(logs.String(), "waiting for approval") })
	time.Sleep(200 * time.Millisecond) // the pending approval is committed before the log line; leave margin

	// While the harness runs: database, WAL and shared memory.
	if l := leaks(secretList(), dirFiles(t, data)); len(l) > 0 {
		t.Errorf("secrets in the data directory while the harness runs:\n%s", strings.Join(l, "\n"))
	}
	_ = ec.Close() // the waiting agent goes away: the approval expires, the record is written
	select {
	case <-escDone:
	case <-time.After(10 * time.Second):
		t.Fatal("the escalation never ended")
	}
	waitFor(t, func() bool {
		out, _ := exec.Command(bin, "audit", "query", "--data-dir", data, "--rule", "approvals.infrastructure_change", "--json").Output()
		return strings.Contains(string(out), "deploy_token")
	})
	// A second observer connects at the end and takes the snapshots (the
	// session's timeline with events inline, the approvals).
	late := observe("ahp-root://", "ahp-session:/redact-s")
	defer late.CloseNow()
	waitFor(t, func() bool { return strings.Count(observed.String(), `"timeline":`) >= 2 })
	if !strings.Contains(observed.String(), "[REDACTED:github_token:") {
		t.Errorf("the observers never saw a redacted token; got:\n%.2000s", observed.String())
	}
	_ = c.Close()
	stop()

	export, err := exec.Command(bin, "audit", "export", "--data-dir", data).Output()
	if err != nil {
		t.Fatal(err)
	}
	blobs := dirFiles(t, data)
	blobs["export"] = export
	blobs["log"] = []byte(logs.String())
	blobs["observer stream"] = []byte(observed.String())
	if l := leaks(secretList(), blobs); len(l) > 0 {
		t.Errorf("secrets left after the run:\n%s", strings.Join(l, "\n"))
	}
	for _, want := range []string{`"redacted":["field","github_token"]`, `"redacted":["aws_access_key","aws_secret_key"]`, `"redacted":["private_key"]`} {
		if !strings.Contains(string(export), want) {
			t.Errorf("export lacks %s", want)
		}
	}

	// Fingerprints: the token of the first call, the memory_recall query and
	// the escalation's metadata is one secret with one fingerprint, the one
	// the data directory's key gives.
	key, err := redact.LoadKey(data)
	if err != nil {
		t.Fatal(err)
	}
	red, err := redact.New(redact.Options{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	marker := "[REDACTED:github_token:" + red.Fingerprint(s["github_token"]) + "]"
	var where []string
	for _, line := range strings.Split(strings.TrimSpace(string(export)), "\n") {
		if strings.Contains(line, marker) {
			var r struct {
				EventType string `json:"event_type"`
			}
			_ = json.Unmarshal([]byte(line), &r)
			where = append(where, r.EventType)
		}
	}
	if strings.Join(where, ",") != "pre_action,memory_recall,pre_action" {
		t.Errorf("%s found in %v; want the first call, the memory_recall and the escalation", marker, where)
	}
	all := regexp.MustCompile(`\[REDACTED:github_token:([0-9a-f]{8})\]`).FindAllStringSubmatch(string(export), -1)
	for _, m := range all {
		if "[REDACTED:github_token:"+m[1]+"]" != marker {
			t.Errorf("the same token has another fingerprint: %s", m[0])
		}
	}
	if n := strings.Count(string(export), "[REDACTED:slack_token:"+red.Fingerprint(s["slack_token"])+"]"); n != 2 {
		t.Errorf("slack token marker appears %d times, want 2 (arguments and metadata)", n)
	}

	// Replay: the redacted records decide as they did live (same packs: the
	// configuration turns approvals on).
	empty := filepath.Join(dir, "empty.yaml")
	if err := os.WriteFile(empty, []byte("rules: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "replay", "--config", cfg, "--data-dir", data, "--policy", empty, "--strict", "--fail-on-change").CombinedOutput()
	if err != nil {
		t.Errorf("replay of the redacted records changed decisions: %v\n%s", err, out)
	}
}

// namedSecrets are the secrets of issue 24: values named after an
// underscore (OPENAI_API_KEY=…), the key formats of OpenAI, Anthropic,
// Stripe and Google, the argument of aws configure set, and an AWS secret
// key written beside its access key id.
var namedSecrets = map[string]string{
	"openai":        "sk-proj-" + strings.Repeat("Pq7Lm2Zx", 6),
	"anthropic":     "sk-ant-" + "api03-" + strings.Repeat("Wb3_Nc4-Rt9z", 8) + "AA",
	"anthropic_var": "Hk4mZ7qL2xR9vT1wB6nC",
	"stripe":        "sk_" + "live_" + "51Kq2WmZ7xLv9Rt3Nc8Bd4Hf",
	"google_secret": "Tq8vL3mZ1xK7wR5nB2cD",
	"github_token":  "Gz5kW8mQ2vL9xR3tN7bC",
	"aws_configure": "Nd4" + "kQ/7mZpL2wX8vC1rT5gH3jY6sB0fK+eU9aW2q",
	"aws_pair":      "Ry6" + "bN/3kQmW9zL1xV4tC8pH5jF2sG7dK+uA0eT6w",
	"env_member":    "Vc2nM8qZ4xL6wR1tK9bH",
}

// TestRedactionEndToEndNamedSecrets sends the secrets of issue 24 to ahp
// serve with the default packs: every event is blocked, and no secret is
// in the data directory, the audit export or the observer stream (what
// the dashboard shows); each is replaced by its marker.
func TestRedactionEndToEndNamedSecrets(t *testing.T) {
	bin := e2eBinary(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	sock := filepath.Join(dir, "h.sock")
	admin := "127.0.0.1:" + strconv.Itoa(freePort(t))
	srv := exec.Command(bin, "serve", "--data-dir", data, "--listen", "unix:"+sock, "--admin", "http://"+admin)
	srv.Dir = dir
	logs := &syncBuffer{}
	srv.Stderr, srv.Stdout = logs, logs
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		_ = srv.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- srv.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = srv.Process.Kill()
			t.Error("serve did not stop on SIGINT")
		}
	}
	defer stop()
	deadline := time.Now().Add(20 * time.Second)
	for !accepting(sock) {
		if time.Now().After(deadline) {
			t.Fatalf("harness never accepted; log: %s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, "unix:"+sock, transport.DialOptions{}, client.Options{SessionID: "named-s", AgentID: "worker", Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Handshake(ctx); err != nil {
		t.Fatal(err)
	}
	s := namedSecrets
	bashJSON := func(cmd string) string {
		b, _ := json.Marshal(map[string]any{"tool_name": "bash", "arguments": map[string]any{"command": cmd}})
		return string(b)
	}
	events := []struct {
		typ     protocol.EventType
		payload string
	}{
		{protocol.EventPreAction, bashJSON("OPENAI_API_KEY=" + s["openai"] + " python app.py")},
		{protocol.EventPreAction, bashJSON("export ANTHROPIC_API_KEY=" + s["anthropic_var"] + " && claude -p hi")},
		{protocol.EventPrePrompt, `{"prompt":"the key is ` + s["anthropic"] + `"}`},
		{protocol.EventPreAction, bashJSON("STRIPE_SECRET_KEY=" + s["stripe"] + " npm start")},
		{protocol.EventPreAction, `{"tool_name":"Write","arguments":{"file_path":".env","content":"GOOGLE_CLIENT_SECRET=` + s["google_secret"] + `\nGITHUB_TOKEN=` + s["github_token"] + `\n"}}`},
		{protocol.EventPreAction, bashJSON("aws configure set aws_secret_access_key " + s["aws_configure"])},
		{protocol.EventPrePrompt, `{"prompt":"use AKIA` + "ZQ7MN2VRK9WBC4DN" + ` with secret ` + s["aws_pair"] + `"}`},
		{protocol.EventPreAction, `{"tool_name":"deploy","arguments":{"env":{"OPENAI_API_KEY":"` + s["env_member"] + `"}}}`},
	}
	for _, e := range events {
		ev, err := c.NewEvent(e.typ, json.RawMessage(e.payload))
		if err != nil {
			t.Fatal(err)
		}
		d, err := c.SendEvent(ctx, ev)
		if err != nil {
			t.Fatalf("%s: %v", e.payload, err)
		}
		if d.Kind != protocol.DecisionBlock || !strings.Contains(d.Reason, "secret") {
			t.Errorf("%.60s…: %s (%q), want blocked by the secrets pack", e.payload, d.Kind, d.Reason)
		}
	}
	// An ordinary command that names secrets without holding one passes.
	ev, _ := c.NewEvent(protocol.EventPreAction, json.RawMessage(bashJSON(`export GITHUB_TOKEN=$(./scripts/ci-token.sh) && API_KEY="${API_KEY}" make test`)))
	if d, err := c.SendEvent(ctx, ev); err != nil || d.Kind != protocol.DecisionAllow {
		t.Errorf("ordinary command: %+v %v", d, err)
	}

	// What the dashboard shows: an observer's snapshot of the session.
	tokenBytes, err := os.ReadFile(filepath.Join(data, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	ws, _, err := websocket.Dial(ctx, "ws://"+admin+"/observe", &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Bearer " + strings.TrimSpace(string(tokenBytes))}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	ws.SetReadLimit(64 << 20)
	observed := &syncBuffer{}
	go func() {
		for {
			_, b, err := ws.Read(ctx)
			if err != nil {
				return
			}
			_, _ = observed.Write(append(b, '\n'))
		}
	}()
	init, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"channel": "ahp-root://", "protocolVersions": []string{"1.0.0"}, "clientId": "named-secrets-test",
		"initialSubscriptions": []string{"ahp-root://", "ahp-session:/named-s"}}})
	if err := ws.Write(ctx, websocket.MessageText, init); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return strings.Contains(observed.String(), `"timeline":`) })
	_ = c.Close()
	stop()

	export, err := exec.Command(bin, "audit", "export", "--data-dir", data).Output()
	if err != nil {
		t.Fatal(err)
	}
	blobs := dirFiles(t, data)
	blobs["export"] = export
	blobs["observer stream"] = []byte(observed.String())
	blobs["log"] = []byte(logs.String())
	var all []string
	for _, v := range s {
		all = append(all, v)
	}
	if l := leaks(all, blobs); len(l) > 0 {
		t.Errorf("secrets stored:\n%s", strings.Join(l, "\n"))
	}
	key, err := redact.LoadKey(data)
	if err != nil {
		t.Fatal(err)
	}
	red, err := redact.New(redact.Options{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	for name, kind := range map[string]string{
		"openai": "openai_key", "anthropic": "anthropic_key", "anthropic_var": "api_key", "stripe": "stripe_key",
		"google_secret": "api_key", "github_token": "api_key", "aws_configure": "aws_secret_key",
		"aws_pair": "aws_secret_key", "env_member": "api_key",
	} {
		marker := "[REDACTED:" + kind + ":" + red.Fingerprint(s[name]) + "]"
		if !strings.Contains(string(export), marker) {
			t.Errorf("%s: export lacks %s", name, marker)
		}
	}
	if !strings.Contains(observed.String(), "[REDACTED:openai_key:") {
		t.Errorf("the observer snapshot shows no redacted OpenAI key:\n%.3000s", observed.String())
	}
}
