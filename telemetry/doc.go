// Package telemetry exports what the harness decides to OpenTelemetry:
// every decision becomes a span and the harness's Prometheus metrics are
// bridged to OTLP metrics, sent over OTLP (HTTP/protobuf or gRPC) with the
// official SDK. It is off unless configured; when off nothing of it runs.
//
// An Exporter is a harness.Observer: it sees audit records after the store
// accepted them, redacted as stored, so a span never holds a raw payload
// or a secret. See docs/telemetry.md.
package telemetry
