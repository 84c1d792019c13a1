package grpcserve_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/transport"
	"github.com/ahp-go/ahp/transport/grpctransport"
	"github.com/ahp-go/ahp/transport/grpctransport/grpcserve"
	ahpv1 "github.com/ahp-go/ahp/transport/grpctransport/proto/ahp/v1"
	"github.com/ahp-go/ahp/transport/internal/nettest"
	"github.com/ahp-go/ahp/transport/reconnect"
)

// rawStream opens a Stream RPC with the generated client, so that a test
// can send what it likes.
func rawStream(t *testing.T, e *env) (ahpv1.Harness_StreamClient, context.CancelFunc) {
	t.Helper()
	cc, err := grpc.NewClient(e.host, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	s, err := ahpv1.NewHarnessClient(cc).Stream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s, cancel
}

// TestGarbageOnStream sends bytes that are not JSON: each gets a -32700
// answer and the stream goes on.
func TestGarbageOnStream(t *testing.T) {
	e := start(t, auth.InsecureNoAuth{}, nil, nil)
	s, _ := rawStream(t, e)
	for _, g := range [][]byte{[]byte("not json"), {0xff, 0xfe, 0x00, 0x01}, []byte(`{"jsonrpc":"2.0","id":1`)} {
		if err := s.Send(&ahpv1.Message{Json: g}); err != nil {
			t.Fatal(err)
		}
		m, err := s.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(m.GetJson()), `"code":-32700`) {
			t.Fatalf("garbage %q answered %s", g, m.GetJson())
		}
	}
	if err := s.Send(&ahpv1.Message{Json: []byte(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)}); err != nil {
		t.Fatal(err)
	}
	if m, err := s.Recv(); err != nil || string(m.GetJson()) != `{"jsonrpc":"2.0","id":2,"result":{}}` {
		t.Fatalf("ping after garbage: %s %v", m.GetJson(), err)
	}
	if n := e.h.Calls(); n != 0 {
		t.Fatalf("%d calls reached the handler, want 0", n)
	}
}

