package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"strings"
)

// HashPrefix marks a secret stored as its SHA-256 digest in hex.
const HashPrefix = "sha256:"

// HashSecret returns the form of secret to put into a credentials file:
// "sha256:" followed by the hex SHA-256 digest of the secret's bytes. It is
// what `printf %s "$KEY" | sha256sum` prints, with the prefix.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return HashPrefix + hex.EncodeToString(sum[:])
}

// parseSecret turns a credentials-file entry into a digest. plain reports
// whether the entry held the secret itself.
func parseSecret(s string) (sum [sha256.Size]byte, plain bool, err error) {
	if s == "" {
		return sum, false, fmt.Errorf("empty secret")
	}
	if rest, ok := strings.CutPrefix(s, HashPrefix); ok {
		b, err := hex.DecodeString(strings.ToLower(rest))
		if err != nil || len(b) != sha256.Size {
			return sum, false, fmt.Errorf("a %q secret needs %d hex digits", HashPrefix, 2*sha256.Size)
		}
		copy(sum[:], b)
		return sum, false, nil
	}
	return sha256.Sum256([]byte(s)), true, nil
}

// secretEntry is one stored secret, as a digest, and whom it names.
type secretEntry struct {
	sum   [sha256.Size]byte
	owner int // index into Store.principals
}

// lookup hashes presented and compares the digest with every entry in
// constant time, without stopping at a match, so that the time taken does
// not say which entry (if any) matched. It returns the owner or -1.
func lookup(entries []secretEntry, presented string) int {
	sum := sha256.Sum256([]byte(presented))
	found := -1
	for i := range entries {
		eq := subtle.ConstantTimeCompare(sum[:], entries[i].sum[:])
		found = subtle.ConstantTimeSelect(eq, entries[i].owner, found)
	}
	return found
}
