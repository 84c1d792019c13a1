package hooks

import (
	"context"
	"io"
	"net/http"
	"path"
	"time"
)

// HandlerOptions configure NewHandler.
type HandlerOptions struct {
	// Timeout bounds one hook call, an escalation's wait included; keep it
	// below the timeout written in the tool's settings (55 s when 0).
	Timeout time.Duration
}

// NewHandler serves the tools' HTTP hooks: a POST to a path ending in
// /claude-code, /codex or /gemini carries the hook input as its body and
// is answered 200 with the tool's JSON answer. A failure is answered with
// the JSON form of a deny (an HTTP error would let the tools go on: their
// HTTP hooks fail open). Authenticate requests before this handler; the
// caller's identity must be in the request context (server.WithPeer).
func NewHandler(h Harness, opts HandlerOptions) http.Handler {
	if opts.Timeout <= 0 {
		opts.Timeout = 55 * time.Second
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tool, err := ParseTool(path.Base(r.URL.Path))
		if err != nil {
			http.Error(w, "unknown hook path: want /hooks/claude-code, /hooks/codex or /hooks/gemini", http.StatusNotFound)
			return
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "POST the hook input", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, MaxInputBytes+1))
		var res Result
		if err != nil {
			res = failClosed(tool, KindPreTool, preEventName(tool), "ahp: cannot read the hook input, failing closed: "+err.Error())
		} else {
			ctx, cancel := context.WithTimeout(r.Context(), opts.Timeout)
			res = Handle(ctx, tool, body, h, Options{})
			cancel()
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(res.Stdout)
	})
}
