package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ahp-go/ahp/store/internal/groupcommit"
)

// insertAudit takes the next IDs from audit_seq (whose row lock orders the
// commits of every replica) and inserts the batch given as arrays.
const insertAudit = `WITH s AS (UPDATE audit_seq SET last = last + $1 RETURNING last - $1 AS first)
INSERT INTO audit (id, ts_ns, session_id, agent_id, event_type, blocking, outcome, rule_id, policy_version,
	principal, transport, latency_ns, descriptor_hash, error, event, decision, redacted, shadow, shadow_changed)
SELECT s.first + u.n, u.ts_ns, u.session_id, u.agent_id, u.event_type, u.blocking, u.outcome, u.rule_id,
	u.policy_version, u.principal, u.transport, u.latency_ns, u.descriptor_hash, u.error, u.event, u.decision,
	u.redacted, u.shadow, u.shadow_changed
FROM s, unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::boolean[], $7::text[], $8::text[], $9::text[],
	$10::text[], $11::text[], $12::bigint[], $13::text[], $14::text[], $15::text[], $16::text[], $17::text[],
	$18::text[], $19::boolean[]) WITH ORDINALITY
	AS u(ts_ns, session_id, agent_id, event_type, blocking, outcome, rule_id, policy_version, principal, transport,
	latency_ns, descriptor_hash, error, event, decision, redacted, shadow, shadow_changed, n)
RETURNING id`

// startWriter starts the group commit writer: every record queued while
// the previous commit ran goes into the next one, as a single statement
// (one round trip, one transaction).
func startWriter(db *DB) *groupcommit.Writer {
	return groupcommit.Start(groupcommit.Config{
		QueueSize:    db.opts.QueueSize,
		MaxBatch:     db.opts.MaxBatch,
		WriteTimeout: db.opts.WriteTimeout,
		Commit:       db.commitAudit,
		Committed:    func(_ int, _ time.Duration, err error) { db.note(err) },
		Lost: func(n int, err error) {
			db.opts.Logger.Error("audit notifications not recorded", "count", n, "err", err)
		},
	})
}

// commitAudit inserts batch with one statement and sets ids[i] to the ID
// of batch[i].
func (db *DB) commitAudit(ctx context.Context, batch []*groupcommit.Request, ids []int64) error {
	n := len(batch)
	var (
		ts, latency                                     = make([]int64, n), make([]int64, n)
		session, agent, etype, outcome, rule, pv, princ = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		transport, dh, errs, redacted                   = make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		event, decision, shadow                         = make([]*string, n), make([]*string, n), make([]*string, n)
		blocking, changed                               = make([]bool, n), make([]bool, n)
	)
	for i, req := range batch {
		r := &req.Rec
		ts[i], latency[i] = r.Time.UnixNano(), int64(r.Latency)
		session[i], agent[i], etype[i], outcome[i], rule[i], pv[i], princ[i] = r.SessionID, r.AgentID, r.EventType, r.Outcome, r.RuleID, r.PolicyVersion, r.Principal
		transport[i], dh[i], errs[i], redacted[i] = r.Transport, r.DescriptorHash, r.Error, strings.Join(r.Redacted, ",")
		event[i], decision[i], shadow[i] = jsonText(r.Event), jsonText(r.Decision), jsonText(r.Shadow)
		blocking[i], changed[i] = r.Blocking, r.ShadowChanged
	}
	rows, err := db.pool.Query(ctx, insertAudit, int64(n), ts, session, agent, etype, blocking, outcome, rule, pv,
		princ, transport, latency, dh, errs, event, decision, redacted, shadow, changed)
	if err != nil {
		return err
	}
	got := 0
	for rows.Next() {
		if got == n {
			got++ // more rows than records: reported below
			continue
		}
		if err := rows.Scan(&ids[got]); err != nil {
			rows.Close()
			return err
		}
		got++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if got != n {
		return fmt.Errorf("%d IDs returned", got)
	}
	// Record i (ordinality i+1) got first+i+1, whatever order RETURNING uses.
	first := slices.Min(ids)
	for i := range ids {
		ids[i] = first + int64(i)
	}
	return nil
}

// jsonText binds JSON as text, nil as NULL.
func jsonText(b []byte) *string {
	if len(b) == 0 {
		return nil
	}
	s := string(b)
	return &s
}
