package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/store/sqlite"
)

// emptyDataDir returns a data directory holding an empty audit log.
func emptyDataDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	db, err := sqlite.Open(t.Context(), filepath.Join(dir, sqlite.FileName), sqlite.Options{Sync: sqlite.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Every --since takes the same durations: shadow-report's own help
// example (7d) used to be refused while replay took it.
func TestSinceTakesDays(t *testing.T) {
	dir := emptyDataDir(t)
	for _, args := range [][]string{
		{"audit", "shadow-report", "--since", "7d"},
		{"audit", "query", "--since", "7d", "--until", "1d"},
		{"audit", "export", "--since", "30d"},
	} {
		if _, err := runAhp(t, append(args, "--data-dir", dir)...); err != nil {
			t.Errorf("%s: %v", strings.Join(args, " "), err)
		}
	}
	_, err := runAhp(t, "audit", "shadow-report", "--since", "7 days", "--data-dir", dir)
	if err == nil || !strings.Contains(err.Error(), "7d") {
		t.Fatalf("a bad duration names the forms taken: %v", err)
	}
}

// ahp check --config refuses what ahp serve refuses: a listen address of
// an unknown scheme, or without its target.
func TestCheckConfigListen(t *testing.T) {
	write := fileWriter(t, t.TempDir())
	good := write("good.yaml", "listen: [stdio, \"unix:/tmp/x.sock\", \"http://127.0.0.1:8080\", \"grpcs://0.0.0.0:9443\"]\n")
	if out, err := runAhp(t, "check", "--config", good); err != nil || !strings.Contains(out, "OK: configuration") {
		t.Fatalf("good listen: %q %v", out, err)
	}
	for body, want := range map[string]string{
		"listen: [\"tcp://127.0.0.1:9\"]\n": `listen "tcp://127.0.0.1:9": unknown scheme`,
		"listen: [\"unix:\"]\n":             `listen "unix:": needs a path`,
		"listen: [\"http://\"]\n":           `listen "http://": needs a host and port`,
		"listen: [\"127.0.0.1:8080\"]\n":    `unknown scheme`,
	} {
		_, err := runAhp(t, "check", "--config", write("bad.yaml", body))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
}

// Configuration and policy errors name the real line, and an unknown key
// is told in the file's terms with the keys its section takes.
func TestConfigAndPolicyErrors(t *testing.T) {
	write := fileWriter(t, t.TempDir())
	for body, want := range map[string]string{
		"policy:\n  packz: {}\n":                 "line 2: unknown key packz in section policy (valid keys: default, files, mode, packs, params, shadow, watch)",
		"bogus: 1\n":                             "line 1: unknown key bogus at the top level (valid keys: admin, approvals,",
		"log:\n  level: info\n  format: [text\n": "line 3: did not find expected",
		"log:\n  level: info\n\tformat: text\n":  "line 3: found a tab character",
	} {
		_, err := runAhp(t, "check", "--config", write("c.yaml", body))
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "PolicyConfig") {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
	p := write("p.yaml", "rules:\n  - id: a\n    condition: \"true\"\n    outcome: {decision: allow\n")
	var errb strings.Builder
	root := newRootCmd()
	root.SetOut(&errb)
	root.SetErr(&errb)
	root.SetArgs([]string{"check", p})
	_ = root.ExecuteContext(t.Context())
	if !strings.Contains(errb.String(), "p.yaml:4: invalid YAML") {
		t.Errorf("policy syntax error: %s", errb.String())
	}
}

// ahp send's argument errors say what is missing and list the event
// types; an invalid notification is refused before anything is sent; no
// harness at the address asks whether ahp serve runs.
func TestSendErrors(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "none.sock")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{nil, []string{"missing EVENT_TYPE and PAYLOAD_JSON", "pre_action, pre_prompt"}},
		{[]string{"pre_action"}, []string{"missing PAYLOAD_JSON after pre_action"}},
		{[]string{"pre_actoin", "{}"}, []string{`unknown event type "pre_actoin"; want one of pre_action,`, "confirmation"}},
		{[]string{"run_lifecycle", "{}"}, []string{"not a valid run_lifecycle payload, nothing sent", "run_id"}},
		{[]string{"pre_action", "{}"}, []string{"no harness answered\n  unix:" + sock + ": connect:", "is `ahp serve` running?"}},
	} {
		_, err := runAhp(t, append([]string{"send", "--connect", "unix:" + sock}, c.args...)...)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("send %v: %v, want %q", c.args, err, w)
			}
		}
		if err != nil && strings.Contains(err.Error(), "arg(s)") {
			t.Errorf("send %v: %v", c.args, err)
		}
	}
}

