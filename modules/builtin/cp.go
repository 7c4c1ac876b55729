package builtin

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/gsalt/gsalt/fileserver"
	"github.com/gsalt/gsalt/internal/pyhash"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// filesServiceName is the Env.Services key of the FileClient.
const filesServiceName = "files"

// maxServeChunks bounds the _serve_file round trips of one download
// (100 GiB at Salt's 1 MiB chunks), so a misbehaving master cannot keep a
// job busy forever.
const maxServeChunks = 100 << 10

// ErrUnsupportedURL is returned for URL schemes gsalt's file client does not
// fetch (ftp, s3, swift).
var ErrUnsupportedURL = errors.New("cp: only salt://, file:// and http(s):// URLs are supported")

// fileServer is where a SaltFileClient gets salt:// files from.
type fileServer interface {
	hashFile(ctx context.Context, rel, saltenv string) (any, error)
	fileList(ctx context.Context, saltenv, prefix string) (any, error)
	dirList(ctx context.Context, saltenv, prefix string) (any, error)
	symlinkList(ctx context.Context, saltenv, prefix string) (any, error)
	fileListEmptydirs(ctx context.Context, saltenv, prefix string) (any, error)
	// fileFind is _file_find: {path, rel, stat, back} or {path: "", rel: ""}.
	fileFind(ctx context.Context, rel, saltenv string) (any, error)
	envs(ctx context.Context) (any, error)
	// serveFile returns the chunk at loc and the file's relative path, an
	// empty chunk at the end, and dest "" when the file does not exist.
	serveFile(ctx context.Context, rel, saltenv string, loc int64, gz int) (data []byte, dest string, gzipped bool, err error)
}

// SaltFileClient fetches salt:// files into the minion's file cache
// (cachedir/files/<saltenv>/<path>) the way salt.fileclient does: from the
// master's file server through a MasterChannel (_file_hash, _serve_file in
// chunks, _file_list, _file_envs), or from local file_roots when the minion
// runs with file_client: local. It implements FileClient and backs the cp
// module; the minion registers it under the service name "files".
type SaltFileClient struct {
	server   fileServer
	cacheDir string
	hashType string
}

// NewRemoteFileClient returns a client of the master's file server.
// hashType is the minion's hash_type ("" means sha256).
func NewRemoteFileClient(ch MasterChannel, cacheDir, hashType string) *SaltFileClient {
	return &SaltFileClient{server: remoteFileServer{ch}, cacheDir: cacheDir, hashType: hashType}
}

// NewLocalFileClient returns a client serving salt:// from the given
// file_roots (saltenv → directories), for file_client: local, with Salt's
// defaults for the other file server options.
func NewLocalFileClient(roots map[string][]string, cacheDir, hashType string) *SaltFileClient {
	fs := fileserver.New(fileserver.Options{Roots: roots, FollowSymlinks: true, HashType: hashType, BufferSize: fileserver.MinionBufferSize})
	return &SaltFileClient{server: localFileServer{fs}, cacheDir: cacheDir, hashType: hashType}
}

// NewLocalFileClientOpts returns a client serving salt:// from the
// file_roots of the minion options opts (file_client: local), honouring
// file_ignore_regex, file_ignore_glob, fileserver_followsymlinks,
// fileserver_ignoresymlinks, hash_type and file_buffer_size as Salt's
// masterless file client does.
func NewLocalFileClientOpts(opts fileserver.Getter, cacheDir string) *SaltFileClient {
	o := fileserver.OptionsFrom(opts)
	if _, ok := opts.Get("file_buffer_size"); !ok {
		o.BufferSize = fileserver.MinionBufferSize
	}
	hashType := ""
	if v, ok := opts.Get("hash_type"); ok {
		hashType = payload.Text(v)
	}
	return &SaltFileClient{server: localFileServer{fileserver.New(o)}, cacheDir: cacheDir, hashType: hashType}
}

// remoteFileServer asks the master.
type remoteFileServer struct{ ch MasterChannel }

func (r remoteFileServer) hashFile(ctx context.Context, rel, saltenv string) (any, error) {
	return r.ch.SendMaster(ctx, payload.NewMap("path", rel, "saltenv", saltenv, "cmd", "_file_hash"))
}

func (r remoteFileServer) fileList(ctx context.Context, saltenv, prefix string) (any, error) {
	return r.ch.SendMaster(ctx, payload.NewMap("saltenv", saltenv, "prefix", prefix, "cmd", "_file_list"))
}

func (r remoteFileServer) dirList(ctx context.Context, saltenv, prefix string) (any, error) {
	return r.ch.SendMaster(ctx, payload.NewMap("saltenv", saltenv, "prefix", prefix, "cmd", "_dir_list"))
}

