package policy

import "testing"

func TestEffectsTypeChecked(t *testing.T) {
	_, err := Compile(noPacks(), Source{Name: "p.yaml", Data: []byte(`
rules:
  - id: bad
    target: {event_types: [pre_action]}
    condition: 'event.effects.exists(e, e.pth == "/")'
    outcome: {decision: block, reason: x}
`)})
	if err == nil {
		t.Fatal("a misspelt effect field compiled")
	}
	t.Log(err)
	_, err = Compile(noPacks(), Source{Name: "p.yaml", Data: []byte(`
rules:
  - id: good
    target: {event_types: [pre_action]}
    condition: 'event.effects.exists(e, e.kind == "delete" && e.recursive && e.argv.size() > 0)'
    outcome: {decision: block, reason: x}
`)})
	if err != nil {
		t.Fatal(err)
	}
}
