package storetest

import (
	"errors"
	"testing"

	"github.com/ahp-go/ahp/store"
)

func runMemory(t *testing.T, newDB NewDatabase) {
	t.Run("AddSearchScopeDelete", func(t *testing.T) {
		s, reopen := openFresh(t, newDB)
		ctx := t.Context()
		facts := []*store.Fact{
			{Content: "The build configuration file is config/build.yaml", Source: "readme", Confidence: 0.9},
			{Content: "Deployments run every Tuesday at noon", Source: "ops", Confidence: 0.7},
			{SessionID: "s1", Content: "The user prefers tabs over spaces in Go files", Source: "chat", Confidence: 0.8},
			{SessionID: "s2", Content: "Session two is working on the billing service config", Source: "chat", Confidence: 0.6},
		}
		for _, f := range facts {
			if err := s.Memory().Add(ctx, f); err != nil {
				t.Fatal(err)
			}
			if f.ID == 0 || f.Created.IsZero() {
				t.Fatalf("Add did not set ID and Created: %+v", f)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = reopen(t)

		search := func(q store.FactQuery) []int64 {
			t.Helper()
			got, err := s.Memory().Search(ctx, q)
			if err != nil {
				t.Fatalf("Search(%+v): %v", q, err)
			}
			var ids []int64
			for _, f := range got {
				ids = append(ids, f.ID)
			}
			return ids
		}
		has := func(ids []int64, f *store.Fact) bool {
			for _, id := range ids {
				if id == f.ID {
					return true
				}
			}
			return false
		}

		// Stemming: "configurations" finds "configuration" and "config".
		ids := search(store.FactQuery{Text: "where are the configurations?", AnySession: true})
		if len(ids) == 0 || ids[0] != facts[0].ID || !has(ids, facts[3]) {
			t.Errorf("search for configurations = %v; want %d first and %d included", ids, facts[0].ID, facts[3].ID)
		}
		// Scope: session s1 sees its own facts and global ones, not s2's.
		ids = search(store.FactQuery{Text: "config files", SessionID: "s1"})
		if !has(ids, facts[0]) || !has(ids, facts[2]) || has(ids, facts[3]) {
			t.Errorf("session s1 search = %v; want global %d and own %d, not s2's %d", ids, facts[0].ID, facts[2].ID, facts[3].ID)
		}
		// No session: global facts only.
		ids = search(store.FactQuery{Text: "config files"})
		if !has(ids, facts[0]) || has(ids, facts[2]) || has(ids, facts[3]) {
			t.Errorf("global search = %v; want only global facts", ids)
		}
		// Empty text lists newest first.
		ids = search(store.FactQuery{AnySession: true, Limit: 2})
		if len(ids) != 2 || ids[0] != facts[3].ID || ids[1] != facts[2].ID {
			t.Errorf("list = %v; want the two newest, newest first", ids)
		}
		// Query syntax in the text is searched as words, never an error.
		for _, q := range []string{`"unbalanced`, `NEAR(a b) AND OR NOT *`, `col:value ^start`, `???`, `-- ; DROP TABLE facts`} {
			if _, err := s.Memory().Search(ctx, store.FactQuery{Text: q, AnySession: true}); err != nil {
				t.Errorf("Search(%q): %v", q, err)
			}
		}
		if ids := search(store.FactQuery{Text: "kubernetes", AnySession: true}); len(ids) != 0 {
			t.Errorf("search for an absent word = %v", ids)
		}

		if err := s.Memory().Delete(ctx, facts[0].ID); err != nil {
			t.Fatal(err)
		}
		if ids := search(store.FactQuery{Text: "build configuration", AnySession: true}); has(ids, facts[0]) {
			t.Error("deleted fact still found by search")
		}
		if err := s.Memory().Delete(ctx, facts[0].ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("second Delete = %v, want ErrNotFound", err)
		}
	})

	t.Run("RejectsInvalidFacts", func(t *testing.T) {
		s, _ := openFresh(t, newDB)
		ctx := t.Context()
		for _, f := range []*store.Fact{{Content: ""}, {Content: "x", Confidence: 1.5}, {Content: "x", Confidence: -0.1}, {Content: "\xff\xfe"}} {
			if err := s.Memory().Add(ctx, f); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("Add(%+v) = %v, want ErrInvalid", f, err)
			}
		}
	})
}
