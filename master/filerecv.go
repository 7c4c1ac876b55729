package master

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/wire/payload"
)

// fileRecvDefaultMaxMB is Salt's file_recv_max_size default (MB).
const fileRecvDefaultMaxMB = 100

// errFileRecvPath is a _file_recv path that is absolute, climbs out of
// the minion's files folder or names no file.
var errFileRecvPath = errors.New("_file_recv path refused")

// aesFileRecv handles _file_recv, one chunk of a minion's cp.push
// (AESFuncs._file_recv): with file_recv on, data is written at offset loc
// of cachedir/minions/<id>/files/<path>. The answer is True when the
// chunk was written, False when it was refused (file_recv off, a bad
// load, path or id, a file beyond file_recv_max_size MB) and {} when tok
// is not the minion's.
//
// Where gsalt differs from Salt on purpose: a path must stay inside the
// minion's own files folder, symbolic links included (Salt only keeps it
// under cachedir, so "a/../../<other id>/files/x" reaches another
// minion's files); a chunk is written at its offset loc (Salt appends
// every chunk after the first, so a re-sent chunk is written twice).
func (m *Master) aesFileRecv(_ context.Context, load *payload.Map) (any, error) {
	for _, k := range []string{"id", "path", "loc"} {
		if !load.Has(k) {
			return false, nil
		}
	}
	parts, ok := load.List("path"), isList(load, "path")
	if !ok || !m.cfg.Opts.Bool("file_recv") {
		return false, nil
	}
	id, ok := payloadString(load, "id")
	if !ok || !m.validID(id) {
		return false, nil
	}
	maxMB, err := m.cfg.Opts.Int("file_recv_max_size")
	if err != nil {
		maxMB = fileRecvDefaultMaxMB
	}
	limit := int64(maxMB) * 1024 * 1024
	lv, _ := load.Get("loc")
	loc, ok := payload.AsInt(lv)
	if !ok {
		return false, nil
	}
	if loc < 0 {
		m.log.Error("Invalid file pointer: load[loc] < 0", "id", id)
		return false, nil
	}
	var data []byte
	switch d, _ := load.Get("data"); d := d.(type) {
	case []byte:
		data = d
	case string:
		data = []byte(d)
	default:
		return false, nil
	}
	if int64(len(data))+loc > limit {
		m.log.Error(fmt.Sprintf("file_recv_max_size limit of %d MB exceeded! %s will be truncated. "+
			"To successfully push this file, adjust file_recv_max_size to an integer (in MB) large enough to accommodate it.",
			limit, pyfmtList(parts)), "id", id)
		return false, nil
	}
	if !load.Has("tok") {
		m.log.Error(fmt.Sprintf("Received incomplete call from %s for '_file_recv', missing 'tok'", id))
		return false, nil
	}
	if ok, err := m.verifyTok(load, "id", "tok"); !ok {
		return payload.NewMap(), err
	}
	rel, err := fileRecvPath(parts)
	if err != nil {
		if errors.Is(err, errFileRecvPath) {
			m.log.Warn(fmt.Sprintf("Attempt to write received file outside of master cache directory! Requested path: %s. Access denied.",
				pyfmtList(parts)), "id", id)
		}
		return false, nil
	}
	if err := m.writeRecvChunk(id, rel, loc, data); err != nil {
		m.log.Error("cannot write a pushed file", "id", id, "path", rel, "err", err)
		return false, nil
	}
	return true, nil
}

// isList reports whether load[key] is a list.
func isList(load *payload.Map, key string) bool {
	v, _ := load.Get(key)
	_, ok := v.([]any)
	return ok
}

// pyfmtList prints the path list as Salt's log does, ['a', 'b'].
func pyfmtList(parts []any) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, p := range parts {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "'%v'", p)
	}
	b.WriteByte(']')
	return b.String()
}

// fileRecvPath joins and normalises the path elements as Salt does
// (os.path.normpath of the "/"-joined list) and refuses a result that is
// absolute, empty, or climbs out of the files folder.
func fileRecvPath(parts []any) (string, error) {
	elems := make([]string, 0, len(parts))
	for _, p := range parts {
		s, ok := p.(string)
		if !ok {
			return "", fmt.Errorf("%w: element %v is not a string", errFileRecvPath, p)
		}
		elems = append(elems, s)
	}
	norm := py.Normpath(strings.Join(elems, "/"))
	if path.IsAbs(norm) || norm == "." || norm == ".." || strings.HasPrefix(norm, "../") || strings.ContainsRune(norm, 0) {
		return "", fmt.Errorf("%w: %q", errFileRecvPath, norm)
	}
	return norm, nil
}

// writeRecvChunk writes data at offset loc of rel inside
// cachedir/minions/<id>/files (a first chunk, loc 0, truncates). The
// folder is opened as an os.Root, so no symbolic link leads out of it.
func (m *Master) writeRecvChunk(id, rel string, loc int64, data []byte) error {
	base := filepath.Join(m.cfg.CacheDir, "minions", id, "files")
	if err := os.MkdirAll(base, 0o777); err != nil {
		return fmt.Errorf("files folder: %w", err)
	}
	root, err := os.OpenRoot(base)
	if err != nil {
		return fmt.Errorf("files folder: %w", err)
	}
	defer root.Close()
	local := filepath.FromSlash(rel)
	if dir := filepath.Dir(local); dir != "." {
		if err := root.MkdirAll(dir, 0o777); err != nil {
			return fmt.Errorf("%w: %w", errFileRecvPath, err)
		}
	}
	flags := os.O_WRONLY | os.O_CREATE
	if loc == 0 {
		flags |= os.O_TRUNC
	}
	f, err := root.OpenFile(local, flags, 0o666)
	if err != nil {
		return err
	}
	if _, err := f.WriteAt(data, loc); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil && !errors.Is(err, fs.ErrClosed) {
		return err
	}
	return nil
}
