package wstransport

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/coder/websocket"
)

// AcceptOptions configure Accept.
type AcceptOptions struct {
	// OriginPatterns lists the host patterns of browser origins allowed to
	// connect (see websocket.AcceptOptions). Requests without an Origin
	// header (agents) are always allowed.
	OriginPatterns []string
	// Conn configures the returned Conn.
	Conn ConnOptions
}

// Accept upgrades r to a WebSocket and returns a Conn over it. It writes
// the HTTP error itself when the upgrade fails. Authentication is the
// caller's business and must happen before.
func Accept(w http.ResponseWriter, r *http.Request, opts AcceptOptions) (*Conn, error) {
	opts.Conn.fill()
	hw := &hijackWriter{ResponseWriter: w, timeout: opts.Conn.WriteTimeout}
	ws, err := websocket.Accept(hw, r, &websocket.AcceptOptions{
		OriginPatterns:  opts.OriginPatterns,
		CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		if hw.batch != nil {
			_ = hw.batch.Close()
		}
		return nil, fmt.Errorf("ws: accept: %w", err)
	}
	return newConn(ws, opts.Conn, hw.batch), nil
}

// smallBuffer is the size of the buffered reader and writer
// coder/websocket keeps for the life of a connection; the batchConn under
// them batches the system calls.
const smallBuffer = 512

// hijackWriter hands coder/websocket a batchConn in place of the hijacked
// connection.
type hijackWriter struct {
	http.ResponseWriter
	timeout time.Duration
	batch   *batchConn
}

func (h *hijackWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	nc, brw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	if brw.Writer.Buffered() > 0 {
		if err := brw.Writer.Flush(); err != nil {
			_ = nc.Close()
			return nil, nil, err
		}
	}
	h.batch = newBatchConn(nc, h.timeout)
	// coder/websocket reads what the HTTP server had buffered, then the
	// batchConn (which reads through a pooled buffer): its own reader and
	// writer are kept small, since they live as long as the connection.
	br := brw.Reader
	if br.Buffered() == 0 {
		br = bufio.NewReaderSize(h.batch, smallBuffer)
	}
	h.batch.br = br
	return h.batch, bufio.NewReadWriter(br, bufio.NewWriterSize(h.batch, smallBuffer)), nil
}

// Unwrap lets http.ResponseController reach the original writer.
func (h *hijackWriter) Unwrap() http.ResponseWriter { return h.ResponseWriter }
