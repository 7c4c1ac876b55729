package fileserver_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/fileserver"
	"github.com/gsalt/gsalt/wire/payload"
)

func newRoots(o fileserver.Options) *fileserver.Roots {
	o.Logger = quietLogger()
	return fileserver.New(o)
}

func handle(t *testing.T, r *fileserver.Roots, cmd string, kv ...any) any {
	t.Helper()
	v, err := r.Handle(context.Background(), cmd, payload.NewMap(kv...))
	if err != nil {
		t.Fatalf("%s %v: %v", cmd, kv, err)
	}
	return v
}

func strs(v any) []string {
	l, _ := v.([]any)
	out := []string{}
	for _, e := range l {
		out = append(out, e.(string))
	}
	return out
}

// TestTraversal asks for files outside the roots every way it can and
// checks that their content never comes back.
func TestTraversal(t *testing.T) {
	base := t.TempDir()
	buildTree(t, base)
	srv := filepath.Join(base, "srv")
	for _, o := range []fileserver.Options{
		{Roots: map[string][]string{"base": {srv + "/base1"}, "__env__": {srv + "/envs/__env__"}}, FollowSymlinks: true},
		{Roots: map[string][]string{"base": {srv + "/base1"}, "__env__": {srv + "/envs/__env__"}}, FollowSymlinks: false},
	} {
		r := newRoots(o)
		for _, saltenv := range []any{"base", "..", "../..", "../../outside", "../../../", ".", "", "qa/../..", nil, "base/../../.."} {
			for _, p := range []string{
				"../outside/secret", "../../outside/secret", "sub/../../../outside/secret", "..", "../", "/etc/passwd",
				base + "/outside/secret", "outlink", "reloutlink", "outdir/secret", "reloutdir/secret", "leaklink",
				"outlink?index=0", "outdir/secret?index=0", "secret", "outside/secret", "|../outside/secret",
				"sub/..%2f..%2foutside/secret", "....//outside/secret", "salt://../outside/secret", "top.sls?saltenv=../../outside",
				"secret?saltenv=../../outside", "secret?saltenv=..&index=0", "x/..\x00/secret",
			} {
				for _, cmd := range []string{"_serve_file", "_file_hash", "_file_find"} {
					v, err := r.Handle(context.Background(), cmd, payload.NewMap("path", p, "saltenv", saltenv, "loc", 0))
					if err != nil {
						continue
					}
					m, ok := v.(*payload.Map)
					if !ok {
						continue
					}
					data := string(m.Bytes("data"))
					if strings.Contains(data, "secret") || strings.Contains(data, "leak") ||
						strings.Contains(m.Str("path"), "outside") || strings.Contains(m.Str("path"), "base1x") {
						t.Errorf("%s %q in %v: %s", cmd, p, saltenv, data+m.Str("path"))
					}
					if m.Has("hsum") {
						t.Errorf("%s %q in %v: hashed %v", cmd, p, saltenv, m.Str("hsum"))
					}
				}
			}
		}
	}
}

// TestSymlinkLoops: a link back to a walked directory is listed but not
// descended into again.
func TestSymlinkLoops(t *testing.T) {
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, "a", "b"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "a", "b", "f"), []byte("f"), 0o644))
	must(t, os.Symlink(".", filepath.Join(root, "self")))
	must(t, os.Symlink("../..", filepath.Join(root, "a", "b", "up")))
	must(t, os.Symlink("b", filepath.Join(root, "a", "bb")))
	r := newRoots(fileserver.Options{Roots: map[string][]string{"base": {root}}, FollowSymlinks: true})
	files := strs(handle(t, r, "_file_list", "saltenv", "base"))
	if want := []string{"a/b/f", "a/bb/f"}; !reflect.DeepEqual(files, want) {
		t.Errorf("files %v, want %v", files, want)
	}
	dirs := strs(handle(t, r, "_dir_list", "saltenv", "base"))
	if want := []string{"a", "a/b", "a/b/up", "a/bb", "a/bb/up", "self"}; !reflect.DeepEqual(dirs, want) {
		t.Errorf("dirs %v, want %v", dirs, want)
	}
}

// TestWalkDepthBound: a tree deeper than MaxWalkDepth is cut, not failed.
func TestWalkDepthBound(t *testing.T) {
	root := t.TempDir()
	deep := root
	for range fileserver.MaxWalkDepth + 5 {
		deep = filepath.Join(deep, "d")
	}
	must(t, os.MkdirAll(deep, 0o755))
	must(t, os.WriteFile(filepath.Join(deep, "f"), []byte("f"), 0o644))
	r := newRoots(fileserver.Options{Roots: map[string][]string{"base": {root}}})
	dirs := strs(handle(t, r, "_dir_list", "saltenv", "base"))
	if len(dirs) != fileserver.MaxWalkDepth+1 {
		t.Errorf("%d dirs listed, want %d", len(dirs), fileserver.MaxWalkDepth+1)
	}
	if files := strs(handle(t, r, "_file_list", "saltenv", "base")); len(files) != 0 {
		t.Errorf("files %v", files)
	}
}

