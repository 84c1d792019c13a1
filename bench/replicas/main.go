// Command replicas is the load-and-fault driver of issue 12: it runs real
// `ahp serve` processes on loopback and measures sustained decisions per
// second (durable audit) with p50/p99 for one replica on SQLite and for
// three replicas on one PostgreSQL, agents spread round-robin; then it
// kills one PostgreSQL replica with SIGKILL mid-load, lets its agents fail
// over to the others, and checks that every decision any agent received
// is in the audit table exactly once per request id. See bench/README.md.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/transport"
	_ "github.com/ahp-go/ahp/transport/httptransport"
)

func main() {
	bin := flag.String("bin", "", "the ahp binary (required: go build -o /tmp/ahp ./cmd/ahp)")
	pgURL := flag.String("pg", os.Getenv("AHP_TEST_POSTGRES_URL"), "PostgreSQL URL of a database this driver may create databases from")
	agents := flag.Int("agents", 24, "concurrent agents")
	dur := flag.Duration("d", 8*time.Second, "measurement time of each phase (at most 60s)")
	flag.Parse()
	if *bin == "" || *pgURL == "" {
		log.Fatal("replicas: -bin and -pg (or AHP_TEST_POSTGRES_URL) are required")
	}
	*dur = min(*dur, time.Minute)
	*agents = max(1, min(*agents, 512))
	ctx := context.Background()

	sq := startReplicas(*bin, 1, "")
	r1 := runLoad(sq.addrs, *agents, *dur, nil)
	sq.stop()

	db, err := freshDatabase(ctx, *pgURL)
	if err != nil {
		log.Fatal(err)
	}
	pg := startReplicas(*bin, 3, db)
	r3 := runLoad(pg.addrs, *agents, *dur, nil)
	fault := runLoad(pg.addrs, *agents, *dur, func() { pg.kill(0) })
	pg.stop()
	lost, dups, inAudit, err := checkAudit(ctx, db, fault.received)
	if err != nil {
		log.Fatal(err)
	}

	fmt.Printf("| run | replicas | store | agents | decisions/s | p50 | p99 | failed over | received | lost |\n|---|---|---|---|---|---|---|---|---|---|\n")
	row := func(name string, n int, st string, r result, lostS string) {
		fmt.Printf("| %s | %d | %s | %d | %.0f | %v | %v | %d | %d | %s |\n", name, n, st, *agents, r.rate, r.p50, r.p99, r.failovers, len(r.received), lostS)
	}
	row("steady", 1, "SQLite", r1, "-")
	row("steady", 3, "PostgreSQL", r3, "-")
	row("kill -9 one replica mid-load", 3, "PostgreSQL", fault, fmt.Sprint(lost))
	fmt.Printf("\nafter kill -9: %d decisions received by agents, %d found in the audit table (by request id), %d lost; %d request ids recorded twice (a retry after the kill whose first attempt was committed but never answered)\n",
		len(fault.received), inAudit, lost, dups)
	if lost > 0 {
		os.Exit(1)
	}
}

type cluster struct {
	procs []*exec.Cmd
	addrs []string
	dirs  []string
}

