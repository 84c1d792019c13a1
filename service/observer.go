package service

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/store"
)

// fanout is the harness's Observer: the observer hub first, then the
// observers added through Options.Observers and Service.Observe.
type fanout struct {
	first harness.Observer // the hub; set before the harness exists
	mu    sync.Mutex       // serialises add
	more  atomic.Pointer[[]harness.Observer]
}

func (f *fanout) add(obs ...harness.Observer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var next []harness.Observer
	if cur := f.more.Load(); cur != nil {
		next = append(next, *cur...)
	}
	for _, o := range obs {
		if o != nil {
			next = append(next, o)
		}
	}
	f.more.Store(&next)
}

// Recorded implements harness.Observer.
func (f *fanout) Recorded(rec *store.AuditRecord) {
	if f.first != nil {
		f.first.Recorded(rec)
	}
	if more := f.more.Load(); more != nil {
		for _, o := range *more {
			o.Recorded(rec)
		}
	}
}

// ApprovalChanged implements harness.Observer.
func (f *fanout) ApprovalChanged(a store.Approval) {
	if f.first != nil {
		f.first.ApprovalChanged(a)
	}
	if more := f.more.Load(); more != nil {
		for _, o := range *more {
			o.ApprovalChanged(a)
		}
	}
}

// ApprovalTerms implements harness.ApprovalTermsObserver: the terms go to
// every observer that asks for them.
func (f *fanout) ApprovalTerms(id string, deadline time.Time, fallback string) {
	if t, ok := f.first.(harness.ApprovalTermsObserver); ok {
		t.ApprovalTerms(id, deadline, fallback)
	}
	if more := f.more.Load(); more != nil {
		for _, o := range *more {
			if t, ok := o.(harness.ApprovalTermsObserver); ok {
				t.ApprovalTerms(id, deadline, fallback)
			}
		}
	}
}
