package protocol

import (
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
