// Package conformance checks a running AHP 2.4 server against the wire
// rules of spec §1–§9: handshake and version rejection, id echo, JSON-RPC
// error codes, blocking and fire-and-forget misuse, depth and batch
// limits, run-contract validation, typed decisions, ping, oversized
// messages and requests answered while another is slow.
//
// It speaks to the server through a transport.Conn with raw messages, so
// it can send what a well-behaved client never would. Run drives every
// check and returns one Result per check; Report.Write prints them one a
// line. `ahp conformance --connect ADDR` is the command-line front end.
package conformance
