// Package config holds the configuration of `ahp serve`: one YAML file in
// which every setting has a default, so that the harness runs with no file
// at all. Load reads a file strictly (unknown keys are errors, with their
// line), fills in the defaults and checks the values.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ahp-go/ahp/internal/duration"
	"github.com/ahp-go/ahp/redact"
)

// Config is the whole configuration of ahp serve.
type Config struct {
	// DataDir holds the SQLite store and the generated admin token.
	DataDir string `yaml:"data_dir" json:"data_dir"`
	// Store selects the store: "" or "sqlite" for SQLite in DataDir (the
	// default), or a postgres:// URL for PostgreSQL, which several
	// replicas share (docs/deployment.md). Keep the password out of the
	// URL: PGPASSWORD or ~/.pgpass supply it.
	Store string `yaml:"store" json:"store,omitempty"`
	// Listen lists the addresses to serve agents on (stdio, unix:PATH,
	// http://HOST:PORT, https://, grpc://).
	Listen []string `yaml:"listen" json:"listen"`
	// Admin is the address of the admin API (approvals, health, metrics).
	Admin string `yaml:"admin" json:"admin"`
	// Log configures the process log on stderr.
	Log LogConfig `yaml:"log" json:"log"`
	// Harness configures the protocol limits announced in the handshake.
	Harness HarnessConfig `yaml:"harness" json:"harness"`
	// Auth configures credentials and TLS for network listeners.
	Auth AuthConfig `yaml:"auth" json:"auth"`
	// Policy configures the rule engine.
	Policy PolicyConfig `yaml:"policy" json:"policy"`
	// Approvals configures human approval of escalations.
	Approvals ApprovalsConfig `yaml:"approvals" json:"approvals"`
	// Audit configures the audit log.
	Audit AuditConfig `yaml:"audit" json:"audit"`
	// Context configures the answers to context_perception.
	Context ContextConfig `yaml:"context" json:"context"`
	// Memory configures the answers to memory_recall and the memories the
	// harness keeps from what agents do.
	Memory MemoryConfig `yaml:"memory" json:"memory"`
	// Intent configures the answers to intent_detection.
	Intent IntentConfig `yaml:"intent" json:"intent"`
	// Idle configures the answers to idle.
	Idle IdleConfig `yaml:"idle" json:"idle"`
	// Descriptor is an Agent Harness Descriptor file to supervise against.
	Descriptor string `yaml:"descriptor" json:"descriptor,omitempty"`
	// Redaction adds field paths and detectors to the built-in secret
	// detectors whose findings are never stored (docs/security.md).
	Redaction redact.Rules `yaml:"redaction" json:"redaction"`
	// Telemetry configures OpenTelemetry export of decisions and metrics
	// over OTLP (docs/telemetry.md).
	Telemetry TelemetryConfig `yaml:"telemetry" json:"telemetry"`
	// Notifications configures the webhooks told of pending approvals and
	// their outcome (docs/notifications.md).
	Notifications NotificationsConfig `yaml:"notifications" json:"notifications"`
}

// TelemetryConfig configures OTLP export. Empty values fall back to the
// standard OTEL_EXPORTER_OTLP_* environment variables; export is also on
// when one of them names an endpoint, and off with OTEL_SDK_DISABLED=true.
type TelemetryConfig struct {
	// Enabled exports every decision as a span and the metrics over OTLP.
	Enabled bool `yaml:"enabled" json:"enabled"`
	// Endpoint is the collector's base URL (http://host:4318 for HTTP,
	// http://host:4317 for gRPC; https:// for TLS).
	Endpoint string `yaml:"endpoint" json:"endpoint,omitempty"`
	// Protocol is http/protobuf or grpc.
	Protocol string `yaml:"protocol" json:"protocol,omitempty"`
	// Traces and Metrics switch each signal.
	Traces  bool `yaml:"traces" json:"traces"`
	Metrics bool `yaml:"metrics" json:"metrics"`
	// MetricsInterval is the period of metric exports (0: 60s, or
	// OTEL_METRIC_EXPORT_INTERVAL).
	MetricsInterval Duration `yaml:"metrics_interval" json:"metrics_interval"`
}

