package duration

import (
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"7d": 7 * 24 * time.Hour, "1d": 24 * time.Hour, "0d": 0, "24h": 24 * time.Hour,
		"90s": 90 * time.Second, "1h30m": 90 * time.Minute, " 15m ": 15 * time.Minute, "0": 0,
	} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "d", "7", "7days", "-1d", "1.5d", "99999999999d", "1w"} {
		if _, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) accepted", in)
		}
	}
}
