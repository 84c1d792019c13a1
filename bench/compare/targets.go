package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ahp-go/ahp/transport"
	_ "github.com/ahp-go/ahp/transport/grpctransport" // grpc:// dialer
	_ "github.com/ahp-go/ahp/transport/wstransport"   // ws:// dialer
)

// maxResponse bounds every response the driver reads.
const maxResponse = 1 << 20

// target is one configuration of the race: a harness, how it is reached
// and whether it records its decisions.
type target struct {
	Name   string // stable key, e.g. "ahp/unix/disk"
	Label  string // for the table and the chart
	Family string // ahp, opa or python
	Ref    string // Name of the row this one is compared with ("" for none)
	// notScenario marks a row that does not decide with the scenario's
	// policy (the probes are not sent to it).
	notScenario bool
	start       func(ctx context.Context, env *env) (*running, error)
}

// env holds what every target needs: the binaries and the scenario files.
type env struct {
	ahp, opa, python, harnessPy string
	scenario                    string // directory of policy.yaml, config.yaml, policy.rego, opa-log.yaml
	tmp                         string // scratch directory on disk
}

// agent is one agent's connection: it sends a message and waits for the answer.
type agent interface {
	do(ctx context.Context, msg []byte) ([]byte, error)
	close()
}

// running is a started target.
type running struct {
	newAgent func(ctx context.Context) (agent, error)
	wrap     func(msg []byte) []byte // the body sent for a message (OPA wraps it in {"input": …})
	pid      int                     // server process, 0 when each agent has its own (stdio)
	logFile  string                  // OPA's decision log, for its size
	stop     func()
}

func targets(protocolOnly bool) []target {
	var ts []target
	if protocolOnly {
		// Not the scenario: the built-in baseline decides, nothing is
		// recorded. It shows what the protocol layer alone costs.
		ts = append(ts,
			target{Name: "ahp/unix/protocol-only", Label: "ahp · Unix socket · protocol only (not the scenario)", Family: "ahp", notScenario: true, start: startAHP("unix", false, "--protocol-only")},
			target{Name: "ahp/http/protocol-only", Label: "ahp · HTTP · protocol only (not the scenario)", Family: "ahp", notScenario: true, start: startAHP("http", false, "--protocol-only")},
			target{Name: "ahp/stdio/protocol-only", Label: "ahp · stdio · protocol only (not the scenario)", Family: "ahp", notScenario: true, start: startAHP("stdio", false, "--protocol-only")},
		)
	}
	for _, tr := range []struct{ key, label string }{
		{"unix", "Unix socket"}, {"http", "HTTP"}, {"ws", "WebSocket"}, {"grpc", "gRPC"}, {"stdio", "stdio"},
	} {
		ts = append(ts,
			target{Name: "ahp/" + tr.key + "/ram", Label: "ahp · " + tr.label + " · audit in RAM", Family: "ahp", start: startAHP(tr.key, false)},
			target{Name: "ahp/" + tr.key + "/disk", Label: "ahp · " + tr.label + " · durable audit", Family: "ahp", Ref: "ahp/" + tr.key + "/ram", start: startAHP(tr.key, true)},
		)
	}
	ts = append(ts,
		target{Name: "opa/http/nolog", Label: "OPA · HTTP · no decision log", Family: "opa", Ref: "ahp/http/ram", start: startOPA(false)},
		target{Name: "opa/http/log", Label: "OPA · HTTP · decision log to file", Family: "opa", Ref: "ahp/http/ram", start: startOPA(true)},
		target{Name: "python/stdio", Label: "Python · stdio · no audit", Family: "python", Ref: "ahp/stdio/ram", start: startPython},
	)
	return ts
}

// dataDir makes a data directory for ahp serve: on disk for the durable
// audit (every blocking decision fsynced), in /dev/shm (tmpfs: the same
// SQLite work, fsync costs nothing) otherwise.
func dataDir(e *env, durable bool) (string, error) {
	if durable {
		return os.MkdirTemp(e.tmp, "ahp-disk-")
	}
	return os.MkdirTemp("/dev/shm", "ahp-compare-")
}

