// Package migrate is the schema migration runner shared by the SQLite and
// PostgreSQL stores: numbered SQL scripts, each applied in its own
// transaction together with its schema_version row. The stores give the
// scripts (their dialect's SQL) and a connection.
package migrate

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Migration is one numbered SQL script.
type Migration struct {
	// Version is the script's number, from 1.
	Version int
	// Name is the script's file name.
	Name string
	// SQL is the script.
	SQL string
}

// Load returns the scripts matching pattern in fsys (files named
// NNNN_description.sql) in version order. Versions start at 1 and have no
// gaps.
func Load(fsys fs.FS, pattern string) ([]Migration, error) {
	names, err := fs.Glob(fsys, pattern)
	if err != nil {
		return nil, err
	}
	var ms []Migration
	for _, n := range names {
		base := path.Base(n)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must start with a positive number and '_'", base)
		}
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		ms = append(ms, Migration{Version: v, Name: base, SQL: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i, m := range ms {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration %s: expected version %d", m.Name, i+1)
		}
	}
	return ms, nil
}

// Execer runs a statement.
type Execer interface {
	Exec(ctx context.Context, sql string, args ...any) error
}

// Tx is one migration's transaction. When it also has a method
// Version(context.Context) (int, error), Run reads the version again
// inside the transaction and skips a script that another process applied
// meanwhile.
type Tx interface {
	Execer
	Commit(ctx context.Context) error
	// Rollback ends the transaction; after Commit it does nothing.
	Rollback(ctx context.Context) error
}

// Conn is the connection migrations run on.
type Conn interface {
	Execer
	// Version is the highest version recorded in schema_version.
	Version(ctx context.Context) (int, error)
	Begin(ctx context.Context) (Tx, error)
}

// Dialect is the SQL that differs between databases.
type Dialect struct {
	// CreateTable creates schema_version (version, name, applied_ns) when
	// it does not exist.
	CreateTable string
	// Insert records one script: its parameters are version, name and the
	// time applied in Unix nanoseconds.
	Insert string
}

// Versioner is implemented by a Tx that can read the recorded version.
type Versioner interface {
	Version(ctx context.Context) (int, error)
}

// Run brings the database to len(ms), one transaction per script, each
// recording its schema_version row. A database newer than ms is refused
// rather than written to.
func Run(ctx context.Context, c Conn, d Dialect, ms []Migration) error {
	if err := c.Exec(ctx, d.CreateTable); err != nil {
		return fmt.Errorf("create schema_version: %w", err)
	}
	cur, err := c.Version(ctx)
	if err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if cur > len(ms) {
		return fmt.Errorf("database schema version %d is newer than this binary supports (%d)", cur, len(ms))
	}
	for _, m := range ms[cur:] {
		if err := apply(ctx, c, d, m); err != nil {
			return err
		}
	}
	return nil
}

func apply(ctx context.Context, c Conn, d Dialect, m Migration) error {
	tx, err := c.Begin(ctx)
	if err != nil {
		return fmt.Errorf("migration %s: %w", m.Name, err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	if v, ok := tx.(Versioner); ok {
		cur, err := v.Version(ctx)
		if err != nil {
			return fmt.Errorf("migration %s: %w", m.Name, err)
		}
		if cur >= m.Version {
			return nil
		}
	}
	if err := tx.Exec(ctx, m.SQL); err != nil {
		return fmt.Errorf("migration %s: %w", m.Name, err)
	}
	if err := tx.Exec(ctx, d.Insert, m.Version, m.Name, time.Now().UnixNano()); err != nil {
		return fmt.Errorf("migration %s: %w", m.Name, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("migration %s: commit: %w", m.Name, err)
	}
	return nil
}
