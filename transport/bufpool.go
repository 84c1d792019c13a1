package transport

import "sync"

// BufferSize is the size of the buffers stream connections read and write
// with. They come from a pool while a message is being read or written
// and go back to it when the connection is quiet, so an idle connection
// holds none.
const BufferSize = 64 << 10

var bufPool = sync.Pool{New: func() any {
	b := make([]byte, BufferSize)
	return &b
}}

// GetBuffer returns a BufferSize buffer from the shared pool.
func GetBuffer() *[]byte { return bufPool.Get().(*[]byte) }

// PutBuffer gives b, from GetBuffer, back to the pool. b must not be used
// afterwards.
func PutBuffer(b *[]byte) {
	if b != nil && cap(*b) == BufferSize {
		*b = (*b)[:BufferSize]
		bufPool.Put(b)
	}
}