func (r remoteFileServer) symlinkList(ctx context.Context, saltenv, prefix string) (any, error) {
	return r.ch.SendMaster(ctx, payload.NewMap("saltenv", saltenv, "prefix", prefix, "cmd", "_symlink_list"))
}

func (r remoteFileServer) envs(ctx context.Context) (any, error) {
	return r.ch.SendMaster(ctx, payload.NewMap("cmd", "_file_envs"))
}

func (r remoteFileServer) serveFile(ctx context.Context, rel, saltenv string, loc int64, gz int) ([]byte, string, bool, error) {
	load := payload.NewMap("path", rel, "saltenv", saltenv, "cmd", "_serve_file")
	if gz > 0 {
		load.Set("gzip", int64(gz))
	}
	load.Set("loc", loc)
	ret, err := r.ch.SendMaster(ctx, load)
	if err != nil {
		return nil, "", false, err
	}
	return serveReply(ret)
}

// serveReply reads a _serve_file answer: the chunk, its dest and whether it
// is gzipped.
func serveReply(ret any) ([]byte, string, bool, error) {
	m, ok := ret.(*payload.Map)
	if !ok {
		return nil, "", false, fmt.Errorf("cp: _serve_file reply is %s", payload.TypeName(ret))
	}
	if !m.Has("data") || !m.Has("dest") {
		return nil, "", false, fmt.Errorf("cp: _serve_file reply lacks data/dest")
	}
	// The chunk is only read (written to the file or gunzipped): a text
	// chunk, decoded as a string, is used without a copy.
	var data []byte
	switch d, _ := m.Get("data"); x := d.(type) {
	case []byte:
		data = x
	case string:
		data = unsafe.Slice(unsafe.StringData(x), len(x))
	}
	gzipped := false
	if g, ok := m.Get("gzip"); ok && payload.Truthy(g) {
		gzipped = true
	}
	return data, m.Str("dest"), gzipped, nil
}

// localFileServer serves file_roots with package fileserver, asking it
// the loads a master would get (Salt's FSChan does the same).
type localFileServer struct{ fs *fileserver.Roots }

func (l localFileServer) hashFile(ctx context.Context, rel, saltenv string) (any, error) {
	return l.fs.Handle(ctx, "_file_hash", payload.NewMap("path", rel, "saltenv", saltenv, "cmd", "_file_hash"))
}

func (l localFileServer) fileList(ctx context.Context, saltenv, prefix string) (any, error) {
	return l.fs.Handle(ctx, "_file_list", payload.NewMap("saltenv", saltenv, "prefix", prefix, "cmd", "_file_list"))
}

func (l localFileServer) dirList(ctx context.Context, saltenv, prefix string) (any, error) {
	return l.fs.Handle(ctx, "_dir_list", payload.NewMap("saltenv", saltenv, "prefix", prefix, "cmd", "_dir_list"))
}

func (l localFileServer) symlinkList(ctx context.Context, saltenv, prefix string) (any, error) {
	return l.fs.Handle(ctx, "_symlink_list", payload.NewMap("saltenv", saltenv, "prefix", prefix, "cmd", "_symlink_list"))
}

func (l localFileServer) envs(ctx context.Context) (any, error) {
	return l.fs.Handle(ctx, "_file_envs", payload.NewMap("cmd", "_file_envs"))
}

func (l localFileServer) serveFile(ctx context.Context, rel, saltenv string, loc int64, gz int) ([]byte, string, bool, error) {
	load := payload.NewMap("path", rel, "saltenv", saltenv, "cmd", "_serve_file")
	if gz > 0 {
		load.Set("gzip", int64(gz))
	}
	load.Set("loc", loc)
	ret, err := l.fs.Handle(ctx, "_serve_file", load)
	if err != nil {
		return nil, "", false, err
	}
	return serveReply(ret)
}

// cleanRel normalises a relative salt:// path and refuses absolute paths
// and ".." components (Salt's file server treats those as not found).
func cleanRel(rel string) (string, bool) {
	rel = strings.TrimLeft(rel, "/")
	if rel == "" {
		return "", false
	}
	c := path.Clean(rel)
	if c == "." || c == ".." || strings.HasPrefix(c, "../") || path.IsAbs(c) {
		return "", false
	}
	return c, true
}

// newHash returns the hash function Salt names hashType.
func newHash(hashType string) (hash.Hash, string, error) {
	name := strings.ToLower(hashType)
	if name == "" {
		name = "sha256"
	}
	if h, ok := pyhash.NewCommon(name); ok {
		return h, name, nil
	}
	return nil, "", fmt.Errorf("%w: unsupported hash type %s", modules.ErrExecution, hashType)
}

