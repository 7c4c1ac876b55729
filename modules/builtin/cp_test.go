package builtin_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/modules/salttest"
	"github.com/gsalt/gsalt/wire/payload"
)

// fakeFileMaster answers the fileserver requests like Salt's master, in
// chunks of chunk bytes, and records every load.
type fakeFileMaster struct {
	mu     sync.Mutex
	files  map[string]map[string][]byte // saltenv -> path -> content
	chunk  int
	loads  []*payload.Map
	badDst string // when set, _serve_file answers this dest
	other  map[string]any
	// onServe, when set, runs (under mu) before a _serve_file at loc is
	// answered; a non-nil error is the request's error.
	onServe func(loc int64) error
}

func (f *fakeFileMaster) SendMaster(_ context.Context, load *payload.Map) (any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.loads = append(f.loads, load.Clone())
	env := f.files[load.Str("saltenv")]
	switch load.Str("cmd") {
	case "_file_list":
		out := []any{}
		for _, p := range sortedPaths(env) {
			if strings.HasPrefix(p, load.Str("prefix")) {
				out = append(out, p)
			}
		}
		return out, nil
	case "_file_envs":
		return []any{"base", "dev"}, nil
	case "_file_hash":
		b, ok := env[load.Str("path")]
		if !ok {
			return "", nil
		}
		h := sha256.Sum256(b)
		return payload.NewMap("hash_type", "sha256", "hsum", hex.EncodeToString(h[:])), nil
	case "_serve_file":
		if f.onServe != nil {
			loc, _ := load.Int("loc")
			if err := f.onServe(loc); err != nil {
				return nil, err
			}
			env = f.files[load.Str("saltenv")]
		}
		b, ok := env[load.Str("path")]
		if !ok {
			return payload.NewMap("data", "", "dest", ""), nil
		}
		loc, _ := load.Int("loc")
		if int(loc) > len(b) {
			loc = int64(len(b)) // the master reads nothing past the end
		}
		end := int(loc) + f.chunk
		if end > len(b) {
			end = len(b)
		}
		data := b[loc:end]
		dest := load.Str("path")
		if f.badDst != "" {
			dest = f.badDst
		}
		ret := payload.NewMap("data", data, "dest", dest)
		if gz, ok := load.Int("gzip"); ok && gz > 0 && len(data) > 0 {
			var buf bytes.Buffer
			w := gzip.NewWriter(&buf)
			w.Write(data)
			w.Close()
			ret.Set("data", buf.Bytes()).Set("gzip", gz)
		}
		return ret, nil
	}
	if v, ok := f.other[load.Str("cmd")]; ok {
		return v, nil
	}
	return &payload.Map{}, nil
}

func (f *fakeFileMaster) cmds() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, l := range f.loads {
		out = append(out, l.Str("cmd"))
	}
	return out
}

func (f *fakeFileMaster) reset() {
	f.mu.Lock()
	f.loads = nil
	f.mu.Unlock()
}

