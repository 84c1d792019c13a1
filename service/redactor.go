package service

import (
	"fmt"

	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/redact"
)

// NewRedactor builds the redactor of a harness: the fingerprint key kept in
// the data directory (created on first start), the configuration's field
// paths and detectors, and the descriptor's redact: true context fields.
func NewRedactor(c config.Config, sup *harness.DescriptorSupervisor) (*redact.Redactor, error) {
	key, err := redact.LoadOrCreateKey(c.DataDir)
	if err != nil {
		return nil, fmt.Errorf("redaction key: %w", err)
	}
	var fields []string
	if sup != nil {
		for _, f := range sup.Descriptor().ContextFields() {
			if f.Redact {
				fields = append(fields, f.Path)
			}
		}
	}
	r, err := redact.New(redact.Options{Key: key, Rules: c.Redaction, ContextFields: fields})
	if err != nil {
		return nil, fmt.Errorf("redaction: %w", err)
	}
	return r, nil
}