// hashLocalFile is the {"hsum", "hash_type"} of a local file.
func hashLocalFile(p, hashType string) (*payload.Map, error) {
	h, name, err := newHash(hashType)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return payload.NewMap("hsum", hex.EncodeToString(h.Sum(nil)), "hash_type", name), nil
}

// splitEnv is salt.utils.url.split_env: "salt://p?saltenv=e" → ("salt://p", "e").
func splitEnv(u string) (string, string) {
	if !strings.HasPrefix(u, "salt://") {
		return u, ""
	}
	rest := u[len("salt://"):]
	i := strings.IndexByte(rest, '?')
	if i < 0 {
		return u, ""
	}
	q, err := url.ParseQuery(rest[i+1:])
	if err != nil {
		return "salt://" + rest[:i], ""
	}
	return "salt://" + rest[:i], q.Get("saltenv")
}

// cacheLoc is Client._cache_loc: cachedir/files/<saltenv>/<rel>, with
// its directory created. rel from the master is confined to the cache.
func (f *SaltFileClient) cacheLoc(rel, saltenv string) (string, error) {
	clean, ok := cleanRel(rel)
	if !ok || strings.Contains(saltenv, "/") || saltenv == ".." {
		return "", fmt.Errorf("%w: refusing cache path %q in saltenv %q", modules.ErrExecution, rel, saltenv)
	}
	dest := filepath.Join(f.cacheDir, "files", saltenv, filepath.FromSlash(clean))
	dir := filepath.Dir(dest)
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		_ = os.Remove(dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	return dest, nil
}

// HashFile is Client.hash_file: the file server's {"hash_type", "hsum"}
// (or "" when it has no such file) for a salt:// path, the local hash (or
// an empty map) for anything else.
func (f *SaltFileClient) HashFile(ctx context.Context, p, saltenv string) (any, error) {
	if !strings.HasPrefix(p, "salt://") {
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
			return &payload.Map{}, nil
		}
		return hashLocalFile(p, f.hashType)
	}
	p, senv := splitEnv(p)
	if senv != "" {
		saltenv = senv
	}
	return f.server.hashFile(ctx, p[len("salt://"):], saltenv)
}

// FileList is Client.file_list (_file_list).
func (f *SaltFileClient) FileList(ctx context.Context, saltenv, prefix string) (any, error) {
	return f.server.fileList(ctx, saltenv, prefix)
}

// DirList returns the directories of saltenv below prefix (_dir_list).
func (f *SaltFileClient) DirList(ctx context.Context, saltenv, prefix string) (any, error) {
	return f.server.dirList(ctx, saltenv, prefix)
}

// cpListing runs one listing call of the minion's file client, its
// failure an execution error.
func cpListing(c *modules.Call, list func(fc *SaltFileClient) (any, error)) (any, error) {
	fc, err := cpClient(c)
	if err != nil {
		return nil, err
	}
	ret, err := list(fc)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	return ret, nil
}

// SymlinkList is Client.symlink_list (_symlink_list): the symlinks of
// saltenv below prefix and their targets.
func (f *SaltFileClient) SymlinkList(ctx context.Context, saltenv, prefix string) (any, error) {
	return f.server.symlinkList(ctx, saltenv, prefix)
}

// ListStates is Client.list_states: the SLS names of saltenv's files
// (a/b.sls is a.b, a/init.sls is a), sorted, each once.
func (f *SaltFileClient) ListStates(ctx context.Context, saltenv string) (any, error) {
	files, err := f.server.fileList(ctx, saltenv, "")
	if err != nil {
		return nil, err
	}
	l, _ := files.([]any)
	var names []any
	for _, x := range l {
		p, ok := x.(string)
		if !ok || !strings.HasSuffix(p, ".sls") {
			continue
		}
		n := strings.ReplaceAll(p, "/", ".")
		if strings.HasSuffix(p, "/init.sls") {
			names = append(names, n[:len(n)-9])
		} else {
			names = append(names, n[:len(n)-4])
		}
	}
	return pkgSortUnique(names), nil
}

// Envs is Client.envs (_file_envs).
func (f *SaltFileClient) Envs(ctx context.Context) (any, error) { return f.server.envs(ctx) }

