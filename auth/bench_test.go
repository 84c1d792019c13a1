package auth

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
)

// storeWith returns a store of n agents, one hashed API key each, and the
// key of the last one.
func storeWith(b *testing.B, n int) (*Store, string) {
	b.Helper()
	var sb strings.Builder
	sb.WriteString("principals:\n")
	key := ""
	for i := range n {
		key = fmt.Sprintf("bench-key-%04d-0123456789abcdef", i)
		fmt.Fprintf(&sb, "  - id: agent-%d\n    roles: [agent]\n    api_keys: [%q]\n", i, HashSecret(key))
	}
	st, err := Parse([]byte(sb.String()))
	if err != nil {
		b.Fatal(err)
	}
	return st, key
}

// BenchmarkAuthenticate is the cost an API key adds to each HTTP request:
// reading the header, hashing the key, comparing it with every stored
// digest, and the role check.
func BenchmarkAuthenticate(b *testing.B) {
	for _, n := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			st, key := storeWith(b, n)
			g := NewGuard(st, MiddlewareOptions{RequireRole: RoleAgent})
			r := httptest.NewRequest("POST", "/ahp", nil)
			r.Header.Set("X-API-Key", key)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := g.Check(ctx, "", FromHTTPRequest(r, false)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("insecure", func(b *testing.B) {
		g := NewGuard(InsecureNoAuth{}, MiddlewareOptions{RequireRole: RoleAgent})
		r := httptest.NewRequest("POST", "/ahp", nil)
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := g.Check(ctx, "", FromHTTPRequest(r, false)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
