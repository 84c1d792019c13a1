package service

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/postgres"
	"github.com/ahp-go/ahp/store/sqlite"
)

// openStore opens the store cfg.Store names: SQLite in the data directory
// (the default) or a PostgreSQL database shared with other replicas.
func (s *Service) openStore(ctx context.Context, reg prometheus.Registerer) (store.Store, error) {
	if u := s.cfg.Store; strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://") {
		db, err := postgres.Open(ctx, u, postgres.Options{Logger: s.log, MaxBatch: s.opts.AuditMaxBatch})
		if err != nil {
			return nil, err
		}
		s.log.Info("store: PostgreSQL, shared with every replica using it", "database", db.Where())
		return db, nil
	}
	db, err := sqlite.Open(ctx, filepath.Join(s.cfg.DataDir, DBFile), sqlite.Options{Logger: s.log, Registerer: reg, MaxBatch: s.opts.AuditMaxBatch})
	if err != nil {
		// A nil *sqlite.DB in the interface would not be nil.
		return nil, fmt.Errorf("data directory %s: the store cannot be opened: %w", s.cfg.DataDir, err)
	}
	return db, nil
}

// replicaHeartbeat is how often a replica refreshes its registry entry;
// replicaMaxAge is how long an entry counts as alive without one.
const (
	replicaHeartbeat = 5 * time.Second
	replicaMaxAge    = 3 * replicaHeartbeat
)

// newReplicaID names this process in the replica registry.
func newReplicaID() string {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// sharedReplicaID is this process's registry ID with a shared store, ""
// without one.
func (s *Service) sharedReplicaID() string {
	if s.sharedStore() {
		return s.replicaID
	}
	return ""
}

// orphanReason is why a live replica expires another one's approvals.
var orphanReason = "the replica whose agent waited for it stopped (no heartbeat for " + replicaMaxAge.String() +
	"): the waiting request is gone, fallback applied"

// expireOrphaned expires the pending approvals of replicas that stopped
// without a clean shutdown: their agents are gone, and observers would
// otherwise show the approvals pending for ever.
func (s *Service) expireOrphaned(ctx context.Context, sh store.Shared) {
	expired, err := sh.ExpireOrphaned(ctx, replicaMaxAge, orphanReason)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("expiring the approvals of stopped replicas failed", "error", err)
		}
		return
	}
	for _, a := range expired {
		s.log.Warn("approval expired: the replica that raised it stopped", "approval_id", a.ID,
			"replica", a.Replica, "session_id", a.SessionID, "rule_id", a.RuleID)
		if s.notifier != nil {
			s.notifier.NotifyApproval(harness.ApprovalNotice{Approval: a})
		}
	}
}

// replica returns this process's registry entry.
func (s *Service) replica() store.Replica {
	return store.Replica{ID: s.replicaID, Address: s.adminURL(), PolicyVersion: s.engine.Version(),
		Version: s.opts.version(), Started: s.started}
}

// adminURL is the admin API's bound address ("" when there is none).
func (s *Service) adminURL() string {
	if p := s.adminBound.Load(); p != nil {
		return *p
	}
	return ""
}

// replicate runs the replica's part of a shared store until ctx ends:
// approvals answered through other replicas reach the agents waiting
// here, and the registry knows this replica and its policy.
func (s *Service) replicate(ctx context.Context) {
	sh, ok := s.db.(store.Shared)
	if !ok || s.h == nil {
		return
	}
	go s.h.RunReplica(ctx)
	t := time.NewTicker(replicaHeartbeat)
	defer t.Stop()
	for {
		hctx, cancel := context.WithTimeout(ctx, replicaHeartbeat)
		if err := sh.Heartbeat(hctx, s.replica()); err != nil && ctx.Err() == nil {
			s.log.Warn("replica heartbeat failed", "error", err)
		} else if err == nil {
			s.expireOrphaned(hctx, sh)
		}
		cancel()
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_ = sh.Forget(fctx, s.replicaID)
			cancel()
			return
		case <-t.C:
		}
	}
}

// StatusJSON is the answer of GET /v1/status: this replica, and with a
// shared store every live replica, each with its policy hash.
type StatusJSON struct {
	Replica  ReplicaJSON   `json:"replica"`
	Store    string        `json:"store"` // sqlite or postgres
	Replicas []ReplicaJSON `json:"replicas,omitempty"`
}

// ReplicaJSON is one replica in StatusJSON.
type ReplicaJSON struct {
	ID            string    `json:"id"`
	Address       string    `json:"address,omitempty"`
	PolicyVersion string    `json:"policy_version"`
	Version       string    `json:"version"`
	Started       time.Time `json:"started"`
	Seen          time.Time `json:"seen,omitzero"`
}

func replicaJSON(r store.Replica) ReplicaJSON {
	return ReplicaJSON{ID: r.ID, Address: r.Address, PolicyVersion: r.PolicyVersion, Version: r.Version, Started: r.Started, Seen: r.Seen}
}

// serveStatus answers GET /v1/status (no credentials: it shows hashes and
// addresses only, like /healthz shows liveness).
func (s *Service) serveStatus(w http.ResponseWriter, r *http.Request) {
	st := StatusJSON{Replica: replicaJSON(s.replica()), Store: "sqlite"}
	if sh, ok := s.db.(store.Shared); ok {
		st.Store = "postgres"
		rs, err := sh.Replicas(r.Context(), replicaMaxAge)
		if err != nil {
			http.Error(w, "replica registry unavailable", http.StatusServiceUnavailable)
			return
		}
		for _, rep := range rs {
			st.Replicas = append(st.Replicas, replicaJSON(rep))
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(st)
}
