package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

func init() { register(newHealthCmd) }

// healthOptions are the flags of ahp health.
type healthOptions struct {
	admin   string
	ready   bool
	timeout time.Duration
}

func newHealthCmd() *cobra.Command {
	o := &healthOptions{}
	cmd := &cobra.Command{
		Use:   "health [--admin ADMIN_URL] [--ready]",
		Short: "Probe a harness's admin API: exit 0 when it is alive (or ready)",
		Long: `Probe the admin API of a running harness, for container health checks
and service managers: GET /healthz (alive) or, with --ready, GET /readyz
(ready: the store can write). No token is needed or sent.

Exit codes:
  0  the endpoint answered 200
  1  it answered another status, or could not be reached in time`,
		Example: `  ahp health
  ahp health --admin http://127.0.0.1:9090 --ready`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runHealth(cmd, o) },
	}
	def := os.Getenv("AHP_ADMIN")
	if def == "" {
		def = "http://127.0.0.1:7700"
	}
	f := cmd.Flags()
	f.StringVar(&o.admin, "admin", def, "admin API address of the harness (or $AHP_ADMIN)")
	f.BoolVar(&o.ready, "ready", false, "probe /readyz (the store can write) instead of /healthz")
	f.DurationVar(&o.timeout, "timeout", 3*time.Second, "how long to wait for the answer")
	return cmd
}

func runHealth(cmd *cobra.Command, o *healthOptions) error {
	path := "/healthz"
	if o.ready {
		path = "/readyz"
	}
	base := strings.TrimRight(o.admin, "/")
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return exitWith(1, fmt.Sprintf("--admin %q: want an http:// or https:// address of the admin API", o.admin))
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		return exitWith(1, fmt.Sprintf("--admin %q: %v", o.admin, err))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return exitWith(1, fmt.Sprintf("%s%s: %v (is ahp serve running with its admin API there?)", base, path, err))
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	text := strings.TrimSpace(string(body))
	if resp.StatusCode != http.StatusOK {
		return exitWith(1, fmt.Sprintf("%s%s: %s %s", base, path, resp.Status, text))
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s%s: %s\n", base, path, orDash(text))
	return nil
}
