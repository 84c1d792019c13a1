package service

import (
	"context"
	"time"

	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/observe"
	"github.com/ahp-go/ahp/store"
)

// sharedStore reports whether the store is shared with other replicas.
func (s *Service) sharedStore() bool {
	_, ok := s.db.(store.Shared)
	return ok
}

// hubObserver is what the harness tells the observer hub directly. With a
// shared store the hub reads every replica's audit records from the store
// (followStore), numbered by audit ID; the harness then passes it only
// approval changes.
func (s *Service) hubObserver(hub *observe.Hub) harness.Observer {
	if s.sharedStore() {
		return approvalsOnly{hub}
	}
	return hub
}

// approvalsOnly passes approval changes to the hub and drops records.
type approvalsOnly struct{ hub *observe.Hub }

func (a approvalsOnly) Recorded(*store.AuditRecord)       {}
func (a approvalsOnly) ApprovalChanged(ap store.Approval) { a.hub.ApprovalChanged(ap) }

// ApprovalTerms implements harness.ApprovalTermsObserver.
func (a approvalsOnly) ApprovalTerms(id string, deadline time.Time, fallback string) {
	a.hub.ApprovalTerms(id, deadline, fallback)
}

// followStore feeds the observer hub from the shared store's audit log
// until ctx ends, so that observers of any replica see every replica's
// actions in one serverSeq order. Without a shared store it returns.
func (s *Service) followStore(ctx context.Context) {
	if s.hub == nil || !s.sharedStore() {
		return
	}
	s.hub.FollowStore(ctx)
}
