package auth

import (
	"errors"
	"net/http"

	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/transport"
)

// Middleware authenticates every request before calling next. A refused
// request gets 401 (with WWW-Authenticate) or 403 and never reaches next.
// An accepted request reaches next with server.WithPeer info in its
// context (transport, remote address, principal); when the secret came
// from the query string, the api_key and token parameters are removed from
// the URL next sees, so that nothing downstream logs them.
func Middleware(a Authenticator, opts MiddlewareOptions, next http.Handler) http.Handler {
	return NewGuard(a, opts).Middleware(next)
}

// Middleware wraps next like the package-level Middleware, with g.
func (g *Guard) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := FromHTTPRequest(r, g.opts.AllowQuery)
		p, err := g.Check(r.Context(), r.RemoteAddr, c)
		if err != nil {
			g.WriteRefusal(w, err)
			return
		}
		ctx := server.WithPeer(r.Context(), transport.Info{Transport: g.opts.Transport, Remote: r.RemoteAddr, Principal: p})
		r = r.WithContext(ctx)
		if c.FromQuery {
			stripQuerySecrets(r)
		}
		next.ServeHTTP(w, r)
	})
}

// WriteRefusal writes the HTTP answer to a refused request: 401 with a
// Bearer challenge (RFC 6750) for ErrUnauthenticated, 403 for
// ErrForbidden, 500 for an Authenticator failure. The body names the
// reason only.
func (g *Guard) WriteRefusal(w http.ResponseWriter, err error) {
	status := HTTPStatus(err)
	reason := ReasonOf(err)
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	switch status {
	case http.StatusUnauthorized:
		ch := `Bearer realm="` + g.opts.Realm + `"`
		var re *RefusalError
		if errors.As(err, &re) && re.Reason != ReasonMissing {
			ch += `, error="invalid_token"`
		}
		h.Set("WWW-Authenticate", ch)
	case http.StatusForbidden:
		h.Set("WWW-Authenticate", `Bearer realm="`+g.opts.Realm+`", error="insufficient_scope"`)
	}
	w.WriteHeader(status)
	_, _ = w.Write([]byte(http.StatusText(status) + ": " + reason + "\n"))
}

// stripQuerySecrets removes the credential parameters from r's URL.
func stripQuerySecrets(r *http.Request) {
	q := r.URL.Query()
	q.Del(QueryAPIKey)
	q.Del(QueryToken)
	u := *r.URL
	u.RawQuery = q.Encode()
	r.URL = &u
	r.RequestURI = u.RequestURI()
}
