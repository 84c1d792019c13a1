// Package postgres is a store.Store on PostgreSQL, for several harness
// replicas that act as one: the audit log (group commit, IDs in commit
// order across replicas), approvals (decisions announced with
// LISTEN/NOTIFY), memory facts with PostgreSQL's full-text search, run
// records, per-session counters under a row lock, and a registry of the
// replicas and the policy each runs. See docs/store.md and
// docs/deployment.md.
package postgres
