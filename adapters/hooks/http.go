package hooks

import (
	"context"
	"errors"
	"io"
	"net/http"
	"path"
	"strconv"
	"time"
)

// DefaultMaxInFlight bounds the hook calls one Handler works on at a time
// when HandlerOptions.MaxInFlight is 0 (the AHP endpoint's default bound).
const DefaultMaxInFlight = 1024

// HandlerOptions configure NewHandler.
type HandlerOptions struct {
	// Timeout bounds one hook call, an escalation's wait included; keep it
	// below the timeout written in the tool's settings (55 s when 0).
	Timeout time.Duration
	// MaxBodyBytes bounds one hook input: pass the listener's largest
	// message (the AHP endpoint's MaxBodyBytes). A larger input is not
	// decided but denied. MaxInputBytes when 0 or larger.
	MaxBodyBytes int64
	// MaxInFlight bounds the hook calls handled at once (an escalation
	// waiting for a human holds its slot); a call beyond it is denied at
	// once. DefaultMaxInFlight when 0.
	MaxInFlight int
}

// NewHandler serves the tools' HTTP hooks: a POST to a path ending in
// /claude-code, /codex or /gemini carries the hook input as its body and
// is answered 200 with the tool's JSON answer. A failure is answered with
// the JSON form of a deny (an HTTP error would let the tools go on: their
// HTTP hooks fail open); so are an input over MaxBodyBytes and a call
// beyond MaxInFlight, which never reach the harness. Only an unknown path
// (404) and a method other than POST (405) get an HTTP error. Authenticate
// requests before this handler, requiring role agent as the AHP endpoint
// does; the caller's identity must be in the request context
// (server.WithPeer).
func NewHandler(h Harness, opts HandlerOptions) http.Handler {
	if opts.Timeout <= 0 {
		opts.Timeout = 55 * time.Second
	}
	if opts.MaxBodyBytes <= 0 || opts.MaxBodyBytes > MaxInputBytes {
		opts.MaxBodyBytes = MaxInputBytes
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = DefaultMaxInFlight
	}
	slots := make(chan struct{}, opts.MaxInFlight)
	tooLarge := "ahp: the hook input is larger than the harness's limit of " + strconv.FormatInt(opts.MaxBodyBytes, 10) +
		" bytes (max_message_bytes), failing closed"
	busy := "ahp: the harness is handling " + strconv.Itoa(opts.MaxInFlight) +
		" hook calls already, failing closed; retry in a moment"
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
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		deny := func(reason string) {
			_, _ = w.Write(failClosed(tool, KindPreTool, preEventName(tool), reason).Stdout)
		}
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
		default:
			deny(busy)
			return
		}
		if r.ContentLength > opts.MaxBodyBytes {
			drain(r.Body, r.ContentLength)
			deny(tooLarge)
			return
		}
		body, err := readBody(w, r, opts.MaxBodyBytes)
		if err != nil {
			if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
				drain(r.Body, -1)
				deny(tooLarge)
				return
			}
			deny("ahp: cannot read the hook input, failing closed: " + err.Error())
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), opts.Timeout)
		res := Handle(ctx, tool, body, h, Options{})
		cancel()
		_, _ = w.Write(res.Stdout)
	})
}

// readBody reads the whole body through http.MaxBytesReader, which also
// has the connection closed after the answer when the body goes past max.
// A body whose length is announced (and at most max) is read into a
// buffer of that size.
func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, max)
	if n := r.ContentLength; n >= 0 {
		buf := make([]byte, n)
		if _, err := io.ReadFull(body, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	return io.ReadAll(body)
}

// drain reads and drops what is left of an oversized body, so that the
// tool, still sending it, reads the deny instead of a reset connection
// (which its HTTP hook would take as "go on"). Nothing is kept; a body
// announced or found larger than MaxInputBytes is left unread and the
// connection is closed after the answer.
func drain(body io.Reader, announced int64) {
	if announced > MaxInputBytes {
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(body, MaxInputBytes))
}
