package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/sqlite"
	"github.com/ahp-go/ahp/store/storetest"
)

// openIn returns a function opening the database in dir with opts.
func openIn(dir string, opts sqlite.Options) func(t *testing.T) store.Store {
	return func(t *testing.T) store.Store {
		t.Helper()
		db, err := sqlite.Open(t.Context(), filepath.Join(dir, sqlite.FileName), opts)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return db
	}
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) func(t *testing.T) store.Store {
		return openIn(t.TempDir(), sqlite.Options{})
	})
}

// TestConformanceOneRecordPerTransaction runs the suite with group commit
// off, so both writer paths are held to the same contract.
func TestConformanceOneRecordPerTransaction(t *testing.T) {
	storetest.Run(t, func(t *testing.T) func(t *testing.T) store.Store {
		return openIn(t.TempDir(), sqlite.Options{MaxBatch: 1, Sync: sqlite.SyncNormal})
	})
}
