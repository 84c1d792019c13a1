//go:build tools

// Package deps pins the modules the project builds on so that `go mod tidy`
// keeps them while the packages that use them are being written.
package deps

import (
	_ "cel.dev/cel-go/cel"
	_ "github.com/coder/websocket"
	_ "github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/santhosh-tekuri/jsonschema/v6"
	_ "github.com/spf13/cobra"
	_ "go.yaml.in/yaml/v3"
	_ "google.golang.org/grpc"
	_ "google.golang.org/grpc/health"
	_ "google.golang.org/protobuf/proto"
	_ "modernc.org/sqlite"
)
