package auth

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"go.yaml.in/yaml/v3"
)

// fileFormat is the YAML credentials file (documented in docs/security.md).
type fileFormat struct {
	Version    int             `yaml:"version"`
	Principals []filePrincipal `yaml:"principals"`
	MTLS       []fileMTLS      `yaml:"mtls"`
}

type filePrincipal struct {
	ID           string   `yaml:"id"`
	Roles        []string `yaml:"roles"`
	APIKeys      []string `yaml:"api_keys"`
	BearerTokens []string `yaml:"bearer_tokens"`
}

type fileMTLS struct {
	CommonName string `yaml:"common_name"`
	SAN        string `yaml:"san"`
	Principal  string `yaml:"principal"`
}

// maxFileBytes bounds a credentials file.
const maxFileBytes = 8 << 20

func decodeFile(data []byte) (*fileFormat, error) {
	if len(data) > maxFileBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxFileBytes)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f fileFormat
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the file is empty")
		}
		// yaml errors quote line numbers and field names, not values.
		return nil, err
	}
	if f.Version != 0 && f.Version != 1 {
		return nil, fmt.Errorf("version %d is not supported (want 1)", f.Version)
	}
	return &f, nil
}
