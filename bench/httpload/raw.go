package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"
)

// rawDecision is what the bare server answers to every POST.
var rawDecision = []byte(`{"jsonrpc":"2.0","id":1,"result":{"decision":"allow"}}`)

// runRaw measures bare net/http with the same shape of traffic (a POST of
// a pre_action-sized JSON body answered by a small JSON body, one
// keep-alive client per agent): the ceiling this machine allows for any
// HTTP/1.1 harness written with net/http.
func runRaw(conc int, warm, dur time.Duration) (*result, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header()["Content-Type"] = []string{"application/json"}
		_, _ = w.Write(rawDecision)
	})}
	go func() { _ = hs.Serve(l) }()
	defer hs.Shutdown(context.Background())
	url := "http://" + l.Addr().String() + "/ahp"
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"ahp/event","params":{"event_type":"pre_action","session_id":"bench","agent_id":"bench","timestamp":"2026-01-01T00:00:00Z","depth":0,"payload":{"tool_name":"bash","arguments":{"command":"ls -la"}}}}`)
	start := time.Now()
	measureFrom := start.Add(warm)
	end := measureFrom.Add(dur)
	lats := make([][]time.Duration, conc)
	cpu := cpuWindow(measureFrom, end)
	var wg sync.WaitGroup
	for i := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr := &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}
			defer tr.CloseIdleConnections()
			c := &http.Client{Transport: tr}
			own := make([]time.Duration, 0, 1<<16)
			for {
				t0 := time.Now()
				if t0.After(end) {
					break
				}
				resp, err := c.Post(url, "application/json", bytes.NewReader(body))
				if err != nil {
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if t0.After(measureFrom) {
					own = append(own, time.Since(t0))
				}
			}
			lats[i] = own
		}()
	}
	wg.Wait()
	r := &result{}
	for i := range lats {
		r.lat = append(r.lat, lats[i]...)
	}
	slices.Sort(r.lat)
	r.n = len(r.lat)
	r.rate = float64(r.n) / dur.Seconds()
	r.cpu = <-cpu
	return r, nil
}