func sortedPaths(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

type cpEnv struct {
	r     *modules.Registry
	env   *modules.Env
	fm    *fakeFileMaster
	cache string
}

func newCPEnv(t *testing.T) *cpEnv {
	t.Helper()
	r := registry(t)
	cache := t.TempDir()
	fm := &fakeFileMaster{chunk: 4, files: map[string]map[string][]byte{
		"base": {"a/b.txt": []byte("hello world\n"), "top.sls": []byte("base: {}\n"), "empty": {}},
		"dev":  {"a/b.txt": []byte("dev version\n")},
	}}
	env := &modules.Env{ID: "m1", Registry: r, Opts: payload.NewMap("cachedir", cache, "hash_type", "sha256", "saltenv", nil),
		Services: map[string]any{"master": fm}}
	return &cpEnv{r: r, env: env, fm: fm, cache: cache}
}

func (e *cpEnv) run(t *testing.T, fun string, args ...any) modules.Result {
	t.Helper()
	return e.r.Execute(context.Background(), modules.Binder{}, e.env, fun, args, nil)
}

func TestCPGetFileInChunks(t *testing.T) {
	e := newCPEnv(t)
	dest := filepath.Join(t.TempDir(), "out.txt")
	res := e.run(t, "cp.get_file", "salt://a/b.txt", dest)
	if res.Return != dest || res.Retcode != 0 {
		t.Fatalf("get_file: %+v", res)
	}
	if b, _ := os.ReadFile(dest); string(b) != "hello world\n" {
		t.Fatalf("content %q", b)
	}
	var locs []int64
	for _, l := range e.fm.loads {
		if l.Str("cmd") == "_serve_file" {
			if got := l.Keys(); strings.Join(got, ",") != "path,saltenv,cmd,loc" {
				t.Errorf("_serve_file keys %v", got)
			}
			n, _ := l.Int("loc")
			locs = append(locs, n)
		}
	}
	if want := []int64{0, 4, 8, 12}; len(locs) != len(want) || locs[3] != 12 || locs[1] != 4 {
		t.Errorf("serve locs %v, want %v", locs, want)
	}

	// A directory destination gets the file's name; the querystring picks
	// the saltenv.
	dir := t.TempDir()
	res = e.run(t, "cp.get_file", "salt://a/b.txt?saltenv=dev", dir+"/")
	if res.Return != filepath.Join(dir, "b.txt") {
		t.Fatalf("get_file to dir: %+v", res)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "b.txt")); string(b) != "dev version\n" {
		t.Fatalf("dev content %q", b)
	}
	// Missing file: "", missing directory without makedirs: False.
	if res = e.run(t, "cp.get_file", "salt://nope", dest); res.Return != "" {
		t.Errorf("missing file: %+v", res)
	}
	deep := filepath.Join(t.TempDir(), "x", "y", "z.txt")
	if res = e.run(t, "cp.get_file", "salt://a/b.txt", deep); res.Return != false {
		t.Errorf("missing dir: %+v", res)
	}
	if res = e.run(t, "cp.get_file", "salt://a/b.txt", deep, payload.NewMap("__kwarg__", true, "makedirs", true)); res.Return != deep {
		t.Errorf("makedirs: %+v", res)
	}
	// gzip chunks are decompressed.
	gzDest := filepath.Join(t.TempDir(), "gz.txt")
	if res = e.run(t, "cp.get_file", "salt://a/b.txt", gzDest, payload.NewMap("__kwarg__", true, "gzip", int64(5))); res.Return != gzDest {
		t.Fatalf("gzip: %+v", res)
	}
	if b, _ := os.ReadFile(gzDest); string(b) != "hello world\n" {
		t.Fatalf("gzip content %q", b)
	}
}

// TestCPGetFilePipelined: once the first chunk shows a full-size chunk
// (64 KiB or more), requests for the following offsets are in flight
// together; the copy is exact whether the size is a multiple of the chunk
// or not, with or without gzip, and every request is one Salt's client
// would send (offsets that are multiples of the chunk size, or the end).
func TestCPGetFilePipelined(t *testing.T) {
	const chunk = 64 << 10
	for _, tc := range []struct {
		name string
		size int
		gzip int64
	}{
		{"multiple of the chunk", 8 * chunk, 0},
		{"short last chunk", 5*chunk + 10, 0},
		{"gzip", 3*chunk + 1, 6},
		{"one chunk", chunk, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCPEnv(t)
			content := make([]byte, tc.size)
			for i := range content {
				content[i] = byte(i*7 + i/chunk)
			}
			e.fm.chunk = chunk
			e.fm.files["base"]["big.bin"] = content
			dest := filepath.Join(t.TempDir(), "big.bin")
			args := []any{"salt://big.bin", dest}
			if tc.gzip > 0 {
				args = append(args, payload.NewMap("__kwarg__", true, "gzip", tc.gzip))
			}
			if res := e.run(t, "cp.get_file", args...); res.Return != dest {
				t.Fatalf("get_file: %+v", res)
			}
			if b, _ := os.ReadFile(dest); !bytes.Equal(b, content) {
				t.Fatalf("copy differs: %d bytes, want %d", len(b), len(content))
			}
			seen := map[int64]bool{}
			for _, l := range e.fm.loads {
				if l.Str("cmd") != "_serve_file" {
					continue
				}
				n, _ := l.Int("loc")
				if n%chunk != 0 && n != int64(tc.size) {
					t.Errorf("request at loc %d: not a chunk boundary nor the end", n)
				}
				seen[n] = true
			}
			for loc := int64(0); loc <= int64(tc.size); loc += chunk {
				if !seen[loc] {
					t.Errorf("no request for loc %d", loc)
				}
			}
			if n := len(e.fm.loads); n > tc.size/chunk+4+serveWindowForTest { // + two _file_hash (before, and the check of a pipelined copy), the end, requests ahead
				t.Errorf("%d requests for %d chunks", n, tc.size/chunk+1)
			}
		})
	}
}

