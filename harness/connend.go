package harness

import (
	"context"
	"encoding/json"
	"errors"
	"io"

	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/transport"
)

// EventConnectionEnded is the event type of the audit record the harness
// writes for each session of an agent connection that ended: the agent
// closed it, or vanished and its transport noticed (keep-alive), or the
// harness shut down. Error says which when the connection was lost.
const EventConnectionEnded = "connection_ended"

// ConnEnded implements server.ConnObserver: it records, for every session
// handshaken on the connection, that the session's connection ended, so
// that an agent that vanished without a word is visible in the audit log.
func (h *Harness) ConnEnded(ctx context.Context, sessions []string, err error) {
	peer := peerOf(ctx)
	how := "closed"
	errText := ""
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, transport.ErrClosed) && !errors.Is(err, context.Canceled) {
		how = "lost"
		errText = "connection lost: " + err.Error()
	}
	for _, id := range sessions {
		s := &sealed{r: h.red}
		sid := s.text(id)
		detail, _ := json.Marshal(map[string]any{"session_id": sid, "connection": how, "transport": peer.Transport})
		rec := &store.AuditRecord{
			Time: h.now(), SessionID: sid, EventType: EventConnectionEnded, Event: detail,
			Principal: principalID(peer), Transport: peer.Transport, Error: s.text(errText), Redacted: s.kinds.List(),
			PolicyVersion: h.opts.Engine.Version(), DescriptorHash: h.descriptorHash(),
		}
		if aerr := h.opts.Store.Audit().AppendAsync(context.WithoutCancel(ctx), rec); aerr != nil {
			h.log.Warn("audit append failed for an ended connection", "error", aerr)
			continue
		}
		h.observeRecord(rec)
	}
}
