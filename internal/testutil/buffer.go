package testutil

import (
	"bytes"
	"sync"
)

// Buffer is a concurrency-safe text sink (a logger's or a process's
// output) that a test reads while others write. With Max > 0 it keeps at
// most Max bytes: a write that would pass it is dropped, yet reported as
// written, so a chatty writer never blocks or fails.
type Buffer struct {
	Max int
	mu  sync.Mutex
	b   bytes.Buffer
}

// Write implements io.Writer.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.Max > 0 && b.b.Len()+len(p) > b.Max {
		return len(p), nil
	}
	return b.b.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
