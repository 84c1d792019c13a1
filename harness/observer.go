package harness

import (
	"time"

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

// ApprovalTermsObserver is an Observer that is also told, just before an
// approval is announced as pending, when it expires and what the waiting
// agent then gets (allow or block), so that an approver can see how long
// is left and what happens if nobody answers. Optional: the harness checks
// for it with a type assertion.
type ApprovalTermsObserver interface {
	ApprovalTerms(approvalID string, deadline time.Time, fallback string)
}

// observeApprovalTerms tells the observer, if it wants to know, the
// deadline and fallback of approval id.
func (h *Harness) observeApprovalTerms(id string, deadline time.Time, fallback string) {
	if t, ok := h.opts.Observer.(ApprovalTermsObserver); ok {
		t.ApprovalTerms(id, deadline, fallback)
	}
}
