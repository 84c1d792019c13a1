package redact

import (
	"os"
	"path/filepath"
)

func statKey(dir string) (os.FileInfo, error) { return os.Stat(filepath.Join(dir, KeyFile)) }
