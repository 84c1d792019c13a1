package grpctransport

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc/status"

	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/transport"
	ahpv1 "github.com/ahp-go/ahp/transport/grpctransport/proto/ahp/v1"
	"github.com/ahp-go/ahp/transport/reconnect"
)

// DefaultCallTimeout is the deadline of one Call RPC when
// DialOptions.Timeout is 0 (the AHP client's default timeout).
const DefaultCallTimeout = 10 * time.Second

// DefaultMaxInFlight bounds the Call RPCs a unary Conn has in flight.
const DefaultMaxInFlight = 128

// unaryConn is a transport.Conn over Call RPCs: every request is its own
// RPC, whose gRPC deadline is the client timeout, so the harness sees the
// deadline in its handler context. Responses arrive through ReadMessage
// in completion order. An RPC that fails (refused credentials, deadline,
// harness unreachable) answers its request locally with a JSON-RPC error
// of code reconnect.CodeTransportError whose data holds the gRPC code.
// Notifications are sent synchronously, so they arrive in order.
type unaryConn struct {
	cc      *ClientConn
	client  ahpv1.HarnessClient
	timeout time.Duration
	info    transport.Info

	life  context.Context
	stop  context.CancelFunc
	in    chan []byte
	slots chan struct{}
	wg    sync.WaitGroup
	once  sync.Once
}

// Unary returns a transport.Conn that sends each message as one Call RPC
// on cc (see the package documentation of the Call RPC). Its deadline is
// the DialOptions.Timeout cc was made with (DefaultCallTimeout when 0).
// Closing the Conn does not close cc.
func (cc *ClientConn) Unary() transport.Conn {
	timeout := cc.opts.Timeout
	if timeout <= 0 {
		timeout = DefaultCallTimeout
	}
	life, stop := context.WithCancel(context.Background())
	scheme := "grpc"
	if cc.tls {
		scheme = "grpcs"
	}
	return &unaryConn{
		cc: cc, client: ahpv1.NewHarnessClient(cc.GRPC), timeout: timeout,
		info: transport.Info{Transport: scheme, Remote: cc.addr},
		life: life, stop: stop,
		in:    make(chan []byte, DefaultMaxInFlight),
		slots: make(chan struct{}, DefaultMaxInFlight),
	}
}

func (u *unaryConn) Info() transport.Info { return u.info }

func (u *unaryConn) ReadMessage(ctx context.Context) ([]byte, error) {
	select {
	case b := <-u.in:
		return b, nil
	case <-u.life.Done():
		return nil, transport.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (u *unaryConn) WriteMessage(ctx context.Context, msg []byte) error {
	if u.life.Err() != nil {
		return transport.ErrClosed
	}
	m, err := jsonrpc.Decode(msg)
	if err != nil || m.Kind != jsonrpc.KindRequest {
		// A notification (or what the harness must judge itself): in order.
		resp, err := u.call(ctx, msg)
		if err != nil {
			return err
		}
		if len(resp) > 0 {
			return u.deliver(resp)
		}
		return nil
	}
	select {
	case u.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-u.life.Done():
		return transport.ErrClosed
	}
	own := append([]byte(nil), msg...) // the caller may reuse msg
	id := append(json.RawMessage(nil), m.ID...)
	u.wg.Add(1)
	go func() {
		defer func() {
			<-u.slots
			u.wg.Done()
		}()
		resp, err := u.call(u.life, own)
		switch {
		case err != nil:
			if u.life.Err() == nil {
				_ = u.deliver(rpcErrorResponse(id, err))
			}
		case len(resp) > 0:
			_ = u.deliver(resp)
		}
	}()
	return nil
}

// call makes one Call RPC with the Conn's deadline.
func (u *unaryConn) call(ctx context.Context, msg []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, u.timeout)
	defer cancel()
	stop := context.AfterFunc(u.life, cancel)
	defer stop()
	out, err := u.client.Call(ctx, &ahpv1.Message{Json: msg})
	if err != nil {
		return nil, fmt.Errorf("grpc: call: %w", err)
	}
	return out.GetJson(), nil
}

func (u *unaryConn) deliver(b []byte) error {
	select {
	case u.in <- b:
		return nil
	case <-u.life.Done():
		return transport.ErrClosed
	}
}

func (u *unaryConn) Close() error {
	u.once.Do(func() {
		u.stop()
		u.wg.Wait()
	})
	return nil
}

// rpcErrorResponse answers request id locally after a failed RPC; data
// holds the gRPC status code, as {"grpc_code":"Unauthenticated"}.
func rpcErrorResponse(id json.RawMessage, err error) []byte {
	st := status.Convert(err)
	data, _ := json.Marshal(map[string]string{"grpc_code": st.Code().String()})
	return jsonrpc.AppendError(nil, id, &jsonrpc.Error{
		Code:    reconnect.CodeTransportError,
		Message: "grpc: call failed: " + st.Code().String() + ": " + st.Message(),
		Data:    data,
	})
}