// GetFile is RemoteClient.get_file: it copies salt://path to dest (a file,
// or a directory when it exists or ends in "/"), or into the cache when
// dest is "", and returns the local path. It returns "" when the file
// server has no such file or dest's directory is missing and makedirs is
// false. A cached copy with the server's hash is not downloaded again.
func (f *SaltFileClient) GetFile(ctx context.Context, p, dest string, makedirs bool, saltenv string, gz int) (string, error) {
	p, senv := splitEnv(p)
	if senv != "" {
		saltenv = senv
	}
	if !strings.HasPrefix(p, "salt://") {
		return "", fmt.Errorf("%w: Invalid path: %s", modules.ErrExecution, p)
	}
	rel := p[len("salt://"):]
	hashServer, err := f.server.hashFile(ctx, rel, saltenv)
	if err != nil {
		return "", err
	}
	if s, ok := hashServer.(string); ok && s == "" {
		return "", nil
	}
	if dest != "" {
		if st, err := os.Stat(dest); (err == nil && st.IsDir()) || strings.HasSuffix(dest, "/") {
			dest = filepath.Join(dest, path.Base(rel))
		}
	}
	check := dest
	if check == "" {
		if check, err = f.cacheLoc(rel, saltenv); err != nil {
			return "", err
		}
	}
	if st, err := os.Stat(check); err == nil && st.Mode().IsRegular() {
		if local, err := hashLocalFile(check, f.hashType); err == nil && sameHash(local, hashServer) {
			return check, nil
		}
	}
	if dest != "" {
		if st, err := os.Stat(filepath.Dir(dest)); err != nil || !st.IsDir() {
			if !makedirs {
				return "", nil
			}
			if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
				return "", fmt.Errorf("%w: %w", modules.ErrExecution, err)
			}
		}
	}
	// A pipelined copy (requests for several chunks in flight) is checked
	// before it is installed: the server's hash is asked again, and a
	// file that changed on the master in the meantime (its chunks may
	// come from two versions) is fetched once more, one chunk at a time
	// as Salt's client does. The master caches its hashes by the file's
	// stat, so the check costs a round trip instead of hashing the copy.
	want, _ := hashServer.(*payload.Map)
	var verify func() (bool, error)
	if want != nil && want.Str("hsum") != "" {
		verify = func() (bool, error) {
			again, err := f.server.hashFile(ctx, rel, saltenv)
			if err != nil {
				return false, err
			}
			hashServer = again
			return sameHash(want, again), nil
		}
	}
	got, changed, err := f.download(ctx, rel, saltenv, dest, gz, true, verify)
	if err != nil || !changed {
		return got, err
	}
	if s, ok := hashServer.(string); ok && s == "" {
		return "", nil
	}
	got, _, err = f.download(ctx, rel, saltenv, dest, gz, false, nil)
	return got, err
}

