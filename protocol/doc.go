// Package protocol holds the wire types of the Agent Harness Protocol 2.4:
// event envelopes, the handshake, queries, generic and typed decisions, the
// typed payloads and the run contract (run lifecycle, task list,
// verification), with the rules each event type follows.
//
// The types encode exactly as the 2.4 implementation writes them and decode
// both an absent key and null wherever the 2.4 implementation may write null.
// The package does no I/O.
package protocol

// Version is the protocol version this package speaks.
const Version = "2.4"
