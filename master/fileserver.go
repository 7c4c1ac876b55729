package master

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/wire/payload"
)

// defaultFileBuffer is Salt's master file_buffer_size (1 MiB).
const defaultFileBuffer = 1 << 20

// maxFileBuffer bounds file_buffer_size.
const maxFileBuffer = 64 << 20

// fileServer serves file_roots (Salt's "roots" fileserver backend).
type fileServer struct {
	roots    map[string][]string
	hashType string
	bufSize  int
	follow   bool
	ignore   bool
	log      *slog.Logger
}

func newFileServer(cfg *config.Master, log *slog.Logger) *fileServer {
	fs := &fileServer{roots: map[string][]string{}, hashType: cfg.HashType, bufSize: defaultFileBuffer, follow: true, log: log}
	if fs.hashType == "" {
		fs.hashType = "sha256"
	}
	if n, err := cfg.Opts.Int("file_buffer_size"); err == nil && n > 0 {
		fs.bufSize = min(n, maxFileBuffer)
	}
	if _, ok := cfg.Opts.Get("fileserver_followsymlinks"); ok {
		fs.follow = cfg.Opts.Bool("fileserver_followsymlinks")
	}
	fs.ignore = cfg.Opts.Bool("fileserver_ignoresymlinks")
	useRoots := len(cfg.FileserverBackend) == 0
	for _, b := range cfg.FileserverBackend {
		if b == "roots" {
			useRoots = true
		} else {
			log.Warn("fileserver backend not supported by gsalt, ignored", "backend", b)
		}
	}
	if useRoots {
		for env, dirs := range cfg.FileRoots {
			fs.roots[env] = append([]string(nil), dirs...)
		}
	}
	return fs
}

// envs returns the sorted environment names.
func (fs *fileServer) envs() []string {
	out := make([]string, 0, len(fs.roots))
	for e := range fs.roots {
		out = append(out, e)
	}
	sort.Strings(out)
	return out
}

// envDirs returns the root directories of saltenv ("__env__" roots serve
// every other environment, with __env__ replaced by its name).
func (fs *fileServer) envDirs(saltenv string) []string {
	if dirs, ok := fs.roots[saltenv]; ok {
		return dirs
	}
	dirs, ok := fs.roots["__env__"]
	if !ok {
		return nil
	}
	out := make([]string, len(dirs))
	for i, d := range dirs {
		out[i] = strings.ReplaceAll(d, "__env__", saltenv)
	}
	return out
}

type found struct {
	path, rel string
	fi        os.FileInfo
}

// within reports whether the resolved path lies inside the resolved root.
func within(root, path string) bool {
	rr, err := filepath.EvalSymlinks(root)
	if err != nil {
		return false
	}
	rp, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false
	}
	rr, rp = filepath.Clean(rr), filepath.Clean(rp)
	return rp == rr || strings.HasPrefix(rp, strings.TrimSuffix(rr, string(filepath.Separator))+string(filepath.Separator))
}

// find locates a file like Fileserver.find_file + roots.find_file: a
// "?saltenv=...&index=..." query is honoured (unless the path is escaped
// with a leading "|"), absolute paths and "../" are refused, and the file
// must be a regular file whose resolved path stays inside its root.
func (fs *fileServer) find(path, saltenv string) (found, bool) {
	var kw map[string]string
	if strings.HasPrefix(path, "|") {
		path = path[1:]
	} else if i := strings.IndexByte(path, '?'); i >= 0 {
		kw = map[string]string{}
		for _, comp := range strings.Split(path[i+1:], "&") {
			if k, v, ok := strings.Cut(comp, "="); ok {
				kw[k] = v
			}
		}
		path = path[:i]
	}
	if path == "" || filepath.IsAbs(path) || strings.Contains(path, "../") {
		return found{}, false
	}
	if e, ok := kw["saltenv"]; ok {
		saltenv = e
	}
	clean := filepath.Clean(path)
	if clean == "." || clean == ".." || strings.HasPrefix(clean, "../") || filepath.IsAbs(clean) {
		return found{}, false
	}
	dirs := fs.envDirs(saltenv)
	if idx, ok := kw["index"]; ok {
		n, err := strconv.Atoi(idx)
		if err != nil || n < 0 || n >= len(dirs) {
			return found{}, false
		}
		dirs = dirs[n : n+1]
	}
	for _, root := range dirs {
		full := filepath.Join(root, clean)
		fi, err := os.Stat(full)
		if err != nil || !fi.Mode().IsRegular() || !within(root, full) {
			continue
		}
		return found{path: full, rel: path, fi: fi}, true
	}
	return found{}, false
}

