package main

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strings"
	"time"
)

// spread is the median of a set of runs with its smallest and largest value.
type spread struct{ Med, Min, Max float64 }

func spreadOf(v []float64) spread {
	if len(v) == 0 {
		return spread{}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return spread{med, s[0], s[len(s)-1]}
}

// cell is the summary of one target at one concurrency.
type cell struct {
	Runs           int
	Rate, P50, P99 spread // decisions/s; latencies in µs
	CPU            spread // server CPU µs per decision (0: unknown)
	LogBytes       spread
}

type key struct {
	target string
	agents int
}

func summarize(res results) map[key]cell {
	type acc struct{ rate, p50, p99, cpu, log []float64 }
	accs := map[key]*acc{}
	for _, m := range res.Runs {
		k := key{m.Target, m.Agents}
		a := accs[k]
		if a == nil {
			a = &acc{}
			accs[k] = a
		}
		a.rate = append(a.rate, m.Rate)
		a.p50 = append(a.p50, us(m.P50))
		a.p99 = append(a.p99, us(m.P99))
		if m.CPU > 0 {
			a.cpu = append(a.cpu, us(m.CPU))
		}
		if m.LogSize > 0 {
			a.log = append(a.log, float64(m.LogSize))
		}
	}
	out := map[key]cell{}
	for k, a := range accs {
		out[k] = cell{Runs: len(a.rate), Rate: spreadOf(a.rate), P50: spreadOf(a.p50), P99: spreadOf(a.p99),
			CPU: spreadOf(a.cpu), LogBytes: spreadOf(a.log)}
	}
	return out
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func fmtNum(v float64) string {
	switch {
	case v >= 10000:
		s := fmt.Sprintf("%.0f", math.Round(v/100)*100)
		// thousands separators
		var b strings.Builder
		for i, c := range s {
			if i > 0 && (len(s)-i)%3 == 0 {
				b.WriteByte(',')
			}
			b.WriteRune(c)
		}
		return b.String()
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func fmtSpread(s spread, unit string) string {
	return fmtNum(s.Med) + unit + " (" + fmtNum(s.Min) + "–" + fmtNum(s.Max) + ")"
}

func ratio(a, b float64) string {
	if a == 0 || b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

// markdown writes the comparison table: for each configuration its
// latency with one agent and its throughput and latency with the most
// agents (medians over the rounds, the spread in parentheses), and the
// same numbers as ratios to the configuration of ours it is compared with.
func markdown(res results, sum map[key]cell) string {
	if len(res.Agents) == 0 {
		return ""
	}
	lo, hi := res.Agents[0], res.Agents[len(res.Agents)-1]
	label := map[string]string{}
	for _, t := range res.Targets {
		label[t.Name] = t.Label
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s on %s, %d rounds interleaved, %v measured per run; load average before each round: %s.\n\n",
		res.Started.Format("2006-01-02 15:04 UTC"), res.Host, res.Rounds, res.Measured, strings.Join(res.Load, " | "))
	fmt.Fprintf(&b, "| configuration | %d agent: p50 µs | %d agent: p99 µs | %d agents: decisions/s | %d agents: p50 µs | %d agents: p99 µs | server CPU µs/decision |\n", lo, lo, hi, hi, hi)
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, t := range res.Targets {
		l, h := sum[key{t.Name, lo}], sum[key{t.Name, hi}]
		cpu := "—"
		if h.CPU.Med > 0 {
			cpu = fmtNum(h.CPU.Med)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", t.Label,
			fmtSpread(l.P50, ""), fmtSpread(l.P99, ""), fmtSpread(h.Rate, ""), fmtSpread(h.P50, ""), fmtSpread(h.P99, ""), cpu)
	}
	fmt.Fprintf(&b, "\nRatios to ours (medians divided; decisions/s: below 1 the other is slower; latency: above 1 the other is slower):\n\n")
	fmt.Fprintf(&b, "| configuration | compared with | %d agent: p50 | %d agent: p99 | %d agents: decisions/s | %d agents: p50 | %d agents: p99 |\n", lo, lo, hi, hi, hi)
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, t := range res.Targets {
		if t.Ref == "" {
			continue
		}
		l, h := sum[key{t.Name, lo}], sum[key{t.Name, hi}]
		rl, rh := sum[key{t.Ref, lo}], sum[key{t.Ref, hi}]
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", t.Label, label[t.Ref],
			ratio(l.P50.Med, rl.P50.Med), ratio(l.P99.Med, rl.P99.Med), ratio(h.Rate.Med, rh.Rate.Med),
			ratio(h.P50.Med, rh.P50.Med), ratio(h.P99.Med, rh.P99.Med))
	}
	for _, t := range res.Targets {
		if c := sum[key{t.Name, hi}]; c.LogBytes.Med > 0 {
			fmt.Fprintf(&b, "\n%s: %s bytes of decision log per decision.\n", t.Label, fmtNum(c.LogBytes.Med))
		}
	}
	return b.String()
}

// chart draws two panels of horizontal bars, one row per configuration:
// decisions/s with the most agents, and p50 latency with one agent; a
// whisker spans the smallest to the largest run.
func chart(res results, sum map[key]cell) string {
	if len(res.Agents) == 0 || len(res.Targets) == 0 {
		return ""
	}
	lo, hi := res.Agents[0], res.Agents[len(res.Agents)-1]
	const (
		labelW = 330
		panelW = 330
		gap    = 40
		rowH   = 24
		top    = 70
	)
	height := top + rowH*len(res.Targets) + 50
	width := labelW + 2*panelW + gap + 30
	colors := map[string]string{"ahp": "#2b6cb0", "opa": "#dd6b20", "python": "#2f855a"}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="10" y="20" font-size="15" font-weight="bold">bench/compare: 10-rule policy, 330-byte pre_action event, %s</text>`+"\n", html.EscapeString(res.Started.Format("2006-01-02")))
	fmt.Fprintf(&b, `<text x="10" y="38" fill="#555">medians of %d interleaved rounds on one 2-core machine; whiskers: smallest to largest run. Blue: ahp (light blue: protocol layer only, not the scenario), orange: OPA, green: Python.</text>`+"\n", res.Rounds)
	panels := []struct {
		title  string
		agents int
		value  func(cell) spread
		unit   string
	}{
		{fmt.Sprintf("decisions/s, %d agents (longer is better)", hi), hi, func(c cell) spread { return c.Rate }, "/s"},
		{fmt.Sprintf("p50 latency µs, %d agent (shorter is better)", lo), lo, func(c cell) spread { return c.P50 }, " µs"},
	}
	for p, pn := range panels {
		x0 := labelW + p*(panelW+gap)
		maxV := 0.0
		for _, t := range res.Targets {
			maxV = math.Max(maxV, pn.value(sum[key{t.Name, pn.agents}]).Max)
		}
		if maxV == 0 {
			maxV = 1
		}
		scale := float64(panelW-70) / maxV
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-weight="bold">%s</text>`+"\n", x0, top-12, html.EscapeString(pn.title))
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#999"/>`+"\n", x0, top-4, x0, top+rowH*len(res.Targets))
		for i, t := range res.Targets {
			y := top + i*rowH
			v := pn.value(sum[key{t.Name, pn.agents}])
			w := v.Med * scale
			color := colors[t.Family]
			if strings.HasSuffix(t.Name, "/protocol-only") {
				color = "#90cdf4" // not the scenario: a reference
			}
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n", x0, y+3, w, rowH-8, color)
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="black"/>`+"\n", float64(x0)+v.Min*scale, y+rowH/2-1, float64(x0)+v.Max*scale, y+rowH/2-1)
			fmt.Fprintf(&b, `<text x="%.1f" y="%d">%s</text>`+"\n", float64(x0)+math.Max(w, v.Max*scale)+4, y+rowH/2+3, html.EscapeString(fmtNum(v.Med)+pn.unit))
			if p == 0 {
				fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", labelW-10, y+rowH/2+3, html.EscapeString(t.Label))
			}
		}
	}
	fmt.Fprintf(&b, `<text x="10" y="%d" fill="#555">audit in RAM: SQLite audit log in tmpfs (recorded, fsync free); durable audit: on disk, fsynced before the decision is returned. Data: bench/compare (go run ./bench/compare).</text>`+"\n", height-15)
	b.WriteString("</svg>\n")
	return b.String()
}
