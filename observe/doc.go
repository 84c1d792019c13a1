// Package observe lets people watch and steer a running harness. It speaks
// the observer side of the Agent Host Protocol draft over WebSocket
// (JSON-RPC 2.0, one message per text frame): channels (ahp-root:// and
// ahp-session:/<id>), subscriptions with snapshots, one harness-wide
// action sequence (serverSeq), and reconnection with replay from an
// in-memory ring, then from the store.
//
// The harness publishes to a Hub through harness.Observer; every observer
// has a bounded queue, so a slow or stuck observer is disconnected, never
// waited for. The Handler also serves the dashboard, whose assets are
// embedded in the binary, and its cookie login. See docs/observer-protocol.md.
package observe
