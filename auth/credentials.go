package auth

import (
	"crypto/x509"
	"net/http"
	"strings"
)

// maxSecretBytes bounds a presented secret. Longer values are kept only up
// to this length plus one byte, which never matches a stored secret.
const maxSecretBytes = 4096

// Credentials are what a peer presented.
type Credentials struct {
	APIKey           string              // X-API-Key header, or api_key query parameter
	Bearer           string              // Authorization: Bearer, or token query parameter
	FromQuery        bool                // the secret came from the URL query (2.4 WebSocket client form)
	PeerCertificates []*x509.Certificate // verified client certificate chain (mutual TLS), leaf first
}

// Empty reports whether no secret and no certificate was presented.
func (c Credentials) Empty() bool {
	return c.APIKey == "" && c.Bearer == "" && len(c.PeerCertificates) == 0
}

// Query parameter names used by the 2.4 WebSocket client.
const (
	QueryAPIKey = "api_key"
	QueryToken  = "token"
)

// FromHTTPRequest collects the credentials of r. Headers win: X-API-Key and
// "Authorization: Bearer". Only when neither header carries a secret and
// allowQuery is true are the api_key and token query parameters read (the
// form the 2.4 WebSocket client uses); FromQuery then says so. The client
// certificate chain is taken from r.TLS.VerifiedChains, so it is present
// only when the TLS layer verified it.
func FromHTTPRequest(r *http.Request, allowQuery bool) Credentials {
	var c Credentials
	if v := r.Header.Get("X-API-Key"); v != "" {
		c.APIKey = bound(strings.TrimSpace(v))
	}
	if v := r.Header.Get("Authorization"); v != "" {
		if tok, ok := bearerToken(v); ok {
			c.Bearer = bound(tok)
		}
	}
	if c.APIKey == "" && c.Bearer == "" && allowQuery && r.URL != nil && r.URL.RawQuery != "" {
		q := r.URL.Query()
		if v := q.Get(QueryAPIKey); v != "" {
			c.APIKey, c.FromQuery = bound(v), true
		}
		if v := q.Get(QueryToken); v != "" {
			c.Bearer, c.FromQuery = bound(v), true
		}
	}
	if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 {
		c.PeerCertificates = r.TLS.VerifiedChains[0]
	}
	return c
}

// bearerToken extracts the token of an "Authorization: Bearer TOKEN"
// header value; the scheme name is case-insensitive (RFC 6750).
func bearerToken(v string) (string, bool) {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(v), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

func bound(s string) string {
	if len(s) > maxSecretBytes {
		return s[:maxSecretBytes+1]
	}
	return s
}