// download copies rel into dest (or the cache when dest is "") through
// _serve_file requests, pipelined when pipeline is set, and installs it
// with a rename. When requests were pipelined and verify is set, verify
// says before the install whether the server's file is still the one the
// copy started from; if not, nothing is installed and changed is true.
func (f *SaltFileClient) download(ctx context.Context, rel, saltenv, dest string, gz int, pipeline bool, verify func() (bool, error)) (got string, changed bool, err error) {
	var (
		out     *os.File
		tmpName string
		written int64
	)
	cleanup := func() {
		if out != nil {
			out.Close()
			os.Remove(tmpName)
		}
	}
	openOut := func(target string) error {
		o, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".gsalt-*")
		if err != nil {
			return err
		}
		out, tmpName, dest = o, o.Name(), target
		return nil
	}
	if dest != "" {
		if err := openOut(dest); err != nil {
			return "", false, fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
	}
	fetcher := newChunkFetcher(ctx, f.server, rel, saltenv, gz)
	fetcher.serial = !pipeline
	defer fetcher.stop()
	for i := 0; ; i++ {
		if i >= maxServeChunks {
			cleanup()
			return "", false, fmt.Errorf("%w: too many chunks fetching salt://%s", modules.ErrExecution, rel)
		}
		data, rdest, gzipped, err := fetcher.next(written)
		if err != nil {
			cleanup()
			return "", false, err
		}
		if len(data) == 0 {
			if out == nil && rdest != "" {
				loc, err := f.cacheLoc(rdest, saltenv)
				if err != nil {
					return "", false, err
				}
				if err := os.WriteFile(loc, nil, 0o600); err != nil {
					return "", false, fmt.Errorf("%w: %w", modules.ErrExecution, err)
				}
				dest = loc
			}
			break
		}
		if out == nil {
			loc, err := f.cacheLoc(rdest, saltenv)
			if err != nil {
				return "", false, err
			}
			if st, err := os.Stat(loc); err == nil && st.IsDir() {
				_ = os.RemoveAll(loc)
			}
			if err := openOut(loc); err != nil {
				return "", false, fmt.Errorf("%w: %w", modules.ErrExecution, err)
			}
		}
		if gzipped {
			zr, err := gzip.NewReader(bytes.NewReader(data))
			if err != nil {
				cleanup()
				return "", false, fmt.Errorf("%w: bad gzip chunk: %w", modules.ErrExecution, err)
			}
			data, err = io.ReadAll(io.LimitReader(zr, 1<<30))
			if err != nil {
				cleanup()
				return "", false, fmt.Errorf("%w: bad gzip chunk: %w", modules.ErrExecution, err)
			}
		}
		if _, err := out.Write(data); err != nil {
			cleanup()
			return "", false, fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
		// loc counts uncompressed bytes: the master seeks in the file.
		written += int64(len(data))
		fetcher.got(len(data))
	}
	if verify != nil && out != nil && fetcher.pipelined {
		same, err := verify()
		if err != nil || !same {
			// Fetched again by the caller; the copy in place stays.
			cleanup()
			return "", !same, err
		}
	}
	if out != nil {
		if err := out.Close(); err != nil {
			os.Remove(tmpName)
			return "", false, fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(dest, f.cacheDir) {
			mode = 0o600
		}
		_ = os.Chmod(tmpName, mode)
		if err := os.Rename(tmpName, dest); err != nil {
			os.Remove(tmpName)
			return "", false, fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
	}
	return dest, false, nil
}

// sameHash compares a local {hsum, hash_type} with the server's reply.
func sameHash(local *payload.Map, server any) bool {
	sm, ok := server.(*payload.Map)
	return ok && sm.Str("hsum") == local.Str("hsum") && sm.Str("hash_type") == local.Str("hash_type")
}

// CacheFile caches src and returns its local path (FileClient, used by
// cmd.script): salt:// files land in the cache, file:// and plain paths are
// returned as they are. A salt:// file that does not exist gives "".
func (f *SaltFileClient) CacheFile(ctx context.Context, src, saltenv string) (string, error) {
	v, err := f.GetURL(ctx, src, "", true, true, saltenv)
	if err != nil {
		return "", err
	}
	s, _ := v.(string)
	return s, nil
}

// GetURL is Client.get_url for salt://, file:// (or plain absolute
// path) and http(s):// URLs. With toFile false the content is returned ([]byte) instead of
// a path. Other schemes wrap ErrUnsupportedURL.
func (f *SaltFileClient) GetURL(ctx context.Context, u, dest string, toFile, makedirs bool, saltenv string) (any, error) {
	pu, err := url.Parse(u)
	if err != nil {
		pu = &url.URL{Path: u}
	}
	scheme := strings.ToLower(pu.Scheme)
	if toFile && dest != "" {
		if st, err := os.Stat(dest); (err == nil && st.IsDir()) || strings.HasSuffix(dest, "/") {
			name := "index.html"
			if pu.RawQuery != "" || (len(pu.Path) > 1 && !strings.HasSuffix(pu.Path, "/")) {
				name = u[strings.LastIndexByte(u, '/')+1:]
			}
			dest = filepath.Join(dest, name)
		}
	}
	switch scheme {
	case "", "file":
		p := u
		if scheme == "file" {
			p = strings.TrimSuffix(path.Join(pu.Host, pu.Path), "/")
			if pu.Host == "" {
				p = strings.TrimSuffix(pu.Path, "/")
			}
		}
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("%w: Path '%s' is not absolute", modules.ErrExecution, p)
		}
		if !toFile {
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
			}
			return b, nil
		}
		return p, nil
	case "salt":
		res, err := f.GetFile(ctx, u, dest, makedirs, saltenv, 0)
		if err != nil || res == "" {
			return false, err
		}
		if !toFile {
			b, err := os.ReadFile(res)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
			}
			return b, nil
		}
		return res, nil
	case "http", "https":
		return f.getHTTP(ctx, pu, dest, toFile, makedirs, saltenv)
	}
	return nil, fmt.Errorf("%w: %w: %s", modules.ErrExecution, ErrUnsupportedURL, u)
}

// IsCached is Client.is_cached: the cached copy's path or "".
func (f *SaltFileClient) IsCached(p, saltenv string) string {
	if strings.HasPrefix(p, "salt://") {
		var senv string
		p, senv = splitEnv(p)
		if senv != "" {
			saltenv = senv
		}
		p = p[len("salt://"):]
	}
	rel := strings.TrimLeft(p, "|/")
	for _, cand := range []string{
		filepath.Join(f.cacheDir, "files", saltenv, rel),
		filepath.Join(f.cacheDir, "localfiles", rel),
	} {
		if !strings.HasPrefix(filepath.Clean(cand), filepath.Clean(f.cacheDir)+string(filepath.Separator)) {
			continue
		}
		if _, err := os.Stat(cand); err == nil {
			return cand
		}
	}
	return ""
}

// cpClient returns the call's file client: the "files" service, else one
// built from the master channel (or file_roots with file_client local).
func cpClient(c *modules.Call) (*SaltFileClient, error) {
	if fc, ok := modules.Service[*SaltFileClient](c.Env, filesServiceName); ok && fc != nil {
		return fc, nil
	}
	cache := optStr(c, "cachedir")
	if optStr(c, "file_client") == "local" {
		return NewLocalFileClientOpts(c.Env.Opts, cache), nil
	}
	if ch, ok := modules.Service[MasterChannel](c.Env, masterServiceName); ok {
		return NewRemoteFileClient(ch, cache, optStr(c, "hash_type")), nil
	}
	return nil, fmt.Errorf("%w: no file server available (no master connection)", modules.ErrExecution)
}

