package auth

import (
	"errors"
	"net/http"
)

// ErrUnauthenticated is wrapped by every error that means "we do not know
// who you are" (HTTP 401).
var ErrUnauthenticated = errors.New("auth: unauthenticated")

// ErrForbidden is wrapped by every error that means "we know who you are,
// and you may not do this" (HTTP 403).
var ErrForbidden = errors.New("auth: forbidden")

// Refusal reasons, used in errors and as the reason label of
// ahp_auth_refusals_total.
const (
	ReasonMissing     = "missing_credentials"     // nothing presented
	ReasonInvalid     = "invalid_credentials"     // a secret that matches no principal
	ReasonUnknownCert = "unknown_certificate"     // a verified certificate that maps to no principal
	ReasonConflict    = "conflicting_credentials" // secret and certificate name different principals
	ReasonForbidden   = "forbidden"               // the principal lacks the required role
	ReasonTLS         = "tls_handshake"           // the TLS handshake failed (bad or missing client certificate)
)

// RefusalError is the error of a refused peer. It wraps ErrForbidden when
// Reason is ReasonForbidden and ErrUnauthenticated otherwise. Its text
// never contains a presented secret.
type RefusalError struct {
	Reason string
	Detail string // safe to log: names a principal or role, never a secret
}

func (e *RefusalError) Error() string {
	base := "auth: unauthenticated"
	if e.Reason == ReasonForbidden {
		base = "auth: forbidden"
	}
	if e.Detail == "" {
		return base + " (" + e.Reason + ")"
	}
	return base + " (" + e.Reason + "): " + e.Detail
}

// Unwrap returns ErrForbidden or ErrUnauthenticated.
func (e *RefusalError) Unwrap() error {
	if e.Reason == ReasonForbidden {
		return ErrForbidden
	}
	return ErrUnauthenticated
}

func refuse(reason, detail string) error { return &RefusalError{Reason: reason, Detail: detail} }

// ReasonOf returns the refusal reason of err: the Reason of a
// *RefusalError, ReasonForbidden or ReasonInvalid for other errors wrapping
// ErrForbidden or ErrUnauthenticated, and "error" otherwise.
func ReasonOf(err error) string {
	var re *RefusalError
	switch {
	case errors.As(err, &re):
		return re.Reason
	case errors.Is(err, ErrForbidden):
		return ReasonForbidden
	case errors.Is(err, ErrUnauthenticated):
		return ReasonInvalid
	}
	return "error"
}

// HTTPStatus maps an authentication error to an HTTP status: 403 for
// ErrForbidden, 401 for ErrUnauthenticated, 500 for anything else (an
// Authenticator that failed is not a reason to let the peer in).
func HTTPStatus(err error) int {
	switch {
	case errors.Is(err, ErrForbidden):
		return http.StatusForbidden
	case errors.Is(err, ErrUnauthenticated):
		return http.StatusUnauthorized
	}
	return http.StatusInternalServerError
}
