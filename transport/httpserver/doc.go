// Package httpserver serves AHP over HTTP: a Handler that answers one
// JSON-RPC message per POST (authenticated with package auth, bounded in
// size and concurrency) and can hand WebSocket upgrades on the same path to
// another handler, plus a Server that runs it with the timeouts and limits
// an internet-facing listener needs, with TLS and mutual TLS. It is
// separate from package transport because it depends on package server.
package httpserver
