//go:build linux

package dirwatch

import "unsafe"

// unsafePointer points at the start of b (an inotify event record).
func unsafePointer(b []byte) unsafe.Pointer { return unsafe.Pointer(&b[0]) }