// LogConfig configures logging.
type LogConfig struct {
	Level  string `yaml:"level" json:"level"`   // debug, info, warn, error
	Format string `yaml:"format" json:"format"` // text or json
}

// HarnessConfig configures protocol limits.
type HarnessConfig struct {
	Name            string `yaml:"name" json:"name"`
	TimeoutMs       uint64 `yaml:"timeout_ms" json:"timeout_ms"`
	BatchSize       int    `yaml:"batch_size" json:"batch_size"`
	MaxDepth        uint32 `yaml:"max_depth" json:"max_depth"`
	MaxMessageBytes int    `yaml:"max_message_bytes" json:"max_message_bytes"`
	MaxInFlight     int    `yaml:"max_in_flight" json:"max_in_flight"`
	// MaxConnections bounds the agent connections open at once, across
	// every listener; past it agents are refused (docs/transports.md).
	// 0 derives it from the process's open-file limit.
	MaxConnections int `yaml:"max_connections" json:"max_connections"`
}

// AuthConfig configures credentials and TLS.
type AuthConfig struct {
	Credentials    string `yaml:"credentials" json:"credentials,omitempty"`
	InsecureNoAuth bool   `yaml:"insecure_no_auth" json:"insecure_no_auth"`
	TLSCert        string `yaml:"tls_cert" json:"tls_cert,omitempty"`
	TLSKey         string `yaml:"tls_key" json:"tls_key,omitempty"`
	ClientCA       string `yaml:"client_ca" json:"client_ca,omitempty"`
}

// PolicyConfig configures the rule engine.
type PolicyConfig struct {
	// Files are policy files (YAML) loaded after the built-in packs.
	Files []string `yaml:"files" json:"files"`
	// Packs switches built-in packs on or off by name.
	Packs map[string]bool `yaml:"packs" json:"packs"`
	// Params are visible to rules as config.NAME (workspace_roots,
	// allowed_hosts, budgets, ...).
	Params map[string]any `yaml:"params" json:"params"`
	// Default is the decision when no rule matches: allow or block.
	Default string `yaml:"default" json:"default"`
	// Watch reloads the policy files when they change.
	Watch bool `yaml:"watch" json:"watch"`
	// Mode is enforce, or shadow: every rule, packs included, is evaluated
	// and recorded but none decides (docs/shadow.md).
	Mode string `yaml:"mode" json:"mode"`
	// Shadow is a candidate policy evaluated beside the live one.
	Shadow ShadowPolicyConfig `yaml:"shadow" json:"shadow"`
}

// ShadowPolicyConfig configures a shadow policy: a second, complete policy
// (the same packs and params, other files) evaluated on live traffic
// without deciding.
type ShadowPolicyConfig struct {
	// Files are the candidate policy's files; none: no shadow policy.
	Files []string `yaml:"files" json:"files"`
	// Sample is the fraction of events the candidate decides, in (0, 1].
	Sample float64 `yaml:"sample" json:"sample"`
}

// ApprovalsConfig configures human approvals.
type ApprovalsConfig struct {
	// Timeout is how long an escalation waits for a human when its rule
	// does not say.
	Timeout Duration `yaml:"timeout" json:"timeout"`
	// Fallback is the decision when nobody answers: block or allow.
	Fallback string `yaml:"fallback" json:"fallback"`
}

// AuditConfig configures the audit log.
type AuditConfig struct {
	// MaxAge deletes records older than this (0 keeps them).
	MaxAge Duration `yaml:"max_age" json:"max_age"`
	// MaxRows keeps at most this many records (0: no limit).
	MaxRows int64 `yaml:"max_rows" json:"max_rows"`
}

