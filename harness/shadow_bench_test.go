package harness

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/store/sqlite"
)

// BenchmarkShadowDecision measures one decision of the default harness
// (default packs, SQLite audit log) without shadow evaluation, with shadow
// rules, and with a shadow policy, in the same run. See bench/README.md.
func BenchmarkShadowDecision(b *testing.B) {
	events := shadowEvents(256)
	for _, c := range []struct {
		name       string
		live, cand string
	}{
		{"live-only", liveWithout, ""},
		{"shadow-rules", shadowLive, ""},
		{"shadow-policy", liveWithout, shadowCandidate},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "ahp.db"), sqlite.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			live, err := policy.NewEngine(policy.Options{}, policy.Source{Name: "live.yaml", Data: []byte(c.live)})
			if err != nil {
				b.Fatal(err)
			}
			opts := Options{Engine: live, Store: db}
			if c.cand != "" {
				cand, err := policy.NewEngine(policy.Options{}, policy.Source{Name: "cand.yaml", Data: []byte(c.cand)})
				if err != nil {
					b.Fatal(err)
				}
				opts.Shadow = &ShadowPolicy{Engine: cand}
			}
			h, err := New(opts)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if _, err := h.HandleEvent(ctx, events[i%len(events)]); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/policy-only", func(b *testing.B) {
			live, _ := policy.NewEngine(policy.Options{}, policy.Source{Name: "live.yaml", Data: []byte(c.live)})
			h := &Harness{opts: Options{Engine: live}, sessions: NewSessions(1000)}
			if c.cand != "" {
				cand, _ := policy.NewEngine(policy.Options{}, policy.Source{Name: "cand.yaml", Data: []byte(c.cand)})
				h.opts.Shadow = &ShadowPolicy{Engine: cand}
			}
			h.log = slog.New(slog.DiscardHandler)
			for i := 0; b.Loop(); i++ {
				_ = h.evaluate(events[i%len(events)], peerOf(context.Background()))
			}
		})
	}
}
