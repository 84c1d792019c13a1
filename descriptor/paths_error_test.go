package descriptor

import (
	"path/filepath"
	"strings"
	"testing"
)

// A missing instruction file is named with the directory it was looked
// for in and the operating system's reason, not os.Root's operation names.
func TestMissingInstructionFileError(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"d.yaml": minimal("    instructions_file: ./prompts/a.md\n")})
	_, err := Load(filepath.Join(dir, "d.yaml"))
	if err == nil || strings.Contains(err.Error(), "statat") || !strings.Contains(err.Error(), `"./prompts/a.md": not found in `+dir) {
		t.Fatalf("error: %v", err)
	}
}