// freePort returns a loopback port nobody listens on right now.
func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startReplicas starts n `ahp serve` processes (on pgURL when set, else
// each on its own SQLite) and waits until they answer.
func startReplicas(bin string, n int, pgURL string) *cluster {
	c := &cluster{}
	for range n {
		dir, err := os.MkdirTemp("", "ahp-replica-")
		if err != nil {
			log.Fatal(err)
		}
		addr := fmt.Sprintf("http://127.0.0.1:%d", freePort())
		args := []string{"serve", "--admin", "off", "--data-dir", filepath.Join(dir, "data"), "--listen", addr, "--log-level", "error"}
		if pgURL != "" {
			args = append(args, "--store", pgURL)
		}
		cmd := exec.Command(bin, args...)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			log.Fatal(err)
		}
		c.procs, c.addrs, c.dirs = append(c.procs, cmd), append(c.addrs, addr+"/ahp"), append(c.dirs, dir)
	}
	for _, a := range c.addrs {
		deadline := time.Now().Add(30 * time.Second)
		for {
			cl, err := dial(context.Background(), a, "probe")
			if err == nil {
				_ = cl.Close()
				break
			}
			if time.Now().After(deadline) {
				log.Fatalf("replica %s did not start: %v", a, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return c
}

// kill sends SIGKILL to replica i.
func (c *cluster) kill(i int) {
	_ = c.procs[i].Process.Signal(syscall.SIGKILL)
}

func (c *cluster) stop() {
	for _, p := range c.procs {
		_ = p.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range c.procs {
		_ = p.Wait()
	}
	for _, d := range c.dirs {
		_ = os.RemoveAll(d)
	}
}

func dial(ctx context.Context, addr, session string) (*client.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, addr, transport.DialOptions{}, client.Options{SessionID: session, AgentID: "bench",
		Timeout: 5 * time.Second, FailMode: client.FailError})
	if err != nil {
		return nil, err
	}
	if _, err := c.Handshake(ctx); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

type result struct {
	rate      float64
	p50, p99  time.Duration
	failovers int64
	received  []string // request ids whose decision an agent received
}

// runLoad runs agents against addrs (agent i starts on addrs[i%len]) for
// dur; fault, when set, runs at dur/2. An agent whose replica fails moves
// to the next one and sends the same request again (same request id).
func runLoad(addrs []string, agents int, dur time.Duration, fault func()) result {
	var (
		mu        sync.Mutex
		lat       []time.Duration
		received  []string
		failovers atomic.Int64
		wg        sync.WaitGroup
	)
	run := make([]byte, 4)
	_, _ = rand.Read(run)
	tag := hex.EncodeToString(run)
	stopAt := time.Now().Add(dur)
	if fault != nil {
		time.AfterFunc(dur/2, fault)
	}
	for a := range agents {
		wg.Go(func() {
			ep := a % len(addrs)
			session := fmt.Sprintf("agent-%s-%d", tag, a)
			var c *client.Client
			var myLat []time.Duration
			var mine []string
			for seq := 0; time.Now().Before(stopAt); seq++ {
				id := fmt.Sprintf("req-%s-%d-%d", tag, a, seq)
				for attempt := 0; time.Now().Before(stopAt.Add(10 * time.Second)); attempt++ {
					if c == nil {
						var err error
						if c, err = dial(context.Background(), addrs[ep], session); err != nil {
							ep = (ep + 1) % len(addrs)
							failovers.Add(1)
							continue
						}
					}
					start := time.Now()
					_, err := c.Event(context.Background(), protocol.EventPreAction,
						map[string]any{"tool_name": "bash", "arguments": map[string]any{"command": "echo " + id}})
					if err != nil {
						_ = c.Close()
						c = nil
						ep = (ep + 1) % len(addrs)
						failovers.Add(1)
						continue
					}
					myLat = append(myLat, time.Since(start))
					mine = append(mine, id)
					break
				}
			}
			if c != nil {
				_ = c.Close()
			}
			mu.Lock()
			lat = append(lat, myLat...)
			received = append(received, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(lat)
	r := result{failovers: failovers.Load(), received: received}
	if len(lat) > 0 {
		r.rate = float64(len(lat)) / dur.Seconds()
		r.p50, r.p99 = lat[len(lat)/2].Round(10*time.Microsecond), lat[len(lat)*99/100].Round(10*time.Microsecond)
	}
	return r
}

// freshDatabase creates a new database next to the one url names and
// returns its URL.
func freshDatabase(ctx context.Context, url string) (string, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return "", fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	defer conn.Close(ctx)
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "ahpbench_" + hex.EncodeToString(b)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", err
	}
	cfg := conn.Config()
	return fmt.Sprintf("postgres://%s@%s:%d/%s", cfg.User, cfg.Host, cfg.Port, name), nil
}

var reqID = regexp.MustCompile(`req-[0-9a-f]+-\d+-\d+`)

// checkAudit counts the received request ids missing from the audit table
// (lost) and those recorded more than once (dups).
func checkAudit(ctx context.Context, url string, received []string) (lost, dups, found int, err error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return 0, 0, 0, err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT event FROM audit WHERE event_type = 'pre_action' AND event IS NOT NULL`)
	if err != nil {
		return 0, 0, 0, err
	}
	count := map[string]int{}
	for rows.Next() {
		var ev string
		if err := rows.Scan(&ev); err != nil {
			return 0, 0, 0, err
		}
		if id := reqID.FindString(ev); id != "" {
			count[id]++
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, 0, 0, err
	}
	for _, id := range received {
		switch n := count[id]; {
		case n == 0:
			lost++
		default:
			found++
			if n > 1 {
				dups++
			}
		}
	}
	return lost, dups, found, nil
}
