// Package duration reads the durations that ahp's commands and
// configuration take: Go's syntax (90s, 15m, 24h, 1h30m) and whole days
// (7d), so that every --since, --until and configuration duration accepts
// the same spellings.
package duration

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// maxDays bounds a day count so that it fits a time.Duration (~292 years).
const maxDays = 100 * 365

// Parse reads s as a Go duration or a whole number of days ("7d"). A
// negative duration is accepted as Go's syntax allows; callers that need
// a positive one check it.
func Parse(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if days, ok := strings.CutSuffix(s, "d"); ok && days != "" {
		n, err := strconv.ParseUint(days, 10, 32)
		if err != nil || n > maxDays {
			return 0, fmt.Errorf("%q is not a duration (examples: 90s, 15m, 24h, 7d)", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (examples: 90s, 15m, 24h, 7d)", s)
	}
	return d, nil
}
