package harness

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/ahp-go/ahp/runs"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/transport"
)

// EventConnectionEnded is the event type of the audit record the harness
// writes for each session of an agent connection that ended: the agent
// closed it, or vanished and its transport noticed (keep-alive), or the
// harness shut down. Error says which when the connection was lost.
const EventConnectionEnded = runs.KindConnectionEnded

// lostPrefix starts the audit record's Error of a lost connection.
const lostPrefix = "connection lost: "

// runsEndTimeout bounds the run record updates of one ended connection.
const runsEndTimeout = 5 * time.Second

// ConnEnded implements server.ConnObserver: it records, for every session
// handshaken on the connection, that the session's connection ended, so
// that an agent that vanished without a word is visible in the audit log;
// and, when the harness keeps run records (Options.Runs), it marks every
// open run of those sessions with how and when (runs.Reducer.ConnectionEnded),
// with the session id and error text redacted as in the audit record.
func (h *Harness) ConnEnded(ctx context.Context, sessions []string, err error) {
	peer := peerOf(ctx)
	how := runs.ConnectionClosed
	errText := ""
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, transport.ErrClosed) && !errors.Is(err, context.Canceled) {
		how = runs.ConnectionLost
		errText = lostPrefix + err.Error()
	}
	ctx = context.WithoutCancel(ctx)
	var rctx context.Context = ctx
	if h.opts.Runs != nil && len(sessions) > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, runsEndTimeout)
		defer cancel()
	}
	for _, id := range sessions {
		s := &sealed{r: h.red}
		sid := s.text(id)
		sealedErr := s.text(errText)
		now := h.now()
		// The run records first: an observer told of the audit record
		// below then reads runs that already say so.
		if h.opts.Runs != nil {
			end := runs.ConnectionEnd{How: how, Error: strings.TrimPrefix(sealedErr, lostPrefix), At: now}
			if _, rerr := h.opts.Runs.ConnectionEnded(rctx, sid, end); rerr != nil {
				h.log.Warn("run records not told of an ended connection", "session_id", sid,
					"error", (&sealed{r: h.red}).text(rerr.Error()))
			}
		}
		detail, _ := json.Marshal(map[string]any{"session_id": sid, "connection": how, "transport": peer.Transport})
		rec := &store.AuditRecord{
			Time: now, SessionID: sid, EventType: EventConnectionEnded, Event: detail,
			Principal: principalID(peer), Transport: peer.Transport, Error: sealedErr, Redacted: s.kinds.List(),
			PolicyVersion: h.opts.Engine.Version(), DescriptorHash: h.descriptorHash(),
		}
		if aerr := h.opts.Store.Audit().AppendAsync(ctx, rec); aerr != nil {
			h.log.Warn("audit append failed for an ended connection", "error", aerr)
			continue
		}
		h.observeRecord(rec)
	}
}
