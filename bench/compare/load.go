package main

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// measurement is one run of one target at one concurrency.
type measurement struct {
	Target  string        `json:"target"`
	Round   int           `json:"round"`
	Agents  int           `json:"agents"`
	N       int           `json:"n"`
	Rate    float64       `json:"decisions_per_s"`
	P50     time.Duration `json:"p50_ns"`
	P99     time.Duration `json:"p99_ns"`
	CPU     time.Duration `json:"server_cpu_per_decision_ns,omitempty"` // server process CPU per decision (0: unknown)
	LogSize int64         `json:"decision_log_bytes,omitempty"`         // OPA's decision log, bytes per decision
}

// checkProbes sends every probe to a fresh agent and compares the
// decision with the expected one.
func checkProbes(ctx context.Context, r *running) error {
	a, err := r.newAgent(ctx)
	if err != nil {
		return err
	}
	defer a.close()
	for i, p := range probes {
		msg := request(100+i, p.tool, p.command)
		if r.wrap != nil {
			msg = r.wrap(msg)
		}
		pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		resp, err := a.do(pctx, msg)
		cancel()
		if err != nil {
			return fmt.Errorf("probe %q: %w", p.command, err)
		}
		d, err := decisionOf(resp)
		if err != nil {
			return fmt.Errorf("probe %q: %w", p.command, err)
		}
		if want := map[bool]string{true: "block", false: "allow"}[p.block]; d != want {
			return fmt.Errorf("probe tool %q command %q: decision %s, want %s", p.tool, p.command, d, want)
		}
	}
	return nil
}

var allowed = []byte(`"decision":"allow"`)

// measure runs n agents, each sending the bench event and waiting for its
// decision in a closed loop, for warm+d; the decisions answered in the last
// d count. Any answer other than allow fails the run.
func measure(ctx context.Context, r *running, n int, warm, d time.Duration) (measurement, error) {
	agents := make([]agent, 0, n)
	defer func() {
		for _, a := range agents {
			a.close()
		}
	}()
	for range n {
		a, err := r.newAgent(ctx)
		if err != nil {
			return measurement{}, err
		}
		agents = append(agents, a)
	}
	msg := benchEvent
	if r.wrap != nil {
		msg = r.wrap(msg)
	}
	start := time.Now()
	from, end := start.Add(warm), start.Add(warm+d)
	var cpu0 time.Duration
	cpuAt := make(chan time.Duration, 1)
	if r.pid != 0 {
		go func() {
			time.Sleep(time.Until(from))
			c, _ := cpuTime(r.pid)
			cpu0 = c
			time.Sleep(time.Until(end))
			c, _ = cpuTime(r.pid)
			cpuAt <- c
		}()
	}
	lats := make([][]time.Duration, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			own := make([]time.Duration, 0, 1<<14)
			for {
				t0 := time.Now()
				if t0.After(end) {
					break
				}
				rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
				resp, err := a.do(rctx, msg)
				cancel()
				el := time.Since(t0)
				if err == nil && !bytes.Contains(resp, allowed) {
					err = fmt.Errorf("answer is not allow: %s", truncate(resp))
				}
				if err != nil {
					errs[i] = err
					return
				}
				if !t0.Before(from) {
					own = append(own, el)
				}
			}
			lats[i] = own
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return measurement{}, err
		}
	}
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	if len(all) == 0 {
		return measurement{}, fmt.Errorf("no decision in %v", d)
	}
	slices.Sort(all)
	m := measurement{Agents: n, N: len(all), Rate: float64(len(all)) / d.Seconds(),
		P50: quantile(all, 0.50), P99: quantile(all, 0.99)}
	if r.pid != 0 {
		if c1 := <-cpuAt; c1 > cpu0 {
			m.CPU = (c1 - cpu0) / time.Duration(m.N)
		}
	}
	return m, nil
}

// quantile of sorted durations (nearest rank).
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted)) + 0.5)
	if i < 1 {
		i = 1
	}
	if i > len(sorted) {
		i = len(sorted)
	}
	return sorted[i-1]
}
