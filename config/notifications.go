package config

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// NotificationsConfig configures the webhooks that tell people an
// approval waits and how it ended (docs/notifications.md).
type NotificationsConfig struct {
	// DashboardURL is the dashboard's external base URL
	// (https://ahp.example.com), used to link to the approval card. When
	// empty, notifications say how to find the approval with
	// `ahp approvals show ID` instead.
	DashboardURL string `yaml:"dashboard_url" json:"dashboard_url,omitempty"`
	// QueueSize bounds the notifications waiting to be sent, for each sink
	// (and once more before they are sorted to sinks); past it they are
	// dropped and counted.
	QueueSize int `yaml:"queue_size" json:"queue_size"`
	// Timeout bounds each HTTP request.
	Timeout Duration `yaml:"timeout" json:"timeout"`
	// MaxAttempts is how many times one notification is tried before it
	// is given up (retries back off exponentially, with jitter).
	MaxAttempts int `yaml:"max_attempts" json:"max_attempts"`
	// Sinks are the receivers. None: no notifications.
	Sinks []NotifySink `yaml:"sinks" json:"sinks"`
}

// NotifySink is one webhook receiver and what it is sent.
type NotifySink struct {
	// Name names the sink in logs and metrics (sink-1, sink-2… when empty).
	Name string `yaml:"name,omitempty" json:"name,omitempty"`
	// Format is json (the documented generic body) or slack (an incoming
	// webhook body: text and blocks).
	Format string `yaml:"format" json:"format"`
	// URL is where to POST. It may hold a secret (Slack webhook URLs do):
	// prefer URLFile or URLEnv. Exactly one of the three is set.
	URL string `yaml:"url,omitempty" json:"url,omitempty"`
	// URLFile is a file whose content (trimmed) is the URL.
	URLFile string `yaml:"url_file,omitempty" json:"url_file,omitempty"`
	// URLEnv names an environment variable holding the URL.
	URLEnv string `yaml:"url_env,omitempty" json:"url_env,omitempty"`
	// Events lists what the sink gets: pending, outcome (both when empty).
	Events []string `yaml:"events,omitempty" json:"events,omitempty"`
	// Packs and Rules select approvals by the built-in pack or the id of
	// the rule that asked for them; an approval matches when either list
	// names it. Both empty: every approval.
	Packs []string `yaml:"packs,omitempty" json:"packs,omitempty"`
	Rules []string `yaml:"rules,omitempty" json:"rules,omitempty"`
}

// RedactedURL is what --print-config shows in place of a URL written in
// the configuration: only its scheme and host, since the rest may be a
// secret. Validate refuses it as a URL, so a printed configuration is
// never used with it by mistake.
const RedactedURL = "[REDACTED]"

// MarshalYAML writes s with its URL reduced to scheme and host.
func (s NotifySink) MarshalYAML() (any, error) {
	type plain NotifySink
	p := plain(s)
	if p.URL != "" {
		p.URL = URLHost(p.URL) + "/" + RedactedURL
	}
	return p, nil
}

// URLHost returns scheme://host of a URL, which may be logged; "(bad
// URL)" when it does not parse.
func URLHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(bad URL)"
	}
	return u.Scheme + "://" + u.Host
}

func defaultNotifications() NotificationsConfig {
	return NotificationsConfig{QueueSize: 1000, Timeout: Duration(5 * time.Second), MaxAttempts: 6, Sinks: []NotifySink{}}
}

// validate checks n; each error names the setting.
func (n *NotificationsConfig) validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("notifications."+format, args...))
	}
	if d := n.DashboardURL; d != "" {
		if u, err := url.Parse(d); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("dashboard_url: %q is not an http:// or https:// URL with a host", d)
		}
	}
	if n.QueueSize < 1 || n.QueueSize > 100000 {
		bad("queue_size: %d is not between 1 and 100000", n.QueueSize)
	}
	if n.Timeout <= 0 || n.Timeout.D() > time.Minute {
		bad("timeout: %s is not between 1ms and 1m", n.Timeout.D())
	}
	if n.MaxAttempts < 1 || n.MaxAttempts > 20 {
		bad("max_attempts: %d is not between 1 and 20", n.MaxAttempts)
	}
	if len(n.Sinks) > 64 {
		bad("sinks: %d sinks, at most 64", len(n.Sinks))
	}
	names := map[string]int{}
	for i, s := range n.Sinks {
		at := fmt.Sprintf("sinks[%d]", i)
		if s.Name != "" {
			at = fmt.Sprintf("sinks[%d] (%s)", i, s.Name)
			if j, dup := names[s.Name]; dup {
				bad("%s: name is also the name of sinks[%d]", at, j)
			}
			names[s.Name] = i
		}
		switch s.Format {
		case "json", "slack":
		case "":
			bad("%s.format: missing; want json or slack", at)
		default:
			bad("%s.format: %q is not one of json, slack", at, s.Format)
		}
		set := 0
		for _, v := range []string{s.URL, s.URLFile, s.URLEnv} {
			if v != "" {
				set++
			}
		}
		if set != 1 {
			bad("%s: set exactly one of url, url_file, url_env (%d set)", at, set)
		}
		if s.URL != "" {
			if err := CheckNotifyURL(s.URL); err != nil {
				bad("%s.url: %v", at, err)
			}
		}
		for _, e := range s.Events {
			if e != "pending" && e != "outcome" {
				bad("%s.events: %q is not one of pending, outcome", at, e)
			}
		}
		for _, p := range s.Packs {
			if strings.TrimSpace(p) == "" {
				bad("%s.packs: an empty pack name", at)
			}
		}
		for _, r := range s.Rules {
			if strings.TrimSpace(r) == "" {
				bad("%s.rules: an empty rule id", at)
			}
		}
	}
	return errors.Join(errs...)
}

// CheckNotifyURL checks a sink's URL (from the configuration, a file or
// the environment). Its errors never quote the URL past its host.
func CheckNotifyURL(raw string) error {
	if strings.Contains(raw, RedactedURL) {
		return errors.New("holds the " + RedactedURL + " placeholder that --print-config prints; write the real URL (better: url_file or url_env)")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("does not parse as a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("scheme %q: want http:// or https://", u.Scheme)
	}
	if u.Host == "" {
		return errors.New("has no host")
	}
	if u.User != nil {
		return fmt.Errorf("%s: user information in the URL is not supported", URLHost(raw))
	}
	return nil
}
