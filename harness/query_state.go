package harness

import (
	"math"
	"sync"
	"time"
)

// maxQuerySessions bounds the sessions whose query rate and owner the
// harness remembers; beyond it the tables start over (a session then gets
// a full bucket, and its owner is read again from the audit log).
const maxQuerySessions = 100000

// queryState holds the per-session query limits and the cache of session
// owners. The zero value is ready to use.
type queryState struct {
	mu      sync.Mutex
	buckets map[string]*tokenBucket
	owners  map[string]string
}

// tokenBucket is a classic token bucket: rate tokens per second, at most
// burst, one per query.
type tokenBucket struct {
	tokens float64
	last   time.Time
}

// allow takes one token from session's bucket. When none is left it
// returns how long until one is.
func (s *queryState) allow(session string, rate float64, burst int, now time.Time) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.buckets == nil || len(s.buckets) >= maxQuerySessions {
		if _, known := s.buckets[session]; !known {
			s.buckets = make(map[string]*tokenBucket)
		}
	}
	b := s.buckets[session]
	if b == nil {
		b = &tokenBucket{tokens: float64(burst), last: now}
		s.buckets[session] = b
	}
	if el := now.Sub(b.last).Seconds(); el > 0 {
		b.tokens = math.Min(float64(burst), b.tokens+el*rate)
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return 0, true
	}
	wait := time.Duration((1 - b.tokens) / rate * float64(time.Second))
	return max(wait, time.Millisecond), false
}

// tokens returns the tokens left in session's bucket (burst when unknown),
// without taking one.
func (s *queryState) tokens(session string, rate float64, burst int, now time.Time) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.buckets[session]
	if b == nil {
		return float64(burst)
	}
	return math.Min(float64(burst), b.tokens+max(0, now.Sub(b.last).Seconds())*rate)
}

func (s *queryState) owner(session string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.owners[session]
	return o, ok
}

// claimOwner makes principal the owner of session unless it has one.
func (s *queryState) claimOwner(session, principal string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.owners[session]; ok {
		return
	}
	if s.owners == nil || len(s.owners) >= maxQuerySessions {
		s.owners = make(map[string]string)
	}
	s.owners[session] = principal
}

func (s *queryState) setOwner(session, principal string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.owners == nil || len(s.owners) >= maxQuerySessions {
		s.owners = make(map[string]string)
	}
	s.owners[session] = principal
}
