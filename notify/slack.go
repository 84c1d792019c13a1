package notify

import (
	"fmt"
	"strings"
	"time"
)

// slackBody is a Slack incoming-webhook body: a plain fallback text (shown
// in notifications) and blocks (shown in the channel).
type slackBody struct {
	Text   string       `json:"text"`
	Blocks []slackBlock `json:"blocks"`
}

type slackBlock struct {
	Type string      `json:"type"` // section or context
	Text *slackText  `json:"text,omitempty"`
	Elts []slackText `json:"elements,omitempty"`
}

type slackText struct {
	Type string `json:"type"` // mrkdwn
	Text string `json:"text"`
}

// slackSectionMax is Slack's bound on a section's text.
const slackSectionMax = 3000

// newSlackBody builds the Slack body of m.
func newSlackBody(m Message) slackBody {
	rule := m.RuleID
	if m.Pack != "" {
		rule += " (pack " + m.Pack + ")"
	}
	what := m.Action.EventType
	if m.Action.Tool != "" {
		what += " " + m.Action.Tool
	}
	var title, text string
	if m.Kind == KindPending {
		title = "*Approval waiting*"
		text = fmt.Sprintf("Approval waiting: agent %s wants to run %s (rule %s)", m.AgentID, what, rule)
	} else {
		title = "*Approval " + strings.ReplaceAll(m.Outcome, "_", " ") + "*"
		text = fmt.Sprintf("Approval %s: %s of agent %s (rule %s)", strings.ReplaceAll(m.Outcome, "_", " "), what, m.AgentID, rule)
	}

	var head strings.Builder
	head.WriteString(title + "\n")
	fmt.Fprintf(&head, "*Rule:* %s\n", esc(rule))
	if m.Reason != "" {
		fmt.Fprintf(&head, "*Why:* %s\n", esc(cut(m.Reason, 500)))
	}
	fmt.Fprintf(&head, "*Agent:* %s   *Session:* %s\n", esc(m.AgentID), esc(m.SessionID))
	if m.Kind == KindPending {
		if m.Deadline != nil {
			fmt.Fprintf(&head, "*Deadline:* %s, then %s\n", m.Deadline.Format(time.RFC3339), orDash(m.Fallback))
		}
	} else {
		by := m.DecidedBy
		if by == "" {
			by = "ahp"
		}
		fmt.Fprintf(&head, "*Decided by:* %s", esc(by))
		if m.DecisionReason != "" {
			fmt.Fprintf(&head, "   *Reason:* %s", esc(cut(m.DecisionReason, 500)))
		}
		head.WriteString("\n")
		if m.Outcome == OutcomeExpired || m.Outcome == OutcomeTimedOut {
			if m.Fallback != "" {
				fmt.Fprintf(&head, "*Fallback applied:* %s\n", m.Fallback)
			}
		}
	}
	action := "*Action:* " + esc(what) + "\n```" + codeSafe(cut(m.Action.Summary, slackSectionMax-200)) + "```"

	where := "Find it with `" + m.Find + "`"
	if m.Link != "" {
		where = "<" + m.Link + "|Open the approval card>   (or `" + m.Find + "`)"
	}
	return slackBody{
		Text: cut(esc(text), 500),
		Blocks: []slackBlock{
			{Type: "section", Text: &slackText{Type: "mrkdwn", Text: cut(head.String(), slackSectionMax)}},
			{Type: "section", Text: &slackText{Type: "mrkdwn", Text: action}},
			{Type: "context", Elts: []slackText{{Type: "mrkdwn", Text: where}}},
		},
	}
}

// esc escapes the three characters Slack's mrkdwn gives a meaning.
func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// codeSafe escapes s for a code block: it must not close the block.
func codeSafe(s string) string {
	return strings.ReplaceAll(esc(s), "```", "`\u200b``")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
