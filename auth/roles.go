package auth

import (
	"context"

	"github.com/ahp-go/ahp/transport"
)

// Roles a principal may hold. Admin holds every role (see
// transport.Principal.Has).
const (
	RoleAgent    = "agent"    // may send handshakes, events, batches and queries
	RoleObserver = "observer" // may watch decisions and runs
	RoleApprover = "approver" // may answer escalations
	RoleAdmin    = "admin"    // everything
)

// KnownRole reports whether r is one of the roles above.
func KnownRole(r string) bool {
	switch r {
	case RoleAgent, RoleObserver, RoleApprover, RoleAdmin:
		return true
	}
	return false
}

// Authenticator checks credentials and returns the principal, or an error
// wrapping ErrUnauthenticated. The returned principal is shared and must not
// be modified.
type Authenticator interface {
	Authenticate(ctx context.Context, c Credentials) (*transport.Principal, error)
}

// AuthenticatorFunc adapts a function to Authenticator.
type AuthenticatorFunc func(ctx context.Context, c Credentials) (*transport.Principal, error)

// Authenticate calls f.
func (f AuthenticatorFunc) Authenticate(ctx context.Context, c Credentials) (*transport.Principal, error) {
	return f(ctx, c)
}

// Require returns an error wrapping ErrForbidden unless p holds role. An
// empty role requires nothing.
func Require(p *transport.Principal, role string) error {
	if role == "" || p.Has(role) {
		return nil
	}
	id := "<none>"
	if p != nil {
		id = p.ID
	}
	return refuse(ReasonForbidden, "principal "+id+" lacks role "+role)
}

// Anonymous is the principal of InsecureNoAuth: it holds role agent only.
var Anonymous = &transport.Principal{ID: "anonymous", Roles: []string{RoleAgent}}

// InsecureNoAuth accepts every peer as Anonymous, whatever it presents.
// Anyone who can reach the listener can then send events and read
// decisions (which may reveal policy). Use it only on a trusted network or
// behind a proxy that authenticates; `ahp serve --insecure-no-auth` selects it.
type InsecureNoAuth struct{}

// Authenticate returns Anonymous.
func (InsecureNoAuth) Authenticate(context.Context, Credentials) (*transport.Principal, error) {
	return Anonymous, nil
}
