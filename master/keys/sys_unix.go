//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package keys

import (
	"errors"
	"os"
	"syscall"
)

// flockFile takes an flock(2) lock on f, shared or exclusive, retrying on
// EINTR. flock locks belong to the open file description, so two Stores in
// one process exclude each other just like two processes do.
func flockFile(f *os.File, exclusive bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// funlockFile releases the lock (closing the file would too).
func funlockFile(f *os.File) {
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}

// fileGID returns the group owning the file described by fi.
func fileGID(fi os.FileInfo) (uint32, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Gid, true
}

// checkGroupPerms is true on systems where Salt's group checks apply.
const checkGroupPerms = true
