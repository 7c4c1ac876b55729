//go:build linux

package dirwatch

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// mask is every change of an entry of the directory or of the directory
// itself.
const mask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
	unix.IN_CLOSE_WRITE | unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF

// Watcher counts the changes seen in one directory. Its methods are safe
// for concurrent use.
type Watcher struct {
	f    *os.File
	gen  atomic.Uint64
	ok   atomic.Bool
	done chan struct{}
}

// New watches dir (not its subdirectories). Close releases it.
func New(dir string) (*Watcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("dirwatch: inotify_init: %w", err)
	}
	if _, err := unix.InotifyAddWatch(fd, dir, mask|unix.IN_ONLYDIR); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("dirwatch: watch %s: %w", dir, err)
	}
	// A non-blocking descriptor goes through Go's poller: Close wakes
	// the reader.
	w := &Watcher{f: os.NewFile(uintptr(fd), "inotify:"+dir), done: make(chan struct{})}
	w.ok.Store(true)
	go w.read()
	return w, nil
}

// read bumps the count for every batch of events; a queue overflow or
// the directory going away (removed, renamed, unmounted) ends the watch.
func (w *Watcher) read() {
	defer close(w.done)
	buf := make([]byte, 64<<10)
	for {
		n, err := w.f.Read(buf)
		if err != nil || n < unix.SizeofInotifyEvent {
			w.gen.Add(1)
			w.ok.Store(false)
			return
		}
		lost := false
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafePointer(buf[off:]))
			if ev.Mask&(unix.IN_Q_OVERFLOW|unix.IN_IGNORED|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_UNMOUNT) != 0 {
				lost = true
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
		w.gen.Add(1)
		if lost {
			w.ok.Store(false)
			_ = w.f.Close()
			return
		}
	}
}

// Gen is the number of changes seen so far: it moves after every change
// of an entry (created, written, renamed, removed, chmod). Once Valid is
// false the count stops meaning anything.
func (w *Watcher) Gen() uint64 { return w.gen.Load() }

// Valid reports whether the watch still runs (false after Close, a
// queue overflow, or the directory being removed or renamed).
func (w *Watcher) Valid() bool { return w.ok.Load() }

// Close stops the watch.
func (w *Watcher) Close() error {
	w.ok.Store(false)
	err := w.f.Close()
	<-w.done
	if errors.Is(err, os.ErrClosed) {
		return nil
	}
	return err
}
