package master

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/gsalt/gsalt/wire/payload"
)

// fileTree fills the base file root:
//
//	top.sls, sub/a.txt, sub/deep/b.txt, emptydir/, inlink -> sub/a.txt,
//	outlink -> <outside>/secret, outdir -> <outside>, indir -> sub
func fileTree(t *testing.T, e *env) (root, outside string) {
	root = e.cfg.FileRoots["base"][0]
	outside = filepath.Join(e.root, "outside")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "sub", "deep"), 0o755))
	must(os.MkdirAll(filepath.Join(root, "emptydir"), 0o755))
	must(os.MkdirAll(outside, 0o755))
	must(os.WriteFile(filepath.Join(root, "top.sls"), []byte("base:\n  '*': []\n"), 0o644))
	must(os.WriteFile(filepath.Join(root, "sub", "a.txt"), []byte("hello world, this is a.txt\n"), 0o644))
	must(os.WriteFile(filepath.Join(root, "sub", "deep", "b.txt"), []byte("b"), 0o644))
	must(os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o644))
	must(os.Symlink("sub/a.txt", filepath.Join(root, "inlink")))
	must(os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "outlink")))
	must(os.Symlink(outside, filepath.Join(root, "outdir")))
	must(os.Symlink("sub", filepath.Join(root, "indir")))
	return root, outside
}

