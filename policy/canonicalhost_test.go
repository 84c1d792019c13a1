package policy

import "testing"

// TestCanonicalHost: canonical_host gives one text for every spelling of
// an address a client accepts, and a resolver's form of a name.
func TestCanonicalHost(t *testing.T) {
	for in, want := range map[string]string{
		"169.254.169.254":           "169.254.169.254",
		"2852039166":                "169.254.169.254",
		"0xa9fea9fe":                "169.254.169.254",
		"0251.0376.0251.0376":       "169.254.169.254",
		"169.254.43518":             "169.254.169.254",
		"[::ffff:169.254.169.254]":  "169.254.169.254",
		"::ffff:a9fe:a9fe":          "169.254.169.254",
		"[FD00:EC2::254]":           "fd00:ec2::254",
		"Metadata.Google.Internal.": "metadata.google.internal",
		"example.com":               "example.com",
		"":                          "",
	} {
		if got := canonicalHost(in); got != want {
			t.Errorf("canonical_host(%q) = %q, want %q", in, got, want)
		}
	}
}
