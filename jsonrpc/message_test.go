package jsonrpc

import (
	"errors"
	"testing"
)

func TestDecodeKinds(t *testing.T) {
	cases := []struct {
		in     string
		kind   Kind
		id     string
		method string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, KindRequest, "1", "ping"},
		{`{"jsonrpc":"2.0","id":"abc","method":"ahp/event","params":{"a":1}}`, KindRequest, `"abc"`, "ahp/event"},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, KindRequest, "null", "ping"},
		{`{"jsonrpc":"2.0","method":"ahp/event","params":{}}`, KindNotification, "", "ahp/event"},
		{`{"jsonrpc":"2.0","id":-7.5,"result":{}}`, KindResponse, "-7.5", ""},
		{` {"id":2,"error":{"code":-32601,"message":"x"},"jsonrpc":"2.0"} `, KindResponse, "2", ""},
		{`{"jsonrpc":"2.0","id":3,"method":"ahp\/event"}`, KindRequest, "3", "ahp/event"},
	}
	for _, c := range cases {
		m, err := Decode([]byte(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if m.Kind != c.kind || string(m.ID) != c.id || m.Method != c.method {
			t.Errorf("%s: got kind %d id %s method %q", c.in, m.Kind, m.ID, m.Method)
		}
	}
	m, _ := Decode([]byte(`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found"}}`))
	if m.Error == nil || m.Error.Code != CodeMethodNotFound || m.Error.Message != "Method not found" {
		t.Fatalf("error object: %+v", m.Error)
	}
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct {
		in   string
		code int
		id   string
	}{
		{`{"jsonrpc":"2.0",`, CodeParseError, ""},
		{`not json`, CodeParseError, ""},
		{``, CodeParseError, ""},
		{`[]`, CodeInvalidRequest, ""},
		{`null`, CodeInvalidRequest, ""},
		{`{"jsonrpc":"2.0","id":5}`, CodeInvalidRequest, "5"},
		{`{"jsonrpc":"1.0","id":5,"method":"x"}`, CodeInvalidRequest, "5"},
		{`{"id":5,"method":"x"}`, CodeInvalidRequest, "5"},
		{`{"jsonrpc":"2.0","id":[1],"method":"x"}`, CodeInvalidRequest, ""},
		{`{"jsonrpc":"2.0","id":true,"method":"x"}`, CodeInvalidRequest, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"x","result":1}`, CodeInvalidRequest, "1"},
		{`{"jsonrpc":"2.0","result":1}`, CodeInvalidRequest, ""},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}`, CodeInvalidRequest, "1"},
		// Members named as the envelope's in other letter case: Go's
		// encoding/json would read them, exact readers would not.
		{`{"jsonrpc":"2.0","id":1,"method":"ahp/event","PARAMS":{}}`, CodeInvalidRequest, "1"},
		{`{"jsonrpc":"2.0","Method":"x","id":1}`, CodeInvalidRequest, "1"},
		{`{"jsonrpc":"2.0","iD":1,"method":"x"}`, CodeInvalidRequest, ""},
	}
	for _, c := range cases {
		_, err := Decode([]byte(c.in))
		var de *DecodeError
		if !errors.As(err, &de) {
			t.Fatalf("%s: err %v", c.in, err)
		}
		if de.Code != c.code || string(de.ID) != c.id {
			t.Errorf("%s: code %d id %q, want %d %q", c.in, de.Code, de.ID, c.code, c.id)
		}
	}
}

func TestEncode(t *testing.T) {
	if got := string(AppendResult(nil, []byte(`"x"`), []byte(`{}`))); got != `{"jsonrpc":"2.0","id":"x","result":{}}` {
		t.Fatal(got)
	}
	if got := string(AppendError(nil, nil, Errorf(CodeParseError, "Parse error"))); got != `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}` {
		t.Fatal(got)
	}
	e := &Error{Code: -32000, Message: `bad "v"`, Data: []byte(`{"v":"3"}`)}
	if got := string(AppendError(nil, []byte("4"), e)); got != `{"jsonrpc":"2.0","id":4,"error":{"code":-32000,"message":"bad \"v\"","data":{"v":"3"}}}` {
		t.Fatal(got)
	}
	if got := string(AppendRequest(nil, nil, "ahp/event", []byte(`{}`))); got != `{"jsonrpc":"2.0","method":"ahp/event","params":{}}` {
		t.Fatal(got)
	}
	if got := string(AppendRequest(nil, []byte("9"), "ping", nil)); got != `{"jsonrpc":"2.0","id":9,"method":"ping"}` {
		t.Fatal(got)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"a\"b","result":{"x":[1,{"y":"}"}]}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"m","params":{"k\u0022":"v"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err != nil {
			return
		}
		if m.Kind == 0 {
			t.Fatal("decoded message without kind")
		}
	})
}
