package fileserver

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/payload"
)

// Commands returns the requests Handle answers, as the master's AES
// commands name them.
func Commands() []string {
	return []string{"_file_envs", "_file_list", "_file_list_emptydirs", "_dir_list", "_symlink_list",
		"_file_find", "_file_hash", "_file_hash_and_stat", "_serve_file"}
}

// Handle answers one file server request load the way Salt 3006's master
// does (AESFuncs delegating to Fileserver): cmd is the request's command,
// with or without its leading "_" (Salt's FSChan strips it; "file_find" is
// "_file_find"). A returned error stands for an exception in Salt's
// handler, which the master answers with ""; it wraps ErrBadLoad for a
// malformed load, ErrHashType for a bad hash_type, ErrUnknownCommand for
// another command, or the I/O error met.
func (r *Roots) Handle(ctx context.Context, cmd string, load *payload.Map) (any, error) {
	if load == nil {
		load = payload.NewMap()
	}
	switch strings.TrimLeft(cmd, "_") {
	case "file_envs":
		return r.handleEnvs(load)
	case "file_list":
		return r.handleList(ctx, load, r.FileList, true)
	case "file_list_emptydirs":
		return r.handleList(ctx, load, r.EmptyDirs, false)
	case "dir_list":
		return r.handleList(ctx, load, r.DirList, true)
	case "symlink_list":
		return r.handleSymlinks(ctx, load)
	case "file_find", "find_file":
		return r.handleFind(load)
	case "file_hash":
		h, _, err := r.handleHashAndStat(load)
		return h, err
	case "file_hash_and_stat":
		h, st, err := r.handleHashAndStat(load)
		if err != nil {
			return nil, err
		}
		return []any{h, st}, nil
	case "serve_file":
		return r.handleServe(load)
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownCommand, cmd)
}

// pyStr is str(v), which Salt applies to a non-string saltenv.
func pyStr(v any) string { return pyfmt.Str(v) }

// textArg is salt.utils.stringutils.to_unicode: only text is accepted
// (bytes that are not UTF-8 fail to decode).
func textArg(name string, v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	return "", fmt.Errorf("%w: %s must be a string, not %s", ErrBadLoad, name, payload.TypeName(v))
}

// prefixArg is load.get("prefix", "").strip("/").
func prefixArg(load *payload.Map) (string, error) {
	v, ok := load.Get("prefix")
	if !ok {
		return "", nil
	}
	s, err := textArg("prefix", v)
	if err != nil {
		return "", err
	}
	return strings.Trim(s, "/"), nil
}

// selected reports whether Fileserver.backends(back) includes roots.
func (r *Roots) selected(back any) bool {
	if !r.enabled {
		return false
	}
	if !payload.Truthy(back) {
		return true
	}
	var list []string
	strs := true
	switch x := back.(type) {
	case string:
		list = strings.Split(x, ",")
	case []any:
		for _, e := range x {
			if _, ok := e.(string); !ok {
				strs = false
			}
			list = append(list, pyStr(e))
		}
	default:
		list = strings.Split(pyStr(x), ",")
	}
	subtract := strs
	for _, b := range list {
		if !strings.HasPrefix(b, "-") {
			subtract = false
		}
	}
	for _, b := range list {
		if subtract && b == "-roots" {
			return false
		}
		if !subtract && b == "roots" {
			return true
		}
	}
	return subtract
}

// handleEnvs is Fileserver.file_envs: envs(**load) without cmd.
func (r *Roots) handleEnvs(load *payload.Map) (any, error) {
	var back, sources any
	for _, it := range load.Items() {
		switch k := payload.KeyString(it.Key); k {
		case "cmd":
		case "back":
			back = it.Value
		case "sources":
			sources = it.Value
		default:
			return nil, fmt.Errorf("%w: _file_envs got an unexpected keyword argument %q", ErrBadLoad, k)
		}
	}
	sel := r.selected(back)
	if payload.Truthy(sources) {
		out := payload.NewMap()
		if sel {
			out.Set("roots", strAny(r.Envs()))
		}
		return out, nil
	}
	if !sel {
		return []any{}, nil
	}
	return strAny(r.Envs()), nil
}

