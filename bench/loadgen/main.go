// Command loadgen drives an AHP harness over stdio or a Unix socket and
// reports sequential round-trip latency and pipelined throughput. It talks
// raw newline-delimited JSON-RPC so that the numbers measure the harness,
// not a client library; -client measures through the Go client instead.
//
//	go run ./bench/loadgen -transport unix -ahp ./ahp
//	go run ./bench/loadgen -transport stdio -ahp ./ahp -inflight 64
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/transport"
)

const payload = `{"action_type":"tool_call","tool_name":"bash","arguments":{"command":"ls -la /workspace/project"}}`

func request(id int) []byte {
	return []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"ahp/event","params":{"event_type":"pre_action","session_id":"bench-session","agent_id":"bench-agent","timestamp":"2026-11-21T10:00:00.000Z","depth":0,"payload":` + payload + `}}` + "\n")
}

func main() {
	var (
		trans    = flag.String("transport", "unix", "stdio or unix")
		bin      = flag.String("ahp", "ahp", "path of the ahp binary to start")
		sock     = flag.String("socket", "", "connect to this Unix socket instead of starting a harness")
		seqN     = flag.Int("seq", 20000, "sequential round trips to time")
		pipeN    = flag.Int("n", 500000, "requests in the pipelined run")
		inflight = flag.Int("inflight", 64, "requests in flight in the pipelined run")
		useCli   = flag.Bool("client", false, "measure through the Go client package (many goroutines) instead of raw lines")
		extra    = flag.String("serve-args", "", "extra arguments for ahp serve")
	)
	flag.Parse()
	rw, closeFn, err := connect(*trans, *bin, *sock, *extra)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
	defer closeFn()
	if *useCli {
		runClient(rw, *seqN, *pipeN, *inflight, *trans)
		return
	}
	r := bufio.NewReaderSize(rw, 1<<20)
	w := bufio.NewWriterSize(rw, 1<<20)

	// Warm up.
	roundTrips(r, w, 2000)
	lat := roundTrips(r, w, *seqN)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	p := func(q float64) time.Duration { return lat[int(q*float64(len(lat)-1))] }
	fmt.Printf("%s sequential: n=%d p50=%v p99=%v p99.9=%v\n", *trans, len(lat), p(0.50), p(0.99), p(0.999))

	start := time.Now()
	pipelined(r, w, *pipeN, *inflight)
	el := time.Since(start)
	fmt.Printf("%s pipelined: n=%d inflight=%d %.0f decisions/s\n", *trans, *pipeN, *inflight, float64(*pipeN)/el.Seconds())
}

type rwc interface {
	io.Reader
	io.Writer
}

func connect(trans, bin, sock, extra string) (rwc, func(), error) {
	switch trans {
	case "stdio":
		args := []string{"serve", "--listen", "stdio", "--log-level", "error"}
		if extra != "" {
			a, err := transport.SplitCommand(extra)
			if err != nil {
				return nil, nil, err
			}
			args = append(args, a...)
		}
		cmd := exec.Command(bin, args...)
		cmd.Stderr = os.Stderr
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			return nil, nil, err
		}
		return struct {
				io.Reader
				io.Writer
			}{out, in}, func() {
				_ = in.Close()
				_ = cmd.Wait()
			}, nil
	case "unix":
		var cmd *exec.Cmd
		if sock == "" {
			dir, err := os.MkdirTemp("", "loadgen-")
			if err != nil {
				return nil, nil, err
			}
			sock = filepath.Join(dir, "h.sock")
			args := []string{"serve", "--listen", "unix:" + sock, "--log-level", "error"}
			if extra != "" {
				a, err := transport.SplitCommand(extra)
				if err != nil {
					return nil, nil, err
				}
				args = append(args, a...)
			}
			cmd = exec.Command(bin, args...)
			cmd.Dir = dir
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				return nil, nil, err
			}
		}
		// The socket file appears when it is bound, a moment before the
		// harness listens: dial until it answers, for up to 5 s.
		var c net.Conn
		var err error
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			c, err = net.Dial("unix", sock)
			if err == nil || cmd == nil || time.Now().After(deadline) {
				break
			}
		}
		if err != nil {
			if cmd != nil { // do not leave the harness running
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				_ = os.RemoveAll(filepath.Dir(sock))
			}
			return nil, nil, err
		}
		return c, func() {
			_ = c.Close()
			if cmd != nil {
				_ = cmd.Process.Signal(os.Interrupt)
				_ = cmd.Wait()
				_ = os.RemoveAll(filepath.Dir(sock))
			}
		}, nil
	}
	return nil, nil, fmt.Errorf("unknown transport %q", trans)
}

func roundTrips(r *bufio.Reader, w *bufio.Writer, n int) []time.Duration {
	lat := make([]time.Duration, 0, n)
	reqs := make([][]byte, 64)
	for i := range reqs {
		reqs[i] = request(i)
	}
	for i := 0; i < n; i++ {
		t0 := time.Now()
		_, _ = w.Write(reqs[i%64])
		_ = w.Flush()
		if _, err := r.ReadSlice('\n'); err != nil {
			fmt.Fprintln(os.Stderr, "loadgen: read:", err)
			os.Exit(1)
		}
		lat = append(lat, time.Since(t0))
	}
	return lat
}

func pipelined(r *bufio.Reader, w *bufio.Writer, n, inflight int) {
	sem := make(chan struct{}, inflight)
	done := make(chan struct{})
	go func() {
		for i := 0; i < n; i++ {
			if _, err := r.ReadSlice('\n'); err != nil {
				fmt.Fprintln(os.Stderr, "loadgen: read:", err)
				os.Exit(1)
			}
			<-sem
		}
		close(done)
	}()
	reqs := make([][]byte, 64)
	for i := range reqs {
		reqs[i] = request(i)
	}
	for i := 0; i < n; i++ {
		select {
		case sem <- struct{}{}:
		default:
			_ = w.Flush() // window full: send what is buffered, then wait
			sem <- struct{}{}
		}
		_, _ = w.Write(reqs[i%64])
	}
	_ = w.Flush()
	<-done
}

// runClient measures through the client package: sequential calls, then
// inflight goroutines sharing one Client.
func runClient(rw rwc, seqN, n, inflight int, trans string) {
	conn := transport.NewStreamConn(rw, rw, nil, 0, transport.Info{Transport: trans})
	c := client.New(conn, client.Options{SessionID: "bench-session", AgentID: "bench-agent", FailMode: client.FailError})
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Handshake(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
	ev, _ := c.NewEvent(protocol.EventPreAction, []byte(payload))
	lat := make([]time.Duration, 0, seqN)
	for i := 0; i < seqN; i++ {
		t0 := time.Now()
		if _, err := c.SendEvent(ctx, ev); err != nil {
			fmt.Fprintln(os.Stderr, "loadgen:", err)
			os.Exit(1)
		}
		lat = append(lat, time.Since(t0))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	fmt.Printf("%s client sequential: n=%d p50=%v p99=%v\n", trans, seqN, lat[seqN/2], lat[seqN*99/100])
	start := time.Now()
	var wg sync.WaitGroup
	per := n / inflight
	for g := 0; g < inflight; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				if _, err := c.SendEvent(ctx, ev); err != nil {
					fmt.Fprintln(os.Stderr, "loadgen:", err)
					os.Exit(1)
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	fmt.Printf("%s client pipelined: n=%d goroutines=%d %.0f decisions/s\n", trans, per*inflight, inflight, float64(per*inflight)/el.Seconds())
}
