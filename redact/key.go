package redact

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// KeyFile is the name of the fingerprint key inside the data directory,
// beside the admin token.
const KeyFile = "redact.key"

// LoadOrCreateKey returns the fingerprint key kept in dataDir, creating it
// (32 random bytes, hex, mode 0600) on first use. Two processes starting
// at once agree on one key: the file is created exclusively.
func LoadOrCreateKey(dataDir string) ([]byte, error) {
	path := filepath.Join(dataDir, KeyFile)
	if k, err := readKey(path); err == nil {
		return k, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("redact: create data directory: %w", err)
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return readKey(path) // another process won the race
	}
	if err != nil {
		return nil, fmt.Errorf("redact: create %s: %w", path, err)
	}
	_, werr := f.WriteString(hex.EncodeToString(raw[:]) + "\n")
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		return nil, fmt.Errorf("redact: write %s: %w", path, err)
	}
	return raw[:], nil
}

// LoadKey returns the key kept in dataDir; it does not create one.
func LoadKey(dataDir string) ([]byte, error) {
	return readKey(filepath.Join(dataDir, KeyFile))
}

func readKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	k, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(k) < 16 {
		// Never quote the file: it is the key.
		return nil, fmt.Errorf("redact: %s does not hold a hex key of at least 16 bytes", path)
	}
	return k, nil
}