// rawCodec sends bytes as they are, to put broken protobuf on the wire.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return v.([]byte), nil }
func (rawCodec) Unmarshal(b []byte, v any) error {
	*(v.(*[]byte)) = append([]byte(nil), b...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

// TestBrokenProtobuf sends bytes that do not decode as a Message: the RPC
// fails and the server keeps serving.
func TestBrokenProtobuf(t *testing.T) {
	e := start(t, auth.InsecureNoAuth{}, nil, nil)
	cc, err := grpc.NewClient(e.host, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var out []byte
	err = cc.Invoke(ctx, ahpv1.Harness_Call_FullMethodName, []byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f}, &out, grpc.ForceCodec(rawCodec{}))
	if status.Code(err) == codes.OK {
		t.Fatalf("broken protobuf accepted: %x", out)
	}
	c, err := dial(t, e.addr, transport.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nettest.RoundTrip(t, c)
}

// TestOversizedMessage checks that gRPC refuses a message over the limit
// before it reaches the harness.
func TestOversizedMessage(t *testing.T) {
	e := start(t, auth.InsecureNoAuth{}, nil, func(o *grpcserve.ServerOptions) { o.MaxMessageBytes = 1024 })
	s, _ := rawStream(t, e)
	big := `{"jsonrpc":"2.0","id":1,"method":"ahp/event","params":{"payload":"` + strings.Repeat("x", 2048) + `"}}`
	if err := s.Send(&ahpv1.Message{Json: []byte(big)}); err != nil && !errors.Is(err, context.Canceled) {
		t.Logf("send: %v", err)
	}
	_, err := s.Recv()
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("recv after oversized message: %v, want ResourceExhausted", err)
	}
	if n := e.h.Calls(); n != 0 {
		t.Fatalf("%d calls reached the handler, want 0", n)
	}
}

// TestCallRPC covers the unary Call: a request gets its response, a
// notification an empty Message, and the client timeout becomes the
// deadline the harness sees.
func TestCallRPC(t *testing.T) {
	e := start(t, nettest.Store(t), nil, nil)
	cc, err := grpctransport.NewClientConn(e.addr, transport.DialOptions{APIKey: nettest.APIKey, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hc := ahpv1.NewHarnessClient(cc.GRPC)
	note := `{"jsonrpc":"2.0","method":"ahp/event","params":{"event_type":"session_start","session_id":"s","agent_id":"a","timestamp":"2026-01-01T00:00:00Z","depth":0,"payload":{}}}`
	out, err := hc.Call(ctx, &ahpv1.Message{Json: []byte(note)})
	if err != nil || len(out.GetJson()) != 0 {
		t.Fatalf("notification: %q %v, want an empty message", out.GetJson(), err)
	}
	if e.h.Notifications.Load() != 1 {
		t.Fatal("the notification did not reach the handler")
	}

	u := cc.Unary()
	defer u.Close()
	c := newClient(u)
	defer c.Close()
	nettest.RoundTrip(t, c)
	if !e.h.SawDeadline() || e.h.Principal() != nettest.KeyAgent {
		t.Fatalf("deadline seen %v, principal %q", e.h.SawDeadline(), e.h.Principal())
	}
	// A decision slower than the deadline fails: either the RPC's deadline
	// passes first (a local transport error) or the handler's context,
	// which carries the same deadline, ends first (-32603 from the harness).
	_, err = c.Event(ctx, protocol.EventPreAction, nettest.Wait)
	var je *jsonrpc.Error
	switch {
	case !errors.As(err, &je):
		t.Fatalf("slow call: %v, want a JSON-RPC error", err)
	case je.Code == reconnect.CodeTransportError && strings.Contains(string(je.Data), "DeadlineExceeded"):
	case je.Code == jsonrpc.CodeInternalError && strings.Contains(je.Message, "deadline exceeded"):
	default:
		t.Fatalf("slow call: %v, want a deadline error", err)
	}
}

// TestStalledReaderDropped floods a stream with pings whose responses are
// large and never reads them. Flow control bounds what the server queues;
// the server must give up the stream after its write timeout rather than
// wait for the peer forever.
func TestStalledReaderDropped(t *testing.T) {
	e := start(t, auth.InsecureNoAuth{}, nil, func(o *grpcserve.ServerOptions) { o.WriteTimeout = 300 * time.Millisecond })
	s, cancel := rawStream(t, e)
	id := strings.Repeat("i", 64<<10)
	sent := make(chan int, 1)
	go func() {
		i := 0
		for ; i < 1000; i++ {
			msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":"%s%d","method":"ping"}`, id, i)
			if s.Send(&ahpv1.Message{Json: []byte(msg)}) != nil {
				break
			}
		}
		sent <- i
	}()
	nettest.Eventually(t, 5*time.Second, "the stream to be served", func() bool { return e.gs.Service.Streams() == 1 })
	nettest.Eventually(t, 10*time.Second, "the stalled stream to be dropped", func() bool { return e.gs.Service.Streams() == 0 })
	cancel() // the client gives up too
	if n := <-sent; n == 1000 {
		t.Fatal("64 MiB of responses were taken by a peer that does not read")
	}
	if n := e.h.Calls(); n != 0 {
		t.Fatalf("%d calls reached the handler, want 0", n)
	}
}

// TestFourMegabyteMessage: a message just under the default 4 MiB limit
// passes both ways on a stream, before and after quick small messages
// (received by the handler's goroutine, then by the server's reader).
func TestFourMegabyteMessage(t *testing.T) {
	e := start(t, auth.InsecureNoAuth{}, nil, nil)
	s, _ := rawStream(t, e)
	roundTrip := func(id string, pad int) {
		t.Helper()
		msg := `{"jsonrpc":"2.0","id":"` + id + `","method":"ping","params":{"pad":"` + strings.Repeat("x", pad) + `"}}`
		if err := s.Send(&ahpv1.Message{Json: []byte(msg)}); err != nil {
			t.Fatalf("send %s: %v", id, err)
		}
		m, err := s.Recv()
		if err != nil || !strings.Contains(string(m.GetJson()), `"id":"`+id+`"`) || !strings.Contains(string(m.GetJson()), `"result"`) {
			t.Fatalf("answer to %s: %.200s %v", id, m.GetJson(), err)
		}
	}
	big := transport.DefaultMaxMessageBytes - 200
	roundTrip("big1", big)
	for i := range 20 {
		roundTrip(fmt.Sprint("small", i), 10)
	}
	roundTrip("big2", big)
}