// ContextConfig configures context_perception answers.
type ContextConfig struct {
	// WorkspaceRoots are the directories file snippets may come from.
	WorkspaceRoots []string `yaml:"workspace_roots" json:"workspace_roots"`
	// Facts are injected into every allowed perception.
	Facts []FactConfig `yaml:"facts" json:"facts"`
	// ProjectName and Language describe the project in the summary.
	ProjectName string `yaml:"project_name" json:"project_name,omitempty"`
	Language    string `yaml:"language" json:"language,omitempty"`
	// MaxFiles bounds how many files a search reads.
	MaxFiles int `yaml:"max_files" json:"max_files"`
	// MaxSnippets bounds the snippets returned when the agent sets no limit.
	MaxSnippets int `yaml:"max_snippets" json:"max_snippets"`
}

// FactConfig is one configured fact.
type FactConfig struct {
	Content    string  `yaml:"content" json:"content"`
	Source     string  `yaml:"source" json:"source"`
	Confidence float32 `yaml:"confidence" json:"confidence"`
}

// MemoryConfig configures memory_recall answers and the memory the
// harness fills itself (docs/cognitive.md).
type MemoryConfig struct {
	// MaxResults bounds the facts returned whatever the agent asks.
	MaxResults int `yaml:"max_results" json:"max_results"`
	// Capture keeps memories of what agents do: success summaries, errors,
	// policy blocks, human approval decisions and intent prompts, redacted.
	Capture bool `yaml:"capture" json:"capture"`
	// Retention is how long kept memories live; facts people added stay.
	Retention Duration `yaml:"retention" json:"retention"`
	// CrossSessionAgentFacts lets a session recall what agents wrote in
	// other sessions of its project (only human and policy memories cross
	// sessions when false: an agent's text can carry a prompt injection).
	CrossSessionAgentFacts bool `yaml:"cross_session_agent_facts" json:"cross_session_agent_facts"`
}

// IntentConfig configures intent_detection answers.
type IntentConfig struct {
	// LLM, when set, asks an OpenAI-compatible chat-completions endpoint
	// first; the phrase tables decide when it does not answer in time.
	LLM *LLMConfig `yaml:"llm" json:"llm,omitempty"`
}

// LLMConfig names an OpenAI-compatible chat-completions endpoint.
type LLMConfig struct {
	// URL is the endpoint's base URL (http://127.0.0.1:11434/v1 for Ollama).
	URL string `yaml:"url" json:"url"`
	// Model is the model name sent with each request.
	Model string `yaml:"model" json:"model"`
	// APIKeyEnv names the environment variable holding the API key (none
	// when empty); the key itself never appears in the configuration.
	APIKeyEnv string `yaml:"api_key_env" json:"api_key_env,omitempty"`
	// TimeoutMs bounds each classification (800 when 0).
	TimeoutMs int `yaml:"timeout_ms" json:"timeout_ms,omitempty"`
}

// IdleConfig configures idle answers.
type IdleConfig struct {
	// DeferWhilePending answers defer while approvals are pending.
	DeferWhilePending bool `yaml:"defer_while_pending" json:"defer_while_pending"`
}

