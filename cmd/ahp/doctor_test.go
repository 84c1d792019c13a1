//go:build unix

package main

import (
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
)

// With the pack off and a watched policy file anyone can write, ahp doctor
// fails and names a fix for each; with both fixed, those checks pass.
func TestDoctorReportsUnsafeSetup(t *testing.T) {
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	policy := filepath.Join(dir, "team.yaml")
	if err := os.WriteFile(policy, []byte("rules: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(policy, 0o666); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "ahp.yaml")
	write := func(text string) {
		if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("data_dir: " + data + "\nlisten: [unix:" + filepath.Join(dir, "h.sock") + "]\npolicy:\n  files: [" + policy + "]\n  watch: true\n  packs: {self_protection: false}\n")
	var out strings.Builder
	err = runDoctor(&out, &doctorOptions{configFile: cfg, agentUser: me.Username, dir: dir, home: dir, system: dir})
	if ec, ok := err.(*exitError); !ok || ec.code != 1 {
		t.Fatalf("exit: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		"[FAIL] the self_protection pack is off",
		"[FAIL] agents run as the harness's user",
		"[FAIL] file " + policy + " is writable by other users (mode 0666)",
		"fix: chmod go-w " + policy,
		"[FAIL] policy.watch reloads " + policy,
		"[warn] the agent's user " + me.Username + " can overwrite the ahp executable",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}

	if err := os.Chmod(policy, 0o600); err != nil {
		t.Fatal(err)
	}
	write("data_dir: " + data + "\nlisten: [unix:" + filepath.Join(dir, "h.sock") + "]\npolicy:\n  files: [" + policy + "]\n")
	out.Reset()
	_ = runDoctor(&out, &doctorOptions{configFile: cfg, agentUser: me.Username, dir: dir, home: dir, system: dir})
	for _, want := range []string{"[ok]   the self_protection pack is on", "[ok]   file " + policy} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("fixed report lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "policy.watch reloads") {
		t.Errorf("watch reported while off:\n%s", out.String())
	}
}
