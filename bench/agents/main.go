// Command agents drives one harness with many agents at once. It starts
// `ahp serve` (or uses a running one), then either opens N idle,
// handshaken connections and reports the harness's resident memory before
// and after and the cost per connection, or runs M busy agents, each with
// one event in flight, and reports decisions per second, latency
// percentiles and how evenly the decisions were spread over the agents.
//
// It connects only to loopback addresses and Unix sockets, and its counts
// and durations are bounded. Raise the file limit first: each connection
// is a file descriptor in both processes.
//
//	ulimit -n 65536
//	go build -o /tmp/agents ./bench/agents && go build -o /tmp/ahp ./cmd/ahp
//	/tmp/agents -ahp /tmp/ahp -transport unix -idle 10000
//	/tmp/agents -ahp /tmp/ahp -transport ws -busy 2000 -d 10s
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/transport"
	"github.com/ahp-go/ahp/transport/grpctransport"
	"github.com/ahp-go/ahp/transport/wstransport"
)

// Bounds on what one run may ask for.
const (
	maxIdle     = 50000
	maxBusy     = 10000
	maxDuration = 10 * time.Minute
)

const payload = `{"action_type":"tool_call","tool_name":"bash","arguments":{"command":"ls -la /workspace/project"}}`

type config struct {
	transport string
	bin       string
	addr      string
	pid       int
	serveArgs string
	idle      int
	busy      int
	duration  time.Duration
	parallel  int
	settle    time.Duration
}

func main() {
	var c config
	flag.StringVar(&c.transport, "transport", "unix", "unix, ws or grpc")
	flag.StringVar(&c.bin, "ahp", "", "ahp binary to start as the harness (ahp serve on a fresh data directory)")
	flag.StringVar(&c.addr, "addr", "", "address of a running harness instead (unix:PATH, ws://127.0.0.1:PORT/ahp, grpc://127.0.0.1:PORT); loopback only")
	flag.IntVar(&c.pid, "pid", 0, "process id of the running harness given by -addr, for its memory")
	flag.StringVar(&c.serveArgs, "serve-args", "--admin off", "extra arguments for ahp serve")
	flag.IntVar(&c.idle, "idle", 0, "open this many idle handshaken connections and report the memory they cost")
	flag.IntVar(&c.busy, "busy", 0, "run this many busy agents, one event in flight each")
	flag.DurationVar(&c.duration, "d", 10*time.Second, "how long the busy agents run")
	flag.IntVar(&c.parallel, "parallel", 64, "connections opened at the same time")
	flag.DurationVar(&c.settle, "settle", 5*time.Second, "how long the connections stay idle before the memory is read (the reading before them waits at most 3 s)")
	flag.Parse()
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "agents:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	switch {
	case c.idle <= 0 && c.busy <= 0:
		return errors.New("give -idle N or -busy M")
	case c.idle > maxIdle:
		return fmt.Errorf("-idle %d: at most %d", c.idle, maxIdle)
	case c.busy > maxBusy:
		return fmt.Errorf("-busy %d: at most %d", c.busy, maxBusy)
	case c.duration <= 0 || c.duration > maxDuration:
		return fmt.Errorf("-d %v: want a duration in (0, %v]", c.duration, maxDuration)
	case c.parallel <= 0 || c.parallel > 1024:
		return fmt.Errorf("-parallel %d: want 1 to 1024", c.parallel)
	}
	h, err := startHarness(c)
	if err != nil {
		return err
	}
	defer h.stop()
	if c.idle > 0 {
		if err := idle(c, h); err != nil {
			return err
		}
	}
	if c.busy > 0 {
		return busy(c, h)
	}
	return nil
}

// harness is the harness under test.
type harness struct {
	addr string
	pid  int
	stop func()
}