func ahpArgs(e *env, listen, dir string, extra []string) []string {
	return append([]string{"serve", "--config", filepath.Join(e.scenario, "config.yaml"),
		"--policy", filepath.Join(e.scenario, "policy.yaml"), "--listen", listen, "--data-dir", dir}, extra...)
}

func startAHP(tr string, durable bool, extra ...string) func(ctx context.Context, e *env) (*running, error) {
	return func(ctx context.Context, e *env) (*running, error) {
		if tr == "stdio" {
			return startAHPStdio(e, durable, extra)
		}
		dir, err := dataDir(e, durable)
		if err != nil {
			return nil, err
		}
		var listen, addr string
		switch tr {
		case "unix":
			listen = "unix:" + filepath.Join(dir, "h.sock")
			addr = listen
		default:
			port, err := freePort()
			if err != nil {
				return nil, err
			}
			hostPort := "127.0.0.1:" + strconv.Itoa(port)
			switch tr {
			case "http":
				listen, addr = "http://"+hostPort, "http://"+hostPort+"/ahp"
			case "ws":
				listen, addr = "ws://"+hostPort, "ws://"+hostPort+"/ahp"
			case "grpc":
				listen, addr = "grpc://"+hostPort, "grpc://"+hostPort
			}
		}
		cmd := exec.Command(e.ahp, ahpArgs(e, listen, dir, extra)...)
		cmd.Dir = dir
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		r := &running{pid: cmd.Process.Pid, stop: func() { stopProcess(cmd); _ = os.RemoveAll(dir) }}
		if err := waitReady(ctx, listen); err != nil {
			r.stop()
			return nil, fmt.Errorf("ahp serve --listen %s: %w", listen, err)
		}
		if tr == "http" {
			r.newAgent = httpAgentFor(addr)
		} else {
			r.newAgent = connAgentFor(addr)
		}
		return r, nil
	}
}

// startAHPStdio gives each agent its own ahp serve --listen stdio, with
// its own data directory, as an agent that starts its harness does.
func startAHPStdio(e *env, durable bool, extra []string) (*running, error) {
	var dirs []string
	r := &running{stop: func() {
		for _, d := range dirs {
			_ = os.RemoveAll(d)
		}
	}}
	r.newAgent = func(ctx context.Context) (agent, error) {
		dir, err := dataDir(e, durable)
		if err != nil {
			return nil, err
		}
		dirs = append(dirs, dir)
		args := append([]string{e.ahp}, ahpArgs(e, "stdio", dir, extra)...)
		return dialConn(ctx, "stdio:"+quoteCommand(args))
	}
	return r, nil
}

func startPython(_ context.Context, e *env) (*running, error) {
	return &running{stop: func() {}, newAgent: connAgentFor("stdio:" + quoteCommand([]string{e.python, e.harnessPy}))}, nil
}

func startOPA(decisionLog bool) func(ctx context.Context, e *env) (*running, error) {
	return func(ctx context.Context, e *env) (*running, error) {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		hostPort := "127.0.0.1:" + strconv.Itoa(port)
		args := []string{"run", "--server", "--addr", hostPort, "--disable-telemetry"}
		var out io.Writer = io.Discard
		var logFile string
		var f *os.File
		if decisionLog {
			logFile = filepath.Join(e.tmp, "opa-decisions-"+strconv.Itoa(port)+".log")
			if f, err = os.Create(logFile); err != nil {
				return nil, err
			}
			out = f
			args = append(args, "--log-level", "info", "--log-format", "json", "--config-file", filepath.Join(e.scenario, "opa-log.yaml"))
		} else {
			args = append(args, "--log-level", "error")
		}
		args = append(args, filepath.Join(e.scenario, "policy.rego"))
		cmd := exec.Command(e.opa, args...)
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		r := &running{pid: cmd.Process.Pid, logFile: logFile, stop: func() {
			stopProcess(cmd)
			if f != nil {
				_ = f.Close()
				_ = os.Remove(logFile)
			}
		}}
		if err := waitReady(ctx, "http://"+hostPort+"/health"); err != nil {
			r.stop()
			return nil, fmt.Errorf("opa run --server: %w", err)
		}
		r.newAgent = httpAgentFor("http://" + hostPort + "/v1/data/ahp/decision")
		r.wrap = func(msg []byte) []byte {
			b := make([]byte, 0, len(msg)+10)
			return append(append(append(b, `{"input":`...), msg...), '}')
		}
		return r, nil
	}
}

