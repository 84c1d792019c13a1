package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ahp-go/ahp/admin"
)

func init() { register(newApprovalsCmd) }

// adminClientOptions say how to reach the admin API.
type adminClientOptions struct {
	addr    string
	token   string
	dataDir string
	apiKey  adminAPIKeyFlags
}

func addAdminClientFlags(cmd *cobra.Command, o *adminClientOptions) {
	f := cmd.PersistentFlags()
	def := os.Getenv("AHP_ADMIN")
	if def == "" {
		def = "http://127.0.0.1:7700"
	}
	f.StringVar(&o.addr, "admin", def, "admin API address (or $AHP_ADMIN)")
	f.StringVar(&o.token, "token", "", "approver or admin token; prefer $AHP_ADMIN_TOKEN, default: the local token in --data-dir")
	f.StringVar(&o.dataDir, "data-dir", defaultDataDir(), "data directory of a local harness, where its admin token is (or $AHP_DATA_DIR)")
	o.apiKey.add(f)
}

// bearer returns the token to present.
func (o *adminClientOptions) bearer() (string, error) {
	if o.token != "" {
		return o.token, nil
	}
	if t := os.Getenv("AHP_ADMIN_TOKEN"); t != "" {
		return t, nil
	}
	b, err := os.ReadFile(filepath.Join(o.dataDir, admin.TokenFile))
	if err != nil {
		return "", fmt.Errorf("no token: set $AHP_ADMIN_TOKEN or --token, or run next to a harness whose --data-dir holds %s (%v)", admin.TokenFile, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// call performs one admin API request and decodes a JSON answer into out.
func (o *adminClientOptions) call(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(o.addr, "/")+path, rd)
	if err != nil {
		return err
	}
	if err := o.authorize(req); err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("admin API at %s: %w", o.addr, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			return fmt.Errorf("%s (HTTP %d)", e.Error, resp.StatusCode)
		}
		return fmt.Errorf("admin API answered HTTP %d", resp.StatusCode)
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

func newApprovalsCmd() *cobra.Command {
	o := &adminClientOptions{}
	cmd := &cobra.Command{
		Use:   "approvals",
		Short: "List and answer escalations waiting for a human",
		Long: `List and answer the approvals a harness is waiting for.

When a policy rule escalates with await_approval (or an agent sends a
confirmation event), the agent's request waits until a human approves or
denies it here, or until the rule's timeout applies its fallback.

These commands talk to the harness's admin API (default
http://127.0.0.1:7700) with an approver or admin credential: a token
($AHP_ADMIN_TOKEN, --token), an API key ($AHP_ADMIN_API_KEY,
--api-key-file, --api-key), or, on the harness's machine, the local token
the harness wrote to <data-dir>/admin.token. An ID may be given by its
first characters, as long as one approval starts with them. That token is for humans: an agent must never
hold it. Agent credentials, and the credentials of the principal whose
event raised an approval, never answer it, and approve/deny refuse to run
inside a supervised agent's session ($` + admin.SessionEnv + ` set by ahp's
hooks, or CLAUDECODE / GEMINI_CLI set by the agents' shell tools).`,
	}
	addAdminClientFlags(cmd, o)
	var status string
	var asJSON bool
	var limit int
	list := &cobra.Command{
		Use:   "list",
		Short: "List approvals (pending ones by default)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			q := url.Values{"limit": {strconv.Itoa(limit)}}
			if status != "all" {
				q.Set("status", status)
			}
			path := "/v1/approvals?" + q.Encode()
			var out struct {
				Approvals []admin.ApprovalJSON `json:"approvals"`
			}
			if err := o.call(ctx, http.MethodGet, path, nil, &out); err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				for _, a := range out.Approvals {
					if err := enc.Encode(a); err != nil {
						return err
					}
				}
				return nil
			}
			if len(out.Approvals) == 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "no %s approvals\n", status)
				return nil
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tCREATED\tSTATUS\tSESSION\tAGENT\tRULE\tREASON")
			for _, a := range out.Approvals {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.ID, a.Created.Local().Format(time.DateTime),
					a.Status, a.SessionID, a.AgentID, a.RuleID, oneLine(a.Reason, 60))
			}
			return tw.Flush()
		},
	}
	list.Flags().StringVar(&status, "status", "pending", "pending, approved, denied, expired or all")
	list.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per line")
	list.Flags().IntVar(&limit, "limit", 100, "list at most this many, oldest first (1 to 1000)")
	show := &cobra.Command{
		Use:   "show ID",
		Short: "Show one approval whole, with the event it asks about",
		Long: `Show one approval as the admin API returns it (JSON, indented), with the
whole event that asks for it and its effects (what the action does, as the
harness reads it: programs run, files changed, hosts reached): read what
would run before answering.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			id, err := o.resolveApprovalID(ctx, args[0], false)
			if err != nil {
				return err
			}
			var a json.RawMessage
			if err := o.call(ctx, http.MethodGet, "/v1/approvals/"+url.PathEscape(id), nil, &a); err != nil {
				return err
			}
			var b bytes.Buffer
			if err := json.Indent(&b, a, "", "  "); err != nil {
				return err
			}
			b.WriteByte('\n')
			_, err = cmd.OutOrStdout().Write(b.Bytes())
			return err
		},
	}
	cmd.AddCommand(list, show, decideCmd(o, true), decideCmd(o, false))
	return cmd
}

func decideCmd(o *adminClientOptions, approve bool) *cobra.Command {
	verb, past := "deny", "denied"
	if approve {
		verb, past = "approve", "approved"
	}
	var reason string
	c := &cobra.Command{
		Use:   verb + " ID",
		Short: strings.ToUpper(verb[:1]) + verb[1:] + " a pending approval; the waiting agent gets the answer at once",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if env := supervisedSession(os.Getenv); env != "" {
				return fmt.Errorf("refusing to %s: this shell is inside a supervised agent session ($%s is set); approvals are answered by a human, from a terminal of their own", verb, env)
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			id, err := o.resolveApprovalID(ctx, args[0], true)
			if err != nil {
				return err
			}
			var a admin.ApprovalJSON
			if err := o.call(ctx, http.MethodPost, "/v1/approvals/"+url.PathEscape(id)+"/"+verb, map[string]string{"reason": reason}, &a); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "approval %s %s by %s\n", a.ID, past, a.DecidedBy)
			return nil
		},
	}
	c.Flags().StringVar(&reason, "reason", "", "why (recorded and sent to the agent)")
	return c
}

// sessionMarkers are environment variables that say a command runs inside
// a supervised agent's session: the one ahp's hooks set, and the ones the
// agents set in the environment of their shell tools (Claude Code sets
// CLAUDECODE=1, Gemini CLI sets GEMINI_CLI=1).
var sessionMarkers = []string{admin.SessionEnv, "CLAUDECODE", "GEMINI_CLI"}

// supervisedSession returns the first session marker set in the
// environment, "" when none is.
func supervisedSession(getenv func(string) string) string {
	for _, k := range sessionMarkers {
		if getenv(k) != "" {
			return k
		}
	}
	return ""
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n-1] + "…"
	}
	return s
}
