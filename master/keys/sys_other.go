//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package keys

import "os"

// flockFile is a no-op where flock(2) is unavailable: only the Store's own
// mutex serialises operations there, not other processes.
func flockFile(_ *os.File, _ bool) error { return nil }

func funlockFile(_ *os.File) {}

// fileGID is unavailable here.
func fileGID(_ os.FileInfo) (uint32, bool) { return 0, false }

// checkGroupPerms is false where Salt skips its permission checks
// (Windows) or the owner group cannot be read.
const checkGroupPerms = false