// serveWindowForTest bounds the speculative requests past the end.
const serveWindowForTest = 4

func TestCPCacheFile(t *testing.T) {
	e := newCPEnv(t)
	want := filepath.Join(e.cache, "files", "base", "a", "b.txt")
	res := e.run(t, "cp.cache_file", "salt://a/b.txt")
	if res.Return != want {
		t.Fatalf("cache_file: %+v", res)
	}
	e.fm.reset()
	if res = e.run(t, "cp.cache_file", "salt://a/b.txt"); res.Return != want {
		t.Fatalf("cache_file again: %+v", res)
	}
	for _, c := range e.fm.cmds() {
		if c == "_serve_file" {
			t.Fatal("an up-to-date cached file was downloaded again")
		}
	}
	if res = e.run(t, "cp.cache_file", "salt://nope"); res.Return != false {
		t.Errorf("cache_file missing: %+v", res)
	}
	// A zero-byte file is cached too.
	if res = e.run(t, "cp.cache_file", "salt://empty"); res.Return != filepath.Join(e.cache, "files", "base", "empty") {
		t.Errorf("cache_file empty: %+v", res)
	}
	if res = e.run(t, "cp.is_cached", "salt://a/b.txt"); res.Return != want {
		t.Errorf("is_cached: %+v", res)
	}
	if res = e.run(t, "cp.get_file_str", "salt://a/b.txt"); res.Return != "hello world\n" {
		t.Errorf("get_file_str: %+v", res)
	}
	// The FileClient used by cmd.script.
	fc := builtin.NewRemoteFileClient(e.fm, e.cache, "sha256")
	if p, err := fc.CacheFile(context.Background(), "salt://top.sls", "base"); err != nil || p != filepath.Join(e.cache, "files", "base", "top.sls") {
		t.Errorf("CacheFile: %q %v", p, err)
	}
	// A master answering with a path outside the cache is refused.
	e.fm.badDst = "../../../etc/evil"
	res = e.run(t, "cp.cache_file", "salt://a/b.txt", payload.NewMap("__kwarg__", true, "saltenv", "dev"))
	if s, _ := res.Return.(string); res.Retcode != 1 || !strings.Contains(s, "refusing cache path") {
		t.Fatalf("path traversal from the master: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(e.cache, "..", "..", "etc", "evil")); err == nil {
		t.Fatal("file written outside the cache")
	}
}

func TestCPGetURLAndLists(t *testing.T) {
	e := newCPEnv(t)
	tmp := filepath.Join(t.TempDir(), "f")
	os.WriteFile(tmp, []byte("local"), 0o644)
	tests := []struct {
		name string
		args []any
		want any
		rc   int
	}{
		{"file url returns the path", []any{"file://" + tmp}, tmp, 0},
		{"plain path", []any{tmp}, tmp, 0},
		{"contents with dest None", []any{"file://" + tmp, nil}, "local", 0},
		{"relative path", []any{"rel/path"}, "ERROR: Path 'rel/path' is not absolute", 1},
		{"salt url to cache", []any{"salt://top.sls"}, filepath.Join(e.cache, "files", "base", "top.sls"), 0},
		{"salt url contents", []any{"salt://top.sls", nil}, "base: {}\n", 0},
		{"salt url missing", []any{"salt://nope"}, false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := e.run(t, "cp.get_url", tc.args...)
			if res.Return != tc.want || res.Retcode != tc.rc {
				t.Fatalf("got %+v, want %v", res, tc.want)
			}
		})
	}
	res := e.run(t, "cp.get_url", "ftp://127.0.0.1/x")
	if s, _ := res.Return.(string); res.Retcode != 1 || !strings.Contains(s, "only salt://, file:// and http(s):// URLs") {
		t.Errorf("ftp: %+v", res)
	}
	res = e.run(t, "cp.list_master")
	if l, ok := res.Return.([]any); !ok || len(l) != 3 || l[0] != "a/b.txt" {
		t.Errorf("list_master: %+v", res)
	}
	if got := e.fm.loads[len(e.fm.loads)-1].Keys(); strings.Join(got, ",") != "saltenv,prefix,cmd" {
		t.Errorf("_file_list keys %v", got)
	}
	res = e.run(t, "cp.list_master", payload.NewMap("__kwarg__", true, "prefix", "a/", "saltenv", "base"))
	if l, ok := res.Return.([]any); !ok || len(l) != 1 {
		t.Errorf("list_master prefix: %+v", res)
	}
	if res = e.run(t, "cp.envs"); len(res.Return.([]any)) != 2 {
		t.Errorf("envs: %+v", res)
	}
	res = e.run(t, "cp.hash_file", "salt://a/b.txt")
	if m, ok := res.Return.(*payload.Map); !ok || m.Str("hash_type") != "sha256" || len(m.Str("hsum")) != 64 {
		t.Errorf("hash_file: %+v", res)
	}
	if res = e.run(t, "cp.hash_file", "salt://nope"); res.Return != "" {
		t.Errorf("hash_file missing: %+v", res)
	}
}

