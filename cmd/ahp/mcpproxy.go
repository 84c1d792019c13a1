package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/ahp-go/ahp/adapters/hooks"
	"github.com/ahp-go/ahp/adapters/mcpproxy"
	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/descriptor"
	"github.com/ahp-go/ahp/transport"
)

type mcpProxyOptions struct {
	connect    string
	listen     string
	descriptor string
	name       string
	session    string
	timeout    time.Duration
	apiKey     string
	apiKeyFile string
	dial       transport.DialOptions
}

func init() { register(newMCPProxyCmd) }

func newMCPProxyCmd() *cobra.Command {
	o := &mcpProxyOptions{}
	cmd := &cobra.Command{
		Use:   "mcp-proxy --connect ADDRESS [--listen http://HOST:PORT] [--descriptor FILE] -- COMMAND [ARGS...]",
		Short: "Run an MCP server behind a proxy that asks a harness before every tool call",
		Long: `Start the MCP server COMMAND over stdio and serve MCP on this process's
stdin/stdout (or, with --listen, over MCP Streamable HTTP, one server process
per MCP session). Every tools/call is sent to the harness as a pre_action
(tool_name, arguments, server): block answers the client with a tool error
(isError: true) carrying the reason, modify forwards the modified arguments,
escalate waits in the harness's approval queue; a post_action reports each
call's outcome. With --descriptor, tools/list shows only the descriptor's
tools and calls to other tools are refused. Everything else passes through.

A harness that cannot be reached or does not answer within --timeout makes
the call fail with a tool error: the proxy fails closed.

SIGINT or SIGTERM stops the proxy: its sessions end, each MCP server
process is stopped, and it exits with status 0.`,
		Example: `  ahp mcp-proxy --connect unix:./ahp.sock -- npx -y @modelcontextprotocol/server-everything
  ahp mcp-proxy --connect unix:./ahp.sock --listen http://127.0.0.1:8931 -- ./my-mcp-server`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMCPProxy(cmd, o, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.connect, "connect", defaultConnect(), "harness address (or $AHP_CONNECT; default: ahp serve's default socket)")
	f.StringVar(&o.listen, "listen", "", "serve MCP Streamable HTTP on http://HOST:PORT instead of stdio")
	f.StringVar(&o.descriptor, "descriptor", "", "agent descriptor whose tools form the allow-list of tools/list and tools/call")
	f.StringVar(&o.name, "name", "", "the server's name in the events (default: the command's base name)")
	f.StringVar(&o.session, "session", "", "AHP session_id of the events (default: a new random id)")
	f.DurationVar(&o.timeout, "timeout", 5*time.Minute, "longest wait for one decision, an approval included")
	f.StringVar(&o.apiKey, "listen-api-key", os.Getenv("AHP_MCP_PROXY_API_KEY"), "API key that HTTP clients must send as X-API-Key or Authorization: Bearer; required off loopback. Prefer $AHP_MCP_PROXY_API_KEY or --listen-api-key-file: a key on the command line shows in ps and shell history")
	f.StringVar(&o.apiKeyFile, "listen-api-key-file", "", "read the API key from FILE (first line; at most 4 KiB), instead of --listen-api-key")
	addDialFlags(f, &o.dial)
	return cmd
}

func runMCPProxy(cmd *cobra.Command, o *mcpProxyOptions, args []string) error {
	if o.connect == "" {
		return exitWith(exitFail, "--connect is required (or set AHP_CONNECT)")
	}
	if err := finishDialFlags(&o.dial); err != nil {
		return exitWith(exitFail, err.Error())
	}
	log, err := newLogger()
	if err != nil {
		return exitWith(exitFail, err.Error())
	}
	h := &hooks.DialHarness{Addr: o.connect, Dial: o.dial, Timeout: o.timeout, Version: buildVersion()}
	defer h.Close()
	opts := mcpproxy.Options{Harness: h, ServerName: o.name, SessionID: o.session, Timeout: o.timeout, Logger: log}
	if opts.ServerName == "" {
		opts.ServerName = filepath.Base(args[0])
	}
	if o.descriptor != "" {
		d, err := descriptor.Load(o.descriptor)
		if err != nil {
			return exitWith(exitFail, err.Error())
		}
		opts.AllowTools = map[string]bool{}
		for _, id := range d.ToolIDs() {
			opts.AllowTools[id] = true
			if target, ok := d.ToolTarget(id); ok && target != "" {
				opts.AllowTools[target] = true
			}
		}
	}
	upstream := func(ctx context.Context) (mcp.Connection, error) {
		c := exec.Command(args[0], args[1:]...)
		c.Stderr = cmd.ErrOrStderr()
		return (&mcp.CommandTransport{Command: c}).Connect(ctx)
	}
	// SIGINT and SIGTERM end the proxy in order: its sessions close and
	// their MCP server processes stop. Handling them also matters when
	// the proxy was started with SIGINT ignored (as a shell's background
	// job), where it would otherwise never stop on SIGINT.
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.listen == "" {
		if opts.SessionID == "" {
			opts.SessionID = "mcp-" + rand.Text()
		}
		up, err := upstream(ctx)
		if err != nil {
			return exitWith(exitFail, "start the MCP server: "+err.Error())
		}
		down, err := (&mcp.StdioTransport{}).Connect(ctx)
		if err != nil {
			return exitWith(exitFail, err.Error())
		}
		if err := mcpproxy.Proxy(ctx, down, up, opts); err != nil && !isClosed(err) {
			return exitWith(exitFail, err.Error())
		}
		return nil
	}
	return serveMCPProxyHTTP(ctx, cmd, o, upstream, opts)
}

// serveMCPProxyHTTP serves the proxy over Streamable HTTP. Off loopback an
// API key is required.
func serveMCPProxyHTTP(ctx context.Context, cmd *cobra.Command, o *mcpProxyOptions, upstream func(context.Context) (mcp.Connection, error), opts mcpproxy.Options) error {
	u, err := url.Parse(o.listen)
	if err != nil || u.Scheme != "http" || u.Port() == "" {
		return exitWith(exitFail, "--listen wants http://HOST:PORT")
	}
	if err := readMCPProxyKeyFile(cmd, o); err != nil {
		return exitWith(exitFail, err.Error())
	}
	if o.apiKey == "" && !auth.IsLoopbackHost(u.Hostname()) {
		return exitWith(exitFail, "--listen off loopback needs an API key: $AHP_MCP_PROXY_API_KEY, --listen-api-key-file or --listen-api-key")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	h := &mcpproxy.HTTPHandler{Upstream: upstream, Options: opts, Context: ctx}
	mux := http.NewServeMux()
	mux.Handle("/", requireKey(o.apiKey, h))
	err = mcpproxy.ListenAndServe(ctx, u.Host, mux, func(a net.Addr) {
		fmt.Fprintf(cmd.ErrOrStderr(), "ahp: MCP proxy listening on http://%s\n", a)
	})
	cancel()
	h.Wait() // every session's MCP server stopped
	if err != nil {
		return exitWith(exitFail, err.Error())
	}
	return nil
}

// isClosed reports whether err only says that one side went away.
func isClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, os.ErrClosed)
}

