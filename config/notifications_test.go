package config

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestNotificationsValidate: each wrong setting of a sink is refused with
// its place named, and no error quotes a URL past its host.
func TestNotificationsValidate(t *testing.T) {
	cases := map[string]string{
		"notifications:\n  sinks:\n    - {format: json}\n":                                                                 "sinks[0]: set exactly one of url, url_file, url_env (0 set)",
		"notifications:\n  sinks:\n    - {format: json, url: 'https://h/x', url_env: X}\n":                                 "(2 set)",
		"notifications:\n  sinks:\n    - {url: 'https://h/x'}\n":                                                           "sinks[0].format: missing",
		"notifications:\n  sinks:\n    - {name: ops, format: xml, url: 'https://h/x'}\n":                                   "sinks[0] (ops).format: \"xml\" is not one of json, slack",
		"notifications:\n  sinks:\n    - {format: json, url: 'ftp://h/s3cr3t'}\n":                                          "scheme \"ftp\"",
		"notifications:\n  sinks:\n    - {format: json, url: 'https://user:s3cr3t@h/x'}\n":                                 "user information",
		"notifications:\n  sinks:\n    - {format: json, url: 'https://hooks.slack.com/[REDACTED]'}\n":                      "placeholder",
		"notifications:\n  sinks:\n    - {format: json, url_env: X, events: [decided]}\n":                                  "events: \"decided\" is not one of pending, outcome",
		"notifications:\n  sinks:\n    - {name: a, format: json, url_env: X}\n    - {name: a, format: json, url_env: Y}\n": "name is also the name of sinks[0]",
		"notifications:\n  dashboard_url: ahp.example.com\n":                                                               "notifications.dashboard_url",
		"notifications:\n  queue_size: 0\n":                                                                                "notifications.queue_size",
		"notifications:\n  timeout: 2m\n":                                                                                  "notifications.timeout",
		"notifications:\n  max_attempts: 50\n":                                                                             "notifications.max_attempts",
		"notifications:\n  sinks:\n    - {format: json, url_env: X, colour: red}\n":                                        "colour",
	}
	for body, want := range cases {
		c := Default()
		err := Parse([]byte(body), &c)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v does not mention %q", body, err, want)
			continue
		}
		if strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%q: the error quotes the URL: %v", body, err)
		}
	}
}

// TestPrintConfigHidesSinkURL: --print-config shows a sink URL written in
// the file by its host only, and what it prints does not load back as a
// working URL by mistake; url_file and url_env are shown as written.
func TestPrintConfigHidesSinkURL(t *testing.T) {
	c := Default()
	body := "notifications:\n  sinks:\n    - {name: slack, format: slack, url: 'https://hooks.slack.com/services/T0/B0/s3cr3t'}\n" +
		"    - {name: ops, format: json, url_env: OPS_WEBHOOK_URL, packs: [approvals]}\n"
	if err := Parse([]byte(body), &c); err != nil {
		t.Fatal(err)
	}
	out, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "s3cr3t") || !strings.Contains(string(out), "https://hooks.slack.com/[REDACTED]") ||
		!strings.Contains(string(out), "url_env: OPS_WEBHOOK_URL") {
		t.Fatalf("printed:\n%s", out)
	}
	if err := ValidateYAML(out); err != nil {
		t.Fatalf("printed config fails the schema: %v", err)
	}
	back := Default()
	if err := Parse(out, &back); err == nil || !strings.Contains(err.Error(), "placeholder") {
		t.Fatalf("the printed placeholder loaded back: %v", err)
	}
	if c.Notifications.Sinks[0].URL != "https://hooks.slack.com/services/T0/B0/s3cr3t" {
		t.Fatal("Marshal changed the configuration")
	}
}

// TestNotificationsDocExample: every YAML example of
// docs/notifications.md loads (as `ahp check --config` loads it) and
// matches the schema.
func TestNotificationsDocExample(t *testing.T) {
	doc, err := os.ReadFile("../docs/notifications.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllSubmatch(doc, -1)
	if len(blocks) == 0 {
		t.Fatal("docs/notifications.md has no yaml example")
	}
	sinks := 0
	for i, b := range blocks {
		c := Default()
		if err := Parse(b[1], &c); err != nil {
			t.Errorf("example %d does not load: %v\n%s", i+1, err, b[1])
		}
		if err := ValidateYAML(b[1]); err != nil {
			t.Errorf("example %d fails the schema: %v", i+1, err)
		}
		sinks += len(c.Notifications.Sinks)
	}
	if sinks == 0 {
		t.Fatal("no example configures a sink")
	}
}
