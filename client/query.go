package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/ahp-go/ahp/protocol"
)

// NoAnswerError is returned by the typed query helpers when the harness
// answered null: it does not know the query type, refused the query (rate
// limit, another principal's session) or could not answer. Reason is the
// harness's explanation.
type NoAnswerError struct {
	QueryType string
	Reason    string
}

func (e *NoAnswerError) Error() string {
	return fmt.Sprintf("client: no answer to query %q: %s", e.QueryType, e.Reason)
}

// typedQuery sends a query and decodes a non-null answer into out.
func (c *Client) typedQuery(ctx context.Context, queryType string, payload any, out any) error {
	qr, err := c.Query(ctx, queryType, payload)
	if err != nil {
		return err
	}
	if a := bytes.TrimSpace(qr.Answer); len(a) == 0 || bytes.Equal(a, []byte("null")) {
		return &NoAnswerError{QueryType: queryType, Reason: qr.Reason}
	}
	if err := json.Unmarshal(qr.Answer, out); err != nil {
		return fmt.Errorf("client: bad %s answer: %w", queryType, err)
	}
	return nil
}

// Check asks what decision an event of type t with payload would get now
// (ahp/query "check"), without sending the event: nothing is decided,
// counted or sent for approval. Only pre_action and pre_prompt can be
// checked.
func (c *Client) Check(ctx context.Context, t protocol.EventType, payload any) (*protocol.CheckAnswer, error) {
	raw, err := marshalPayload(payload)
	if err != nil {
		return nil, err
	}
	var a protocol.CheckAnswer
	if err := c.typedQuery(ctx, protocol.QueryCheck, protocol.CheckQuery{EventType: t, Payload: raw}, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// Budget returns the session's counters and what is left of the limits
// the policy sets on them (ahp/query "budget").
func (c *Client) Budget(ctx context.Context) (*protocol.BudgetAnswer, error) {
	var a protocol.BudgetAnswer
	if err := c.typedQuery(ctx, protocol.QueryBudget, struct{}{}, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// Approval returns the status of an approval (ahp/query "approval"): an
// agent told to wait can poll it.
func (c *Client) Approval(ctx context.Context, id string) (*protocol.ApprovalAnswer, error) {
	var a protocol.ApprovalAnswer
	if err := c.typedQuery(ctx, protocol.QueryApproval, protocol.ApprovalQuery{ApprovalID: id}, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// PendingApprovals returns the session's approvals still waiting for a
// human (ahp/query "approval" without an id).
func (c *Client) PendingApprovals(ctx context.Context) (*protocol.PendingApprovals, error) {
	var a protocol.PendingApprovals
	if err := c.typedQuery(ctx, protocol.QueryApproval, protocol.ApprovalQuery{}, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// Rules returns the rules that could decide events of q's event type and
// tool (ahp/query "rules"); empty fields match all.
func (c *Client) Rules(ctx context.Context, q protocol.RulesQuery) (*protocol.RulesAnswer, error) {
	var a protocol.RulesAnswer
	if err := c.typedQuery(ctx, protocol.QueryRules, q, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// Policy describes the harness's loaded policy (ahp/query "policy").
func (c *Client) Policy(ctx context.Context) (*protocol.PolicyAnswer, error) {
	var a protocol.PolicyAnswer
	if err := c.typedQuery(ctx, protocol.QueryPolicy, struct{}{}, &a); err != nil {
		return nil, err
	}
	return &a, nil
}
