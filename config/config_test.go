package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestDefaultIsValidAndMatchesSchema(t *testing.T) {
	c := Default()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	out, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := ValidateYAML(out); err != nil {
		t.Fatalf("printed default config fails the schema: %v\n%s", err, out)
	}
	// What --print-config prints loads back to the same configuration.
	var back = Default()
	if err := Parse(out, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c, back) {
		t.Fatalf("round trip changed the config:\n%+v\n%+v", c, back)
	}
}

func TestLoadOverridesDefaults(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ahp.yaml")
	body := `
data_dir: /var/lib/ahp
listen: [unix:/run/ahp.sock]
approvals:
  timeout: 90s
policy:
  packs: {filesystem_scope: true}
  params: {workspace_roots: [/work]}
`
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.DataDir != "/var/lib/ahp" || c.Approvals.Timeout.D() != 90*time.Second || !c.Policy.Packs["filesystem_scope"] {
		t.Fatalf("overrides not applied: %+v", c)
	}
	if c.Approvals.Fallback != "block" || c.Harness.BatchSize != 100 {
		t.Fatalf("defaults lost: %+v", c)
	}
	if err := ValidateYAML([]byte(body)); err != nil {
		t.Fatal(err)
	}
}

func TestLoadErrors(t *testing.T) {
	cases := map[string]string{
		"data_dir: x\nlisen: [stdio]\n":                           "lisen",
		"approvals:\n  timeout: soon\n":                           "not a duration",
		"log:\n  level: loud\n":                                   "log.level",
		"policy:\n  default: maybe\n":                             "policy.default",
		"harness:\n  batch_size: 0\n":                             "batch_size",
		"context:\n  facts:\n    - {content: x, confidence: 2}\n": "confidence",
		"data_dir: [\n":                                           "line",
	}
	for body, want := range cases {
		c := Default()
		err := Parse([]byte(body), &c)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v does not mention %q", body, err, want)
		}
	}
	if err := ValidateYAML([]byte("lisen: [stdio]\n")); err == nil {
		t.Error("schema accepted an unknown key")
	}
	if _, err := Load(filepath.Join(t.TempDir(), "absent.yaml")); err == nil {
		t.Error("absent file accepted")
	}
}

// Every key of the Go struct is in the schema, so editors know them all.
func TestSchemaCoversStruct(t *testing.T) {
	schema := string(Schema)
	var walk func(reflect.Type)
	walk = func(rt reflect.Type) {
		for i := 0; i < rt.NumField(); i++ {
			f := rt.Field(i)
			tag := strings.Split(f.Tag.Get("yaml"), ",")[0]
			if tag == "" || tag == "-" {
				continue
			}
			if !strings.Contains(schema, `"`+tag+`"`) {
				t.Errorf("schema lacks key %q (%s.%s)", tag, rt.Name(), f.Name)
			}
			ft := f.Type
			if ft.Kind() == reflect.Slice {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct && ft.PkgPath() == rt.PkgPath() {
				walk(ft)
			}
		}
	}
	walk(reflect.TypeOf(Config{}))
}

// TestSchemaRefusesWhatItShould: each kind of constraint of the schema
// refuses a value that breaks it, through a $ref too.
func TestSchemaRefusesWhatItShould(t *testing.T) {
	for _, bad := range []string{
		"lisen: [stdio]\n",                          // unknown key (additionalProperties)
		"harness:\n  timeout_ms: 0\n",               // minimum
		"harness:\n  timeout_ms: 1.5\n",             // integer
		"harness:\n  batch_size: 20000\n",           // maximum
		"log:\n  level: loud\n",                     // enum
		"listen: [tcp://0.0.0.0:1]\n",               // pattern in items
		"listen: stdio\n",                           // type
		"policy:\n  default: maybe\n",               // enum through $ref
		"policy:\n  shadow:\n    sample: 0\n",       // exclusiveMinimum
		"data_dir: \"\"\n",                          // minLength
		"policy:\n  packs:\n    secrets: \"yes\"\n", // additionalProperties schema
	} {
		if err := ValidateYAML([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
	for _, good := range []string{
		"listen: [stdio, \"unix:/run/ahp.sock\", \"grpc://127.0.0.1:7701\"]\n",
		"harness:\n  timeout_ms: 30000\n  max_connections: 0\n",
		"policy:\n  default: block\n  shadow:\n    sample: 0.25\n",
	} {
		if err := ValidateYAML([]byte(good)); err != nil {
			t.Errorf("refused %q: %v", good, err)
		}
	}
}

func TestMarshalLeavesOutStorePassword(t *testing.T) {
	for _, store := range []string{
		"postgres://ahp:s3cr3t-pw@db.internal:5432/ahp?sslmode=require",
		"postgresql://ahp@db.internal/ahp?password=s3cr3t-pw&sslmode=disable",
	} {
		c := Default()
		c.Store = store
		out, err := c.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(out), "s3cr3t-pw") {
			t.Fatalf("printed configuration holds the password:\n%s", out)
		}
		if !strings.Contains(string(out), "ahp@db.internal") {
			t.Fatalf("printed configuration lost the user and host:\n%s", out)
		}
	}
}
