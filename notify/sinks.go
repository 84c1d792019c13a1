package notify

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ahp-go/ahp/config"
)

// maxURLFileBytes bounds a url_file.
const maxURLFileBytes = 8 << 10

// SinksFromConfig turns the configured sinks into Sinks, reading each URL
// from the configuration, its url_file or its url_env (getenv; os.Getenv
// when nil). Errors name the sink, the file or the variable, never the
// URL past its host.
func SinksFromConfig(c config.NotificationsConfig, getenv func(string) string) ([]Sink, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	var out []Sink
	for i, s := range c.Sinks {
		name := s.Name
		if name == "" {
			name = fmt.Sprintf("sink-%d", i+1)
		}
		raw := s.URL
		switch {
		case s.URLFile != "":
			b, err := readSmall(s.URLFile)
			if err != nil {
				return nil, fmt.Errorf("notifications: sink %s: url_file: %w", name, err)
			}
			raw = strings.TrimSpace(string(b))
			if raw == "" {
				return nil, fmt.Errorf("notifications: sink %s: url_file %s is empty", name, s.URLFile)
			}
		case s.URLEnv != "":
			raw = strings.TrimSpace(getenv(s.URLEnv))
			if raw == "" {
				return nil, fmt.Errorf("notifications: sink %s: url_env: environment variable %s is not set", name, s.URLEnv)
			}
		}
		if err := config.CheckNotifyURL(raw); err != nil {
			return nil, fmt.Errorf("notifications: sink %s: url %w", name, err)
		}
		sk := Sink{Name: name, URL: raw, Format: Format(s.Format), Packs: s.Packs, Rules: s.Rules}
		for _, e := range s.Events {
			sk.Kinds = append(sk.Kinds, Kind(e))
		}
		out = append(out, sk)
	}
	return out, nil
}

// readSmall reads a file of at most maxURLFileBytes.
func readSmall(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxURLFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(b) > maxURLFileBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxURLFileBytes)
	}
	return b, nil
}

// FromConfig builds the Options of c: its sinks (URLs resolved as
// SinksFromConfig does), dashboard URL, queue size, timeout and attempts.
// The caller adds PackOf, Registerer and Logger.
func FromConfig(c config.NotificationsConfig, getenv func(string) string) (Options, error) {
	sinks, err := SinksFromConfig(c, getenv)
	if err != nil {
		return Options{}, err
	}
	return Options{Sinks: sinks, DashboardURL: c.DashboardURL, QueueSize: c.QueueSize,
		Timeout: c.Timeout.D(), MaxAttempts: c.MaxAttempts}, nil
}
