// Command hookload measures ahp hook end to end, as a coding agent pays
// for it: it starts the hook command once per call (a fresh process, as
// Claude Code, Codex CLI and Gemini CLI do), writes a PreToolUse input on
// its stdin, and times until the process has exited. It starts its own
// ahp serve on a Unix socket unless -connect is given.
//
//	go build -o /tmp/ahp ./cmd/ahp && go run ./bench/hookload -ahp /tmp/ahp -n 200
package main

import (
	"bytes"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

const input = `{"session_id":"bench","transcript_path":"/tmp/t.jsonl","cwd":"/tmp","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls -la"},"tool_use_id":"toolu_1"}`

func main() {
	bin := flag.String("ahp", "ahp", "the ahp binary")
	hookBin := flag.String("hook", "", "hook command to time instead of \"AHP hook claude-code\" (e.g. a separate binary), run with the same arguments")
	n := flag.Int("n", 200, "hook calls to time")
	warm := flag.Int("warmup", 10, "calls before timing")
	connect := flag.String("connect", "", "harness address (default: start ahp serve on a Unix socket)")
	baseline := flag.Bool("baseline", true, "also time /bin/true and ahp version for comparison")
	flag.Parse()

	addr := *connect
	if addr == "" {
		dir, err := os.MkdirTemp("", "hookload-")
		check(err)
		defer os.RemoveAll(dir)
		sock := filepath.Join(dir, "h.sock")
		srv := exec.Command(*bin, "serve", "--listen", "unix:"+sock, "--admin", "off", "--data-dir", filepath.Join(dir, "data"))
		srv.Stderr = os.Stderr
		check(srv.Start())
		defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
		deadline := time.Now().Add(20 * time.Second)
		for {
			if c, err := net.Dial("unix", sock); err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				check(fmt.Errorf("harness did not start"))
			}
			time.Sleep(20 * time.Millisecond)
		}
		addr = "unix:" + sock
	}
	hookArgs := []string{"hook", "claude-code", "--connect", addr, "--timeout", "10s"}
	name, args := *bin, hookArgs
	if *hookBin != "" {
		name, args = *hookBin, hookArgs[1:]
	}
	label := "ahp hook"
	if *hookBin != "" {
		label = filepath.Base(*hookBin)
	}
	report(label+" (allow)", *n, *warm, func() {
		cmd := exec.Command(name, args...)
		cmd.Stdin = strings.NewReader(input)
		var out bytes.Buffer
		cmd.Stdout = &out
		check(cmd.Run())
		if strings.TrimSpace(out.String()) != "{}" {
			check(fmt.Errorf("unexpected answer %q", out.String()))
		}
	})
	if *baseline {
		report("/bin/true", *n, *warm, func() { check(exec.Command("/bin/true").Run()) })
		report("ahp version", *n, *warm, func() { check(exec.Command(*bin, "version").Run()) })
	}
}

func report(what string, n, warm int, f func()) {
	for range warm {
		f()
	}
	d := make([]time.Duration, n)
	for i := range d {
		start := time.Now()
		f()
		d[i] = time.Since(start)
	}
	slices.Sort(d)
	q := func(p float64) time.Duration { return d[int(p*float64(len(d)-1))].Round(10 * time.Microsecond) }
	fmt.Printf("%-20s n=%d  p50 %v  p90 %v  p99 %v  min %v\n", what, n, q(0.5), q(0.9), q(0.99), d[0].Round(10*time.Microsecond))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "hookload:", err)
		os.Exit(1)
	}
}
