package main

import (
	"os"
	"slices"
	"strings"
	"testing"
)

func TestConnectAddrs(t *testing.T) {
	got := connectAddrs([]string{"unix:/a.sock, http://h:1", "", "stdio:prog --x a,b", " ws://h:2 ,"})
	want := []string{"unix:/a.sock", "http://h:1", "stdio:prog --x a,b", "ws://h:2"}
	if !slices.Equal(got, want) {
		t.Fatalf("connectAddrs = %q, want %q", got, want)
	}
	many := connectAddrs([]string{strings.Repeat("unix:/x,", 100)})
	if len(many) != maxConnectAddrs {
		t.Fatalf("%d addresses kept, want at most %d", len(many), maxConnectAddrs)
	}
}

// ahp send with two replicas of ahp serve: it uses whichever answers, in
// either form of --connect, and exits 1 (never 0) when neither does.
func TestSendFailsOverBetweenReplicas(t *testing.T) {
	bin := e2eBinary(t)
	srvA, sockA, _ := startServe(t, bin, t.TempDir())
	srvB, sockB, _ := startServe(t, bin, t.TempDir())
	kill := func(s interface{ Kill() error }, wait func() error) { _ = s.Kill(); _ = wait() }
	defer kill(srvA.Process, srvA.Wait)
	defer kill(srvB.Process, srvB.Wait)
	a, b := "unix:"+sockA, "unix:"+sockB

	// B dies: repeated --connect reaches A.
	kill(srvB.Process, srvB.Wait)
	out, code := runSendCmd(t, bin, "--connect", a, "--connect", b, "pre_action", lsCmd)
	if code != 0 || !strings.HasPrefix(out, `{"decision":"allow"`) {
		t.Fatalf("--connect A --connect B with B dead: exit %d, %s", code, out)
	}
	out, code = runSendCmd(t, bin, "--connect", b+","+a, "pre_action", rmRoot)
	if code != 2 || !strings.Contains(out, `"decision":"block"`) {
		t.Fatalf("--connect B,A with B dead, rm -rf /: exit %d, %s", code, out)
	}
	out, code = runSendCmd(t, bin, "--connect", b+","+a, "query", "policy")
	if code != 0 || !strings.Contains(out, `"answer"`) {
		t.Fatalf("query through B,A with B dead: exit %d, %s", code, out)
	}
	// Both dead: exit 1, no decision printed.
	kill(srvA.Process, srvA.Wait)
	_ = os.Remove(sockA)
	if out, code = runSendCmd(t, bin, "--connect", a+","+b, "pre_action", lsCmd); code != 1 || out != "" {
		t.Fatalf("no replica: exit %d, %q; want exit 1 and nothing on stdout", code, out)
	}
}