func strAny(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

type listFunc func(ctx context.Context, saltenv, prefix string) ([]string, error)

// handleList is Fileserver.file_list, dir_list (useBack: the load's
// fsbackend selects backends) and file_list_emptydirs.
func (r *Roots) handleList(ctx context.Context, load *payload.Map, fn listFunc, useBack bool) (any, error) {
	env, ok := load.Get("saltenv")
	if !ok {
		return []any{}, nil
	}
	var back any
	if useBack {
		back, _ = load.Get("fsbackend")
	}
	prefix, err := prefixArg(load)
	if err != nil {
		return nil, err
	}
	if !r.selected(back) {
		return []any{}, nil
	}
	l, err := fn(ctx, pyStr(env), prefix)
	if err != nil {
		return nil, err
	}
	return strAny(l), nil
}

// handleSymlinks is Fileserver.symlink_list.
func (r *Roots) handleSymlinks(ctx context.Context, load *payload.Map) (any, error) {
	env, ok := load.Get("saltenv")
	if !ok {
		return payload.NewMap(), nil
	}
	back, _ := load.Get("fsbackend")
	prefix, err := prefixArg(load)
	if err != nil {
		return nil, err
	}
	if !r.selected(back) {
		return payload.NewMap(), nil
	}
	return r.Symlinks(ctx, pyStr(env), prefix)
}

// notFound is the fnd of a missing file.
func notFound() *payload.Map { return payload.NewMap("path", "", "rel", "") }

// handleFind is Fileserver._find_file.
func (r *Roots) handleFind(load *payload.Map) (any, error) {
	pv, _ := load.Get("path")
	if !payload.Truthy(pv) {
		return notFound(), nil
	}
	saltenv := "base"
	if v, ok := load.Get("saltenv"); ok {
		s, err := textArg("saltenv", v)
		if err != nil {
			return nil, err
		}
		saltenv = s
	}
	p, err := textArg("path", pv)
	if err != nil {
		return nil, err
	}
	if !r.enabled {
		return notFound(), nil
	}
	f, ok, err := r.find(p, saltenv)
	if err != nil {
		return nil, err
	}
	if !ok {
		return notFound(), nil
	}
	return payload.NewMap("path", f.Path, "rel", f.Rel, "stat", statList(f.Info), "back", "roots"), nil
}

// handleHashAndStat is Fileserver.__file_hash_and_stat as file_hash and
// file_hash_and_stat see it: a path that is not text gives ("", nil), as
// they catch the TypeError.
func (r *Roots) handleHashAndStat(load *payload.Map) (any, any, error) {
	env, ok := load.Get("saltenv")
	if !ok || !load.Has("path") {
		return "", nil, nil
	}
	pv, _ := load.Get("path")
	p, ok := pv.(string)
	if !ok || !r.enabled {
		return "", nil, nil
	}
	f, ok, err := r.find(p, pyStr(env))
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return "", nil, nil
	}
	st := statList(f.Info)
	if _, ok := isFile(f.Path); !ok {
		return payload.NewMap(), st, nil
	}
	sum, err := r.Hash(f)
	if err != nil {
		return nil, nil, err
	}
	return payload.NewMap("hash_type", r.hashType, "hsum", sum), st, nil
}