// Default returns the configuration ahp serve uses with no file.
func Default() Config {
	return Config{
		DataDir: DefaultDataDir(),
		Listen:  []string{DefaultConnect()},
		Admin:   "http://127.0.0.1:7700",
		Log:     LogConfig{Level: "info", Format: "text"},
		Harness: HarnessConfig{Name: "ahp", TimeoutMs: 10000, BatchSize: 100, MaxDepth: 10,
			MaxMessageBytes: 4 << 20, MaxInFlight: 256},
		Policy: PolicyConfig{Files: []string{}, Packs: map[string]bool{}, Params: map[string]any{}, Default: "allow",
			Mode: "enforce", Shadow: ShadowPolicyConfig{Files: []string{}, Sample: 1}},
		Approvals: ApprovalsConfig{Timeout: Duration(5 * time.Minute), Fallback: "block"},
		Audit:     AuditConfig{MaxAge: Duration(90 * 24 * time.Hour)},
		Context:   ContextConfig{WorkspaceRoots: []string{}, Facts: []FactConfig{}, MaxFiles: 2000, MaxSnippets: 5},
		Memory:    MemoryConfig{MaxResults: 20, Capture: true, Retention: Duration(30 * 24 * time.Hour)},
		Idle:      IdleConfig{DeferWhilePending: true},
		Redaction: redact.Rules{Fields: []string{}, Patterns: []redact.Pattern{}},
		Telemetry: TelemetryConfig{Traces: true, Metrics: true},

		Notifications: defaultNotifications(),
	}
}

// MaxFileBytes bounds a configuration file.
const MaxFileBytes = 1 << 20

// Load reads the file at path over the defaults. Keys the file does not
// set keep their defaults; unknown keys are errors naming their line.
func Load(path string) (Config, error) {
	c := Default()
	data, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("config: %w", err)
	}
	if len(data) > MaxFileBytes {
		return c, fmt.Errorf("config: %s is larger than %d bytes", path, MaxFileBytes)
	}
	if err := Parse(data, &c); err != nil {
		return c, fmt.Errorf("config: %s: %w", path, err)
	}
	return c, nil
}

// Parse decodes YAML over c (which should hold the defaults) and checks
// the result.
func Parse(data []byte, c *Config) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return cleanYAMLError(data, err)
	}
	return c.Validate()
}

// Validate checks values that have a fixed set of choices or bounds.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Store != "" && c.Store != "sqlite" && !strings.HasPrefix(c.Store, "postgres://") && !strings.HasPrefix(c.Store, "postgresql://") {
		bad("store: want sqlite or a postgres:// URL")
	}
	if c.DataDir == "" {
		bad("data_dir: must not be empty")
	}
	for _, l := range c.Listen {
		if err := CheckListen(l); err != nil {
			errs = append(errs, err)
		}
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		bad("log.level: %q is not one of debug, info, warn, error", c.Log.Level)
	}
	switch c.Log.Format {
	case "text", "json":
	default:
		bad("log.format: %q is not one of text, json", c.Log.Format)
	}
	if c.Harness.BatchSize < 1 || c.Harness.BatchSize > 10000 {
		bad("harness.batch_size: %d is not between 1 and 10000", c.Harness.BatchSize)
	}
	if c.Harness.MaxMessageBytes < 1024 || c.Harness.MaxMessageBytes > 64<<20 {
		bad("harness.max_message_bytes: %d is not between 1 KiB and 64 MiB", c.Harness.MaxMessageBytes)
	}
	if c.Harness.MaxInFlight < 1 || c.Harness.MaxInFlight > 65536 {
		bad("harness.max_in_flight: %d is not between 1 and 65536", c.Harness.MaxInFlight)
	}
	if c.Harness.MaxConnections < 0 || c.Harness.MaxConnections > 10_000_000 {
		bad("harness.max_connections: %d is not between 0 (derived from the file limit) and 10000000", c.Harness.MaxConnections)
	}
	if c.Harness.TimeoutMs == 0 {
		bad("harness.timeout_ms: must be positive")
	}
	switch c.Policy.Default {
	case "allow", "block":
	default:
		bad("policy.default: %q is not one of allow, block", c.Policy.Default)
	}
	switch c.Policy.Mode {
	case "enforce", "shadow":
	default:
		bad("policy.mode: %q is not one of enforce, shadow", c.Policy.Mode)
	}
	if s := c.Policy.Shadow.Sample; !(s > 0 && s <= 1) {
		bad("policy.shadow.sample: %v is not in (0, 1]", s)
	}
	switch c.Approvals.Fallback {
	case "allow", "block":
	default:
		bad("approvals.fallback: %q is not one of allow, block", c.Approvals.Fallback)
	}
	if c.Approvals.Timeout <= 0 {
		bad("approvals.timeout: must be positive")
	}
	if c.Audit.MaxAge < 0 || c.Audit.MaxRows < 0 {
		bad("audit: max_age and max_rows must not be negative")
	}
	if c.Memory.MaxResults < 1 || c.Memory.MaxResults > 1000 {
		bad("memory.max_results: %d is not between 1 and 1000", c.Memory.MaxResults)
	}
	if c.Memory.Retention < 0 {
		bad("memory.retention: must not be negative")
	}
	if l := c.Intent.LLM; l != nil {
		if !strings.HasPrefix(l.URL, "http://") && !strings.HasPrefix(l.URL, "https://") {
			bad("intent.llm.url: %q is not an http:// or https:// URL", l.URL)
		}
		if l.Model == "" {
			bad("intent.llm.model: must not be empty")
		}
		if l.TimeoutMs < 0 || l.TimeoutMs > 60000 {
			bad("intent.llm.timeout_ms: %d is not between 0 and 60000", l.TimeoutMs)
		}
	}
	if c.Context.MaxSnippets < 0 || c.Context.MaxFiles < 0 {
		bad("context: max_snippets and max_files must not be negative")
	}
	for i, f := range c.Context.Facts {
		if f.Confidence < 0 || f.Confidence > 1 {
			bad("context.facts[%d].confidence: %v is not between 0 and 1", i, f.Confidence)
		}
	}
	switch c.Telemetry.Protocol {
	case "", "http/protobuf", "grpc":
	default:
		bad("telemetry.protocol: %q is not one of http/protobuf, grpc", c.Telemetry.Protocol)
	}
	if e := c.Telemetry.Endpoint; e != "" {
		if u, err := url.Parse(e); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("telemetry.endpoint: %q is not an http:// or https:// URL with a host", e)
		}
	}
	if c.Telemetry.MetricsInterval < 0 {
		bad("telemetry.metrics_interval: must not be negative")
	}
	if err := c.Redaction.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Notifications.validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Marshal returns c as YAML, as --print-config shows it.