// cpSaltenv is the saltenv argument, else opts saltenv, else "base".
func cpSaltenv(c *modules.Call) string {
	if s := c.Args.Str("saltenv"); s != "" {
		return s
	}
	if s := optStr(c, "saltenv"); s != "" {
		return s
	}
	return "base"
}

// cpSource returns the file client and the path and saltenv of the
// salt:// argument arg (a ?saltenv= query wins over the saltenv argument).
func cpSource(c *modules.Call, arg string) (*SaltFileClient, string, string, error) {
	fc, err := cpClient(c)
	if err != nil {
		return nil, "", "", err
	}
	saltenv := cpSaltenv(c)
	p, senv := splitEnv(c.Args.Str(arg))
	if senv != "" {
		saltenv = senv
	}
	return fc, p, saltenv, nil
}

// cpFunctions is Salt's cp module (salt/modules/cp.py) for the master's
// file server; salt://, file:// and http(s):// sources are supported.
func cpFunctions() []modules.Function {
	return append([]modules.Function{
		{Name: "cp.get_file", Spec: modules.Spec{Params: []modules.Param{req("path"), req("dest"), opt("saltenv", nil), opt("makedirs", false),
			opt("template", nil), opt("gzip", nil)}, Kwargs: true},
			Doc: "Used to get a single file from the salt master\n\nCLI Example:\n\n    salt '*' cp.get_file salt://path/to/file /minion/dest\n\nThere are two ways of defining the fileserver environment (a.k.a.\n``saltenv``) from which to retrieve the file. One is to use the ``saltenv``\nparameter, and the other is to use a querystring syntax in the ``salt://``\nURL:\n\n    salt '*' cp.get_file salt://foo/bar.conf /etc/foo/bar.conf saltenv=config\n    salt '*' cp.get_file salt://foo/bar.conf?saltenv=config /etc/foo/bar.conf",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				a, err := cpCopyArgs(ctx, c)
				if err != nil {
					return nil, err
				}
				p, saltenv := splitEnv(a.path)
				if saltenv == "" {
					saltenv = a.saltenv
				}
				h, err := a.fc.HashFile(ctx, p, saltenv)
				if err != nil {
					return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
				}
				if !payload.Truthy(h) {
					return "", nil
				}
				res, err := a.fc.GetFile(ctx, p, a.dest, payload.Truthy(c.Args.Get("makedirs")), saltenv, a.gzip)
				if err != nil {
					return nil, err
				}
				if res == "" {
					return false, nil
				}
				return res, nil
			}},
		{Name: "cp.get_url", Spec: modules.Spec{Params: []modules.Param{req("path"), opt("dest", ""), opt("saltenv", nil), opt("makedirs", false), opt("source_hash", nil)}},
			Doc: "Used to get a single file from a URL.\n\npath\n    A URL to download a file from. gsalt supports ``salt://`` and\n    ``file://`` (local filesystem) URLs. If no scheme was specified, this is\n    equivalent of using ``file://``.\n\ndest\n    The default behaviour is to write the fetched file to the given\n    destination path. If this parameter is omitted or set as empty string\n    (``''``), the function places the remote file on the local filesystem\n    inside the Minion cache directory and returns the path to that file.\n    To simply return the file contents instead, set destination to ``None``.\n\nCLI Example:\n\n    salt '*' cp.get_url salt://my/file /tmp/this_file_is_mine",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				fc, err := cpClient(c)
				if err != nil {
					return nil, err
				}
				d := c.Args.Get("dest")
				_, toFile := d.(string)
				res, err := fc.GetURL(ctx, c.Args.Str("path"), payload.Text(d), toFile, payload.Truthy(c.Args.Get("makedirs")), cpSaltenv(c))
				if err != nil {
					return nil, err
				}
				if !payload.Truthy(res) {
					c.Log().Error("Unable to fetch file", "path", c.Args.Str("path"), "saltenv", cpSaltenv(c))
					return res, nil
				}
				if b, ok := res.([]byte); ok {
					return string(b), nil
				}
				return res, nil
			}},
		{Name: "cp.cache_file", Spec: modules.Spec{Params: []modules.Param{req("path"), opt("saltenv", nil), opt("source_hash", nil), opt("verify_ssl", true), opt("use_etag", false)}},
			Doc: "Used to cache a single file on the Minion\n\nReturns the location of the new cached file on the Minion\n\nCLI Example:\n\n    salt '*' cp.cache_file salt://path/to/file\n\nIf the path being cached is a ``salt://`` URI, and the path does not exist,\nthen ``False`` will be returned.",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				fc, p, saltenv, err := cpSource(c, "path")
				if err != nil {
					return nil, err
				}
				res, err := fc.GetURL(ctx, p, "", true, true, saltenv)
				if err != nil {
					return nil, err
				}
				if !payload.Truthy(res) {
					c.Log().Error("Unable to cache file", "path", p, "saltenv", saltenv)
				}
				return res, nil
			}},
		{Name: "cp.cache_files", Spec: modules.Spec{Params: []modules.Param{req("paths"), opt("saltenv", nil)}},
			Doc: "Used to gather many files from the Master, the gathered files will be\nsaved in the minion cachedir reflective to the paths retrieved from the\nMaster\n\nCLI Example:\n\n    salt '*' cp.cache_files salt://pathto/file1,salt://pathto/file1",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				fc, err := cpClient(c)
				if err != nil {
					return nil, err
				}
				var paths []string
				switch p := c.Args.Get("paths").(type) {
				case string:
					paths = strings.Split(p, ",")
				case []any:
					for _, x := range p {
						paths = append(paths, payload.Text(x))
					}
				}
				ret := []any{}
				for _, p := range paths {
					res, err := fc.GetURL(ctx, p, "", true, true, cpSaltenv(c))
					if err != nil {
						return nil, err
					}
					ret = append(ret, res)
				}
				return ret, nil
			}},
		{Name: "cp.get_file_str", Spec: modules.Spec{Params: []modules.Param{req("path"), opt("saltenv", nil)}},
			Doc: "Download a file from a URL to the Minion cache directory and return the\ncontents of that file\n\nReturns ``False`` if Salt was unable to cache a file from a URL.\n\nCLI Example:\n\n    salt '*' cp.get_file_str salt://my/file",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				fc, err := cpClient(c)
				if err != nil {
					return nil, err
				}
				res, err := fc.GetURL(ctx, c.Args.Str("path"), "", true, true, cpSaltenv(c))
				if err != nil {
					return nil, err
				}
				p, ok := res.(string)
				if !ok {
					return res, nil
				}
				b, err := os.ReadFile(p)
				if err != nil {
					return false, nil
				}
				return string(b), nil
			}},
		{Name: "cp.list_master", Spec: modules.Spec{Params: []modules.Param{opt("saltenv", nil), opt("prefix", "")}},
			Doc: "List all of the files stored on the master\n\nCLI Example:\n\n    salt '*' cp.list_master",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				fc, err := cpClient(c)
				if err != nil {
					return nil, err
				}
				ret, err := fc.FileList(ctx, cpSaltenv(c), c.Args.Str("prefix"))
				if err != nil {
					return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
				}
				return ret, nil
			}},
		{Name: "cp.list_states", Spec: modules.Spec{Params: []modules.Param{opt("saltenv", nil)}},
			Doc: "List all of the available state files in an environment\n\nCLI Example:\n\n    salt '*' cp.list_states",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return cpListing(c, func(fc *SaltFileClient) (any, error) { return fc.ListStates(ctx, cpSaltenv(c)) })
			}},
		{Name: "cp.list_master_symlinks", Spec: modules.Spec{Params: []modules.Param{opt("saltenv", nil), opt("prefix", "")}},
			Doc: "List all of the symlinks stored on the master\n\nCLI Example:\n\n    salt '*' cp.list_master_symlinks",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return cpListing(c, func(fc *SaltFileClient) (any, error) { return fc.SymlinkList(ctx, cpSaltenv(c), c.Args.Str("prefix")) })
			}},
		{Name: "cp.list_master_dirs", Spec: modules.Spec{Params: []modules.Param{opt("saltenv", nil), opt("prefix", "")}},
			Doc: "List all of the directories stored on the master\n\nCLI Example:\n\n    salt '*' cp.list_master_dirs",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return cpListing(c, func(fc *SaltFileClient) (any, error) { return fc.DirList(ctx, cpSaltenv(c), c.Args.Str("prefix")) })
			}},
		{Name: "cp.envs", Doc: "List available environments for fileserver\n\nCLI Example:\n\n    salt '*' cp.envs",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				fc, err := cpClient(c)
				if err != nil {
					return nil, err
				}
				ret, err := fc.Envs(ctx)
				if err != nil {
					return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
				}
				return ret, nil
			}},
		{Name: "cp.hash_file", Spec: modules.Spec{Params: []modules.Param{req("path"), opt("saltenv", nil)}},
			Doc: "Return the hash of a file, to get the hash of a file on the\nsalt master file server prepend the path with salt://<file on server>\notherwise, prepend the file with / for a local file.\n\nCLI Example:\n\n    salt '*' cp.hash_file salt://path/to/file",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				fc, p, saltenv, err := cpSource(c, "path")
				if err != nil {
					return nil, err
				}
				ret, err := fc.HashFile(ctx, p, saltenv)
				if err != nil {
					return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
				}
				return ret, nil
			}},
		{Name: "cp.is_cached", Spec: modules.Spec{Params: []modules.Param{req("path"), opt("saltenv", nil)}},
			Doc: "Returns the full path to a file if it is cached locally on the minion\notherwise returns a blank string\n\nCLI Example:\n\n    salt '*' cp.is_cached salt://path/to/file",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				fc, err := cpClient(c)
				if err != nil {
					return nil, err
				}
				return fc.IsCached(c.Args.Str("path"), cpSaltenv(c)), nil
			}},
	}, slices.Concat(cpDirFunctions(), cpRecvFunctions(), cpPushFunctions())...)
}