// handleServe is Fileserver.serve_file + roots.serve_file.
func (r *Roots) handleServe(load *payload.Map) (any, error) {
	empty := payload.NewMap("data", "", "dest", "")
	env, ok := load.Get("saltenv")
	if !ok || !load.Has("path") || !load.Has("loc") {
		return empty, nil
	}
	saltenv := pyStr(env)
	pv, _ := load.Get("path")
	p, err := textArg("path", pv)
	if err != nil {
		return nil, err
	}
	if !r.enabled {
		return empty, nil
	}
	f, ok, err := r.find(p, saltenv)
	if err != nil {
		return nil, err
	}
	if !ok {
		return empty, nil
	}
	_, listed := r.roots[saltenv]
	_, anyEnv := r.roots["__env__"]
	if !listed && !anyEnv {
		// A file found through "?saltenv=" in the path while the load's
		// saltenv is unknown: roots.serve_file returns the fnd itself.
		return payload.NewMap("path", f.Path, "rel", f.Rel, "stat", statList(f.Info), "back", "roots"), nil
	}
	ret := payload.NewMap("data", "", "dest", f.Rel)
	if !r.inRoots(pyNormpath(f.Path), saltenv) {
		return ret, nil
	}
	lv, _ := load.Get("loc")
	loc, err := locArg(lv)
	if err != nil {
		return nil, err
	}
	data, err := r.ReadChunk(f, loc)
	if err != nil {
		return nil, err
	}
	gz, _ := load.Get("gzip")
	if payload.Truthy(gz) && len(data) > 0 {
		level, err := gzipLevel(gz)
		if err != nil {
			return nil, err
		}
		if data, err = compress(data, level); err != nil {
			return nil, err
		}
		ret.Set("gzip", gz)
	}
	ret.Set("data", data)
	return ret, nil
}

// locArg is the offset Python's file.seek accepts: an integer (a bool
// counts as 0 or 1) that is not negative.
func locArg(v any) (int64, error) {
	var n int64
	switch x := v.(type) {
	case bool:
		if x {
			n = 1
		}
	case int64:
		n = x
	case int:
		n = int64(x)
	case uint64:
		if x > math.MaxInt64 {
			return 0, fmt.Errorf("%w: loc out of range", ErrBadLoad)
		}
		n = int64(x)
	default:
		return 0, fmt.Errorf("%w: loc must be an integer, not %s", ErrBadLoad, payload.TypeName(v))
	}
	if n < 0 {
		return 0, fmt.Errorf("%w: negative loc %d", ErrBadLoad, n)
	}
	return n, nil
}

// gzipLevel is the compresslevel zlib accepts: an integer from -1 to 9
// (True is 1).
func gzipLevel(v any) (int, error) {
	switch x := v.(type) {
	case bool:
		return 1, nil
	case int64, int, uint64:
		n, ok := payload.AsInt(x)
		if ok && n >= -1 && n <= 9 {
			return int(n), nil
		}
	}
	return 0, fmt.Errorf("%w: bad gzip compression level %s", ErrBadLoad, pyfmt.Repr(v))
}

// compress is salt.utils.gzip_util.compress.
func compress(data []byte, level int) ([]byte, error) {
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, level)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(data); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// ReadChunk reads up to file_buffer_size bytes of a found file from
// offset loc (an empty, non-nil slice at or past its end).
func (r *Roots) ReadChunk(f File, loc int64) ([]byte, error) {
	fh, err := os.Open(f.Path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	// Seek first, as Python does: lseek refuses offsets past the largest
	// file size the filesystem allows.
	if _, err := fh.Seek(loc, io.SeekStart); err != nil {
		return nil, err
	}
	var buf []byte
	if p, _ := r.chunks.Get().(*[]byte); p != nil && cap(*p) == r.bufSize {
		buf = (*p)[:r.bufSize]
	} else {
		buf = make([]byte, r.bufSize)
	}
	n, err := io.ReadFull(fh, buf)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		r.putChunk(buf)
		return nil, err
	}
	return buf[:n], nil
}

// ReleaseChunk hands the data buffer of a _serve_file reply (what Handle
// returned) back to the file server for a later chunk. The caller must
// not use ret afterwards; the master calls it once the reply is encoded.
func (r *Roots) ReleaseChunk(ret any) {
	m, ok := ret.(*payload.Map)
	if !ok {
		return
	}
	if d, _ := m.Get("data"); d != nil {
		if b, ok := d.([]byte); ok {
			m.Set("data", "")
			r.putChunk(b)
		}
	}
}

func (r *Roots) putChunk(b []byte) {
	if cap(b) != r.bufSize {
		return
	}
	b = b[:0]
	r.chunks.Put(&b)
}
