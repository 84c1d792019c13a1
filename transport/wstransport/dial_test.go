package wstransport

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/transport"
)

// TestDialErrorsHideQuerySecrets checks that a failed dial does not quote
// credentials given in the URL query (the 2.4 client's form).
func TestDialErrorsHideQuerySecrets(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = Dial(ctx, "ws://"+addr+"/ahp?api_key=SECRET-123", transport.DialOptions{})
	if err == nil {
		t.Fatal("dial succeeded")
	}
	if strings.Contains(err.Error(), "SECRET-123") {
		t.Fatalf("error reveals the key: %v", err)
	}
}

func TestDialRejectsBadAddresses(t *testing.T) {
	for _, a := range []string{"http://127.0.0.1:1/ahp", "ws:///ahp", "ws://%zz"} {
		if _, err := Dial(context.Background(), a, transport.DialOptions{}); err == nil {
			t.Errorf("%q accepted", a)
		}
	}
}
