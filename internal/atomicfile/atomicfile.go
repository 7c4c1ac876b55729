// Package atomicfile writes files so that readers see either the old
// content or the whole new one: the data goes to a hidden temporary file in
// the same directory, which is synced and then moved into place.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrExists is returned (wrapped) by WriteFile with exclusive set when the
// path already exists.
var ErrExists = errors.New("atomicfile: file exists")

// WriteFile writes data to path with the permission bits mode, through a
// hidden temporary file in path's directory that is synced, then renamed
// into place; the directory is synced afterwards (best effort). The
// temporary file is removed on failure.
//
// With exclusive set an existing path is left alone and the error wraps
// ErrExists; the new file is then hard-linked into place, so that two
// writers racing for the same path cannot both succeed (where the file
// system has no hard links, a check followed by a rename is used).
//
// Errors name the failing step and path ("write PATH: ...", "chmod ...",
// "sync ...", "close ...", "rename ..."), without a package prefix, for
// the caller to add.
func WriteFile(path string, data []byte, mode fs.FileMode, exclusive bool) error {
	return write(path, data, mode, exclusive, true)
}

// WriteCache is WriteFile (not exclusive) without the syncs: readers still
// see the old or the whole new content, but a crash may leave the old
// content or none. For caches rebuilt from their source, where a flush
// per write costs more than a lost entry (Salt's localfs cache does not
// sync either).
func WriteCache(path string, data []byte, mode fs.FileMode) error {
	return write(path, data, mode, false, false)
}

func write(path string, data []byte, mode fs.FileMode, exclusive, sync bool) (err error) {
	if exclusive {
		if _, statErr := os.Lstat(path); statErr == nil {
			return fmt.Errorf("%w: %s", ErrExists, path)
		}
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		_ = f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Chmod(mode); err != nil {
		_ = f.Close()
		return fmt.Errorf("chmod %s: %w", path, err)
	}
	if sync {
		if err = f.Sync(); err != nil {
			_ = f.Close()
			return fmt.Errorf("sync %s: %w", path, err)
		}
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	if !exclusive {
		if err = os.Rename(tmp, path); err != nil {
			return fmt.Errorf("rename %s: %w", path, err)
		}
	} else if linkErr := os.Link(tmp, path); linkErr != nil {
		if errors.Is(linkErr, fs.ErrExist) {
			err = fmt.Errorf("%w: %s", ErrExists, path)
			return err
		}
		// File system without hard links: fall back to check+rename.
		if _, statErr := os.Lstat(path); statErr == nil {
			err = fmt.Errorf("%w: %s", ErrExists, path)
			return err
		}
		if err = os.Rename(tmp, path); err != nil {
			return fmt.Errorf("rename %s: %w", path, err)
		}
	} else {
		_ = os.Remove(tmp)
	}
	if sync {
		syncDir(dir)
	}
	return nil
}

// syncDir flushes a directory entry change; failures are ignored because
// some platforms cannot sync directories.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}
