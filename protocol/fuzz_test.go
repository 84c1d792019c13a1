package protocol

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// addFixtureSeeds adds every golden value of the given types, and every
// compat file, to the fuzz corpus.
func addFixtureSeeds(f *testing.F, types ...string) {
	for _, c := range loadFixtures(f, fixtureFiles...) {
		for _, typ := range types {
			if c.typ == typ {
				f.Add([]byte(c.json))
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "compat", "*.json"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// checkStable decodes data into a fresh value from mk. If that works, the
// value must encode, its encoding must decode, and from there on encoding
// and decoding are a fixed point: same bytes, same value.
func checkStable(t *testing.T, mk func() any, data []byte) {
	v1 := mk()
	if json.Unmarshal(data, v1) != nil {
		return
	}
	b1, err := json.Marshal(v1)
	if err != nil {
		t.Fatalf("decoded %T does not encode: %v\ninput: %q", v1, err, data)
	}
	v2 := mk()
	if err := json.Unmarshal(b1, v2); err != nil {
		t.Fatalf("own encoding of %T does not decode: %v\ninput: %q\nencoded: %s", v1, err, data, b1)
	}
	b2, err := json.Marshal(v2)
	if err != nil {
		t.Fatalf("second encode of %T: %v", v2, err)
	}
	if !bytes.Equal(b1, b2) {
		t.Fatalf("%T: encodings differ\ninput: %q\n 1st: %s\n 2nd: %s", v1, data, b1, b2)
	}
	v3 := mk()
	if err := json.Unmarshal(b2, v3); err != nil || !reflect.DeepEqual(v2, v3) {
		t.Fatalf("%T: decode not stable: %v\n%+v\n%+v", v1, err, v2, v3)
	}
}

func FuzzDecodeEvent(f *testing.F) {
	addFixtureSeeds(f, "Event", "BatchRequest")
	f.Add([]byte(`{"event_type":"pre_action","session_id":"s\u00e9\ud83d\ude00","agent_id":"a","timestamp":"t","depth":0,"payload":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		// The zero-copy decoders must not panic, whatever the input, and
		// on well-formed input the one that skips validation agrees with
		// the one that validates.
		var direct Event
		directErr := DecodeEvent(data, &direct)
		if json.Valid(data) {
			var trusted Event
			trustedErr := DecodeValidEvent(data, &trusted)
			switch {
			case directErr == nil && trustedErr != nil:
				t.Fatalf("DecodeValidEvent rejects (%v) what DecodeEvent accepts: %q", trustedErr, data)
			case directErr == nil && !reflect.DeepEqual(direct, trusted):
				t.Fatalf("decoders differ on %q:\n%+v\n%+v", data, direct, trusted)
			case directErr != nil && trustedErr == nil && directErr.Error() != "event: malformed JSON":
				t.Fatalf("DecodeValidEvent accepts what DecodeEvent rejects (%v): %q", directErr, data)
			}
		}

		checkStable(t, func() any { return new(Event) }, data)
		checkStable(t, func() any { return new(BatchRequest) }, data)

		var e Event
		if err := json.Unmarshal(data, &e); err != nil {
			return
		}
		if directErr != nil {
			t.Fatalf("json.Unmarshal accepts what DecodeEvent rejects (%v): %q", directErr, data)
		}
		if err := e.Validate(); err != nil {
			t.Fatalf("decoded event does not validate: %v", err)
		}
		// Typed payloads: validation never panics and what passes is stable.
		if _, err := ValidatePayload(e.EventType, e.Payload); err == nil {
			if mk := payloadConstructor(e.EventType); mk != nil {
				checkStable(t, mk, e.Payload)
			}
		}
	})
}

// payloadConstructor returns a constructor for the checked payload of t.
func payloadConstructor(t EventType) func() any {
	switch t {
	case EventIdle:
		return func() any { return new(IdlePayload) }
	case EventIntentDetection:
		return func() any { return new(IntentDetectionPayload) }
	case EventContextPerception:
		return func() any { return new(ContextPerceptionPayload) }
	case EventMemoryRecall:
		return func() any { return new(MemoryRecallPayload) }
	case EventPlanning:
		return func() any { return new(PlanningPayload) }
	case EventReasoning:
		return func() any { return new(ReasoningPayload) }
	case EventRateLimit:
		return func() any { return new(RateLimitPayload) }
	case EventConfirmation:
		return func() any { return new(ConfirmationPayload) }
	case EventRunLifecycle:
		return func() any { return new(RunLifecyclePayload) }
	case EventTaskList:
		return func() any { return new(TaskListPayload) }
	case EventVerification:
		return func() any { return new(VerificationPayload) }
	}
	return nil
}

func FuzzDecision(f *testing.F) {
	addFixtureSeeds(f, decisionTypes...)
	f.Add([]byte(`{"decision":"allow","modified_payload": { "a" : [1, 2] },"reason":"x"}`))
	f.Add([]byte(`{"decision":"refine","refined_target":{"event":{"description":"d","event_type":"e","time_range":{}}},"scope_hints":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, typ := range decisionTypes {
			checkStable(t, newFixtureValue[typ], data)
		}
		checkStable(t, func() any { return new(BatchResponse) }, data)
	})
}

func FuzzPayload(f *testing.F) {
	for _, c := range loadFixtures(f, "payloads.json") {
		f.Add([]byte(c.json))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, et := range AllEventTypes {
			if mk := payloadConstructor(et); mk != nil {
				checkStable(t, mk, data)
			}
		}
		checkStable(t, func() any { return new(PerceptionTarget) }, data)
	})
}
