// Package dirwatch counts the changes of one directory's entries with
// Linux inotify, so a cache of files in it (the master's accepted minion
// keys) can skip a stat per use and still forget what another process
// (gsalt-key) changed. On other systems, or when the watch cannot be
// set up, New fails and callers keep checking the files themselves.
package dirwatch

import "errors"

// ErrUnsupported is returned by New where inotify is not available.
var ErrUnsupported = errors.New("dirwatch: not supported on this system")