// maxKeyFile bounds the --listen-api-key-file read.
const maxKeyFile = 4 << 10

// readMCPProxyKeyFile sets o.apiKey from --listen-api-key-file, when
// given: the file's first line, without surrounding spaces. It wins over
// $AHP_MCP_PROXY_API_KEY; with --listen-api-key as well it is an error.
func readMCPProxyKeyFile(cmd *cobra.Command, o *mcpProxyOptions) error {
	if o.apiKeyFile == "" {
		return nil
	}
	if cmd.Flags().Changed("listen-api-key") {
		return errors.New("give either --listen-api-key or --listen-api-key-file, not both")
	}
	f, err := os.Open(o.apiKeyFile)
	if err != nil {
		return fmt.Errorf("--listen-api-key-file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return fmt.Errorf("--listen-api-key-file: %w", err)
	}
	if len(b) > maxKeyFile {
		return fmt.Errorf("--listen-api-key-file %s: longer than %d bytes", o.apiKeyFile, maxKeyFile)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	key := strings.TrimSpace(line)
	if key == "" {
		return fmt.Errorf("--listen-api-key-file %s: no key on its first line", o.apiKeyFile)
	}
	o.apiKey = key
	return nil
}

// requireKey refuses requests without key (as X-API-Key or a bearer
// token); an empty key lets every request through (loopback only). The
// SHA-256 digests are compared, in constant time, so that neither the
// key's bytes nor its length show in the time taken.
func requireKey(key string, next http.Handler) http.Handler {
	if key == "" {
		return next
	}
	want := sha256.Sum256([]byte(key))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("X-API-Key")
		if b, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			got = b
		}
		sum := sha256.Sum256([]byte(got))
		if got == "" || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="ahp-mcp-proxy"`)
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
