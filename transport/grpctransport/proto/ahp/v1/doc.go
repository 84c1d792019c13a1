// Package ahpv1 is the Go code generated from ahp.proto (package ahp.v1):
// the Harness service, whose Stream and Call RPCs carry JSON-RPC messages
// as bytes, and its Message type. Regenerate it with `go generate` in the
// parent directory; do not edit the .pb.go files by hand.
package ahpv1
