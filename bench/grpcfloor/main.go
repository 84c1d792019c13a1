// Command grpcfloor measures what an idle gRPC stream costs in grpc-go
// itself, with no AHP code: it starts a bare grpc-go server (the ahp.v1
// Harness service, whose Stream handler echoes and otherwise waits in
// RecvMsg) in a child process, opens N connections with one stream each,
// sends one message on each, and reports the server's resident memory
// before and after, per connection. It is the floor under
// `bench/agents -transport grpc`: the harness cannot hold an idle gRPC
// agent for less than this.
//
//	ulimit -n 20000
//	go build -o /tmp/grpcfloor ./bench/grpcfloor && /tmp/grpcfloor -n 10000
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/ahp-go/ahp/transport/grpctransport"
	ahpv1 "github.com/ahp-go/ahp/transport/grpctransport/proto/ahp/v1"
)

// Bounds on what one run may ask for.
const maxConns = 50000

func main() {
	n := flag.Int("n", 1000, "idle connections to open, one stream each")
	settle := flag.Duration("settle", 10*time.Second, "how long the connections stay idle before the memory is read")
	readBuf := flag.Int("read-buffer", 0, "grpc.ReadBufferSize of the server (grpc-go's default is 32 KiB, pooled)")
	serve := flag.Bool("serve", false, "run as the server (the parent starts it)")
	flag.Parse()
	var err error
	if *serve {
		err = runServer(*readBuf)
	} else {
		err = run(*n, *settle, *readBuf)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "grpcfloor:", err)
		os.Exit(1)
	}
}

// echo is the bare Harness service: each Stream answers what it receives.
type echo struct {
	ahpv1.UnimplementedHarnessServer
}

func (echo) Stream(s ahpv1.Harness_StreamServer) error {
	var m ahpv1.Message
	for {
		if err := s.RecvMsg(&m); err != nil {
			return err
		}
		if err := s.SendMsg(&m); err != nil {
			return err
		}
	}
}

// runServer serves on 127.0.0.1, prints its address, and on each line of
// input collects garbage, returns free memory to the system and answers
// with its resident memory in KB.
func runServer(readBuf int) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	gs := grpc.NewServer(grpc.ForceServerCodecV2(grpctransport.Codec), grpc.ReadBufferSize(readBuf))
	ahpv1.RegisterHarnessServer(gs, echo{})
	go func() { _ = gs.Serve(l) }()
	fmt.Println(l.Addr().String())
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		runtime.GC()
		debug.FreeOSMemory()
		kb, err := rssKB("self")
		if err != nil {
			return err
		}
		fmt.Println(kb)
	}
	gs.Stop()
	return nil
}

// rssKB reads VmRSS of a process from /proc.
func rssKB(pid string) (int, error) {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
		}
	}
	return 0, errors.New("no VmRSS in /proc/" + pid + "/status")
}

func run(n int, settle time.Duration, readBuf int) error {
	if n < 1 || n > maxConns {
		return fmt.Errorf("-n must be 1 to %d", maxConns)
	}
	if settle < 0 || settle > 10*time.Minute {
		return errors.New("-settle must be 0 to 10m")
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, "-serve", "-read-buffer", strconv.Itoa(readBuf))
	cmd.Stderr = os.Stderr
	toServer, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	fromServer, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { _ = toServer.Close(); _ = cmd.Wait() }()
	lines := bufio.NewScanner(fromServer)
	if !lines.Scan() {
		return errors.New("the server printed no address")
	}
	addr := lines.Text()
	measure := func() (int, error) {
		if _, err := fmt.Fprintln(toServer); err != nil {
			return 0, err
		}
		if !lines.Scan() {
			return 0, errors.New("the server did not answer")
		}
		return strconv.Atoi(lines.Text())
	}
	time.Sleep(time.Second)
	before, err := measure()
	if err != nil {
		return err
	}
	msg := &ahpv1.Message{Json: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)}
	var open []*grpc.ClientConn
	defer func() {
		for _, cc := range open {
			_ = cc.Close()
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := 0; i < n; i++ {
		cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultCallOptions(grpc.ForceCodecV2(grpctransport.Codec)))
		if err != nil {
			return err
		}
		open = append(open, cc)
		s, err := ahpv1.NewHarnessClient(cc).Stream(ctx)
		if err != nil {
			return fmt.Errorf("stream %d: %w", i, err)
		}
		if err := s.SendMsg(msg); err != nil {
			return fmt.Errorf("stream %d: %w", i, err)
		}
		var got ahpv1.Message
		if err := s.RecvMsg(&got); err != nil {
			return fmt.Errorf("stream %d: %w", i, err)
		}
	}
	time.Sleep(settle)
	after, err := measure()
	if err != nil {
		return err
	}
	fmt.Printf("bare grpc-go: n=%d idle streams (one per connection); server RSS %.1f MB -> %.1f MB; %.1f KB per connection\n",
		n, float64(before)/1024, float64(after)/1024, float64(after-before)/float64(n))
	return nil
}
