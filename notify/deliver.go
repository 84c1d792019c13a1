package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Body returns the body a sink of format f is sent for m.
func Body(f Format, m Message) ([]byte, error) {
	if f == FormatSlack {
		return json.Marshal(newSlackBody(m))
	}
	return json.Marshal(m)
}

// deliver sends one job to its sink, retrying with back-off, and counts
// the result.
func (n *Notifier) deliver(sq *sinkQueue, j job) {
	m := newMessage(j.n, j.pack, n.opts.DashboardURL)
	body, err := Body(sq.Format, m)
	if err != nil { // not expected: every field marshals
		n.met.failed.WithLabelValues(sq.Name).Inc()
		n.log.Error("approval notification could not be encoded", "sink", sq.Name, "approval_id", m.ApprovalID, "error", err)
		return
	}
	var last error
	for attempt := 1; attempt <= n.opts.MaxAttempts; attempt++ {
		if attempt > 1 {
			n.met.retries.WithLabelValues(sq.Name).Inc()
		}
		wait, err := n.post(sq, body)
		if err == nil {
			n.met.sent.WithLabelValues(sq.Name).Inc()
			if attempt > 1 {
				n.log.Info("approval notification sent after retries", "sink", sq.Name, "host", sq.host,
					"approval_id", m.ApprovalID, "kind", string(j.kind), "attempts", attempt)
			}
			return
		}
		last = err
		if errors.Is(err, errPermanent) || n.stopping() || attempt == n.opts.MaxAttempts {
			break
		}
		if wait <= 0 {
			wait = n.backoff(attempt)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-n.ctx.Done():
			t.Stop()
		case <-n.stop:
			// Shutting down: one more try now, no more waiting.
			t.Stop()
		}
		if n.ctx.Err() != nil {
			break
		}
	}
	n.met.failed.WithLabelValues(sq.Name).Inc()
	n.log.Warn("approval notification not delivered", "sink", sq.Name, "host", sq.host,
		"approval_id", m.ApprovalID, "kind", string(j.kind), "error", last)
}

// stopping reports whether Close was called.
func (n *Notifier) stopping() bool {
	select {
	case <-n.stop:
		return true
	default:
		return false
	}
}

// backoff is the wait after failed attempt number attempt: BaseBackoff
// doubled per earlier failure, at most MaxBackoff, drawn at random between
// half and all of it.
func (n *Notifier) backoff(attempt int) time.Duration {
	d := n.opts.BaseBackoff
	for i := 1; i < attempt && d < n.opts.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, n.opts.MaxBackoff)
	return d/2 + rand.N(d/2+1)
}

// post sends body once. It returns the receiver's Retry-After (bounded by
// MaxBackoff) when it gave one, and an error that never holds the URL:
// only its host.
func (n *Notifier) post(sq *sinkQueue, body []byte) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(n.ctx, n.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, sq.URL, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("%s: bad request: %w", sq.host, errPermanent)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "ahp-notify/1")
	resp, err := n.opts.Client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s: %s", sq.host, hostOnly(err))
	}
	detail := discard(resp.Body)
	resp.Body.Close()
	switch c := resp.StatusCode; {
	case c >= 200 && c < 300:
		return 0, nil
	case c == http.StatusTooManyRequests || c == http.StatusRequestTimeout || c >= 500:
		return retryAfter(resp.Header.Get("Retry-After"), n.opts.MaxBackoff), fmt.Errorf("%s: HTTP %d %q", sq.host, c, detail)
	default:
		return 0, fmt.Errorf("%s: HTTP %d %q: %w", sq.host, c, detail, errPermanent)
	}
}

// hostOnly describes a client error without its URL (a *url.Error quotes
// the whole URL, secret path included).
func hostOnly(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timed out"
	}
	return err.Error()
}

// retryAfter reads a Retry-After of seconds, bounded by max; 0 when absent
// or unreadable.
func retryAfter(h string, max time.Duration) time.Duration {
	s, err := strconv.Atoi(h)
	if err != nil || s <= 0 {
		return 0
	}
	return min(time.Duration(s)*time.Second, max)
}
