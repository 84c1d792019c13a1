package observe

import (
	"sort"
	"time"
)

// statsWindow is how many seconds of decision rates are kept.
const statsWindow = 60

// latencyBounds are the upper bounds (ms) of the latency histogram's
// buckets; the last bucket counts everything above.
var latencyBounds = []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 1000}

// stats are the numbers the dashboard draws: decisions per second by
// outcome, the latency histogram, blocks by rule and rule hits.
type stats struct {
	changed bool
	secs    [statsWindow]secBucket
	latency []int64
	blocks  map[string]int64
	hits    map[string]int64
	total   map[string]int64
}

type secBucket struct {
	unix     int64
	outcomes map[string]int64
}

func newStats() *stats {
	return &stats{latency: make([]int64, len(latencyBounds)+1), blocks: map[string]int64{},
		hits: map[string]int64{}, total: map[string]int64{}}
}

// add counts a recorded entry (decisions only).
func (s *stats) add(now time.Time, e *Entry) {
	if e.Outcome == "" {
		return // a notification: nothing was decided
	}
	s.changed = true
	sec := now.Unix()
	b := &s.secs[sec%statsWindow]
	if b.unix != sec {
		*b = secBucket{unix: sec, outcomes: map[string]int64{}}
	}
	b.outcomes[e.Outcome]++
	s.total[e.Outcome]++
	if e.Blocking {
		i := sort.SearchFloat64s(latencyBounds, e.LatencyMs)
		s.latency[i]++
	}
	if e.RuleID != "" {
		s.hits[e.RuleID]++
		if e.Outcome == "block" || e.Outcome == "reject" || e.Outcome == "skip" {
			s.blocks[e.RuleID]++
		}
	}
}

// StatsJSON is what the root channel shows of the statistics.
type StatsJSON struct {
	// PerSecond lists the last 60 seconds, oldest first.
	PerSecond     []SecondJSON     `json:"perSecond"`
	LatencyBounds []float64        `json:"latencyBoundsMs"`
	Latency       []int64          `json:"latencyCounts"`
	BlocksByRule  map[string]int64 `json:"blocksByRule"`
	Outcomes      map[string]int64 `json:"outcomes"`
}

// SecondJSON is one second of decisions by outcome.
type SecondJSON struct {
	Unix     int64            `json:"t"`
	Outcomes map[string]int64 `json:"outcomes"`
}

func (s *stats) json(now time.Time) StatsJSON {
	out := StatsJSON{LatencyBounds: latencyBounds, Latency: append([]int64(nil), s.latency...),
		BlocksByRule: copyCounts(s.blocks), Outcomes: copyCounts(s.total)}
	end := now.Unix()
	for t := end - statsWindow + 1; t <= end; t++ {
		b := s.secs[((t%statsWindow)+statsWindow)%statsWindow]
		sj := SecondJSON{Unix: t, Outcomes: map[string]int64{}}
		if b.unix == t {
			sj.Outcomes = copyCounts(b.outcomes)
		}
		out.PerSecond = append(out.PerSecond, sj)
	}
	return out
}

func copyCounts(m map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
