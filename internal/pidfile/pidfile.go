// Package pidfile writes a daemon's pidfile and holds an exclusive lock on
// it for the daemon's life, so a second daemon on the same configuration
// finds out before it touches anything of the running one (Salt's
// check_running, done with flock(2) instead of a process-table lookup: a
// pidfile left by a killed daemon is not locked and is simply taken over).
package pidfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ErrRunning is matched (errors.Is) by the error Lock returns when another
// process holds the lock.
var ErrRunning = errors.New("pidfile: another instance is running")

// RunningError names the process holding the lock.
type RunningError struct {
	// Name is the daemon's name ("gsalt-master").
	Name string
	// PID is the holder's pid as written in the file (0 if unreadable).
	PID int
	// Path is the locked file.
	Path string
}

func (e *RunningError) Error() string {
	pid := "unknown"
	if e.PID > 0 {
		pid = strconv.Itoa(e.PID)
	}
	return fmt.Sprintf("another %s is running (pid %s, %s): An instance is already running. Exiting", e.Name, pid, e.Path)
}

// Is makes errors.Is(err, ErrRunning) true.
func (e *RunningError) Is(target error) bool { return target == ErrRunning }

// File is a held pidfile.
type File struct {
	path string
	f    *os.File
}

// Lock creates path (and its folder), takes an exclusive non-blocking
// flock on it and writes the current pid. When another process holds the
// lock it returns a *RunningError and changes nothing.
func Lock(path, name string) (*File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("pidfile: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("pidfile: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			b := make([]byte, 32)
			n, _ := f.ReadAt(b, 0)
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b[:n])))
			return nil, &RunningError{Name: name, PID: pid, Path: path}
		}
		return nil, fmt.Errorf("pidfile: lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, fmt.Errorf("pidfile: %w", err)
	}
	if _, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("pidfile: %w", err)
	}
	return &File{path: path, f: f}, nil
}

// Path returns the file's path.
func (p *File) Path() string { return p.path }

// Release removes the file and drops the lock. It is safe on nil.
func (p *File) Release() error {
	if p == nil || p.f == nil {
		return nil
	}
	err := os.Remove(p.path)
	if cerr := p.f.Close(); err == nil {
		err = cerr
	}
	p.f = nil
	return err
}
