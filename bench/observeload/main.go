// Command observeload measures agent decision latency with and without
// observers: it starts `ahp serve`, runs agents that send pre_action
// events as fast as they are answered, and repeats with N observers
// subscribed to the agents' session, one of which never reads.
//
//	go build -o /tmp/ahp ./cmd/ahp && go run ./bench/observeload -bin /tmp/ahp
//
// With -counts and -bins it compares binaries: for each round, each count
// of observers and each binary in turn (alternating), one run, with the
// CPU time the ahp serve process spent per decision (from /proc, Linux).
//
//	go run ./bench/observeload -bins before=/tmp/a,after=/tmp/b -counts 0,1,5 -stuck=false -rounds 2
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/transport"
)

const observerKey = "bench-observer-key-0123456789"

func main() {
	bin := flag.String("bin", "ahp", "the ahp binary")
	events := flag.Int("events", 5000, "pre_action events per run")
	agents := flag.Int("agents", 4, "concurrent agents")
	observers := flag.Int("observers", 50, "observers in the second run (one of them stuck)")
	counts := flag.String("counts", "", "comma-separated observer counts to run (instead of 0 and -observers)")
	bins := flag.String("bins", "", "comma-separated name=path binaries to alternate (instead of -bin)")
	rounds := flag.Int("rounds", 1, "how many times to repeat every count and binary")
	stuck := flag.Bool("stuck", true, "make the first observer of each run one that never reads")
	profile := flag.String("cpuprofile", "", "a directory: ahp serve writes a CPU profile of each run there")
	batch := flag.Bool("batch", false, "observers ask, as the dashboard does, for batches and lean timeline entries (_meta.ahp.batchMessages, leanTimeline)")
	flag.Parse()
	ns := []int{0, *observers}
	if *counts != "" {
		ns = nil
		for _, c := range strings.Split(*counts, ",") {
			n, err := strconv.Atoi(c)
			check(err)
			ns = append(ns, n)
		}
	}
	type binary struct{ name, path string }
	bs := []binary{{"", *bin}}
	if *bins != "" {
		bs = nil
		for _, b := range strings.Split(*bins, ",") {
			name, path, _ := strings.Cut(b, "=")
			bs = append(bs, binary{name, path})
		}
	}
	fmt.Println("| binary | observers | events | agents | p50 | p95 | p99 | max | events/s | server CPU per event | bytes per event per observer | WebSocket messages per event per observer |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|")
	for r := range *rounds {
		for _, n := range ns {
			for _, b := range bs {
				prof := ""
				if *profile != "" {
					prof = filepath.Join(*profile, fmt.Sprintf("%s-%d-%d.pprof", b.name, n, r))
				}
				run(b.name, b.path, n, *events, *agents, *stuck, *batch, prof)
			}
		}
	}
}

// cpuTime returns the user and system CPU time process pid has used
// (from /proc/PID/stat; 0 where that cannot be read).
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ is 100 on Linux
}

