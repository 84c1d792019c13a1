package harness

import (
	"time"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
)

// Observer is told what the harness records, as it records it: the very
// audit records and approvals the store gets, so secrets are already
// replaced by [REDACTED:kind:fingerprint] markers. The calls are made on
// the agents' path: an Observer must return at once (queue, never block)
// and must not modify what it is given.
type Observer interface {
	// Recorded is called after an audit record was accepted by the store
	// (durable for decisions, queued for notifications).
	Recorded(rec *store.AuditRecord)
	// ApprovalChanged is called when an approval was stored as pending and
	// when it was decided or expired.
	ApprovalChanged(a store.Approval)
}

// observeRecord hands rec to the observer, if any.
func (h *Harness) observeRecord(rec *store.AuditRecord) {
	if h.opts.Observer != nil {
		h.opts.Observer.Recorded(rec)
	}
}

// observeApproval hands a to the observer, if any.
func (h *Harness) observeApproval(a store.Approval) {
	if h.opts.Observer != nil {
		h.opts.Observer.ApprovalChanged(a)
	}
}

// ApprovalNotice is one approval change a harness recorded itself: an
// approval it stored as pending, or decided or expired through it.
type ApprovalNotice struct {
	// Approval is the approval as stored (its event and reason redacted).
	Approval store.Approval
	// Deadline is when a pending approval expires if nobody answers (zero
	// when unknown, and for decided approvals).
	Deadline time.Time
	// Fallback is the decision the waiting agent gets if nobody answers
	// (pending), or got (expired); "" when unknown.
	Fallback protocol.DecisionKind
	// TimedOut reports that an expired approval expired because nobody
	// answered within its timeout (not because the agent went away or the
	// harness restarted).
	TimedOut bool
}

// Notifier is told of the approval changes this harness records itself,
// once each: pending when it stores one, and the outcome when a human
// decides through it or it expires one. With a shared store, a decision
// recorded by another replica is told by that replica, never here too.
// Like an Observer it is called on the agents' path: it must return at
// once (queue, never block) and must not modify what it is given.
type Notifier interface {
	NotifyApproval(n ApprovalNotice)
}

// notifyApproval hands n to the notifier, if any.
func (h *Harness) notifyApproval(n ApprovalNotice) {
	if h.opts.Notifier != nil {
		h.opts.Notifier.NotifyApproval(n)
	}
}
