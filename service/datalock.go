package service

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// LockFile, in the data directory, is held with an exclusive lock by the
// harness using the directory, from before it touches anything there until
// it has closed its store; it is removed then. It holds the holder's pid
// and addresses, which a second harness names when it refuses to start.
const LockFile = "ahp.lock"

// SocketLockSuffix is appended to the path of a Unix socket a harness
// listens on to name the file it holds locked while it does; the file is
// removed when the harness stops.
const SocketLockSuffix = ".lock"

// ErrInUse is wrapped by the error of New when another harness holds the
// data directory or a Unix socket path of the configuration.
var ErrInUse = errors.New("in use by another harness")

// errLocked is tryLock's answer when another holder has the lock.
var errLocked = errors.New("locked")

// maxLockInfo bounds what is read of another holder's lock file.
const maxLockInfo = 16 << 10

// lockOwner is the content of a lock file: who holds it.
type lockOwner struct {
	PID     int       `json:"pid"`
	DataDir string    `json:"data_dir,omitempty"`
	Listen  []string  `json:"listen,omitempty"` // as configured, Unix socket paths made absolute
	Bound   []string  `json:"bound,omitempty"`  // the addresses that accept connections
	Admin   string    `json:"admin,omitempty"`  // the admin API as bound (or configured)
	Started time.Time `json:"started"`
	// The holder's identity, as self_protection guards it (Identity):
	// what ahp explain reads to judge as this harness does.
	Args []string `json:"args,omitempty"`
	Exe  string   `json:"exe,omitempty"`
	Cwd  string   `json:"cwd,omitempty"`
	Home string   `json:"home,omitempty"`
}

// describe names the holder for an error message.
func (o lockOwner) describe() string {
	parts := []string{fmt.Sprintf("pid %d", o.PID)}
	if o.PID == 0 {
		parts[0] = "pid unknown"
	}
	addrs := o.Bound
	if len(addrs) == 0 {
		addrs = o.Listen
	}
	if len(addrs) > 0 {
		parts = append(parts, "listening on "+strings.Join(addrs, ", "))
	}
	if o.Admin != "" {
		parts = append(parts, "admin API "+o.Admin)
	}
	if o.DataDir != "" {
		parts = append(parts, "data directory "+o.DataDir)
	}
	if !o.Started.IsZero() {
		parts = append(parts, "started "+o.Started.UTC().Format(time.RFC3339))
	}
	return strings.Join(parts, ", ")
}

// heldLock is one lock file this process holds.
type heldLock struct {
	f    *os.File
	path string
}

// acquireLock opens (creating) path and takes its exclusive lock without
// waiting, then writes owner into it. When another process holds it, the
// error wraps ErrInUse and names that process as its lock file does. A
// lock file removed by its previous holder between our open and our lock
// is detected (the path no longer names the file we locked) and the
// attempt repeated.
func acquireLock(path string, owner lockOwner) (*heldLock, error) {
	for range 5 {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|noFollow, 0o600)
		if err != nil {
			return nil, err
		}
		if err := tryLock(f); err != nil {
			var other lockOwner
			if errors.Is(err, errLocked) {
				b, _ := io.ReadAll(io.LimitReader(f, maxLockInfo))
				_ = json.Unmarshal(b, &other)
			}
			_ = f.Close()
			if errors.Is(err, errLocked) {
				return nil, fmt.Errorf("%w (%s)", ErrInUse, other.describe())
			}
			return nil, err
		}
		held, err1 := f.Stat()
		now, err2 := os.Lstat(path)
		if err1 != nil || err2 != nil || !os.SameFile(held, now) {
			_ = f.Close()
			continue
		}
		l := &heldLock{f: f, path: path}
		if err := l.write(owner); err != nil {
			l.release()
			return nil, err
		}
		return l, nil
	}
	return nil, fmt.Errorf("%s: the lock file keeps being replaced", path)
}

// write replaces the lock file's content with owner.
func (l *heldLock) write(owner lockOwner) error {
	b, err := json.Marshal(owner)
	if err != nil {
		return err
	}
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	_, err = l.f.WriteAt(append(b, '\n'), 0)
	return err
}