// statList renders os.stat() as Salt sends it: mode, ino, dev, nlink, uid,
// gid, size, atime, mtime, ctime (integers).
func statList(fi os.FileInfo) []any {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		mt := fi.ModTime().Unix()
		return []any{int64(fi.Mode().Perm()) | 0o100000, 0, 0, 1, 0, 0, fi.Size(), mt, mt, mt}
	}
	return []any{int64(st.Mode), int64(st.Ino), int64(st.Dev), int64(st.Nlink), int64(st.Uid), int64(st.Gid),
		st.Size, st.Atim.Sec, st.Mtim.Sec, st.Ctim.Sec}
}

func newHash(name string) (hash.Hash, bool) {
	switch strings.ToLower(name) {
	case "md5":
		return md5.New(), true
	case "sha1":
		return sha1.New(), true
	case "sha224":
		return sha256.New224(), true
	case "sha256":
		return sha256.New(), true
	case "sha384":
		return sha512.New384(), true
	case "sha512":
		return sha512.New(), true
	}
	return nil, false
}

// hashFile returns {"hash_type", "hsum"} for a found file.
func (fs *fileServer) hashFile(f found) (any, error) {
	h, ok := newHash(fs.hashType)
	if !ok {
		h = sha256.New()
	}
	fh, err := os.Open(f.path)
	if err != nil {
		return payload.NewMap(), nil
	}
	defer fh.Close()
	if _, err := io.Copy(h, fh); err != nil {
		return nil, err
	}
	return payload.NewMap("hash_type", fs.hashType, "hsum", hex.EncodeToString(h.Sum(nil))), nil
}

// saltenvOf returns load's saltenv as a string and whether it is present.
func saltenvOf(load *payload.Map) (string, bool) {
	v, ok := load.Get("saltenv")
	if !ok {
		return "", false
	}
	return payload.Text(v), true
}

func (m *Master) aesFileEnvs(_ context.Context, _ *payload.Map) (any, error) {
	return strAny(m.fs.envs()), nil
}

func (m *Master) aesFileFind(_ context.Context, load *payload.Map) (any, error) {
	path := load.Str("path")
	if path == "" {
		return payload.NewMap("path", "", "rel", ""), nil
	}
	env := "base"
	if e, ok := saltenvOf(load); ok {
		env = e
	}
	f, ok := m.fs.find(path, env)
	if !ok {
		return payload.NewMap("path", "", "rel", ""), nil
	}
	return payload.NewMap("path", f.path, "rel", f.rel, "stat", statList(f.fi), "back", "roots"), nil
}

func (m *Master) aesFileHash(ctx context.Context, load *payload.Map) (any, error) {
	r, err := m.aesFileHashAndStat(ctx, load)
	if err != nil {
		return "", nil
	}
	return r.([]any)[0], nil
}

func (m *Master) aesFileHashAndStat(_ context.Context, load *payload.Map) (any, error) {
	env, ok := saltenvOf(load)
	if !ok || !load.Has("path") {
		return []any{"", nil}, nil
	}
	f, ok := m.fs.find(load.Str("path"), env)
	if !ok {
		return []any{"", nil}, nil
	}
	h, err := m.fs.hashFile(f)
	if err != nil {
		return []any{"", nil}, nil
	}
	return []any{h, statList(f.fi)}, nil
}

