package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/ahp-go/ahp/transport"
)

// maxStash bounds the answers kept for ids nobody waits for yet.
const maxStash = 256

// response is one message read from the server, decoded loosely so that
// anything the server sends can be judged.
type response struct {
	raw     []byte
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *rpcError       `json:"error"`
	decErr  error
}

// rpcError is the error member of a response.
type rpcError struct {
	Code    *int   `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) code() int {
	if e == nil || e.Code == nil {
		return 0
	}
	return *e.Code
}

func (r *response) String() string {
	const max = 300
	if len(r.raw) > max {
		return string(r.raw[:max]) + "…"
	}
	return string(r.raw)
}

// idKey canonicalises a JSON id so that "7" and 7 differ and 7 and 7.0 do
// not. Anything unreadable maps to "?".
func idKey(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return "null"
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "?"
	}
	switch v := v.(type) {
	case string:
		return "s:" + v
	case float64:
		return "n:" + strconv.FormatFloat(v, 'g', -1, 64)
	}
	return "?"
}

type inMsg struct {
	b   []byte
	err error
}

// session is one connection to the server with a reader goroutine, so
// that the checks can wait for an answer by id with a deadline.
type session struct {
	conn    transport.Conn
	in      chan inMsg
	stash   map[string]*response
	order   []string // keys of stash, oldest first
	issued  map[string]bool
	timeout time.Duration
	dead    error
	seq     int
}

func newSession(conn transport.Conn, timeout time.Duration) *session {
	s := &session{conn: conn, in: make(chan inMsg, 64), stash: map[string]*response{}, issued: map[string]bool{}, timeout: timeout}
	go func() {
		defer close(s.in)
		for {
			b, err := conn.ReadMessage(context.Background())
			var tl *transport.TooLargeError
			if errors.As(err, &tl) && tl.Skipped {
				continue
			}
			s.in <- inMsg{b, err}
			if err != nil {
				return
			}
		}
	}()
	return s
}

func (s *session) close() {
	_ = s.conn.Close()
	for range s.in { // drain until the reader stops
	}
}

// nextID returns a fresh string id, recorded as issued.
func (s *session) nextID(prefix string) string {
	s.seq++
	id := fmt.Sprintf("%s-%d", prefix, s.seq)
	s.issued["s:"+id] = true
	return id
}

// send writes one raw message.
func (s *session) send(ctx context.Context, msg []byte) error {
	if s.dead != nil {
		return s.dead
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if err := s.conn.WriteMessage(ctx, msg); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// errNoAnswer is returned by await when the deadline passes.
var errNoAnswer = errors.New("no answer")

// read returns the next message from the server, or an error when the
// connection ends or the deadline passes.
func (s *session) read(deadline <-chan time.Time) (*response, error) {
	if s.dead != nil {
		return nil, s.dead
	}
	select {
	case m, ok := <-s.in:
		if !ok || m.err != nil {
			err := m.err
			if err == nil {
				err = transport.ErrClosed
			}
			s.dead = fmt.Errorf("connection ended: %w", err)
			return nil, s.dead
		}
		r := &response{raw: m.b}
		r.decErr = json.Unmarshal(m.b, r)
		return r, nil
	case <-deadline:
		return nil, errNoAnswer
	}
}

// await waits for the answer whose id has the given key ("s:x", "n:7",
// "null"). Answers to other ids are kept for later.
func (s *session) await(key string) (*response, error) {
	if r, ok := s.stash[key]; ok {
		s.unstash(key)
		return r, nil
	}
	t := time.NewTimer(s.timeout)
	defer t.Stop()
	for {
		r, err := s.read(t.C)
		if err != nil {
			return nil, err
		}
		k := idKey(r.ID)
		if r.decErr != nil {
			k = "?"
		}
		if k == key {
			return r, nil
		}
		s.keep(k, r)
	}
}

func (s *session) keep(k string, r *response) {
	if _, ok := s.stash[k]; !ok {
		s.order = append(s.order, k)
	}
	s.stash[k] = r
	for len(s.order) > maxStash {
		delete(s.stash, s.order[0])
		s.order = s.order[1:]
	}
}

func (s *session) unstash(k string) {
	delete(s.stash, k)
	for i, o := range s.order {
		if o == k {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
}

// call sends a request built from method and params with a fresh string
// id and waits for its answer.
func (s *session) call(ctx context.Context, method string, params any) (*response, error) {
	id := s.nextID("c")
	msg, err := request(id, method, params)
	if err != nil {
		return nil, err
	}
	if err := s.send(ctx, msg); err != nil {
		return nil, err
	}
	return s.await("s:" + id)
}

// silent sends a notification and then a ping, and reports an error when
// anything other than answers to earlier requests arrives before the
// ping's answer: a notification must never be answered.
func (s *session) silent(ctx context.Context, note []byte) error {
	if err := s.send(ctx, note); err != nil {
		return err
	}
	id := s.nextID("p")
	if err := s.send(ctx, mustRequest(id, "ping", map[string]any{})); err != nil {
		return err
	}
	key := "s:" + id
	t := time.NewTimer(s.timeout)
	defer t.Stop()
	for {
		r, err := s.read(t.C)
		if err != nil {
			return fmt.Errorf("waiting for the ping after the notification: %w", err)
		}
		k := idKey(r.ID)
		if r.decErr == nil && k == key {
			return nil
		}
		if r.decErr == nil && s.issued[k] {
			s.keep(k, r) // a late answer to an earlier request
			continue
		}
		return fmt.Errorf("the notification was answered: %s", r)
	}
}

// request encodes a JSON-RPC request with a string id.
func request(id any, method string, params any) ([]byte, error) {
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	return json.Marshal(m)
}

func mustRequest(id any, method string, params any) []byte {
	b, err := request(id, method, params)
	if err != nil {
		panic(err)
	}
	return b
}

// notification encodes a JSON-RPC notification.
func notification(method string, params any) []byte {
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
	if err != nil {
		panic(err)
	}
	return b
}