// ahp serve makes a missing socket directory (owner only), says "harness
// ready" only once every listener accepts, and never when one fails.
func TestServeReadyAndSocketDirectory(t *testing.T) {
	bin := e2eBinary(t)
	dir := t.TempDir()
	sock := filepath.Join(dir, "home", ".ahp", "ahp.sock") // ~/.ahp does not exist
	srv, stderr := startServeArgs(t, bin, dir, "--listen", "unix:"+sock, "--admin", "off", "--data-dir", filepath.Join(dir, "data"))
	waitFor(t, func() bool { return strings.Contains(stderr.String(), "harness ready") })
	_ = srv.Process.Kill()
	_ = srv.Wait()
	if fi, err := os.Stat(filepath.Dir(sock)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("socket directory: %v %v", fi, err)
	}
	log := stderr.String()
	if i, j := strings.Index(log, "msg=listening"), strings.Index(log, "harness ready"); i < 0 || j < i {
		t.Fatalf("harness ready before listening:\n%s", log)
	}

	// A socket directory that cannot be made: the error names it.
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runAhpIn(t, bin, dir, "serve", "--listen", "unix:"+filepath.Join(blocker, "ahp.sock"), "--admin", "off", "--data-dir", filepath.Join(dir, "data2"))
	if code == 0 || !strings.Contains(errOut, filepath.Join(blocker, "ahp.sock")) || !strings.Contains(errOut, "directory cannot be created") || strings.Contains(errOut, "harness ready") {
		t.Fatalf("socket under a file: exit %d %s", code, errOut)
	}

	// A second listener that cannot listen: start-up fails, never "ready".
	busy := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	first, firstErr := startServeArgs(t, bin, dir, "--listen", busy, "--admin", "off", "--data-dir", filepath.Join(dir, "data3"))
	defer func() { _ = first.Process.Kill(); _ = first.Wait() }()
	waitFor(t, func() bool { return strings.Contains(firstErr.String(), "harness ready") })
	code, _, errOut = runAhpIn(t, bin, dir, "serve", "--listen", "unix:"+filepath.Join(dir, "s2.sock"), "--listen", busy, "--admin", "off", "--data-dir", filepath.Join(dir, "data4"))
	if code == 0 || !strings.Contains(errOut, "address already in use") || strings.Contains(errOut, "harness ready") {
		t.Fatalf("busy port: exit %d %s", code, errOut)
	}
}

// startServeArgs starts ahp with exactly args and returns it with its stderr.
func startServeArgs(t *testing.T, bin, dir string, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve"}, args...)...)
	cmd.Dir = dir
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, stderr
}

// --print-config says which packs run (each with its default) and the
// audit retention in days, and what it prints loads back.
func TestPrintConfigShowsDefaults(t *testing.T) {
	out, err := runAhp(t, "serve", "--print-config")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"    approvals: false\n", "    destructive_shell: true\n", "    filesystem_scope: false\n", "    budgets: false\n", "  max_age: 90d\n", "  retention: 30d\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("--print-config lacks %q:\n%s", want, out)
		}
	}
	p := filepath.Join(t.TempDir(), "ahp.yaml")
	if err := os.WriteFile(p, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := runAhp(t, "check", "--config", p); err != nil || !strings.Contains(got, "OK") {
		t.Fatalf("the printed configuration does not load: %q %v", got, err)
	}
}

// The flags docs/observer-protocol.md names are in ahp serve --help.
func TestServeHelpShowsObserverFlags(t *testing.T) {
	out, err := runAhp(t, "serve", "--help")
	if err != nil || !strings.Contains(out, "--observe-ring") || !strings.Contains(out, "--observe-queue") {
		t.Fatalf("serve --help: %v\n%s", err, out)
	}
}

// ahp doctor does not take admin: "off" (no admin API) for an address
// beyond loopback.
func TestDoctorAdminOff(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "ahp.yaml")
	if err := os.WriteFile(cfg, []byte("data_dir: "+filepath.Join(dir, "data")+"\nadmin: \"off\"\nlisten: [unix:"+filepath.Join(dir, "h.sock")+"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	_ = runDoctor(&out, &doctorOptions{configFile: cfg, dir: dir, home: dir, system: dir})
	if strings.Contains(out.String(), "admin API (off)") {
		t.Fatalf("admin off reported as listening:\n%s", out.String())
	}
}

// fileWriter returns a function that writes a file in dir and returns its
// path, failing the test when it cannot.
func fileWriter(t *testing.T, dir string) func(name, body string) string {
	return func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
}

// ahp check --config reads each notification sink's url_file and url_env
// as ahp serve will: a missing file or an unset variable fails the check,
// naming the sink and the file or variable but never the URL.
func TestCheckConfigNotificationURLSources(t *testing.T) {
	dir := t.TempDir()
	write := fileWriter(t, dir)
	secret := "https://hooks.example.com/services/T000/B000/s3cr3tpart"
	urlFile := write("hook.url", secret+"\n")
	t.Setenv("AHP_TEST_HOOK_URL", secret)
	good := write("good.yaml", "notifications:\n  sinks:\n    - {name: a, format: json, url_file: "+urlFile+"}\n    - {name: b, format: slack, url_env: AHP_TEST_HOOK_URL}\n")
	if out, err := runAhp(t, "check", "--config", good); err != nil || !strings.Contains(out, "notifications: 2 sinks") {
		t.Fatalf("good sinks: %q %v", out, err)
	}
	for body, want := range map[string]string{
		"notifications:\n  sinks:\n    - {name: a, format: json, url_file: " + filepath.Join(dir, "missing.url") + "}\n": "sink a: url_file:",
		"notifications:\n  sinks:\n    - {name: b, format: slack, url_env: AHP_TEST_HOOK_UNSET}\n":                       "environment variable AHP_TEST_HOOK_UNSET is not set",
		"notifications:\n  sinks:\n    - {name: c, format: json, url_file: " + write("empty.url", "\n") + "}\n":          "sink c: url_file " + filepath.Join(dir, "empty.url") + " is empty",
	} {
		_, err := runAhp(t, "check", "--config", write("bad.yaml", body))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("the error shows the URL: %v", err)
		}
	}
}
