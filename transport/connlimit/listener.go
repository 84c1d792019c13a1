package connlimit

import (
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"syscall"
	"time"
)

// DefaultKeepAlive is the TCP keep-alive of the network listeners: the
// first probe after 30 s of silence, then one every 10 s, and the
// connection is dropped after 3 unanswered probes (about 60 s after the
// peer vanished).
var DefaultKeepAlive = net.KeepAliveConfig{Enable: true, Idle: 30 * time.Second, Interval: 10 * time.Second, Count: 3}

// ListenerOptions configure Limiter.Listener.
type ListenerOptions struct {
	// Transport and Name label the listener in metrics and logs ("unix",
	// "unix:/run/ahp.sock").
	Transport, Name string
	// Refuse, when set, answers a connection past the limit itself and
	// closes it (Unix sockets: one JSON-RPC error line); the listener
	// does not return it. When nil, such connections are returned marked
	// (see Refused) so that the server on top answers them in its own
	// protocol; they are closed after RefuseTimeout at the latest.
	Refuse func(c net.Conn, max int)
	// KeepAlive, when set, is applied to accepted TCP connections: an
	// agent whose machine vanished is noticed after Idle + Interval*Count.
	KeepAlive *net.KeepAliveConfig
}

// Listener wraps inner so that each accepted connection holds a slot of l
// until it is closed, connections past the limit are refused, and accept
// failing for want of file descriptors (EMFILE, ENFILE) or another
// temporary reason is retried with a back-off from 5 ms to 1 s, logged at
// most once every LogEvery. l may be nil (no limit).
func (l *Limiter) Listener(inner net.Listener, o ListenerOptions) net.Listener {
	return &listener{Listener: inner, lim: l, o: o, sleep: sleep, done: make(chan struct{})}
}

type listener struct {
	net.Listener
	lim   *Limiter
	o     ListenerOptions
	sleep func(done <-chan struct{}, d time.Duration) bool

	closeOnce sync.Once
	done      chan struct{} // closed by Close: ends a back-off
}

func (ln *listener) Close() error {
	ln.closeOnce.Do(func() { close(ln.done) })
	return ln.Listener.Close()
}

// IsResourceError reports whether err is accept failing for want of file
// descriptors or memory: the process or system is at a limit, and waiting
// lets connections close.
func IsResourceError(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.ENOMEM)
}

func (ln *listener) Accept() (net.Conn, error) {
	var delay time.Duration
	for {
		c, err := ln.Listener.Accept()
		if err != nil {
			var ne net.Error
			temporary := IsResourceError(err) || errors.Is(err, syscall.ECONNABORTED) ||
				(errors.As(err, &ne) && ne.Timeout())
			if !temporary {
				return nil, err
			}
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			if ln.lim != nil {
				if n, ok := ln.lim.acceptLog.due(); ok {
					ln.lim.log.Warn("accept failing: backing off; connected agents are still served (raise the file limit: ulimit -n or systemd LimitNOFILE, see docs/transports.md)",
						"listener", ln.o.Name, "error", err, "failures", n, "retry_in", delay)
				}
			}
			if !ln.sleep(ln.done, delay) {
				return nil, net.ErrClosed
			}
			continue
		}
		delay = 0
		if ln.o.KeepAlive != nil {
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetKeepAliveConfig(*ln.o.KeepAlive)
			}
		}
		if ln.lim.acquire() {
			if ln.lim != nil {
				ln.lim.gauge.WithLabelValues(ln.o.Transport, ln.o.Name).Inc()
			}
			return &Conn{Conn: c, ln: ln}, nil
		}
		ln.lim.noteRefused(ln.o.Transport, ln.o.Name)
		if ln.o.Refuse != nil {
			_ = c.SetDeadline(time.Now().Add(time.Second))
			ln.o.Refuse(c, int(ln.lim.max))
			_ = c.Close()
			continue
		}
		if ln.lim.refusing.Add(1) > MaxRefusing {
			ln.lim.refusing.Add(-1)
			_ = c.Close()
			continue
		}
		_ = c.SetDeadline(time.Now().Add(RefuseTimeout))
		rc := &Conn{Conn: c, ln: ln, over: true}
		rc.key = addrKey(c.LocalAddr(), c.RemoteAddr())
		ln.lim.over.Store(rc.key, struct{}{})
		rc.timer = time.AfterFunc(RefuseTimeout, func() { _ = rc.Close() })
		return rc, nil
	}
}

// sleep waits d, or less when done is closed first (then false).
func sleep(done <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-done:
		return false
	}
}

// Conn is a connection accepted by a Limiter's listener. Closing it gives
// its slot back.
type Conn struct {
	net.Conn
	ln    *listener
	over  bool
	key   string
	timer *time.Timer
	once  sync.Once
}

// Close closes the connection and frees its slot.
func (c *Conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		if c.over {
			c.timer.Stop()
			c.ln.lim.over.Delete(c.key)
			c.ln.lim.refusing.Add(-1)
			return
		}
		if c.ln.lim != nil {
			c.ln.lim.release()
			c.ln.lim.gauge.WithLabelValues(c.ln.o.Transport, c.ln.o.Name).Dec()
		}
	})
	return err
}

// Refused reports whether c was accepted past the limit and must be
// refused by the server on top. It looks through TLS.
func Refused(c net.Conn) bool {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	lc, ok := c.(*Conn)
	return ok && lc.over
}

// Max returns the limit of the Limiter that accepted c (0 when none).
func Max(c net.Conn) int {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if lc, ok := c.(*Conn); ok {
		return lc.ln.lim.Max()
	}
	return 0
}

// SyscallConn gives the underlying socket's raw connection, so that
// readers can wait for input without holding a buffer.
func (c *Conn) SyscallConn() (syscall.RawConn, error) {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return nil, errors.New("connlimit: connection has no file descriptor")
	}
	return sc.SyscallConn()
}

// RefusedAddr reports whether the connection between local and remote
// was accepted past the limit of l (for servers such as gRPC that show
// handlers the addresses, not the connection).
func (l *Limiter) RefusedAddr(local, remote net.Addr) bool {
	if l == nil || local == nil || remote == nil {
		return false
	}
	_, ok := l.over.Load(addrKey(local, remote))
	return ok
}

func addrKey(local, remote net.Addr) string {
	return local.Network() + " " + local.String() + " " + remote.String()
}