// Pipelined downloads. Salt's file client asks for one chunk
// (file_buffer_size bytes at loc) and waits for it before asking for the
// next, so master and minion take turns. The requests are independent, so
// once the first chunk shows the master's chunk size, a chunkFetcher keeps
// serveWindow requests for the following offsets in flight; every request
// and reply is the one Salt's client would send and get. Only chunks that
// start where the copy ends are used: after a short chunk (the end of the
// file, or a file that changed on the master) the requests ahead are
// cancelled and the rest is fetched one request at a time, as Salt does.
const (
	// serveWindow is the number of _serve_file requests kept in flight.
	serveWindow = 4
	// minPipelineChunk and maxPipelineChunk bound the chunk sizes that
	// start pipelining: a smaller first chunk is usually a whole small
	// file (requests ahead would be wasted), a larger one would hold too
	// much memory in flight.
	minPipelineChunk = 64 << 10
	maxPipelineChunk = 16 << 20
)

type chunkReply struct {
	data    []byte
	dest    string
	gzipped bool
	err     error
}

type pendingChunk struct {
	loc    int64
	cancel context.CancelFunc
	ch     chan chunkReply
}

// chunkFetcher fetches the chunks of one file, in order.
type chunkFetcher struct {
	ctx          context.Context
	srv          fileServer
	rel, saltenv string
	gz           int
	serial       bool // never pipeline (a second copy after a hash mismatch)
	pipelined    bool // a request ahead was sent
	decided      bool
	size         int64 // the chunk size requests ahead assume; 0: one at a time
	nextLoc      int64
	pending      []pendingChunk
	wg           sync.WaitGroup
}

