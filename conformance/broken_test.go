package conformance_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/conformance"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/transport"
)

// brokenConn is the server end of a connection to a correct server.Server
// with one rule broken in between: intercept may answer an incoming
// message itself (or swallow it), rewrite changes outgoing answers.
type brokenConn struct {
	transport.Conn
	intercept func(msg []byte) (reply []byte, handled bool)
	rewrite   func(msg []byte) []byte
}

func (b *brokenConn) ReadMessage(ctx context.Context) ([]byte, error) {
	for {
		msg, err := b.Conn.ReadMessage(ctx)
		if err != nil || b.intercept == nil {
			return msg, err
		}
		reply, handled := b.intercept(msg)
		if !handled {
			return msg, nil
		}
		if reply != nil {
			if err := b.Conn.WriteMessage(ctx, reply); err != nil {
				return nil, err
			}
		}
	}
}

func (b *brokenConn) WriteMessage(ctx context.Context, msg []byte) error {
	if b.rewrite != nil {
		msg = b.rewrite(msg)
	}
	return b.Conn.WriteMessage(ctx, msg)
}

// sizeLimited refuses messages over 1 MiB as a stream transport does,
// because the in-memory pipe has no limit of its own.
type sizeLimited struct{ transport.Conn }

func (s sizeLimited) ReadMessage(ctx context.Context) ([]byte, error) {
	msg, err := s.Conn.ReadMessage(ctx)
	if err == nil && len(msg) > 1<<20 {
		return nil, &transport.TooLargeError{Limit: 1 << 20, Skipped: true}
	}
	return msg, err
}

func runBroken(t *testing.T, b brokenConn) conformance.Report {
	t.Helper()
	srv := server.New(server.BaseHandler{}, server.Options{MaxMessageBytes: 1 << 20})
	rep, err := conformance.Run(context.Background(), conformance.Options{
		Timeout: 2 * time.Second, OversizeBytes: 2 << 20,
		Dial: func(context.Context) (transport.Conn, error) {
			agent, srvEnd := transport.Pipe()
			bc := b
			bc.Conn = sizeLimited{srvEnd}
			go func() { _ = srv.ServeConn(context.Background(), &bc) }()
			return agent, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestBrokenServers breaks one rule at a time in front of a correct
// server: the suite must fail exactly the check of that rule, by name.
func TestBrokenServers(t *testing.T) {
	contains := func(s string) func([]byte) bool { return func(m []byte) bool { return bytes.Contains(m, []byte(s)) } }
	cases := []struct {
		name      string
		b         brokenConn
		rule, chk string
	}{
		{"correct server", brokenConn{}, "", ""},
		{"number ids answered as strings", brokenConn{rewrite: func(m []byte) []byte {
			return bytes.Replace(m, []byte(`"id":7,`), []byte(`"id":"7",`), 1)
		}}, "§1", "number id echoed as the same number"},
		{"fire-and-forget post_action answered as a request", brokenConn{intercept: func(m []byte) ([]byte, bool) {
			if contains(`"event_type":"post_action"`)(m) && contains(`"id":`)(m) && !contains(`ahp/batch`)(m) {
				id := m[bytes.Index(m, []byte(`"id":`))+5:]
				id = id[:bytes.IndexByte(id, ',')]
				return []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"decision":"allow"}}`), true
			}
			return nil, false
		}}, "§7.3", "every fire-and-forget event sent as a request refused with -32602"},
		{"malformed JSON not answered", brokenConn{intercept: func(m []byte) ([]byte, bool) {
			return nil, !bytes.HasSuffix(bytes.TrimSpace(m), []byte("}"))
		}}, "§7.7", "malformed JSON answered with -32700"},
		{"pre_action notification answered", brokenConn{intercept: func(m []byte) ([]byte, bool) {
			if contains(`"event_type":"pre_action"`)(m) && !contains(`"id":`)(m) {
				return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"must be a request"}}`), true
			}
			return nil, false
		}}, "§7.2", "every blocking event sent as a notification refused"},
		{"batch decisions reversed", brokenConn{rewrite: func(m []byte) []byte {
			// The run-contract batch: swap "block" and "allow" answers.
			if !bytes.Contains(m, []byte(`"decisions":[`)) {
				return m
			}
			m = bytes.ReplaceAll(m, []byte(`{"decision":"allow"}`), []byte(`{"decision":"tmp"}`))
			m = bytes.ReplaceAll(m, []byte(`"decision":"block"`), []byte(`"decision":"allow"`))
			return bytes.ReplaceAll(m, []byte(`{"decision":"tmp"}`), []byte(`{"decision":"block","reason":"x"}`))
		}}, "§7.4", "run-contract payloads validated in a batch"},
		{"typed decision with an unknown tag", brokenConn{rewrite: func(m []byte) []byte {
			return bytes.Replace(m, []byte(`"decision":"retry"`), []byte(`"decision":"later"`), 1)
		}}, "§5", "every typed event answered with its typed decision"},
		{"version 3.0 accepted", brokenConn{intercept: func(m []byte) ([]byte, bool) {
			if contains(`"protocol_version":"3.0"`)(m) {
				id := m[bytes.Index(m, []byte(`"id":`))+5:]
				id = id[:bytes.IndexByte(id, ',')]
				return []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"protocol_version":"2.4","harness_info":{"name":"x","version":"1","capabilities":[]}}}`), true
			}
			return nil, false
		}}, "§3", "unsupported major version rejected with -32000"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := runBroken(t, c.b)
			var out bytes.Buffer
			_ = rep.Write(&out)
			var failed []conformance.Result
			for _, r := range rep.Results {
				if r.Status == conformance.Fail {
					failed = append(failed, r)
				}
			}
			if c.rule == "" {
				if len(failed) > 0 {
					t.Fatalf("the correct server fails:\n%s", out.String())
				}
				return
			}
			if len(failed) != 1 || failed[0].Rule != c.rule || !strings.HasPrefix(failed[0].Name, c.chk) {
				t.Fatalf("want exactly one FAIL, %s %q; got:\n%s", c.rule, c.chk, out.String())
			}
			line := "FAIL " + c.rule
			if !strings.Contains(out.String(), line) {
				t.Fatalf("no line %q in:\n%s", line, out.String())
			}
			t.Logf("%s %s: %s", failed[0].Rule, failed[0].Name, failed[0].Detail)
		})
	}
}
