// Package httptransport is the client side of AHP over HTTP: each message
// is POSTed to the harness endpoint (by default /ahp) and the response
// bodies are handed back as the connection's incoming messages, in the
// order they complete. Importing it registers the "http" and "https"
// schemes with transport.Dial. Dial keeps its own pool of HTTP/1.1
// keep-alive connections; NewConn goes through a caller's *http.Client
// (for proxies and the like). The server side is package
// transport/httpserver.
package httptransport
