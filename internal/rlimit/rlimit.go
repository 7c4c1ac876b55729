// Package rlimit raises the open files limit (RLIMIT_NOFILE) of a process
// that needs many sockets: gsalt-devsim listens on one port per simulated
// device, gsalt-proxy keeps an SSH connection and a master connection per
// device. Go already raises the soft limit to the hard one at start; this
// also raises the hard limit where the process may (root, up to the
// kernel's fs.nr_open).
package rlimit

import (
	"errors"
	"fmt"
	"syscall"
)

// ErrTooLow: the limit could not be raised as far as asked.
var ErrTooLow = errors.New("rlimit: open files limit too low")

// RaiseNoFile makes sure at least want files can be open: it raises the
// soft limit, and the hard limit when needed and allowed. It returns the
// soft limit in force afterwards; the error (ErrTooLow) says when that is
// still below want.
func RaiseNoFile(want uint64) (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, fmt.Errorf("rlimit: %w", err)
	}
	if lim.Cur >= want {
		return lim.Cur, nil
	}
	next := syscall.Rlimit{Cur: want, Max: max(lim.Max, want)}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &next); err == nil {
		return want, nil
	}
	// Not allowed to raise the hard limit: take what it allows.
	next = syscall.Rlimit{Cur: lim.Max, Max: lim.Max}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &next); err != nil {
		return lim.Cur, fmt.Errorf("%w: %d, need %d: %w", ErrTooLow, lim.Cur, want, err)
	}
	return lim.Max, fmt.Errorf("%w: hard limit %d, need %d (raise it with ulimit -Hn or LimitNOFILE=)", ErrTooLow, lim.Max, want)
}
