// Package sqlite implements store.Store on an SQLite file with the pure-Go
// driver modernc.org/sqlite, in WAL mode.
//
// One writer goroutine owns the write connection and commits audit records
// in groups: every Append waiting while a transaction commits is written by
// the next one, so many appends share one fsync. Reads use a separate pool
// of query-only connections and never wait for the writer.
package sqlite
