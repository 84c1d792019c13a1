package mcpproxy

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// ListenAndServe serves h over HTTP on addr (HOST:PORT) until ctx ends,
// then closes the server and its connections. ready, when not nil, is
// called with the bound address once it accepts connections. It returns
// nil when ctx ended.
func ListenAndServe(ctx context.Context, addr string, h http.Handler, ready func(net.Addr)) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	stop := context.AfterFunc(ctx, func() { _ = srv.Close() })
	defer stop()
	if ready != nil {
		ready(l.Addr())
	}
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