// TestListCache: the cached lists follow changes to the tree, including
// changes below followed links and to link targets.
func TestListCache(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	out := filepath.Join(base, "out")
	must(t, os.MkdirAll(filepath.Join(root, "d"), 0o755))
	must(t, os.MkdirAll(filepath.Join(out, "e"), 0o755))
	must(t, os.Symlink(out, filepath.Join(root, "ln")))
	r := newRoots(fileserver.Options{Roots: map[string][]string{"base": {root}}, FollowSymlinks: true})
	list := func(cmd string) []string { return strs(handle(t, r, cmd, "saltenv", "base")) }
	check := func(step, cmd string, want ...string) {
		t.Helper()
		if want == nil {
			want = []string{}
		}
		if got := list(cmd); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %s %v, want %v", step, cmd, got, want)
		}
	}
	check("start", "_file_list")
	check("start", "_file_list_emptydirs", "d", "ln/e")
	must(t, os.WriteFile(filepath.Join(root, "d", "f"), nil, 0o644))
	check("file added", "_file_list", "d/f")
	check("file added", "_file_list_emptydirs", "ln/e")
	must(t, os.WriteFile(filepath.Join(out, "e", "g"), nil, 0o644))
	check("file added behind a link", "_file_list", "d/f", "ln/e/g")
	check("file added behind a link", "_file_list_emptydirs")
	must(t, os.Remove(filepath.Join(root, "d", "f")))
	check("file removed", "_file_list", "ln/e/g")
	must(t, os.Remove(filepath.Join(root, "ln")))
	must(t, os.Symlink(filepath.Join(out, "e"), filepath.Join(root, "ln")))
	check("link retargeted", "_file_list", "ln/g")

	// Without following, a link's target emptiness is still tracked.
	nf := newRoots(fileserver.Options{Roots: map[string][]string{"base": {root}}})
	empty := func() []string { return strs(handle(t, nf, "_file_list_emptydirs", "saltenv", "base")) }
	if got := empty(); !reflect.DeepEqual(got, []string{"d"}) {
		t.Errorf("nofollow empty dirs %v", got)
	}
	must(t, os.Remove(filepath.Join(out, "e", "g")))
	if got := empty(); !reflect.DeepEqual(got, []string{"d", "ln"}) {
		t.Errorf("nofollow empty dirs after emptying the target %v", got)
	}
	// A root created after the first request.
	late := filepath.Join(base, "late")
	lr := newRoots(fileserver.Options{Roots: map[string][]string{"base": {late}}})
	if got := strs(handle(t, lr, "_file_list", "saltenv", "base")); len(got) != 0 {
		t.Errorf("missing root lists %v", got)
	}
	must(t, os.MkdirAll(late, 0o755))
	must(t, os.WriteFile(filepath.Join(late, "x"), nil, 0o644))
	if got := strs(handle(t, lr, "_file_list", "saltenv", "base")); !reflect.DeepEqual(got, []string{"x"}) {
		t.Errorf("late root lists %v", got)
	}
}

// TestHashCache: a changed file gets a new hash even when its size and
// modification time are restored.
func TestHashCache(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "f")
	must(t, os.WriteFile(p, []byte("one"), 0o644))
	mt := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	must(t, os.Chtimes(p, mt, mt))
	r := newRoots(fileserver.Options{Roots: map[string][]string{"base": {root}}, HashType: "md5"})
	h1 := handle(t, r, "_file_hash", "path", "f", "saltenv", "base").(*payload.Map).Str("hsum")
	if h1 != "f97c5d29941bfb1b2fdab0874906ab82" {
		t.Fatalf("md5 %s", h1)
	}
	must(t, os.WriteFile(p, []byte("two"), 0o644))
	must(t, os.Chtimes(p, mt, mt))
	h2 := handle(t, r, "_file_hash", "path", "f", "saltenv", "base").(*payload.Map).Str("hsum")
	if h2 != "b8a9f715dbb64fd5c56e7783c6820a61" {
		t.Fatalf("md5 after change %s", h2)
	}
}

