// Package redact keeps secrets out of everything the harness stores. It
// holds the secret detectors (shared with the policy functions has_secret
// and secret_kinds) and the Redactor, which replaces each secret it finds,
// and each value at an operator-named field path, with a marker
// [REDACTED:kind:fingerprint]. The fingerprint is the first 8 hex digits of
// an HMAC-SHA256 under a per-deployment key, so two records can be seen to
// carry the same secret without revealing it.
package redact
