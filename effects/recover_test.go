package effects

import "testing"

// panicFS fails as a buggy reader would.
type panicFS struct{}

func (panicFS) Glob(string, int) ([]string, error)         { panic("glob") }
func (panicFS) EvalSymlinks(string) (string, error)        { panic("links") }
func (panicFS) ReadFile(string, int) ([]byte, bool, error) { panic("read") }

// TestReaderFailureIsALimit: a failure inside the analysis is an unknown
// with Limit set (the policy blocks it), never a crash of the harness.
func TestReaderFailureIsALimit(t *testing.T) {
	for name, got := range map[string][]Effect{
		"shell":   Shell("cat /etc/*", Context{Cwd: "/w", FS: panicFS{}}),
		"payload": Payload(map[string]any{"tool_name": "bash", "arguments": map[string]any{"command": "cat /etc/*"}}, Context{Cwd: "/w", FS: panicFS{}}),
	} {
		limited := false
		for _, e := range got {
			limited = limited || (e.Kind == Unknown && e.Limit)
		}
		if !limited {
			t.Errorf("%s: a panicking reader gave %+v, want a limit unknown", name, got)
		}
	}
}
