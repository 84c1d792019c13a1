package observe

import (
	"context"

	"github.com/coder/websocket"
)

// A browser pays for every WebSocket message it receives (a hand-over
// from its network process to the page, an event, a JSON parse), more
// than for its bytes: a dashboard watching a session that gets thousands
// of actions a second falls behind on messages, not on data. A client
// may therefore ask, with _meta.ahp.batchMessages: true in initialize or
// reconnect, for the messages queued for it together to come as one
// JSON-RPC 2.0 batch: a JSON array of the very notifications and
// responses it would otherwise get one by one, in the same order, in one
// WebSocket message. A message written alone is never wrapped. Clients
// that do not ask (the Host Protocol's own) get the protocol's wire
// unchanged.

// clientMeta is the _meta of initialize and reconnect that ahp reads.
type clientMeta struct {
	AHP struct {
		BatchMessages bool `json:"batchMessages"`
		LeanTimeline  bool `json:"leanTimeline"`
	} `json:"ahp"`
}

// maxArrayBytes bounds the size of one batch; a batch stops growing once
// it reaches it (one message, itself bounded, may go beyond).
// maxArrayMessages bounds the messages of one batch: what arrives in
// arrayPace at several thousand actions a second.
const (
	maxArrayBytes    = 512 << 10
	maxArrayMessages = 2048
)

// writeArray writes m and what else is queued (up to maxArrayMessages messages
// and about maxArrayBytes) as one WebSocket message: a JSON array of
// them, or m alone when nothing else waits.
func (o *observer) writeArray(ctx context.Context, m outMsg) error {
	lean := o.lean.Load()
	first := m.bytes(lean)
	buf := append(o.arrBuf[:0], '[')
	buf = append(buf, first...)
	n := 1
more:
	for n < maxArrayMessages && len(buf) < maxArrayBytes {
		select {
		case next := <-o.q:
			buf = append(append(buf, ','), next.bytes(lean)...)
			n++
		default:
			break more
		}
	}
	var err error
	if n == 1 {
		err = o.ws.Write(ctx, websocket.MessageText, first)
	} else {
		err = o.ws.Write(ctx, websocket.MessageText, append(buf, ']'))
	}
	if cap(buf) > 1<<20 {
		buf = nil // do not keep a large buffer for an idle observer
	}
	o.arrBuf = buf
	return err
}
