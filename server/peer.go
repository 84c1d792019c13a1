package server

import (
	"context"

	"github.com/ahp-go/ahp/transport"
)

type peerKey struct{}

// WithPeer returns a context that carries the connection info of the peer
// that sent a message. Transports that call HandleMessage directly (HTTP)
// use it; ServeConn does it for every connection.
func WithPeer(ctx context.Context, info transport.Info) context.Context {
	return context.WithValue(ctx, peerKey{}, info)
}

// PeerFromContext returns the connection info of the peer whose message is
// being handled: its transport and, when authenticated, its principal.
func PeerFromContext(ctx context.Context) transport.Info {
	info, _ := ctx.Value(peerKey{}).(transport.Info)
	return info
}