func TestCPLocalFileClient(t *testing.T) {
	r := registry(t)
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "sub"), 0o755)
	os.WriteFile(filepath.Join(root, "sub", "f.txt"), bytes.Repeat([]byte("x"), 3<<20), 0o644)
	cache := t.TempDir()
	opts := payload.NewMap("cachedir", cache, "file_client", "local", "file_roots", payload.NewMap("base", []any{root}))
	env := &modules.Env{ID: "m1", Registry: r, Opts: opts}
	res := r.Execute(context.Background(), modules.Binder{}, env, "cp.cache_file", []any{"salt://sub/f.txt"}, nil)
	want := filepath.Join(cache, "files", "base", "sub", "f.txt")
	if res.Return != want {
		t.Fatalf("local cache_file: %+v", res)
	}
	if st, _ := os.Stat(want); st == nil || st.Size() != 3<<20 {
		t.Fatalf("cached size %v", st)
	}
	res = r.Execute(context.Background(), modules.Binder{}, env, "cp.list_master", nil, nil)
	if l, ok := res.Return.([]any); !ok || len(l) != 1 || l[0] != path.Join("sub", "f.txt") {
		t.Errorf("local list_master: %+v", res)
	}
	res = r.Execute(context.Background(), modules.Binder{}, env, "cp.cache_file", []any{"salt://../etc/passwd"}, nil)
	if res.Return != false {
		t.Errorf("traversal: %+v", res)
	}
}

