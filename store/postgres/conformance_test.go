package postgres_test

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/postgres"
	"github.com/ahp-go/ahp/store/storetest"
)

// testURL returns AHP_TEST_POSTGRES_URL or skips t. In CI (CI set) a
// missing URL fails instead: the PostgreSQL tests must run there.
func testURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("AHP_TEST_POSTGRES_URL")
	if u == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("AHP_TEST_POSTGRES_URL is not set: .ci/run starts PostgreSQL and sets it")
		}
		t.Skip("AHP_TEST_POSTGRES_URL is not set (postgres://user@127.0.0.1:PORT/db); see .ci/run")
	}
	return u
}

// freshSchema names a new schema for one test: its tables start empty.
func freshSchema() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "t_" + hex.EncodeToString(b[:])
}

func opener(url string, opts postgres.Options) func(t *testing.T) store.Store {
	return func(t *testing.T) store.Store {
		t.Helper()
		db, err := postgres.Open(t.Context(), url, opts)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return db
	}
}

func TestConformance(t *testing.T) {
	url := testURL(t)
	storetest.Run(t, func(t *testing.T) func(t *testing.T) store.Store {
		return opener(url, postgres.Options{Schema: freshSchema()})
	})
}