// release gives the lock up, removing the file while it is still held
// (acquireLock notices a file removed under it).
func (l *heldLock) release() {
	_ = os.Remove(l.path)
	_ = l.f.Close()
}

// locks are the lock files a service holds and what it writes in them.
type locks struct {
	mu    sync.Mutex
	owner lockOwner
	held  []*heldLock
}

// lock takes the exclusive locks of the configuration before anything
// else touches the data directory: each Unix socket path's, then the data
// directory's (created if missing) unless nothing is stored. On
// error, the locks taken are released and nothing else was touched.
func (s *Service) lock() error {
	c := s.cfg
	owner := lockOwner{PID: os.Getpid(), Admin: c.Admin, Started: s.started,
		Args: os.Args, Exe: s.self.Exe, Cwd: s.self.Cwd, Home: s.self.Home}
	var sockets []string
	seen := map[string]bool{}
	for _, l := range c.Listen {
		p, ok := strings.CutPrefix(l, "unix:")
		if !ok || p == "" {
			owner.Listen = append(owner.Listen, l)
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		owner.Listen = append(owner.Listen, "unix:"+p)
		if !seen[p] {
			seen[p] = true
			sockets = append(sockets, p)
		}
	}
	if !s.opts.ProtocolOnly {
		owner.DataDir = c.DataDir
		if abs, err := filepath.Abs(c.DataDir); err == nil {
			owner.DataDir = abs
		}
	}
	s.locks.owner = owner
	if !lockSupported {
		s.log.Warn("this platform has no flock: nothing keeps a second harness off this data directory or socket; run one per data directory")
		return nil
	}
	for _, p := range sockets {
		// The socket's directory is made (owner only) when missing: the
		// default one lives in the runtime or state directory.
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			s.unlock()
			return fmt.Errorf("unix socket %s: its directory cannot be created: %w", p, err)
		}
		l, err := acquireLock(p+SocketLockSuffix, owner)
		if err != nil {
			s.unlock()
			if errors.Is(err, ErrInUse) {
				return fmt.Errorf("unix socket %s is %w: stop that harness first, or listen elsewhere", p, err)
			}
			return fmt.Errorf("unix socket %s: its lock file cannot be created or locked: %w", p, err)
		}
		s.locks.held = append(s.locks.held, l)
	}
	if !s.opts.ProtocolOnly {
		if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
			s.unlock()
			return fmt.Errorf("data directory %s is not usable: %w", c.DataDir, err)
		}
		l, err := acquireLock(filepath.Join(c.DataDir, LockFile), owner)
		switch {
		case errors.Is(err, ErrInUse):
			s.unlock()
			return fmt.Errorf("data directory %s is %w: stop that harness first, or give this one its own --data-dir", c.DataDir, err)
		case err != nil:
			s.unlock()
			return fmt.Errorf("data directory %s is not usable (its lock file cannot be created or locked): %w", c.DataDir, err)
		}
		s.locks.held = append(s.locks.held, l)
	}
	return nil
}

// lockBound records an address that now accepts connections in the lock
// files, so that a second harness can name it.
func (s *Service) lockBound(listen, addr string) {
	s.locks.mu.Lock()
	defer s.locks.mu.Unlock()
	if listen == "admin" {
		s.locks.owner.Admin = addr
	} else {
		if p, ok := strings.CutPrefix(addr, "unix:"); ok {
			if abs, err := filepath.Abs(p); err == nil {
				addr = "unix:" + abs
			}
		}
		s.locks.owner.Bound = append(s.locks.owner.Bound, addr)
	}
	for _, l := range s.locks.held {
		if err := l.write(s.locks.owner); err != nil {
			s.log.Warn("updating a lock file", "path", l.path, "error", err)
		}
	}
}

// unlock releases every lock the service holds.
func (s *Service) unlock() {
	s.locks.mu.Lock()
	defer s.locks.mu.Unlock()
	for i := len(s.locks.held) - 1; i >= 0; i-- {
		s.locks.held[i].release()
	}
	s.locks.held = nil
}
