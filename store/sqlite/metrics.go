package sqlite

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the store's Prometheus collectors. They exist (unregistered)
// when Options.Registerer is nil, so the code never checks.
type metrics struct {
	reg           prometheus.Registerer
	collectors    []prometheus.Collector
	writeErrors   prometheus.Counter
	asyncLost     prometheus.Counter
	batchRecords  prometheus.Histogram
	commitSeconds prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer, db *DB) (*metrics, error) {
	m := &metrics{
		reg: reg,
		writeErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ahp_store_write_errors_total",
			Help: "Write transactions that failed for a storage reason (disk full, I/O, read-only).",
		}),
		asyncLost: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ahp_store_audit_async_lost_total",
			Help: "Audit records of notifications that could not be written.",
		}),
		batchRecords: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "ahp_store_audit_batch_records",
			Help:    "Audit records committed per group commit transaction.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 10),
		}),
		commitSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "ahp_store_audit_commit_seconds",
			Help:    "Duration of one group commit transaction, sync included.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 14),
		}),
	}
	queue := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "ahp_store_audit_queue_depth",
		Help: "Audit records accepted but not yet durable.",
	}, func() float64 { return float64(db.Audit().QueueDepth()) })
	ready := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "ahp_store_writable",
		Help: "1 while the last write succeeded, 0 after a storage failure.",
	}, func() float64 {
		if db.health.failed() != nil {
			return 0
		}
		return 1
	})
	all := []prometheus.Collector{m.writeErrors, m.asyncLost, m.batchRecords, m.commitSeconds, queue, ready}
	if reg == nil {
		return m, nil
	}
	for _, c := range all {
		if err := reg.Register(c); err != nil {
			m.unregister()
			return nil, fmt.Errorf("register metrics: %w", err)
		}
		m.collectors = append(m.collectors, c)
	}
	return m, nil
}

func (m *metrics) observeCommit(n int, d time.Duration, err error) {
	if err != nil {
		return
	}
	m.batchRecords.Observe(float64(n))
	m.commitSeconds.Observe(d.Seconds())
}

func (m *metrics) unregister() {
	if m == nil || m.reg == nil {
		return
	}
	for _, c := range m.collectors {
		m.reg.Unregister(c)
	}
	m.collectors = nil
}
