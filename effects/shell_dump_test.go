package effects

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestShellDump prints the effects of the commands in $AHP_SHELL_DUMP (one
// a line); a development aid, skipped when unset.
func TestShellDump(t *testing.T) {
	in := os.Getenv("AHP_SHELL_DUMP")
	if in == "" {
		t.Skip("AHP_SHELL_DUMP not set")
	}
	ctx := Context{Cwd: "/work/proj", Home: "/home/ann", User: "ann"}
	for _, line := range strings.Split(in, "\n") {
		if line == "" {
			continue
		}
		t.Logf("%s", line)
		for _, e := range Shell(line, ctx) {
			b, _ := json.Marshal(e)
			t.Logf("    %s", b)
		}
	}
}
