package keys

import (
	"errors"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/stringutils"

	"github.com/gsalt/gsalt/internal/pyfmt"
)

// This file is Salt's AutoKey (salt/daemons/masterapi.py): autosign_file,
// autoreject_file, minions_autosign stubs and autosign_grains_dir.

// checkAutoreject reports whether id matches autoreject_file.
func (s *Store) checkAutoreject(id string) bool {
	return s.checkSigningFile(id, s.opts.AutorejectFile)
}

// checkAutosign runs Salt's checks in order: auto_accept, autosign_file, a
// minions_autosign stub (deleted when used), autosign_grains_dir.
func (s *Store) checkAutosign(id string, grains map[string]any) bool {
	if s.opts.AutoAccept {
		return true
	}
	if s.checkSigningFile(id, s.opts.AutosignFile) {
		return true
	}
	if s.checkAutosignDir(id) {
		return true
	}
	return s.checkAutosignGrains(grains)
}

// checkPermissions refuses world-writable files, and group-writable ones
// unless permissive_pki_access (and, when running as root, unless the file's
// group is one of the master user's supplementary groups).
func (s *Store) checkPermissions(path string) bool {
	if !checkGroupPerms {
		return true
	}
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	mode := fi.Mode().Perm()
	if mode&0o002 != 0 {
		return false
	}
	if mode&0o020 != 0 {
		if !s.opts.PermissivePKIAccess {
			return false
		}
		if os.Getuid() == 0 {
			gid, ok := fileGID(fi)
			if !ok || !s.userInGroup(gid) {
				return false
			}
		}
	}
	return true
}

// userInGroup reports whether gid is one of the master user's groups other
// than its primary group (salt.utils.user.get_gid_list(user,
// include_default=False)).
func (s *Store) userInGroup(gid uint32) bool {
	var (
		u   *user.User
		err error
	)
	if s.opts.User != "" {
		u, err = user.Lookup(s.opts.User)
	} else {
		u, err = user.Current()
	}
	if err != nil {
		return false
	}
	ids, err := u.GroupIds()
	if err != nil {
		return false
	}
	want := strconv.FormatUint(uint64(gid), 10)
	for _, g := range ids {
		if g == want && g != u.Gid {
			return true
		}
	}
	return false
}

// checkSigningFile reports whether id matches an entry of an
// autosign/autoreject file: one glob or regular expression per line,
// stripped, lines starting with "#" ignored (ExprMatch).
func (s *Store) checkSigningFile(id, file string) bool {
	if file == "" {
		return false
	}
	if _, err := os.Stat(file); err != nil {
		return false
	}
	if !s.checkPermissions(file) {
		s.log.Warn("keys: wrong permissions, ignoring content", "file", file)
		return false
	}
	data, err := readLimited(file, maxListFileSize)
	if err != nil {
		s.log.Warn("keys: cannot read signing file", "file", file, "err", err)
		return false
	}
	for _, line := range py.FileLines(string(data)) {
		entry := pyStrip(line)
		if strings.HasPrefix(entry, "#") {
			continue
		}
		if stringutils.ExprMatch(id, entry) {
			return true
		}
	}
	return false
}

// checkAutosignDir purges minions_autosign stubs older than
// autosign_timeout, then consumes the stub named id if there is one.
func (s *Store) checkAutosignDir(id string) bool {
	dir := filepath.Join(s.pki, "minions_autosign")
	if timeout := s.opts.autosignTimeout(); timeout > 0 {
		if ents, err := os.ReadDir(dir); err == nil {
			minTime := time.Now().Add(-timeout)
			for _, e := range ents {
				if e.IsDir() {
					continue
				}
				stub := filepath.Join(dir, e.Name())
				fi, err := os.Stat(stub)
				if err != nil || !fi.ModTime().Before(minTime) {
					continue
				}
				s.log.Warn("keys: autosign keyid expired", "file", stub)
				if err := os.Remove(stub); err != nil && !errors.Is(err, fs.ErrNotExist) {
					s.log.Warn("keys: remove expired autosign stub", "file", stub, "err", err)
				}
			}
		}
	}
	stub := filepath.Join(dir, id)
	if _, err := os.Lstat(stub); err != nil {
		return false
	}
	if err := os.Remove(stub); err != nil {
		s.log.Warn("keys: remove autosign stub", "file", stub, "err", err)
		return false
	}
	return true
}

// checkAutosignGrains reports whether, for a file in autosign_grains_dir
// named after a grain the minion sent, str(value) equals one of the file's
// stripped lines not starting with "#".
func (s *Store) checkAutosignGrains(grains map[string]any) bool {
	if len(grains) == 0 || s.opts.AutosignGrainsDir == "" {
		return false
	}
	ents, err := os.ReadDir(s.opts.AutosignGrainsDir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		v, ok := grains[e.Name()]
		if !ok || e.IsDir() {
			continue
		}
		file := filepath.Join(s.opts.AutosignGrainsDir, e.Name())
		if !s.checkPermissions(file) {
			s.log.Warn("keys: wrong permissions, ignoring content", "file", file)
			continue
		}
		data, err := readLimited(file, maxListFileSize)
		if err != nil {
			s.log.Warn("keys: cannot read autosign grains file", "file", file, "err", err)
			continue
		}
		want := pyfmt.Str(v)
		for _, line := range py.FileLines(string(data)) {
			line = pyStrip(line)
			if strings.HasPrefix(line, "#") {
				continue
			}
			if want == line {
				return true
			}
		}
	}
	return false
}

// pyIsSpace reports whether r is whitespace for Python's str.strip().
func pyIsSpace(r rune) bool {
	switch {
	case r == ' ', r >= '\t' && r <= '\r', r >= 0x1c && r <= 0x1f, r == 0x85, r == 0xa0,
		r == 0x1680, r >= 0x2000 && r <= 0x200a, r == 0x2028, r == 0x2029,
		r == 0x202f, r == 0x205f, r == 0x3000:
		return true
	}
	return false
}

// pyStrip is Python's str.strip().
func pyStrip(s string) string {
	return strings.TrimFunc(s, pyIsSpace)
}
