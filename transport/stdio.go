package transport

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// Stdio returns the server side of the stdio transport: messages are read
// from stdin and written to stdout, one per line. Closing it closes neither
// file, so that the process can still log on stderr.
func Stdio(stdin io.Reader, stdout io.Writer, maxMessage int) Conn {
	return NewStreamConn(stdin, stdout, nil, maxMessage, Info{Transport: "stdio", HalfClose: true})
}

// CommandConn is the client side of the stdio transport: it runs a harness
// program and talks to it over the program's stdin and stdout. The
// program's stderr is passed through to this process's stderr.
type CommandConn struct {
	Conn
	cmd  *exec.Cmd
	done chan struct{}
	werr error
}

// StartCommand starts name with args and returns a connection to it.
func StartCommand(ctx context.Context, maxMessage int, name string, args ...string) (*CommandConn, error) {
	cmd := exec.Command(name, args...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("stdio: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("stdio: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("stdio: start %s: %w", name, err)
	}
	c := &CommandConn{cmd: cmd, done: make(chan struct{})}
	go func() {
		c.werr = cmd.Wait()
		close(c.done)
	}()
	var once sync.Once
	closeFn := func() error {
		once.Do(func() {
			_ = stdin.Close() // the harness sees EOF and should exit
			select {
			case <-c.done:
			case <-time.After(3 * time.Second):
				_ = cmd.Process.Kill()
				<-c.done
			}
		})
		return nil
	}
	c.Conn = NewStreamConn(stdout, stdin, closeFn, maxMessage,
		Info{Transport: "stdio", Remote: name})
	return c, nil
}

// Done is closed when the program has exited.
func (c *CommandConn) Done() <-chan struct{} { return c.done }
