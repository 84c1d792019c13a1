package policy

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ahp-go/ahp/protocol"
)

const blockLS = "rules:\n  - id: v1\n    condition: event.command == 'ls'\n    outcome: {decision: block, reason: v1}\n"
const allowLS = "rules:\n  - id: v2\n    condition: event.command == 'ls'\n    outcome: {decision: allow}\n"

func TestEngineLoadRefusesBadPolicyAndKeepsOld(t *testing.T) {
	reg := prometheus.NewRegistry()
	opts := noPacks()
	opts.Registerer = reg
	e, err := NewEngine(opts, Source{Name: "v1.yaml", Data: []byte(blockLS)})
	if err != nil {
		t.Fatal(err)
	}
	v1 := e.Version()
	err = e.Load(Source{Name: "v2.yaml", Data: []byte("rules:\n  - id: broken\n    condition: event.nope\n    outcome: {decision: allow}\n")})
	var le *LoadError
	if !errors.As(err, &le) || !strings.HasPrefix(le.Problems[0].String(), "v2.yaml:3: rule broken: condition: undefined field 'nope'") {
		t.Fatalf("load error %v", err)
	}
	if e.Version() != v1 {
		t.Fatal("a bad policy replaced the active one")
	}
	if r := e.Evaluate(&Input{Event: bash("ls")}); r.RuleID != "v1" {
		t.Fatalf("old policy not running: %+v", r)
	}
	if err := e.Load(Source{Name: "v2.yaml", Data: []byte(allowLS)}); err != nil {
		t.Fatal(err)
	}
	if r := e.Evaluate(&Input{Event: bash("ls")}); r.RuleID != "v2" || e.Version() == v1 {
		t.Fatalf("new policy not running: %+v", r)
	}
	if got := metricValue(t, e.metrics.loadsError); got != 1 {
		t.Fatalf("failed loads %v", got)
	}
	if got := metricValue(t, e.metrics.loadsOK); got != 1 {
		t.Fatalf("good loads %v", got)
	}
	if got := metricValue(t, e.metrics.decisions[protocol.DecisionBlock]); got != 1 {
		t.Fatalf("block decisions %v", got)
	}
	if got := metricValue(t, e.metrics.ruleCount); got != 1 {
		t.Fatalf("rules gauge %v", got)
	}
	// Registering a second engine on the same registry fails cleanly.
	if _, err := NewEngine(opts); err == nil {
		t.Fatal("duplicate metrics registration accepted")
	}
}

func TestEngineLoadFiles(t *testing.T) {
	e, err := NewEngine(noPacks())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.LoadFiles(t.TempDir() + "/missing.yaml"); err == nil {
		t.Fatal("missing file loaded")
	}
	if err := e.LoadFiles("../examples/policies/team.yaml"); err != nil {
		t.Fatal(err)
	}
	if r := e.Evaluate(&Input{Event: bash("git push -f origin main")}); r.RuleID != "no-force-push" {
		t.Fatalf("got %+v", r)
	}
}

// TestEngineHotSwapUnderLoad swaps policies while evaluations run: every
// evaluation must see one whole policy, never a mix or nothing.
func TestEngineHotSwapUnderLoad(t *testing.T) {
	e, err := NewEngine(noPacks(), Source{Name: "v1.yaml", Data: []byte(blockLS)})
	if err != nil {
		t.Fatal(err)
	}
	v2, err := Compile(noPacks(), Source{Name: "v2.yaml", Data: []byte(allowLS)})
	if err != nil {
		t.Fatal(err)
	}
	v1 := e.Set()
	var stop atomic.Bool
	var wg sync.WaitGroup
	var seen [2]atomic.Int64
	errs := make(chan string, 8)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				r := e.Evaluate(&Input{Event: bash("ls")})
				switch {
				case r.RuleID == "v1" && r.Decision.Kind == protocol.DecisionBlock:
					seen[0].Add(1)
				case r.RuleID == "v2" && r.Decision.Kind == protocol.DecisionAllow:
					seen[1].Add(1)
				default:
					select {
					case errs <- r.RuleID + " " + string(r.Decision.Kind):
					default:
					}
					return
				}
			}
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; i < 200 || (seen[0].Load() < 1000 || seen[1].Load() < 1000) && time.Now().Before(deadline); i++ {
		next := v2
		if i%2 == 1 {
			next = v1
		}
		if _, err := e.Swap(next); err != nil {
			t.Fatal(err)
		}
		if i%50 == 0 {
			// A failing load in the middle changes nothing.
			if err := e.Load(Source{Name: "bad.yaml", Data: []byte("rules: [")}); err == nil {
				t.Error("bad policy loaded")
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Fatalf("inconsistent result: %s", msg)
	}
	if seen[0].Load() == 0 || seen[1].Load() == 0 {
		t.Fatalf("evaluations saw v1 %d times and v2 %d times", seen[0].Load(), seen[1].Load())
	}
	if _, err := e.Swap(nil); err == nil {
		t.Fatal("nil set installed")
	}
}

// metricValue reads the value of a counter or gauge.
func metricValue(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		t.Fatal(err)
	}
	if c := out.GetCounter(); c != nil {
		return c.GetValue()
	}
	return out.GetGauge().GetValue()
}

// TestConcurrentCompile compiles from several goroutines at once: the CEL
// environment and the parsed packs are shared.
func TestConcurrentCompile(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			set, err := Compile(Options{}, Source{Name: "p.yaml", Data: []byte(blockLS)})
			if err == nil && set.Evaluate(&Input{Event: bash("ls")}).RuleID != "v1" {
				err = errors.New("wrong decision")
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}