func (m *Master) aesServeFile(_ context.Context, load *payload.Map) (any, error) {
	empty := payload.NewMap("data", "", "dest", "")
	env, ok := saltenvOf(load)
	if !ok || !load.Has("path") || !load.Has("loc") {
		return empty, nil
	}
	loc, ok := load.Int("loc")
	if !ok || loc < 0 {
		return empty, nil
	}
	f, ok := m.fs.find(load.Str("path"), env)
	if !ok {
		return empty, nil
	}
	fh, err := os.Open(f.path)
	if err != nil {
		return empty, nil
	}
	defer fh.Close()
	buf := make([]byte, m.fs.bufSize)
	n, err := fh.ReadAt(buf, loc)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	data := buf[:n]
	ret := payload.NewMap("data", data, "dest", f.rel)
	if lv, ok := load.Get("gzip"); ok && lv != nil && n > 0 {
		level, _ := payload.AsInt(lv)
		if level < gzip.BestSpeed || level > gzip.BestCompression {
			level = gzip.DefaultCompression
		}
		var b bytes.Buffer
		zw, err := gzip.NewWriterLevel(&b, int(level))
		if err != nil {
			return nil, err
		}
		if _, err := zw.Write(data); err != nil {
			return nil, err
		}
		if err := zw.Close(); err != nil {
			return nil, err
		}
		ret.Set("data", b.Bytes())
		ret.Set("gzip", lv)
	}
	return ret, nil
}

// fileLists walks the roots of saltenv (Salt's roots._file_lists).
type fileLists struct {
	files, dirs, empty map[string]bool
	links              map[string]string
}

func (fs *fileServer) lists(saltenv string) fileLists {
	fl := fileLists{files: map[string]bool{}, dirs: map[string]bool{}, empty: map[string]bool{}, links: map[string]string{}}
	for _, root := range fs.envDirs(saltenv) {
		realRoot, err := filepath.EvalSymlinks(root)
		if err != nil {
			continue
		}
		seen := map[string]bool{realRoot: true} // directories on the current path
		fs.walk(root, root, seen, &fl, 0)
	}
	return fl
}

// maxWalkDepth bounds directory recursion; maxWalkEntries bounds the
// entries listed (symbolic links can make a tree look much larger).
const (
	maxWalkDepth   = 64
	maxWalkEntries = 1 << 20
)

func (fs *fileServer) walk(root, dir string, seen map[string]bool, fl *fileLists, depth int) {
	if depth > maxWalkDepth || len(fl.files)+len(fl.dirs) > maxWalkEntries {
		return
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		abs := filepath.Join(dir, e.Name())
		rel, err := filepath.Rel(root, abs)
		if err != nil {
			continue
		}
		isLink := e.Type()&os.ModeSymlink != 0
		if isLink {
			if fs.ignore || !within(root, abs) {
				continue
			}
			if dest, err := os.Readlink(abs); err == nil {
				fl.links[rel] = dest
			}
		}
		fi, err := os.Stat(abs)
		if err != nil {
			continue
		}
		if !fi.IsDir() {
			fl.files[rel] = true
			continue
		}
		fl.dirs[rel] = true
		sub, err := os.ReadDir(abs)
		if err == nil && len(sub) == 0 {
			fl.empty[rel] = true
		}
		if isLink && !fs.follow {
			continue
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil || seen[real] {
			continue // a link back to a directory being walked: a loop
		}
		seen[real] = true
		fs.walk(root, abs, seen, fl, depth+1)
		delete(seen, real)
	}
}

// prefixed returns the sorted members of set starting with load's prefix.
func prefixed(set map[string]bool, load *payload.Map) []any {
	prefix := strings.Trim(load.Str("prefix"), "/")
	out := make([]string, 0, len(set))
	for k := range set {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return strAny(out)
}

func (m *Master) aesFileList(_ context.Context, load *payload.Map) (any, error) {
	env, ok := saltenvOf(load)
	if !ok {
		return []any{}, nil
	}
	return prefixed(m.fs.lists(env).files, load), nil
}

func (m *Master) aesFileListEmptyDirs(_ context.Context, load *payload.Map) (any, error) {
	env, ok := saltenvOf(load)
	if !ok {
		return []any{}, nil
	}
	return prefixed(m.fs.lists(env).empty, load), nil
}

func (m *Master) aesDirList(_ context.Context, load *payload.Map) (any, error) {
	env, ok := saltenvOf(load)
	if !ok {
		return []any{}, nil
	}
	return prefixed(m.fs.lists(env).dirs, load), nil
}

func (m *Master) aesSymlinkList(_ context.Context, load *payload.Map) (any, error) {
	env, ok := saltenvOf(load)
	if !ok {
		return payload.NewMap(), nil
	}
	prefix := strings.Trim(load.Str("prefix"), "/")
	links := m.fs.lists(env).links
	keys := make([]string, 0, len(links))
	for k := range links {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := payload.NewMap()
	for _, k := range keys {
		out.Set(k, links[k])
	}
	return out, nil
}
