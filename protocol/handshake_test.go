package protocol

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
)

func TestCheckVersion(t *testing.T) {
	for _, v := range []string{"2.4", "2.0", "2", "2.3", "2.99.1", "2."} {
		if err := CheckVersion(v); err != nil {
			t.Errorf("%q: %v", v, err)
		}
	}
	for _, v := range []string{"3.0", "1.9", "", "20.0", "v2.4", " 2.4", "2,4", "02.4", "3"} {
		err := CheckVersion(v)
		if err == nil {
			t.Errorf("%q accepted", v)
			continue
		}
		if want := "Unsupported protocol version: " + v; err.Error() != want {
			t.Errorf("%q: message %q, want %q", v, err, want)
		}
		var uv *ErrUnsupportedVersion
		if !errors.As(err, &uv) || uv.Version != v {
			t.Errorf("%q: error %T does not carry the version", v, err)
		}
	}
	if err := CheckVersion(Version); err != nil {
		t.Errorf("own version %q: %v", Version, err)
	}
}

func TestServerDefaults(t *testing.T) {
	if DefaultTimeoutMs != 10000 || DefaultBatchSize != 100 || DefaultMaxDepth != 10 {
		t.Errorf("defaults %d/%d/%d, spec says 10000/100/10", DefaultTimeoutMs, DefaultBatchSize, DefaultMaxDepth)
	}
	want := []string{"pre_action", "post_action", "pre_prompt", "query", "batch", "run_lifecycle", "task_list", "verification"}
	if !slices.Equal(DefaultCapabilities, want) {
		t.Errorf("capabilities %v, spec says %v", DefaultCapabilities, want)
	}
}

// The 2.4 README's curl, wscat and Python snippets send only the version
// and agent_info: that decodes, with empty ids for the server to fill in.
// Types stay strict.
func TestHandshakeRequestFromReferenceSnippets(t *testing.T) {
	var r HandshakeRequest
	if err := json.Unmarshal([]byte(`{"protocol_version":"2.0","agent_info":{"framework":"a3s-code","version":"1.0.0"}}`), &r); err != nil {
		t.Fatalf("reference snippet refused: %v", err)
	}
	if r.ProtocolVersion != "2.0" || r.AgentInfo.Framework != "a3s-code" || r.SessionID != "" || r.AgentID != "" || r.AgentInfo.Capabilities != nil {
		t.Fatalf("decoded %+v", r)
	}
	for _, bad := range []string{
		`{"agent_info":{"framework":"a","version":"1"}}`,
		`{"protocol_version":"2.4"}`,
		`{"protocol_version":"2.4","agent_info":{"framework":"a","version":"1"},"session_id":7}`,
		`{"protocol_version":"2.4","agent_info":{"framework":"a","version":"1"},"agent_id":["x"]}`,
		`{"protocol_version":2.4,"agent_info":{"framework":"a","version":"1"}}`,
	} {
		if err := json.Unmarshal([]byte(bad), &r); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