// bigContent is n bytes that differ per version v.
func bigContent(n int, v byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7+i/4096) ^ v
	}
	return b
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// leftovers lists the temporary copies left in dir's tree.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".gsalt-") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// TestCPCacheFileChangedOnMaster: a cached copy whose hash differs from
// the master's is fetched again, whole, and ends equal to the master's
// file (by content and hash); one that matches is not.
func TestCPCacheFileChangedOnMaster(t *testing.T) {
	const chunk = 64 << 10
	for _, tc := range []struct {
		name     string
		old, new int
	}{
		{"same size", 6 * chunk, 6 * chunk},
		{"grown", 3 * chunk, 7*chunk + 5},
		{"shrunk", 7 * chunk, 2*chunk - 1},
		{"emptied", 2 * chunk, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCPEnv(t)
			e.fm.chunk = chunk
			e.fm.files["base"]["big.bin"] = bigContent(tc.old, 1)
			want := filepath.Join(e.cache, "files", "base", "big.bin")
			if res := e.run(t, "cp.cache_file", "salt://big.bin"); res.Return != want {
				t.Fatalf("first cache_file: %+v", res)
			}
			newer := bigContent(tc.new, 2)
			e.fm.mu.Lock()
			e.fm.files["base"]["big.bin"] = newer
			e.fm.mu.Unlock()
			e.fm.reset()
			if res := e.run(t, "cp.cache_file", "salt://big.bin"); res.Return != want {
				t.Fatalf("cache_file after the change: %+v", res)
			}
			b, _ := os.ReadFile(want)
			if !bytes.Equal(b, newer) || sha256Hex(b) != sha256Hex(newer) {
				t.Fatalf("cached copy has %d bytes (sha256 %s), want the master's %d (%s)", len(b), sha256Hex(b), len(newer), sha256Hex(newer))
			}
			serves := 0
			for _, c := range e.fm.cmds() {
				if c == "_serve_file" {
					serves++
				}
			}
			if serves == 0 {
				t.Fatal("the changed file was not fetched again")
			}
			if l := leftovers(t, e.cache); len(l) > 0 {
				t.Errorf("temporary files left: %v", l)
			}
		})
	}
}

// TestCPFileChangesDuringCopy: when the file changes on the master while
// its chunks are being fetched, the hash the client asks again before
// installing the pipelined copy differs from the first; the client copies
// the file once more, one chunk at a time, and installs the new version. A
// file that keeps changing is installed after the second copy, as Salt's
// client does (it never checks), never mixed into a half-written target.
func TestCPFileChangesDuringCopy(t *testing.T) {
	const chunk = 64 << 10
	const size = 10 * chunk
	for _, keepChanging := range []bool{false, true} {
		name := "changes once"
		if keepChanging {
			name = "keeps changing"
		}
		t.Run(name, func(t *testing.T) {
			e := newCPEnv(t)
			e.fm.chunk = chunk
			e.fm.files["base"]["big.bin"] = bigContent(size, 1)
			version := byte(1)
			changed := false
			e.fm.onServe = func(loc int64) error {
				if loc == 4*chunk && (!changed || keepChanging) {
					changed = true
					version++
					e.fm.files["base"]["big.bin"] = bigContent(size, version)
				}
				return nil
			}
			want := filepath.Join(e.cache, "files", "base", "big.bin")
			if res := e.run(t, "cp.cache_file", "salt://big.bin"); res.Return != want {
				t.Fatalf("cache_file: %+v", res)
			}
			hashes := 0
			for _, c := range e.fm.cmds() {
				if c == "_file_hash" {
					hashes++
				}
			}
			if hashes != 2 {
				t.Errorf("%d _file_hash requests, want 2 (the second after the mismatch)", hashes)
			}
			b, _ := os.ReadFile(want)
			if len(b) != size {
				t.Fatalf("cached copy has %d bytes, want %d", len(b), size)
			}
			if !keepChanging && !bytes.Equal(b, bigContent(size, version)) {
				t.Fatalf("cached copy is not the master's current version")
			}
			if l := leftovers(t, e.cache); len(l) > 0 {
				t.Errorf("temporary files left: %v", l)
			}
		})
	}
}

