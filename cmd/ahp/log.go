package main

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

var (
	logLevel  string
	logFormat string
)

func addLogFlags(root *cobra.Command) {
	root.PersistentFlags().StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	root.PersistentFlags().StringVar(&logFormat, "log-format", "text", "log format on stderr: text or json")
}

// newLogger builds the process logger from the persistent flags. Logs always
// go to stderr: under stdio, stdout belongs to the protocol.
func newLogger() (*slog.Logger, error) {
	var lvl slog.Level
	switch strings.ToLower(logLevel) {
	case "debug":
		lvl = slog.LevelDebug
	case "info", "":
		lvl = slog.LevelInfo
	case "warn", "warning":
		lvl = slog.LevelWarn
	case "error":
		lvl = slog.LevelError
	default:
		return nil, fmt.Errorf("unknown --log-level %q (want debug, info, warn or error)", logLevel)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch strings.ToLower(logFormat) {
	case "text", "":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	default:
		return nil, fmt.Errorf("unknown --log-format %q (want text or json)", logFormat)
	}
}