func newChunkFetcher(ctx context.Context, srv fileServer, rel, saltenv string, gz int) *chunkFetcher {
	return &chunkFetcher{ctx: ctx, srv: srv, rel: rel, saltenv: saltenv, gz: gz}
}

// next returns the chunk at loc.
func (c *chunkFetcher) next(loc int64) ([]byte, string, bool, error) {
	if len(c.pending) > 0 && c.pending[0].loc != loc {
		c.drop()
	}
	if c.size > 0 {
		if len(c.pending) == 0 {
			c.nextLoc = loc
		}
		for len(c.pending) < serveWindow {
			c.start(c.nextLoc)
			c.nextLoc += c.size
		}
	}
	if len(c.pending) == 0 {
		return c.srv.serveFile(c.ctx, c.rel, c.saltenv, loc, c.gz)
	}
	p := c.pending[0]
	c.pending = c.pending[1:]
	r := <-p.ch
	p.cancel()
	return r.data, r.dest, r.gzipped, r.err
}

// got tells the fetcher how many (uncompressed) bytes the last chunk had.
func (c *chunkFetcher) got(n int) {
	if !c.decided {
		c.decided = true
		if !c.serial && n >= minPipelineChunk && n <= maxPipelineChunk && n%4096 == 0 {
			c.size = int64(n)
		}
		return
	}
	if c.size > 0 && int64(n) != c.size {
		c.size = 0
		c.drop()
	}
}

func (c *chunkFetcher) start(loc int64) {
	c.pipelined = true
	ctx, cancel := context.WithCancel(c.ctx)
	p := pendingChunk{loc: loc, cancel: cancel, ch: make(chan chunkReply, 1)}
	c.pending = append(c.pending, p)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		data, dest, gz, err := c.srv.serveFile(ctx, c.rel, c.saltenv, loc, c.gz)
		p.ch <- chunkReply{data, dest, gz, err}
	}()
}

// drop cancels the requests in flight.
func (c *chunkFetcher) drop() {
	for _, p := range c.pending {
		p.cancel()
	}
	c.pending = nil
}

// stop cancels what is in flight and waits for it.
func (c *chunkFetcher) stop() {
	c.drop()
	c.wg.Wait()
}
