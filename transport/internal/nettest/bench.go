package nettest

import (
	"context"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/ahp-go/ahp/transport"
)

// benchPayload is a pre_action the baseline harness has to check.
const benchPayload = `{"action_type":"tool_call","tool_name":"bash","arguments":{"command":"ls -la /workspace/project"}}`

// BenchRequest is a pre_action request with the given id.
func BenchRequest(id int) []byte {
	return []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"ahp/event","params":{"event_type":"pre_action","session_id":"bench-session","agent_id":"bench-agent","timestamp":"2026-11-21T10:00:00.000Z","depth":0,"payload":` + benchPayload + `}}`)
}

// warmUp is the number of decisions made before timing starts, so that
// connection set-up and heap growth are not measured.
const warmUp = 10000

// Pipelined sends b.N requests on c with at most inflight unanswered and
// reports decisions/s and the process CPU time per decision. It reads and
// counts responses without decoding them: the numbers measure transport
// and harness, not a client library.
func Pipelined(b *testing.B, c transport.Conn, inflight int) {
	b.Helper()
	reqs := make([][]byte, 1024)
	for i := range reqs {
		reqs[i] = BenchRequest(i + 1)
	}
	if err := pipeline(c, reqs, warmUp, inflight); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	began := time.Now()
	err := pipeline(c, reqs, b.N, inflight)
	elapsed := time.Since(began)
	cpu := cpuTime() - cpu0
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "decisions/s")
	// CPU time of the process (client and server) per decision: on a
	// machine shared with other work it is steadier than wall time.
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/decision")
}

// pipeline writes n requests from one goroutine and reads n responses in
// another, with at most inflight outstanding.
func pipeline(c transport.Conn, reqs [][]byte, n, inflight int) error {
	ctx := context.Background()
	slots := make(chan struct{}, inflight)
	werr := make(chan error, 1)
	go func() {
		for i := 0; i < n; i++ {
			slots <- struct{}{}
			if err := c.WriteMessage(ctx, reqs[i%len(reqs)]); err != nil {
				werr <- err
				return
			}
		}
		werr <- nil
	}()
	for i := 0; i < n; i++ {
		if _, err := c.ReadMessage(ctx); err != nil {
			return err
		}
		<-slots
	}
	return <-werr
}

// cpuTime returns the user and system CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
