package server

import (
	"sync"
	"time"

	"github.com/ahp-go/ahp/internal/textcut"
)

// refusedLogEvery is the least time between two "notification refused"
// log lines; the refusals in between are counted in the next one. An
// agent that sends bad notifications in a loop must not flood the log.
const refusedLogEvery = 10 * time.Second

// maxLoggedField bounds each value a refusal's log line repeats from the
// message (reason, event type, session id): they come from the agent.
const maxLoggedField = 256

// refusedLog limits the "notification refused" log lines.
type refusedLog struct {
	mu         sync.Mutex
	last       time.Time
	suppressed int
}

// allow reports whether a line may be written now and how many refusals
// went unlogged since the last one.
func (l *refusedLog) allow(now time.Time) (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() && now.Sub(l.last) < refusedLogEvery {
		l.suppressed++
		return false, 0
	}
	n := l.suppressed
	l.last, l.suppressed = now, 0
	return true, n
}

// logRefused logs a refused notification, at most once per
// refusedLogEvery, with its values cut to maxLoggedField bytes.
func (s *Server) logRefused(reason, eventType, sessionID string) {
	ok, suppressed := s.refused.allow(time.Now())
	if !ok {
		return
	}
	args := []any{"reason", clipLogged(reason)}
	if eventType != "" {
		args = append(args, "event_type", clipLogged(eventType))
	}
	if sessionID != "" {
		args = append(args, "session_id", clipLogged(sessionID))
	}
	if suppressed > 0 {
		args = append(args, "refused_unlogged", suppressed)
	}
	s.log.Warn("notification refused", args...)
}

// clipLogged cuts s to maxLoggedField bytes at a rune boundary.
func clipLogged(s string) string {
	head, left := textcut.Head(s, maxLoggedField)
	if left == 0 {
		return head
	}
	return head + "…"
}
