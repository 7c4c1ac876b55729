//go:build !linux

package dirwatch

// Watcher is not available on this system.
type Watcher struct{}

// New always fails with ErrUnsupported here.
func New(dir string) (*Watcher, error) { return nil, ErrUnsupported }

// Gen is always 0.
func (w *Watcher) Gen() uint64 { return 0 }

// Valid is always false.
func (w *Watcher) Valid() bool { return false }

// Close does nothing.
func (w *Watcher) Close() error { return nil }
