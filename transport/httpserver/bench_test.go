package httpserver_test

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/transport"
	"github.com/ahp-go/ahp/transport/httpserver"
)

// BenchmarkDecisions sends pre_action events over HTTP keep-alive from 32
// concurrent agents (one client each) to a server in the same process,
// with and without API-key authentication. It reports decisions/s and the
// p99 latency next to ns/op. See bench/http.md.
func BenchmarkDecisions(b *testing.B) {
	for _, mode := range []string{"none", "api_key"} {
		b.Run(mode, func(b *testing.B) {
			var a auth.Authenticator = auth.InsecureNoAuth{}
			var dial transport.DialOptions
			if mode == "api_key" {
				a = testStore(b)
				dial.APIKey = agentKey
			}
			s := serveForBench(b, &countingHandler{}, httpserver.Options{Authenticator: a})
			const agents = 32
			clients := make(chan *client.Client, agents)
			ctx := context.Background()
			for range agents {
				c, err := client.Dial(ctx, s, dial, client.Options{Timeout: 10 * time.Second, FailMode: client.FailError})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := c.Handshake(ctx); err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				clients <- c
			}
			var mu sync.Mutex
			var lat []time.Duration
			b.SetParallelism((agents + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				c := <-clients
				defer func() { clients <- c }()
				ev, _ := c.NewEvent(protocol.EventPreAction, map[string]any{"tool_name": "bash", "arguments": map[string]any{"command": "ls -la"}})
				own := make([]time.Duration, 0, 4096)
				for pb.Next() {
					t0 := time.Now()
					d, err := c.SendEvent(ctx, ev)
					if err != nil || d.Kind != protocol.DecisionAllow {
						b.Errorf("decision %v, %v", d.Kind, err)
						return
					}
					own = append(own, time.Since(t0))
				}
				mu.Lock()
				lat = append(lat, own...)
				mu.Unlock()
			})
			elapsed := time.Since(start)
			b.StopTimer()
			slices.Sort(lat)
			if len(lat) > 0 {
				b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "decisions/s")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			}
		})
	}
}
