package main

import (
	"context"
	"log/slog"

	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/server"
)

// buildHarness returns the handler that decides events, and a function
// that releases what it holds.
func buildHarness(_ context.Context, log *slog.Logger, _ *serveOptions) (server.Handler, func(), error) {
	return &harness.Baseline{Log: log}, func() {}, nil
}
