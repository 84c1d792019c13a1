package policy

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
)

// Source is the text of one policy file.
type Source struct {
	// Name identifies the source in error messages, usually its path.
	Name string
	// Data is the YAML text.
	Data []byte
}

// maxSourceSize bounds one policy file.
const maxSourceSize = 4 << 20

// ReadFiles reads policy files from disk.
func ReadFiles(paths ...string) ([]Source, error) {
	out := make([]Source, 0, len(paths))
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("policy: %w", err)
		}
		if fi.Size() > maxSourceSize {
			return nil, fmt.Errorf("policy: %s: larger than %d bytes", p, maxSourceSize)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("policy: %w", err)
		}
		out = append(out, Source{Name: p, Data: data})
	}
	return out, nil
}

// versionHash computes the policy version: the SHA-256 of every loaded
// source in load order (built-in packs first, then policy files), each in
// its canonical form (canonicalSource; the file's name and formatting do
// not count), and of the options that change decisions (packs, parameters
// without the harness's own, default outcome, mode, Options.Settings).
func versionHash(sources []Source, options []byte) string {
	h := sha256.New()
	var n [8]byte
	write := func(b []byte) {
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	for _, s := range sources {
		write(canonicalSource(s.Data))
	}
	write(options)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