func (c Config) Marshal() ([]byte, error) {
	c.Store = StoreWithoutPassword(c.Store)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(c); err != nil {
		return nil, err
	}
	return buf.Bytes(), enc.Close()
}

// Duration is a time.Duration written as "5m", "90s" or "720h" in YAML.
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// MarshalYAML writes d as a duration string: whole days as "90d", others
// as Go writes them ("5m0s").
func (d Duration) MarshalYAML() (any, error) {
	const day = 24 * time.Hour
	if v := time.Duration(d); v > 0 && v%day == 0 {
		return strconv.FormatInt(int64(v/day), 10) + "d", nil
	}
	return time.Duration(d).String(), nil
}

// UnmarshalYAML reads a duration string (or 0).
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Value == "0" {
		*d = 0
		return nil
	}
	v, err := duration.Parse(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration (examples: 90s, 5m, 720h, 90d)", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes d as a duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Duration(d).String() + `"`), nil
}

// StoreWithoutPassword returns a PostgreSQL store URL with its password
// (in the user information or a password= parameter) left out, so that
// printing the configuration never shows it; the password is then taken
// from PGPASSWORD or a password file, as libpq does. Any other value is
// returned as it is; a URL that does not parse is replaced by a note.
func StoreWithoutPassword(store string) string {
	if !strings.HasPrefix(store, "postgres://") && !strings.HasPrefix(store, "postgresql://") {
		return store
	}
	u, err := url.Parse(store)
	if err != nil {
		return "postgres://… (the configured URL does not parse)"
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.User(u.User.Username())
		}
	}
	if q := u.Query(); q.Has("password") {
		q.Del("password")
		u.RawQuery = q.Encode()
	}
	return u.String()
}
