// Command dashload drives agents' events into a running harness at a set
// rate, for the dashboard's load tests (observe/e2e) and the figures in
// bench/README.md: pre_action events on one session, paced at -rate per
// second (or as fast as they are answered with -rate 0), for -duration or
// -count events, whichever ends first. It prints one JSON line: events
// sent, errors, the rate reached and the decision latency.
//
//	go build -o /tmp/dashload ./bench/dashload
//	/tmp/dashload -connect unix:/tmp/ahp.sock -session load -rate 500 -duration 10s
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/transport"
)

// Result is what dashload prints.
type Result struct {
	Sent       int64   `json:"sent"`
	Errors     int64   `json:"errors"`
	Seconds    float64 `json:"seconds"`
	PerSecond  float64 `json:"perSecond"`
	P50Ms      float64 `json:"p50Ms"`
	P99Ms      float64 `json:"p99Ms"`
	TargetRate int     `json:"targetRate"`
}

// maxEvents and maxDuration bound a run whatever the flags say.
const (
	maxEvents   = 1_000_000
	maxDuration = 10 * time.Minute
)

func main() {
	addr := flag.String("connect", "", "the harness address (unix:PATH, ws://…)")
	session := flag.String("session", "load", "session id of the events")
	agent := flag.String("agent", "loader", "agent id of the events")
	rate := flag.Int("rate", 100, "events per second (0: as fast as answered)")
	duration := flag.Duration("duration", 10*time.Second, "how long to send")
	count := flag.Int("count", 100000, "at most this many events")
	workers := flag.Int("workers", 4, "concurrent agent connections")
	flag.Parse()
	if *addr == "" {
		fmt.Fprintln(os.Stderr, "dashload: -connect is required")
		os.Exit(2)
	}
	n := int64(min(max(*count, 1), maxEvents))
	d := min(*duration, maxDuration)
	ctx, cancel := context.WithTimeout(context.Background(), d+30*time.Second)
	defer cancel()

	var clients []*client.Client
	for range max(1, *workers) {
		c, err := client.Dial(ctx, *addr, transport.DialOptions{}, client.Options{SessionID: *session, AgentID: *agent,
			Timeout: 30 * time.Second, FailMode: client.FailError})
		if err == nil {
			_, err = c.Handshake(ctx)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "dashload:", err)
			os.Exit(1)
		}
		defer c.Close()
		clients = append(clients, c)
	}

	// Tokens: one per event, paced by a ticker (or unpaced).
	tokens := make(chan int64, max(1, *workers))
	start := time.Now()
	end := start.Add(d)
	go func() {
		defer close(tokens)
		var i int64
		if *rate <= 0 {
			for ; i < n && time.Now().Before(end); i++ {
				tokens <- i
			}
			return
		}
		interval := time.Second / time.Duration(*rate)
		for i < n {
			due := start.Add(time.Duration(i) * interval)
			if due.After(end) {
				return
			}
			if w := time.Until(due); w > 0 {
				time.Sleep(w)
			}
			tokens <- i
			i++
		}
	}()
	var sent, errs atomic.Int64
	lats := make([][]time.Duration, len(clients))
	var wg sync.WaitGroup
	for k, c := range clients {
		wg.Go(func() {
			for i := range tokens {
				t0 := time.Now()
				_, err := c.Event(ctx, protocol.EventPreAction, map[string]any{"tool_name": "bash",
					"arguments": map[string]any{"command": fmt.Sprintf("echo load %d", i)}})
				if err != nil {
					errs.Add(1)
					continue
				}
				sent.Add(1)
				lats[k] = append(lats[k], time.Since(t0))
			}
		})
	}
	wg.Wait()
	took := time.Since(start).Seconds()
	all := slices.Concat(lats...)
	slices.Sort(all)
	q := func(p float64) float64 {
		if len(all) == 0 {
			return 0
		}
		return float64(all[min(len(all)-1, int(p*float64(len(all))))].Microseconds()) / 1000
	}
	b, _ := json.Marshal(Result{Sent: sent.Load(), Errors: errs.Load(), Seconds: took, PerSecond: float64(sent.Load()) / took,
		P50Ms: q(0.5), P99Ms: q(0.99), TargetRate: *rate})
	fmt.Println(string(b))
}