// TestServeChunks downloads files chunk by chunk, plain and gzipped.
func TestServeChunks(t *testing.T) {
	base := t.TempDir()
	buildTree(t, base)
	r := newRoots(fileserver.Options{Roots: map[string][]string{"base": {base + "/srv/base1"}}, BufferSize: 700})
	for _, gz := range []any{nil, int64(1), true, int64(9)} {
		var got []byte
		for loc := int64(0); ; {
			m := handle(t, r, "_serve_file", "path", "big.txt", "saltenv", "base", "loc", loc, "gzip", gz).(*payload.Map)
			data := m.Bytes("data")
			if len(data) == 0 {
				break
			}
			if g, _ := m.Get("gzip"); g != gz {
				t.Fatalf("gzip %v echoed as %v", gz, g)
			}
			if gz != nil {
				zr, err := gzip.NewReader(bytes.NewReader(data))
				must(t, err)
				data, err = io.ReadAll(zr)
				must(t, err)
			}
			if len(data) > 700 {
				t.Fatalf("chunk of %d", len(data))
			}
			got = append(got, data...)
			loc += int64(len(data))
		}
		if string(got) != bigText {
			t.Errorf("gzip %v: served %d bytes", gz, len(got))
		}
	}
}

// TestConcurrent runs requests in parallel (meant for -race).
func TestConcurrent(t *testing.T) {
	base := t.TempDir()
	buildTree(t, base)
	r := newRoots(fileserver.Options{Roots: map[string][]string{"base": {base + "/srv/base1", base + "/srv/base2"}}, FollowSymlinks: true})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 20 {
				cmd := fileserver.Commands()[(i+j)%len(fileserver.Commands())]
				load := payload.NewMap("saltenv", "base", "path", "top.sls", "loc", int64(0), "prefix", "")
				if _, err := r.Handle(context.Background(), cmd, load); err != nil && cmd != "_file_envs" {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestHandleErrors(t *testing.T) {
	root := t.TempDir()
	must(t, os.WriteFile(filepath.Join(root, "x"), nil, 0o644))
	r := newRoots(fileserver.Options{Roots: map[string][]string{"base": {root}}, HashType: "crc32"})
	ctx := context.Background()
	if _, err := r.Handle(ctx, "_file_recv", payload.NewMap()); !errors.Is(err, fileserver.ErrUnknownCommand) {
		t.Errorf("unknown command: %v", err)
	}
	if _, err := r.Handle(ctx, "_file_list", payload.NewMap("saltenv", "base", "prefix", int64(1))); !errors.Is(err, fileserver.ErrBadLoad) {
		t.Errorf("bad prefix: %v", err)
	}
	if _, err := r.Handle(ctx, "_file_hash", payload.NewMap("saltenv", "base", "path", "x")); !errors.Is(err, fileserver.ErrHashType) {
		t.Errorf("bad hash type: %v", err)
	}
	// FSChan's command names (no leading "_") are accepted too.
	if got := handle(t, r, "file_list", "saltenv", "base"); !reflect.DeepEqual(got, []any{"x"}) {
		t.Errorf("file_list %v", got)
	}
}

// TestOptionsFromConfig reads the options from a real master and minion
// configuration.
func TestOptionsFromConfig(t *testing.T) {
	dir := t.TempDir()
	conf := "file_roots: {base: [/srv/a, /srv/b], dev: [/srv/dev]}\nfile_ignore_regex: '\\.svn'\nfile_ignore_glob: ['*.pyc']\n" +
		"fileserver_followsymlinks: False\nfileserver_ignoresymlinks: True\nhash_type: SHA512\nfile_buffer_size: 4096\n" +
		"fileserver_backend: [roots, gitfs]\n"
	// root_dir and id keep the loaders off the host: a minion config with
	// neither caches the guessed id in /etc/salt/minion_id.
	root := "root_dir: " + filepath.Join(dir, "root") + "\n"
	must(t, os.WriteFile(filepath.Join(dir, "master"), []byte(root+conf), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "minion"), []byte(root+"id: fs1\nfile_client: local\n"), 0o644))
	m, err := config.LoadMaster(dir)
	must(t, err)
	o := fileserver.OptionsFrom(m.Opts)
	want := fileserver.Options{
		Roots:       map[string][]string{"base": {"/srv/a", "/srv/b"}, "dev": {"/srv/dev"}},
		Backends:    []string{"roots", "gitfs"},
		IgnoreRegex: []string{`\.svn`}, IgnoreGlob: []string{"*.pyc"},
		FollowSymlinks: false, IgnoreSymlinks: true, HashType: "sha512", BufferSize: 4096,
	}
	if !reflect.DeepEqual(o, want) {
		t.Errorf("master options\n got %+v\nwant %+v", o, want)
	}
	mn, err := config.LoadMinion(dir)
	must(t, err)
	o = fileserver.OptionsFrom(mn.Opts)
	if o.BufferSize != fileserver.MinionBufferSize || !o.FollowSymlinks || o.HashType != "sha256" || !reflect.DeepEqual(o.Roots["base"], []string{"/srv/salt", "/srv/spm/salt"}) {
		t.Errorf("minion options %+v", o)
	}
	if r := newRoots(fileserver.Options{Backends: []string{"gitfs"}, Roots: want.Roots}); len(r.Envs()) != 0 {
		t.Errorf("roots served without the roots backend: %v", r.Envs())
	}
}
