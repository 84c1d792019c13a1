package httptransport

import (
	"testing"

	"github.com/ahp-go/ahp/jsonrpc"
)

func TestClassify(t *testing.T) {
	cases := []struct {
		msg     string
		id      string
		request bool
	}{
		{string(jsonrpc.AppendRequest(nil, []byte("42"), "ahp/event", []byte(`{}`))), "42", true},
		{string(jsonrpc.AppendRequest(nil, nil, "ahp/event", []byte(`{}`))), "", false},
		{`{"jsonrpc":"2.0","id":"a-b","method":"ping"}`, `"a-b"`, true},
		{string(jsonrpc.AppendRequest(nil, []byte(`"17"`), "ahp/event", []byte(`{}`))), `"17"`, true},
		{`{"jsonrpc":"2.0","id":"17,"method":"ping"}`, "", false},
		{`{"jsonrpc":"2.0","id":"","method":"ping"}`, `""`, true},
		{`{"method":"ping","id":7,"jsonrpc":"2.0"}`, "7", true},
		{`{"jsonrpc":"2.0","id":7,"result":{}}`, "", false},
		{`{"jsonrpc":"2.0","id":12x,"method":"ping"}`, "", false},
		{`not json`, "", false},
	}
	for _, tc := range cases {
		id, req := classify([]byte(tc.msg))
		if req != tc.request || string(id) != tc.id {
			t.Errorf("classify(%s) = %q, %v; want %q, %v", tc.msg, id, req, tc.id, tc.request)
		}
	}
}
