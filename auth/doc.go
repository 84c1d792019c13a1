// Package auth decides who may talk to a harness over the network. It reads
// the credentials a peer presented (API keys, bearer tokens, verified client
// certificates), maps them to a transport.Principal with roles using a
// credentials file, and offers the pieces every network transport shares:
// an HTTP middleware, a Guard for non-HTTP transports, refusal metrics and
// TLS configuration helpers.
package auth
