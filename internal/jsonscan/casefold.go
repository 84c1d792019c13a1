package jsonscan

import "bytes"

// CaseVariant reports the name among names that key equals only when
// letter case is ignored (Unicode simple folding, as Go's encoding/json
// matches member names to struct fields), not exactly. A member so named
// is read as that field by some readers and ignored by exact ones, so a
// decoder that wants one reading of a message refuses it. names must be
// ASCII.
func CaseVariant(key []byte, names ...string) (string, bool) {
	for _, n := range names {
		// A fold of an ASCII letter is 1 to 3 bytes long (K and the
		// Kelvin sign), so no longer or shorter key can match.
		if len(key) < len(n) || len(key) > 3*len(n) {
			continue
		}
		if bytes.EqualFold(key, []byte(n)) && string(key) != n {
			return n, true
		}
	}
	return "", false
}

// ReportedKey returns a member name as an error message may show it: cut
// to MaxReportedKey bytes, invalid UTF-8 replaced.
func ReportedKey(key []byte) string { return reportedKey(key) }
