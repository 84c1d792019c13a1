package effects

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

// TestArenaReuseKeepsResults: the reader's chunks of one long script's
// analysis are reused by the next ones (arenaPool); the effects returned
// must not change when they are.
func TestArenaReuseKeepsResults(t *testing.T) {
	ctx := Context{Cwd: "/work/proj", Home: "/home/ann", User: "ann"}
	scripts := []string{
		strings.Repeat("rm -rf /srv/a; cp -r src/* build/; curl -fsS https://a.example/x | jq .ok\n", 40),
		strings.Repeat("tar czf /tmp/r.tgz -C build .; find . -name '*.o' -delete; export X=$(git rev-parse HEAD)\n", 40),
		benchScript,
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			type kept struct {
				got  []Effect
				json string
			}
			var all []kept
			for round := 0; round < 5; round++ {
				for _, sc := range scripts {
					got := Shell(sc, ctx)
					b, _ := json.Marshal(got)
					all = append(all, kept{got, string(b)})
				}
			}
			for i, k := range all {
				if b, _ := json.Marshal(k.got); string(b) != k.json {
					t.Errorf("result %d changed after later analyses", i)
				}
				if b, _ := json.Marshal(all[i%len(scripts)].got); string(b) != k.json {
					t.Errorf("result %d differs from the first analysis of the same script", i)
				}
			}
		}()
	}
	wg.Wait()

	// PayloadInto, reusing one buffer, reads what Payload reads.
	buf := make([]Effect, 0, 4096)
	p := map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": scripts[0]}}
	got := PayloadInto(buf, p, ctx)
	want := Payload(p, ctx)
	if b1, _ := json.Marshal(got); string(b1) != func() string { b, _ := json.Marshal(want); return string(b) }() {
		t.Errorf("PayloadInto and Payload differ")
	}
}

// TestChunksTake: chunks hand out zeroed, capacity-bounded slices, and
// reset makes the same memory available again, zeroed.
func TestChunksTake(t *testing.T) {
	var c chunks[sword]
	a := c.take(3, 4, 64)
	a[0].val = "x"
	if len(a) != 3 || cap(a) != 3 {
		t.Fatalf("len %d cap %d", len(a), cap(a))
	}
	b := c.take(3, 4, 64) // does not fit in the first chunk's 1 left
	if &b[0] == &a[0] || len(c.list) != 2 {
		t.Fatalf("second take shares the first chunk's start or no new chunk: %d chunks", len(c.list))
	}
	if big := c.take(40, 4, 64); len(big) != 40 || len(c.list) != 2 {
		t.Fatalf("a take over limit/4 must be its own allocation")
	}
	c.reset(16)
	a2 := c.take(3, 4, 64)
	if &a2[0] != &a[0] || a2[0].val != "" {
		t.Fatalf("reset: the first chunk is not reused, zeroed (%q)", a2[0].val)
	}
	c.take(3, 4, 64)
	if c.cur != 1 {
		t.Fatalf("the second pooled chunk is not used: cur %d", c.cur)
	}
}
