package policy

import (
	"fmt"
	"strings"
	"testing"
)

func BenchmarkScratchOverhead(b *testing.B) {
	for _, cond := range []string{"event.depth > 100", "session.actions > 1000", "payload.tool_name == 'x'", "event.command.startsWith('terraform')"} {
		b.Run(cond, func(b *testing.B) {
			var sb strings.Builder
			sb.WriteString("rules:\n")
			for i := 0; i < 10; i++ {
				fmt.Fprintf(&sb, "  - id: r%d\n    target: {event_types: [pre_action]}\n    condition: %q\n    outcome: {decision: block, reason: x}\n", i, cond)
			}
			set, err := Compile(Options{Packs: map[string]bool{"destructive_shell": false, "secrets": false}}, Source{Name: "x", Data: []byte(sb.String())})
			if err != nil {
				b.Fatal(err)
			}
			runEvaluate(b, set, benchInput())
		})
	}
}

func BenchmarkScratchShell(b *testing.B) {
	src := string(benchEvent.Payload)
	b.ReportAllocs()
	for b.Loop() {
		shellCommand(decodeJSON(src))
	}
}

func BenchmarkScratchDecode(b *testing.B) {
	src := string(benchEvent.Payload)
	b.ReportAllocs()
	for b.Loop() {
		o := decodeJSON(src).(*jsonObject)
		o.scan()
	}
}
