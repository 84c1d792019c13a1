package server

import (
	"context"
	"sync"
)

// ConnObserver may be implemented by a Handler that wants to know when an
// agent's connection has ended: the agent closed it, or vanished and its
// transport noticed (keep-alive, see docs/transports.md), or the server
// shut down. It gets the session ids handshaken on the connection (at
// most maxConnSessions, in order), so that it can end them, and what
// ServeConn returns. ctx carries the connection's peer (PeerFromContext)
// and is not cancelled. It runs on the connection's last goroutine and
// must not block long.
type ConnObserver interface {
	ConnEnded(ctx context.Context, sessions []string, err error)
}

// maxConnSessions bounds the session ids remembered per connection.
const maxConnSessions = 64

// connSessions collects the sessions handshaken on one connection.
type connSessions struct {
	mu  sync.Mutex
	ids []string
}

type connSessionsKey struct{}

// noteSession remembers that session id was handshaken on the connection
// of ctx (when a ConnObserver wants to know).
func noteSession(ctx context.Context, id string) {
	cs, ok := ctx.Value(connSessionsKey{}).(*connSessions)
	if !ok || id == "" {
		return
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, s := range cs.ids {
		if s == id {
			return
		}
	}
	if len(cs.ids) < maxConnSessions {
		cs.ids = append(cs.ids, id)
	}
}

func (cs *connSessions) list() []string {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return append([]string(nil), cs.ids...)
}
