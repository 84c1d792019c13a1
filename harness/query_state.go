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
	mu         sync.Mutex
	buckets    map[string]*tokenBucket
	owners     map[string]string
	principals map[string]*tokenBucket // per authenticated principal
}

// principalQueryFactor is how many sessions' worth of queries one
// principal may ask in all: new session ids do not buy new queries.
const principalQueryFactor = 8

// maxQueryPrincipals bounds the principals whose query rate is kept (they
// come from the credentials, so there are few); beyond it the table starts
// over.
const maxQueryPrincipals = 10000

// allowPrincipal takes one token from principal's bucket (rate and burst
// principalQueryFactor times a session's); the empty principal (no
// credentials) has none to take.
func (s *queryState) allowPrincipal(principal string, rate float64, burst int, now time.Time) (time.Duration, bool) {
	if principal == "" {
		return 0, true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.principals == nil || len(s.principals) >= maxQueryPrincipals {
		if _, known := s.principals[principal]; !known {
			s.principals = make(map[string]*tokenBucket)
		}
	}
	return takeToken(s.principals, principal, rate*principalQueryFactor, burst*principalQueryFactor, now)
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
	return takeToken(s.buckets, session, rate, burst, now)
}

// takeToken takes one token from the bucket of key in m (a full one when
// new), or says how long until one is.
func takeToken(m map[string]*tokenBucket, key string, rate float64, burst int, now time.Time) (time.Duration, bool) {
	b := m[key]
	if b == nil {
		b = &tokenBucket{tokens: float64(burst), last: now}
		m[key] = b
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