func stopProcess(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitReady waits up to 20 s for a server: a Unix socket that accepts, a
// TCP port that accepts, or an HTTP URL that answers 200.
func waitReady(ctx context.Context, addr string) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		var err error
		switch {
		case strings.HasPrefix(addr, "unix:"):
			var c net.Conn
			if c, err = net.Dial("unix", strings.TrimPrefix(addr, "unix:")); err == nil {
				c.Close()
			}
		case strings.HasSuffix(addr, "/health"):
			var resp *http.Response
			if resp, err = http.Get(addr); err == nil {
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("health: %s", resp.Status)
				}
			}
		default:
			_, hostPort, _ := strings.Cut(addr, "://")
			var c net.Conn
			if c, err = net.Dial("tcp", hostPort); err == nil {
				c.Close()
			}
		}
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after 20s: %w", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// quoteCommand writes args as one command line that transport.SplitCommand
// reads back.
func quoteCommand(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// connAgent speaks to a harness over a message connection (Unix socket,
// WebSocket, gRPC stream, stdio) of the transport package: one message
// out, one in.
type connAgent struct{ c transport.Conn }

func connAgentFor(addr string) func(ctx context.Context) (agent, error) {
	return func(ctx context.Context) (agent, error) { return dialConn(ctx, addr) }
}

func dialConn(ctx context.Context, addr string) (agent, error) {
	c, err := transport.Dial(ctx, addr, transport.DialOptions{MaxMessageBytes: maxResponse, Timeout: 20 * time.Second})
	if err != nil {
		return nil, err
	}
	a := &connAgent{c}
	hctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	resp, err := a.do(hctx, handshake)
	if err == nil && !bytes.Contains(resp, []byte(`"protocol_version"`)) {
		err = fmt.Errorf("handshake refused: %s", truncate(resp))
	}
	if err != nil {
		a.close()
		return nil, fmt.Errorf("%s: %w", addr, err)
	}
	return a, nil
}

func (a *connAgent) do(ctx context.Context, msg []byte) ([]byte, error) {
	if err := a.c.WriteMessage(ctx, msg); err != nil {
		return nil, err
	}
	return a.c.ReadMessage(ctx)
}

func (a *connAgent) close() { _ = a.c.Close() }

// httpAgent POSTs each message on its own keep-alive connection, as an
// agent with its own HTTP client does; the same code drives our harness
// and OPA.
type httpAgent struct {
	url string
	c   *http.Client
	tr  *http.Transport
}

func httpAgentFor(url string) func(ctx context.Context) (agent, error) {
	return func(context.Context) (agent, error) {
		tr := &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}
		return &httpAgent{url: url, tr: tr, c: &http.Client{Transport: tr, Timeout: 20 * time.Second}}, nil
	}
}

func (a *httpAgent) do(ctx context.Context, msg []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.url, bytes.NewReader(msg))
	if err != nil {
		return nil, err
	}
	req.Header["Content-Type"] = []string{"application/json"}
	resp, err := a.c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %s: %s", resp.Status, truncate(body))
	}
	return body, nil
}

func (a *httpAgent) close() { a.tr.CloseIdleConnections() }

// cpuTime is the user+system CPU time a process has used so far.
func cpuTime(pid int) (time.Duration, error) {
	if pid == 0 {
		return 0, errors.New("no process")
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// Fields after the command name (which is in parentheses and may hold spaces).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("bad /proc stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / time.Duration(clockTicks), nil
}

// clockTicks is USER_HZ, 100 on Linux.
const clockTicks = 100
