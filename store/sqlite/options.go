package sqlite

import (
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// FileName is the name of the database file inside a data directory.
const FileName = "ahp.db"

// Sync is the SQLite synchronous setting of the write connection.
type Sync string

// The two settings that keep an acknowledged record safe; see docs/store.md.
const (
	// SyncFull syncs the WAL on every commit: a record is durable against
	// power loss and OS crash when Append returns. The default.
	SyncFull Sync = "FULL"
	// SyncNormal syncs the WAL only at checkpoints: a committed record
	// survives a crash of the process (kill -9) but not of the machine.
	SyncNormal Sync = "NORMAL"
)

// Options configure Open. The zero value is the durable default.
type Options struct {
	// Sync is SyncFull (default) or SyncNormal.
	Sync Sync
	// MaxBatch caps the records of one group commit transaction (default
	// 256). 1 commits each record in its own transaction.
	MaxBatch int
	// BatchWindow is how long the writer waits for more records once the
	// queue is empty before it commits. 0 (default) commits at once: the
	// next group forms while the current one is being synced.
	BatchWindow time.Duration
	// QueueSize is how many records may wait for the writer (default
	// 8192); Append blocks while the queue is full.
	QueueSize int
	// ReadConns is the size of the read pool (default 4).
	ReadConns int
	// BusyTimeout is how long a connection waits for a lock held by
	// another process (default 5s).
	BusyTimeout time.Duration
	// WriteTimeout bounds one write transaction (default 30s).
	WriteTimeout time.Duration
	// TailInterval is how often Tail looks for records written by other
	// processes (default 250ms); records of this process wake it at once.
	TailInterval time.Duration
	// ReadOnly opens an existing database for reading only: no directory
	// or file is created, no migration runs, every write fails with
	// store.ErrReadOnly.
	ReadOnly bool
	// Logger receives write failures (never record contents). Nil discards.
	Logger *slog.Logger
	// Registerer, when set, gets the store's metrics (ahp_store_*).
	Registerer prometheus.Registerer
}

func (o Options) withDefaults() (Options, error) {
	switch strings.ToUpper(string(o.Sync)) {
	case "", string(SyncFull):
		o.Sync = SyncFull
	case string(SyncNormal):
		o.Sync = SyncNormal
	default:
		return o, fmt.Errorf("sqlite: Sync %q: want FULL or NORMAL", o.Sync)
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 256
	}
	if o.QueueSize <= 0 {
		o.QueueSize = 8192
	}
	if o.ReadConns <= 0 {
		o.ReadConns = 4
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 5 * time.Second
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 30 * time.Second
	}
	if o.TailInterval <= 0 {
		o.TailInterval = 250 * time.Millisecond
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o, nil
}

// dsn builds the driver's data source name for path. The writer gets WAL,
// the sync setting, incremental auto-vacuum (effective only when the file is
// created) and immediate transactions; readers are query-only.
func dsn(path string, o Options, writer bool) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	q := url.Values{}
	q.Set("_busy_timeout", strconv.FormatInt(o.BusyTimeout.Milliseconds(), 10)) // applied first
	if writer {
		q.Set("_auto_vacuum", "incremental")
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous("+string(o.Sync)+")")
		q.Add("_pragma", "journal_size_limit(67108864)")
		// Deleted content is zeroed where that costs no extra write (FAST:
		// within the b-tree pages written anyway; ON, which also zeroes whole
		// freed pages, took a fifth of the group-commit throughput). The
		// harness stores no secret (it redacts first); DB.Redact, which
		// overwrites old content that may hold some, switches to ON and
		// compacts.
		q.Add("_pragma", "secure_delete(FAST)")
		q.Set("_txlock", "immediate")
	} else {
		q.Add("_pragma", "query_only(1)")
	}
	u := url.URL{Scheme: "file", Opaque: (&url.URL{Path: abs}).EscapedPath(), RawQuery: q.Encode()}
	return u.String(), nil
}
