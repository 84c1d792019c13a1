//go:build !unix

package transport

import "io"

// rawReader is unavailable here: connections read with a pooled buffer
// that they hold while waiting.
type rawReader struct{}

func newRawReader(io.Reader) *rawReader { return nil }

func (*rawReader) read(**[]byte, int, bool) (int, error) { panic("unreachable") }
