package server

import (
	"context"
	"testing"

	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/transport"
)

type allowHandler struct{ BaseHandler }

func (allowHandler) HandleEvent(context.Context, *protocol.Event) (protocol.Decision, error) {
	return protocol.Allow(), nil
}

var benchRequest = []byte(`{"jsonrpc":"2.0","id":"4f8b5a9e-4b8a-4c1e-9d1a-2f2b7c1d9e01","method":"ahp/event","params":{"event_type":"pre_action","session_id":"sess-0001","agent_id":"agent-main","timestamp":"2026-11-21T10:00:00.000Z","depth":0,"payload":{"action_type":"tool_call","tool_name":"bash","arguments":{"command":"ls -la /workspace/project"}}}}`)

// BenchmarkDispatch measures the server's work for one decision, from the
// raw request line to the response bytes, excluding the handler (which
// returns a constant) and the transport.
func BenchmarkDispatch(b *testing.B) {
	s := New(allowHandler{}, Options{})
	ctx := WithPeer(context.Background(), transport.Info{Transport: "bench"})
	b.ReportAllocs()
	b.SetBytes(int64(len(benchRequest)))
	for b.Loop() {
		msg := append([]byte(nil), benchRequest...) // what a transport hands over
		m, err := jsonrpc.Decode(msg)
		if err != nil {
			b.Fatal(err)
		}
		buf := s.handleRequest(ctx, &m, getBuf())
		putBuf(buf)
	}
}

// BenchmarkServeConnPipelined measures dispatch through ServeConn over the
// in-memory transport, with the per-request goroutine and write path.
func BenchmarkServeConnPipelined(b *testing.B) {
	a, c := transport.Pipe()
	s := New(allowHandler{}, Options{})
	done := make(chan struct{})
	go func() { _ = s.ServeConn(context.Background(), c); close(done) }()
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	go func() {
		for i := 0; i < b.N; i++ {
			_ = a.WriteMessage(ctx, benchRequest)
		}
	}()
	for i := 0; i < b.N; i++ {
		if _, err := a.ReadMessage(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	_ = a.Close()
	<-done
}