// TestCPTransferFailsCleanly: a master that fails in the middle of a copy
// (the request errors out) makes cp.cache_file and cp.get_file fail with
// nothing half-written: no temporary file is left and the copy already in
// place (an older version) is untouched. The next call, with the master
// answering again, fetches the whole file.
func TestCPTransferFailsCleanly(t *testing.T) {
	const chunk = 64 << 10
	e := newCPEnv(t)
	e.fm.chunk = chunk
	old := bigContent(5*chunk, 1)
	e.fm.files["base"]["big.bin"] = old
	cached := filepath.Join(e.cache, "files", "base", "big.bin")
	if res := e.run(t, "cp.cache_file", "salt://big.bin"); res.Return != cached {
		t.Fatalf("cache_file: %+v", res)
	}
	dest := filepath.Join(t.TempDir(), "big.bin")
	if res := e.run(t, "cp.get_file", "salt://big.bin", dest); res.Return != dest {
		t.Fatalf("get_file: %+v", res)
	}
	newer := bigContent(9*chunk+3, 2)
	failing := true
	e.fm.mu.Lock()
	e.fm.files["base"]["big.bin"] = newer
	e.fm.onServe = func(loc int64) error {
		if failing && loc >= 3*chunk {
			return errors.New("master went away")
		}
		return nil
	}
	e.fm.mu.Unlock()
	for _, call := range [][]any{{"cp.cache_file", "salt://big.bin"}, {"cp.get_file", "salt://big.bin", dest}} {
		res := e.run(t, call[0].(string), call[1:]...)
		if s, _ := res.Return.(string); res.Retcode == 0 && s != "" {
			t.Fatalf("%s with the master failing mid-copy: %+v", call[0], res)
		}
	}
	for _, p := range []string{cached, dest} {
		if b, _ := os.ReadFile(p); !bytes.Equal(b, old) {
			t.Errorf("%s changed by a failed copy: %d bytes", p, len(b))
		}
	}
	if l := append(leftovers(t, e.cache), leftovers(t, filepath.Dir(dest))...); len(l) > 0 {
		t.Errorf("temporary files left after a failed copy: %v", l)
	}
	e.fm.mu.Lock()
	failing = false
	e.fm.mu.Unlock()
	if res := e.run(t, "cp.cache_file", "salt://big.bin"); res.Return != cached {
		t.Fatalf("cache_file after the master recovered: %+v", res)
	}
	if b, _ := os.ReadFile(cached); !bytes.Equal(b, newer) {
		t.Fatalf("cached copy after recovery: %d bytes, want %d", len(b), len(newer))
	}
}

// TestCPListsGolden compares cp.list_states and cp.list_master_symlinks
// (and cp.list_master beside them) on a file_roots tree with nested SLS,
// init.sls, a name that is both a file and a folder, non-SLS files and
// symlinks, with Salt 3006 (testdata/golden/cp_lists.json); the symlinks
// map is compared sorted (its order is the folder listing's).
func TestCPListsGolden(t *testing.T) {
	tree := map[string]string{
		"top.sls":              "base: {}\n",
		"web/init.sls":         "a: {}\n",
		"web/conf.sls":         "a: {}\n",
		"web/files/nginx.conf": "x\n",
		"db.sls":               "a: {}\n",
		"db/init.sls":          "a: {}\n",
		"deep/a/b/c.sls":       "a: {}\n",
		"README.md":            "x\n",
		"notsls.sls.j2":        "x\n",
		"alias.sls":            salttest.SymlinkPrefix + "db.sls",
		"webalias":             salttest.SymlinkPrefix + "web",
	}
	calls := []salttest.Call{
		{Name: "list_states", Fun: "cp.list_states"},
		{Name: "list_states base", Fun: "cp.list_states", Args: []any{"base"}},
		{Name: "list_states missing env", Fun: "cp.list_states", Args: []any{"nope"}},
		{Name: "list_master_symlinks", Fun: "cp.list_master_symlinks", Sorted: true},
		{Name: "list_master_symlinks prefix", Fun: "cp.list_master_symlinks", Kwargs: []any{"prefix", "web"}, Sorted: true},
		{Name: "list_master_symlinks missing env", Fun: "cp.list_master_symlinks", Args: []any{"nope"}},
		{Name: "list_master", Fun: "cp.list_master", Sorted: true},
	}
	runSuite(t, salttest.Suite{Name: "cp_lists", Srv: tree, Calls: calls, Grains: payload.NewMap("kernel", "Linux", "os", "Debian", "os_family", "Debian")})
}