func run(name, bin string, observers, events, agents int, stuck, batch bool, prof string) {
	dir, err := os.MkdirTemp("", "observeload-")
	check(err)
	defer os.RemoveAll(dir)
	creds := fmt.Sprintf("version: 1\nprincipals:\n  - id: watcher\n    roles: [observer]\n    api_keys: [%q]\n", observerKey)
	check(os.WriteFile(filepath.Join(dir, "creds.yaml"), []byte(creds), 0o600))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	admin := l.Addr().String()
	l.Close()
	sock := filepath.Join(dir, "ahp.sock")
	cmd := exec.Command(bin, "serve", "--listen", "unix:"+sock, "--admin", "http://"+admin, "--data-dir", filepath.Join(dir, "data"),
		"--credentials", filepath.Join(dir, "creds.yaml"), "--log-level", "error")
	if prof != "" {
		cmd.Args = append(cmd.Args, "--cpuprofile", prof)
	}
	cmd.Stderr = os.Stderr
	check(cmd.Start())
	defer func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }()
	for i := 0; ; i++ {
		r, err := http.Get("http://" + admin + "/readyz")
		if err == nil && r.StatusCode == 200 {
			r.Body.Close()
			break
		}
		if i > 200 {
			log.Fatal("ahp serve not ready")
		}
		time.Sleep(50 * time.Millisecond)
	}
	ctx := context.Background()
	var clients []*client.Client
	for range agents {
		conn, err := transport.DialUnix(ctx, sock, 1<<20)
		check(err)
		c := client.New(conn, client.Options{SessionID: "bench", AgentID: "agent", Timeout: 30 * time.Second, FailMode: client.FailError})
		_, err = c.Handshake(ctx)
		check(err)
		defer c.Close()
		clients = append(clients, c)
	}
	time.Sleep(300 * time.Millisecond) // the handshakes create the session
	stop := make(chan struct{})
	var owg sync.WaitGroup
	// What the reading observers got while the agents ran: bytes and
	// WebSocket messages (counting starts with the agents).
	var counting atomic.Bool
	var gotBytes, gotMsgs atomic.Int64
	readers := 0
	for i := range observers {
		ws, _, err := websocket.Dial(ctx, "ws://"+admin+"/observe", &websocket.DialOptions{HTTPHeader: http.Header{"X-Api-Key": {observerKey}}})
		check(err)
		ws.SetReadLimit(64 << 20)
		init, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
			"channel": "ahp-root://", "protocolVersions": []string{"1.0.0"}, "clientId": fmt.Sprint("bench-", i),
			"initialSubscriptions": []string{"ahp-root://", "ahp-session:/bench"},
			"_meta":                map[string]any{"ahp": map[string]any{"batchMessages": batch, "leanTimeline": batch}}}})
		check(ws.Write(ctx, websocket.MessageText, init))
		if i == 0 && stuck {
			continue // the stuck observer: never reads
		}
		readers++
		owg.Go(func() {
			for {
				select {
				case <-stop:
					_ = ws.CloseNow()
					return
				default:
				}
				_, b, err := ws.Read(ctx)
				if err != nil {
					return
				}
				if counting.Load() {
					gotBytes.Add(int64(len(b)))
					gotMsgs.Add(1)
				}
			}
		})
	}
	lat := make([][]time.Duration, agents)
	time.Sleep(200 * time.Millisecond) // the snapshots are read
	counting.Store(true)
	cpu0 := cpuTime(cmd.Process.Pid)
	start := time.Now()
	var wg sync.WaitGroup
	for a, c := range clients {
		wg.Go(func() {
			for i := 0; i < events/agents; i++ {
				t0 := time.Now()
				_, err := c.Event(ctx, protocol.EventPreAction, map[string]any{"tool_name": "bash", "arguments": map[string]any{"command": fmt.Sprint("ls ", i)}})
				check(err)
				lat[a] = append(lat[a], time.Since(t0))
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	cpu := cpuTime(cmd.Process.Pid) - cpu0
	time.Sleep(300 * time.Millisecond) // the last batches arrive
	counting.Store(false)
	close(stop)
	all := slices.Concat(lat...)
	slices.Sort(all)
	q := func(p float64) time.Duration {
		return all[min(len(all)-1, int(p*float64(len(all))))].Round(10 * time.Microsecond)
	}
	perObs := func(n int64) float64 { return float64(n) / float64(max(readers, 1)) / float64(len(all)) }
	fmt.Printf("| %s | %d | %d | %d | %v | %v | %v | %v | %.0f | %v | %.0f | %.3f |\n", name, observers, len(all), agents, q(0.5), q(0.95), q(0.99),
		all[len(all)-1].Round(10*time.Microsecond), float64(len(all))/took.Seconds(), (cpu / time.Duration(len(all))).Round(time.Microsecond),
		perObs(gotBytes.Load()), perObs(gotMsgs.Load()))
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
