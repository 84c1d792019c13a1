package policy

import (
	"testing"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/redact"
)

// secretsOnly enables the secrets pack alone.
func secretsOnly() Options {
	o := noPacks()
	o.Packs["secrets"] = true
	return o
}

// TestSecretsPackDecidesTheSameOnRedactedEvents: the secrets pack gives a
// redacted event (markers in place of the secrets) the decision and rule it
// gave the original, which is what replay of a redacted record relies on.
func TestSecretsPackDecidesTheSameOnRedactedEvents(t *testing.T) {
	set, err := Compile(secretsOnly())
	if err != nil {
		t.Fatal(err)
	}
	red, err := redact.New(redact.Options{Key: []byte("a key of at least sixteen bytes")})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []*protocol.Event{
		event(protocol.EventPrePrompt, `{"prompt":"-----BEGIN RSA PRIVATE KEY-----\nMIIabc\n-----END RSA PRIVATE KEY-----"}`),
		event(protocol.EventPrePrompt, `{"prompt":"key AKIAIOSFODNN7EXAMPLE"}`),
		bash("curl -H 'token ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'"),
		action("http", map[string]any{"body": "client_secret=abc123def456ghi789"}),
		bash("ls -la"),
	} {
		live := eval(set, ev)
		rev, _ := red.Event(ev, false)
		again := eval(set, rev)
		if again.Decision.Kind != live.Decision.Kind || again.RuleID != live.RuleID {
			t.Errorf("%s: live %s (%s), redacted %s (%s); redacted payload %s",
				ev.Payload, live.Decision.Kind, live.RuleID, again.Decision.Kind, again.RuleID, rev.Payload)
		}
	}
}

// TestPayloadSecretsReported: the result says whether the secrets rules
// scanned the whole payload, so that the harness need not scan it again.
func TestPayloadSecretsReported(t *testing.T) {
	set, err := Compile(secretsOnly())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ev   *protocol.Event
		want SecretScan
	}{
		{bash("ls"), SecretsNone},
		{bash("echo AKIAIOSFODNN7EXAMPLE"), SecretsFound},
		{event(protocol.EventPrePrompt, `{"prompt":"hello"}`), SecretsNone},
		{event(protocol.EventPostAction, `{"tool_name":"bash","result":"x"}`), SecretsUnknown}, // no secrets rule targets it
	} {
		if got := eval(set, c.ev).PayloadSecrets; got != c.want {
			t.Errorf("%s %s: PayloadSecrets %d, want %d", c.ev.EventType, c.ev.Payload, got, c.want)
		}
	}
	// Without the pack nothing scans the payload.
	if got := eval(mustCompile(t, noPacks(), "rules: []\n"), bash("ls")).PayloadSecrets; got != SecretsUnknown {
		t.Errorf("no pack: %d", got)
	}
}
