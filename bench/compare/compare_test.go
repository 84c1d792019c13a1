package main

import (
	"bufio"
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
)

func TestBenchEventIs330Bytes(t *testing.T) {
	if len(benchEvent) != 330 {
		t.Fatalf("bench event is %d bytes, want 330: %s", len(benchEvent), benchEvent)
	}
	if !json.Valid(benchEvent) {
		t.Fatalf("bench event is not JSON: %s", benchEvent)
	}
}

// ahpDecisions evaluates every probe with our policy engine and the
// scenario's policy.yaml, the built-in packs off (as config.yaml says).
func ahpDecisions(t *testing.T) []policy.Result {
	t.Helper()
	packs := map[string]bool{}
	for _, n := range policy.PackNames() {
		packs[n] = false
	}
	srcs, err := policy.ReadFiles(filepath.Join("scenario", "policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	eng, err := policy.NewEngine(policy.Options{Packs: packs, Default: protocol.DecisionAllow}, srcs...)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(eng.Set().RuleIDs()); n != 10 {
		t.Fatalf("scenario policy has %d rules, want 10", n)
	}
	var out []policy.Result
	for _, p := range probes {
		var ev protocol.Event
		if err := json.Unmarshal([]byte(eventParams(p.tool, p.command)), &ev); err != nil {
			t.Fatal(err)
		}
		out = append(out, eng.Evaluate(&policy.Input{Event: &ev, Transport: "unix"}))
	}
	return out
}

// TestScenarioPolicyAndPythonHarnessAgree checks that every probe gets the
// decision the probe list states from our policy engine and from
// harness.py, and that both name the same rule when they block.
func TestScenarioPolicyAndPythonHarnessAgree(t *testing.T) {
	ours := ahpDecisions(t)
	for i, p := range probes {
		want := protocol.DecisionAllow
		if p.block {
			want = protocol.DecisionBlock
		}
		if ours[i].Decision.Kind != want {
			t.Errorf("ahp policy: %q: %s (rule %q), want %s", p.command, ours[i].Decision.Kind, ours[i].RuleID, want)
		}
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: harness.py not checked")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "harness.py")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = in.Close(); _ = cmd.Wait() }()
	r := bufio.NewReader(out)
	ask := func(msg []byte) []byte {
		t.Helper()
		if _, err := in.Write(append(msg, '\n')); err != nil {
			t.Fatal(err)
		}
		line, err := r.ReadBytes('\n')
		if err != nil && err != io.EOF {
			t.Fatal(err)
		}
		return line
	}
	if resp := ask(handshake); !strings.Contains(string(resp), `"protocol_version":"2.4"`) {
		t.Fatalf("handshake: %s", resp)
	}
	for i, p := range probes {
		resp := ask(request(i, p.tool, p.command))
		var got struct {
			ID     int `json:"id"`
			Result struct {
				Decision string `json:"decision"`
				Reason   string `json:"reason"`
			} `json:"result"`
		}
		if err := json.Unmarshal(resp, &got); err != nil {
			t.Fatalf("%q: %v: %s", p.command, err, resp)
		}
		if got.ID != i {
			t.Errorf("%q: id %d echoed as %d", p.command, i, got.ID)
		}
		if got.Result.Decision != string(ours[i].Decision.Kind) || got.Result.Reason != ours[i].RuleID {
			t.Errorf("%q: python says %s %q, ahp says %s %q", p.command, got.Result.Decision, got.Result.Reason, ours[i].Decision.Kind, ours[i].RuleID)
		}
	}
	// The spec's error codes (§7): parse error, unknown method, old version.
	for _, c := range []struct{ msg, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":`, `"code":-32700`},
		{`{"jsonrpc":"2.0","id":"x","method":"ahp/nothing"}`, `"id":"x","error":{"code":-32601`},
		{`{"jsonrpc":"2.0","id":2,"method":"ahp/handshake","params":{"protocol_version":"1.0"}}`, `"code":-32000`},
		{`{"jsonrpc":"2.0","id":3,"method":"ping"}`, `"id":3,"result":{}`},
	} {
		if resp := ask([]byte(c.msg)); !strings.Contains(string(resp), c.want) {
			t.Errorf("%s: got %s, want %s", c.msg, resp, c.want)
		}
	}
}

func TestSpreadIsMedianWithRange(t *testing.T) {
	if s := spreadOf([]float64{5, 1, 3}); s != (spread{3, 1, 5}) {
		t.Errorf("odd: %+v", s)
	}
	if s := spreadOf([]float64{4, 1, 2, 10}); s != (spread{3, 1, 10}) {
		t.Errorf("even: %+v", s)
	}
}

func sampleResults() results {
	res := results{Started: time.Date(2026, 11, 23, 16, 0, 0, 0, time.UTC), Host: "h", Rounds: 2,
		Measured: time.Second, Agents: []int{1, 16},
		Targets: []targetInfo{{"ahp/http/ram", "ahp · HTTP", "ahp", ""}, {"opa/http/nolog", "OPA <HTTP>", "opa", "ahp/http/ram"}}}
	for round := 1; round <= 2; round++ {
		for _, n := range []int{1, 16} {
			res.Runs = append(res.Runs,
				measurement{Target: "ahp/http/ram", Round: round, Agents: n, N: 100, Rate: 10000, P50: 100 * time.Microsecond, P99: time.Millisecond},
				measurement{Target: "opa/http/nolog", Round: round, Agents: n, N: 50, Rate: 5000 + float64(round-1)*1000, P50: 300 * time.Microsecond, P99: 2 * time.Millisecond})
		}
	}
	return res
}

func TestMarkdownShowsRatiosToOurs(t *testing.T) {
	res := sampleResults()
	md := markdown(res, summarize(res))
	// OPA: median 5,500/s against our 10,000/s; p50 300 µs against 100 µs.
	for _, want := range []string{"| OPA <HTTP> | ahp · HTTP | 3.00× | 2.00× | 0.55× | 3.00× | 2.00× |", "5500 (5000–6000)"} {
		if !strings.Contains(md, want) {
			t.Errorf("table lacks %q:\n%s", want, md)
		}
	}
}

func TestChartIsWellFormedSVG(t *testing.T) {
	res := sampleResults()
	svg := chart(res, summarize(res))
	d := xml.NewDecoder(strings.NewReader(svg))
	rects := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, svg)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "rect" {
			rects++
		}
	}
	// The background and one bar per target in each of the two panels.
	if rects != 1+2*2 {
		t.Errorf("%d rects, want 5", rects)
	}
	if !strings.Contains(svg, "OPA &lt;HTTP&gt;") || !strings.Contains(svg, "5500/s") {
		t.Errorf("chart lacks the escaped label or the median:\n%s", svg)
	}
}