// startHarness starts ahp serve listening on the chosen transport, or
// checks the address of a running one.
func startHarness(c config) (*harness, error) {
	if c.addr != "" {
		if err := loopbackOnly(c.addr); err != nil {
			return nil, err
		}
		return &harness{addr: c.addr, pid: c.pid, stop: func() {}}, nil
	}
	if c.bin == "" {
		return nil, errors.New("give -ahp BINARY or -addr ADDRESS")
	}
	dir, err := os.MkdirTemp("", "agents-")
	if err != nil {
		return nil, err
	}
	var listen, addr string
	switch c.transport {
	case "unix":
		listen = "unix:" + filepath.Join(dir, "h.sock")
		addr = listen
	case "ws", "grpc":
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		hp := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if c.transport == "ws" {
			listen, addr = "ws://"+hp, "ws://"+hp+"/ahp"
		} else {
			listen, addr = "grpc://"+hp, "grpc://"+hp
		}
	default:
		return nil, fmt.Errorf("-transport %q: want unix, ws or grpc", c.transport)
	}
	args := []string{"serve", "--listen", listen, "--data-dir", filepath.Join(dir, "data"), "--log-level", "error"}
	extra, err := transport.SplitCommand(c.serveArgs)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(c.bin, append(args, extra...)...)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	h := &harness{addr: addr, pid: cmd.Process.Pid, stop: func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		_ = os.RemoveAll(dir)
	}}
	deadline := time.Now().Add(20 * time.Second)
	for {
		a, err := dial(context.Background(), c.transport, addr)
		if err == nil {
			_ = a.Close()
			return h, nil
		}
		if time.Now().After(deadline) {
			h.stop()
			return nil, fmt.Errorf("harness not ready after 20 s: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// loopbackOnly refuses addresses that are not a Unix socket or loopback.
func loopbackOnly(addr string) error {
	if strings.HasPrefix(addr, "unix:") {
		return nil
	}
	u, err := url.Parse(addr)
	if err != nil {
		return err
	}
	ip := net.ParseIP(u.Hostname())
	if u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("-addr %s: only loopback addresses and Unix sockets", addr)
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// dial opens one agent connection and performs the handshake.
func dial(ctx context.Context, kind, addr string, id ...int) (*client.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	opts := transport.DialOptions{Timeout: 30 * time.Second}
	var conn transport.Conn
	var err error
	switch kind {
	case "ws":
		conn, err = wstransport.Dial(ctx, addr, opts)
	case "grpc":
		conn, err = grpctransport.Dial(ctx, addr, opts)
	default:
		conn, err = transport.Dial(ctx, addr, opts)
	}
	if err != nil {
		return nil, err
	}
	n := 0
	if len(id) > 0 {
		n = id[0]
	}
	cl := client.New(conn, client.Options{
		SessionID: "agents-" + strconv.Itoa(n), AgentID: "agent-" + strconv.Itoa(n),
		FailMode: client.FailError, Timeout: 30 * time.Second,
	})
	if _, err := cl.Handshake(ctx); err != nil {
		_ = cl.Close()
		return nil, err
	}
	return cl, nil
}

// openAll opens n handshaken connections, parallel at a time.
func openAll(c config, h *harness, n int) ([]*client.Client, error) {
	out := make([]*client.Client, n)
	var next atomic.Int64
	var firstErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range c.parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				cl, err := dial(context.Background(), c.transport, h.addr, i)
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("connection %d: %w", i+1, err)
					}
					mu.Unlock()
					next.Store(int64(n))
					return
				}
				out[i] = cl
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		closeAll(out)
		return nil, firstErr
	}
	return out, nil
}

func closeAll(cls []*client.Client) {
	var wg sync.WaitGroup
	for _, cl := range cls {
		if cl != nil {
			wg.Add(1)
			go func() { defer wg.Done(); _ = cl.Close() }()
		}
	}
	wg.Wait()
}

// rssKB reads the resident set size of pid from /proc.
func rssKB(pid int) (int, error) {
	if pid == 0 {
		return 0, errors.New("no harness process id (give -pid with -addr)")
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		}
	}
	return 0, errors.New("no VmRSS in /proc status")
}

// idle opens c.idle connections and reports what they cost.
func idle(c config, h *harness) error {
	time.Sleep(min(c.settle, 3*time.Second))
	before, err := rssKB(h.pid)
	if err != nil {
		return err
	}
	t0 := time.Now()
	cls, err := openAll(c, h, c.idle)
	if err != nil {
		return err
	}
	opened := time.Since(t0)
	time.Sleep(c.settle)
	after, err := rssKB(h.pid)
	if err != nil {
		return err
	}
	// The agents are still there: one event on a few of them proves it.
	ok := 0
	for _, i := range []int{0, len(cls) / 2, len(cls) - 1} {
		if _, err := cls[i].Event(context.Background(), protocol.EventPreAction, []byte(payload)); err == nil {
			ok++
		}
	}
	fmt.Printf("%s idle: n=%d opened in %v; harness RSS %.1f MB -> %.1f MB; %.1f KB per connection; %d/3 still answered\n",
		c.transport, c.idle, opened.Round(time.Millisecond), float64(before)/1024, float64(after)/1024,
		float64(after-before)/float64(c.idle), ok)
	closeAll(cls)
	return nil
}

// busy runs c.busy agents, one event in flight each, for c.duration.
func busy(c config, h *harness) error {
	cls, err := openAll(c, h, c.busy)
	if err != nil {
		return err
	}
	defer closeAll(cls)
	per := make([]int, len(cls))
	lats := make([][]time.Duration, len(cls))
	var failed atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), c.duration)
	defer cancel()
	var wg sync.WaitGroup
	start := time.Now()
	for i, cl := range cls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ev, _ := cl.NewEvent(protocol.EventPreAction, []byte(payload))
			for ctx.Err() == nil {
				t0 := time.Now()
				if _, err := cl.SendEvent(context.Background(), ev); err != nil {
					failed.Add(1)
					return
				}
				lats[i] = append(lats[i], time.Since(t0))
				per[i]++
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	if len(all) == 0 {
		return errors.New("no decision came back")
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	sort.Ints(per)
	p := func(q float64) time.Duration { return all[int(q*float64(len(all)-1))].Round(10 * time.Microsecond) }
	fmt.Printf("%s busy: agents=%d decisions=%d in %v: %.0f decisions/s p50=%v p99=%v; per agent min %d median %d max %d; failed agents %d\n",
		c.transport, len(cls), len(all), el.Round(time.Millisecond), float64(len(all))/el.Seconds(), p(0.50), p(0.99),
		per[0], per[len(per)/2], per[len(per)-1], failed.Load())
	return nil
}
