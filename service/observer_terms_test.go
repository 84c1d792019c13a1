package service

import (
	"testing"
	"time"

	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/store"
)

type termsRecorder struct{ got []string }

func (termsRecorder) Recorded(*store.AuditRecord)    {}
func (termsRecorder) ApprovalChanged(store.Approval) {}
func (r *termsRecorder) ApprovalTerms(id string, _ time.Time, fallback string) {
	r.got = append(r.got, id+" "+fallback)
}

// The harness's observer passes an approval's terms on to the hub and to
// every added observer that asks for them.
func TestFanoutPassesApprovalTerms(t *testing.T) {
	hub, more := &termsRecorder{}, &termsRecorder{}
	f := &fanout{first: hub}
	f.add(more, termsRecorder{}) // the last one is a plain Observer value
	var obs harness.Observer = f
	obs.(harness.ApprovalTermsObserver).ApprovalTerms("ap1", time.Now(), "block")
	if len(hub.got) != 1 || len(more.got) != 1 || hub.got[0] != "ap1 block" {
		t.Fatalf("hub %v, added %v", hub.got, more.got)
	}
}
