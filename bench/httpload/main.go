// Command httpload measures AHP over HTTP: N concurrent agents send
// pre_action events over keep-alive connections for a fixed time and the
// decisions per second and latency percentiles are printed. Without -addr
// it serves an allow-everything harness in the same process on 127.0.0.1
// (so client and server share the machine's cores, as in bench/http.md).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"
	"time"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/transport"
	"github.com/ahp-go/ahp/transport/httpserver"
	_ "github.com/ahp-go/ahp/transport/httptransport"
)

const benchKey = "bench-key-0123456789abcdef0123456789"

func main() {
	addr := flag.String("addr", "", "harness URL (http://HOST:PORT/ahp); empty: serve one in this process")
	conc := flag.Int("c", 32, "concurrent agents")
	dur := flag.Duration("d", 10*time.Second, "measurement time")
	warm := flag.Duration("warmup", 2*time.Second, "warm-up time before measuring")
	mode := flag.String("auth", "none", "in-process server: none (no authentication), key (an API key checked against a credentials file) or raw (bare net/http, no AHP: the machine's ceiling)")
	shared := flag.Bool("shared", false, "one client (one connection pool) for all agents instead of one client per agent")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the measurement to this file")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}

	if *mode == "raw" {
		res, err := runRaw(*conc, *warm, *dur)
		if err != nil {
			log.Fatal(err)
		}
		report(*mode, *conc, false, *dur, res)
		return
	}
	key := os.Getenv("AHP_API_KEY")
	url := *addr
	if url == "" {
		var stop func()
		var err error
		url, stop, err = serve(*mode)
		if err != nil {
			log.Fatal(err)
		}
		defer stop()
		if *mode == "key" {
			key = benchKey
		}
	}
	res, err := run(url, key, *conc, *warm, *dur, *shared)
	if err != nil {
		log.Fatal(err)
	}
	report(*mode, *conc, *shared, *dur, res)
}

func report(mode string, conc int, shared bool, dur time.Duration, res *result) {
	fmt.Printf("auth=%s agents=%d shared=%v GOMAXPROCS=%d duration=%v\n", mode, conc, shared, runtime.GOMAXPROCS(0), dur)
	fmt.Printf("decisions=%d errors=%d rate=%.0f/s p50=%v p90=%v p99=%v p99.9=%v max=%v cpu/decision=%v\n",
		res.n, res.errors, res.rate, res.p(0.50), res.p(0.90), res.p(0.99), res.p(0.999), res.max(), res.cpuPerDecision().Round(100*time.Nanosecond))
}

// serve starts an in-process harness that allows everything.
func serve(mode string) (string, func(), error) {
	var a auth.Authenticator = auth.InsecureNoAuth{}
	if mode == "key" {
		st, err := auth.Parse([]byte("principals:\n  - id: bench\n    roles: [agent]\n    api_keys: [\"" + auth.HashSecret(benchKey) + "\"]\n" +
			"  - id: other\n    roles: [agent]\n    api_keys: [\"" + auth.HashSecret("other-key-0123456789abcdef") + "\"]\n"))
		if err != nil {
			return "", nil, err
		}
		a = st
	} else if mode != "none" {
		return "", nil, fmt.Errorf("-auth %q: want none or key", mode)
	}
	srv := server.New(server.BaseHandler{}, server.Options{})
	h, err := httpserver.New(srv, httpserver.Options{Authenticator: a})
	if err != nil {
		return "", nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/ahp", h)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = httpserver.NewServer(mux, httpserver.ServerOptions{}).Serve(ctx, l)
	}()
	return "http://" + l.Addr().String() + "/ahp", func() { cancel(); <-done }, nil
}

type result struct {
	n, errors int
	rate      float64
	lat       []time.Duration
	cpu       time.Duration // process CPU time used during the measurement
}

// cpuPerDecision is the CPU time (client and server together when both
// run in this process) spent per decision.
func (r *result) cpuPerDecision() time.Duration {
	if r.n == 0 {
		return 0
	}
	return r.cpu / time.Duration(r.n)
}

func (r *result) p(q float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	i := int(q * float64(len(r.lat)))
	if i >= len(r.lat) {
		i = len(r.lat) - 1
	}
	return r.lat[i].Round(time.Microsecond)
}

func (r *result) max() time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	return r.lat[len(r.lat)-1].Round(time.Microsecond)
}

func run(url, key string, conc int, warm, dur time.Duration, shared bool) (*result, error) {
	ctx := context.Background()
	dial := func() (*client.Client, error) {
		c, err := client.Dial(ctx, url, transport.DialOptions{APIKey: key}, client.Options{
			Timeout: 10 * time.Second, FailMode: client.FailError, SessionID: "bench", AgentID: "bench",
		})
		if err != nil {
			return nil, err
		}
		if _, err := c.Handshake(ctx); err != nil {
			c.Close()
			return nil, err
		}
		return c, nil
	}
	clients := make([]*client.Client, conc)
	for i := range clients {
		if shared && i > 0 {
			clients[i] = clients[0]
			continue
		}
		c, err := dial()
		if err != nil {
			return nil, err
		}
		defer c.Close()
		clients[i] = c
	}
	payload := map[string]any{"tool_name": "bash", "arguments": map[string]any{"command": "ls -la"}}
	var wg sync.WaitGroup
	start := time.Now()
	measureFrom := start.Add(warm)
	end := measureFrom.Add(dur)
	lats := make([][]time.Duration, conc)
	cpu := cpuWindow(measureFrom, end)
	errs := make([]int, conc)
	for i := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := clients[i]
			ev, _ := c.NewEvent(protocol.EventPreAction, payload)
			own := make([]time.Duration, 0, 1<<16)
			for {
				t0 := time.Now()
				if t0.After(end) {
					break
				}
				d, err := c.SendEvent(ctx, ev)
				el := time.Since(t0)
				if t0.Before(measureFrom) {
					continue
				}
				if err != nil || d.Kind != protocol.DecisionAllow {
					errs[i]++
					continue
				}
				own = append(own, el)
			}
			lats[i] = own
		}()
	}
	wg.Wait()
	r := &result{}
	for i := range lats {
		r.lat = append(r.lat, lats[i]...)
		r.errors += errs[i]
	}
	slices.Sort(r.lat)
	r.n = len(r.lat)
	r.rate = float64(r.n) / dur.Seconds()
	r.cpu = <-cpu
	return r, nil
}
