package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ahp-go/ahp/admin"
)

// The admin API's clients (ahp approvals) present one credential: a bearer
// token (--token, $AHP_ADMIN_TOKEN, or the local admin token of
// --data-dir) or an API key (--api-key, --api-key-file,
// $AHP_ADMIN_API_KEY), the two kinds a credentials file gives approvers.
// $AHP_API_KEY, an agent's key for ahp send, is not read here: an agent's
// credential never answers an approval, and a human's commands should not
// pick one up by accident.

// adminAPIKeyFlags holds the API key flags of one command.
type adminAPIKeyFlags struct {
	key, file string
}

// add registers --api-key and --api-key-file on f.
func (k *adminAPIKeyFlags) add(f *pflag.FlagSet) {
	f.StringVar(&k.key, "api-key", "", "approver or admin API key, sent as X-API-Key (prefer $AHP_ADMIN_API_KEY or --api-key-file: flags end up in shell history)")
	f.StringVar(&k.file, "api-key-file", "", "file holding the approver or admin API key (first line)")
}

// value returns the API key the flags or the environment give, "" when none.
func (k *adminAPIKeyFlags) value() (string, error) {
	switch {
	case k.key != "":
		return k.key, nil
	case k.file != "":
		b, err := os.ReadFile(k.file)
		if err != nil {
			return "", fmt.Errorf("--api-key-file: %w", err)
		}
		first, _, _ := strings.Cut(string(b), "\n")
		if first = strings.TrimSpace(first); first == "" {
			return "", fmt.Errorf("--api-key-file %s: empty", k.file)
		}
		return first, nil
	}
	return os.Getenv("AHP_ADMIN_API_KEY"), nil
}

// authorize sets the credential of an admin API request: an explicit token
// (--token, $AHP_ADMIN_TOKEN) first, then an API key, then the local admin
// token of --data-dir.
func (o *adminClientOptions) authorize(req *http.Request) error {
	if o.token == "" && os.Getenv("AHP_ADMIN_TOKEN") == "" {
		key, err := o.apiKey.value()
		if err != nil {
			return err
		}
		if key != "" {
			req.Header.Set("X-API-Key", key)
			return nil
		}
	}
	tok, err := o.bearer()
	if err != nil {
		return fmt.Errorf("%w; an API key works too: $AHP_ADMIN_API_KEY, --api-key-file or --api-key", err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	return nil
}

// approvalIDLen is the length of an approval id (128 bits in hex).
const approvalIDLen = 32

// resolveApprovalID turns what a human typed (a whole id, or its first
// characters, as "ahp approvals list" and the README show them, with or
// without a trailing "…") into one approval's id. pendingOnly limits the
// search to pending approvals (to approve or deny). Several matches are
// an error that lists them; none leaves the id as typed, for the admin API
// to answer (404 when it names no approval).
func (o *adminClientOptions) resolveApprovalID(ctx context.Context, typed string, pendingOnly bool) (string, error) {
	id := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSpace(typed), "…"), "...")
	if len(id) >= approvalIDLen || id == "" {
		return id, nil
	}
	q := url.Values{"limit": {"1000"}}
	what := "approval"
	if pendingOnly {
		q.Set("status", "pending")
		what = "pending approval"
	}
	var out struct {
		Approvals []admin.ApprovalJSON `json:"approvals"`
	}
	if err := o.call(ctx, http.MethodGet, "/v1/approvals?"+q.Encode(), nil, &out); err != nil {
		return "", err
	}
	var matches []admin.ApprovalJSON
	for _, a := range out.Approvals {
		if strings.HasPrefix(a.ID, strings.ToLower(id)) {
			matches = append(matches, a)
		}
	}
	switch len(matches) {
	case 0:
		// Not a prefix of any: the admin API says what it makes of it.
		return id, nil
	case 1:
		return matches[0].ID, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%q is ambiguous: %d %ss start with it; give more of the id:", id, len(matches), what)
	for i, a := range matches {
		if i == 10 {
			fmt.Fprintf(&b, "\n  … and %d more", len(matches)-i)
			break
		}
		fmt.Fprintf(&b, "\n  %s  %s  %s  %s", a.ID, a.Status, a.RuleID, a.SessionID)
	}
	return "", fmt.Errorf("%s", b.String())
}