func TestFileServer(t *testing.T) {
	e := newEnv(t, "file_buffer_size: 10\n")
	tm := e.login("minion1", "m1")
	root, _ := fileTree(t, e)
	ask := func(kv ...any) any { return e.mustAES(tm, payload.NewMap(kv...)) }

	if got := ask("cmd", "_file_envs"); !reflect.DeepEqual(got, []any{"base"}) {
		t.Fatalf("_file_envs %v", got)
	}
	files := []any{"indir/a.txt", "indir/deep/b.txt", "inlink", "sub/a.txt", "sub/deep/b.txt", "top.sls"}
	if got := ask("cmd", "_file_list", "saltenv", "base", "prefix", ""); !reflect.DeepEqual(got, files) {
		t.Fatalf("_file_list %v", got)
	}
	if got := ask("cmd", "_file_list", "saltenv", "base", "prefix", "/sub/"); !reflect.DeepEqual(got, []any{"sub/a.txt", "sub/deep/b.txt"}) {
		t.Fatalf("_file_list prefix %v", got)
	}
	if got := ask("cmd", "_file_list", "saltenv", "dev", "prefix", ""); !reflect.DeepEqual(got, []any{}) {
		t.Fatalf("_file_list dev %v", got)
	}
	if got := ask("cmd", "_file_list"); !reflect.DeepEqual(got, []any{}) {
		t.Fatalf("_file_list without saltenv %v", got)
	}
	if got := ask("cmd", "_dir_list", "saltenv", "base", "prefix", ""); !reflect.DeepEqual(got, []any{"emptydir", "indir", "indir/deep", "sub", "sub/deep"}) {
		t.Fatalf("_dir_list %v", got)
	}
	if got := ask("cmd", "_file_list_emptydirs", "saltenv", "base", "prefix", ""); !reflect.DeepEqual(got, []any{"emptydir"}) {
		t.Fatalf("_file_list_emptydirs %v", got)
	}
	if got := ask("cmd", "_symlink_list", "saltenv", "base", "prefix", ""); !reflect.DeepEqual(got, payload.NewMap("indir", "sub", "inlink", "sub/a.txt")) {
		t.Fatalf("_symlink_list %v", got)
	}

	sum := sha256.Sum256([]byte("base:\n  '*': []\n"))
	wantHash := payload.NewMap("hash_type", "sha256", "hsum", hex.EncodeToString(sum[:]))
	for _, path := range []string{"top.sls", "top.sls?saltenv=base", "./top.sls", "top.sls?index=0"} {
		if got := ask("cmd", "_file_hash", "path", path, "saltenv", "base"); !reflect.DeepEqual(got, wantHash) {
			t.Errorf("_file_hash %s: %v", path, got)
		}
	}
	for _, path := range []string{"missing", "../outside/secret", "sub/../../outside/secret", "sub/../top.sls", "top.sls?index=1", "/etc/passwd",
		root + "/top.sls", "outlink", "outdir/secret", "top.sls?saltenv=dev", "sub", ""} {
		if got := ask("cmd", "_file_hash", "path", path, "saltenv", "base"); got != "" {
			t.Errorf("_file_hash %q: %v, want \"\"", path, got)
		}
		got := ask("cmd", "_serve_file", "path", path, "saltenv", "base", "loc", 0)
		if !reflect.DeepEqual(got, payload.NewMap("data", "", "dest", "")) {
			t.Errorf("_serve_file %q: %v", path, got)
		}
		if got := ask("cmd", "_file_find", "path", path, "saltenv", "base"); !reflect.DeepEqual(got, payload.NewMap("path", "", "rel", "")) {
			t.Errorf("_file_find %q: %v", path, got)
		}
	}
	hs := ask("cmd", "_file_hash_and_stat", "path", "top.sls", "saltenv", "base").([]any)
	if len(hs) != 2 || !reflect.DeepEqual(hs[0], wantHash) || len(hs[1].([]any)) != 10 {
		t.Fatalf("_file_hash_and_stat %v", hs)
	}
	if st := hs[1].([]any); st[6] != int64(len("base:\n  '*': []\n")) {
		t.Fatalf("stat size %v", st[6])
	}
	if got := ask("cmd", "_file_hash_and_stat", "path", "missing", "saltenv", "base"); !reflect.DeepEqual(got, []any{"", nil}) {
		t.Fatalf("_file_hash_and_stat missing %v", got)
	}
	ff := ask("cmd", "_file_find", "path", "inlink", "saltenv", "base").(*payload.Map)
	if ff.Str("rel") != "inlink" || ff.Str("back") != "roots" || ff.Str("path") != filepath.Join(root, "inlink") {
		t.Fatalf("_file_find %s", mapJSON(ff))
	}

	// _serve_file in chunks of file_buffer_size (10 bytes) until EOF.
	var all []byte
	for loc := 0; ; {
		got := ask("cmd", "_serve_file", "path", "sub/a.txt", "saltenv", "base", "loc", loc).(*payload.Map)
		data := got.Bytes("data")
		if got.Str("dest") != "sub/a.txt" {
			t.Fatalf("dest %q", got.Str("dest"))
		}
		if len(data) == 0 {
			break
		}
		if len(data) > 10 {
			t.Fatalf("chunk of %d bytes", len(data))
		}
		all = append(all, data...)
		loc += len(data)
	}
	if string(all) != "hello world, this is a.txt\n" {
		t.Fatalf("served %q", all)
	}
	got := ask("cmd", "_serve_file", "path", "sub/a.txt", "saltenv", "base", "loc", 0, "gzip", 5).(*payload.Map)
	zr, err := gzip.NewReader(bytes.NewReader(got.Bytes("data")))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	if string(plain) != "hello worl" || got.Str("dest") != "sub/a.txt" {
		t.Fatalf("gzip chunk %q", plain)
	}
	if v, _ := got.Get("gzip"); v != int64(5) {
		t.Fatalf("gzip level %v", v)
	}
	if got := ask("cmd", "_serve_file", "path", "sub/a.txt", "saltenv", "base", "loc", -1); !reflect.DeepEqual(got, payload.NewMap("data", "", "dest", "")) {
		t.Fatalf("negative loc %v", got)
	}
}

func TestFileServerEnvRoots(t *testing.T) {
	dir := t.TempDir()
	for _, env := range []string{"dev", "prod"} {
		if err := os.MkdirAll(filepath.Join(dir, env), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, env, "f"), []byte(env), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := newEnv(t, "")
	e.m.fs.roots = map[string][]string{"__env__": {filepath.Join(dir, "__env__")}}
	tm := e.login("minion1", "m1")
	for _, env := range []string{"dev", "prod"} {
		got := e.mustAES(tm, payload.NewMap("cmd", "_serve_file", "path", "f", "saltenv", env, "loc", 0)).(*payload.Map)
		if string(got.Bytes("data")) != env {
			t.Errorf("%s: %s", env, mapJSON(got))
		}
	}
}
