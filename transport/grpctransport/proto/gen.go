// Package proto holds the protocol buffer definition of the AHP gRPC
// transport (ahp/v1/ahp.proto) and the command that regenerates its Go
// code in ahp/v1. Run `go generate ./transport/grpctransport/proto` with
// protoc, protoc-gen-go and protoc-gen-go-grpc on PATH (see
// docs/transports.md for the versions used).
package proto

//go:generate protoc --proto_path=. --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative ahp/v1/ahp.proto
