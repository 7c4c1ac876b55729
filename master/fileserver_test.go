package master

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/gsalt/gsalt/wire/message"
	"github.com/gsalt/gsalt/wire/payload"
	"github.com/gsalt/gsalt/wire/transport"
)

// fileTree fills the base file root:
//
//	top.sls, sub/a.txt, sub/deep/b.txt, emptydir/, skip.bak,
//	inlink -> sub/a.txt, outlink -> <outside>/secret, outdir -> <outside>,
//	indir -> sub
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
	must(os.WriteFile(filepath.Join(root, "skip.bak"), []byte("ignored"), 0o644))
	must(os.WriteFile(filepath.Join(root, "sub", "a.txt"), []byte("hello world, this is a.txt\n"), 0o644))
	must(os.WriteFile(filepath.Join(root, "sub", "deep", "b.txt"), []byte("b"), 0o644))
	must(os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o644))
	must(os.Symlink("sub/a.txt", filepath.Join(root, "inlink")))
	must(os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "outlink")))
	must(os.Symlink(outside, filepath.Join(root, "outdir")))
	must(os.Symlink("sub", filepath.Join(root, "indir")))
	return root, outside
}

// TestFileServer checks that every file server command reaches package
// fileserver with the master's options (the answers themselves are
// checked against real Salt by fileserver's golden tests).
func TestFileServer(t *testing.T) {
	e := newEnv(t, "file_buffer_size: 10\nfile_ignore_glob: '*.bak'\nhash_type: sha512\n")
	tm := e.login("minion1", "m1")
	root, _ := fileTree(t, e)
	ask := func(kv ...any) any { return e.mustAES(tm, payload.NewMap(kv...)) }

	sum := sha512.Sum512([]byte("base:\n  '*': []\n"))
	wantHash := payload.NewMap("hash_type", "sha512", "hsum", hex.EncodeToString(sum[:]))
	for _, tc := range []struct {
		name string
		load *payload.Map
		want any
	}{
		{"envs", payload.NewMap("cmd", "_file_envs"), []any{"base"}},
		{"envs with a stray key", payload.NewMap("cmd", "_file_envs", "id", "m1"), ""},
		{"file list", payload.NewMap("cmd", "_file_list", "saltenv", "base", "prefix", ""),
			[]any{"indir/a.txt", "indir/deep/b.txt", "inlink", "outdir/secret", "outlink", "sub/a.txt", "sub/deep/b.txt", "top.sls"}},
		{"file list prefix", payload.NewMap("cmd", "_file_list", "saltenv", "base", "prefix", "/sub/"), []any{"sub/a.txt", "sub/deep/b.txt"}},
		{"file list unknown env", payload.NewMap("cmd", "_file_list", "saltenv", "dev"), []any{}},
		{"file list without saltenv", payload.NewMap("cmd", "_file_list"), []any{}},
		{"file list prefix None", payload.NewMap("cmd", "_file_list", "saltenv", "base", "prefix", nil), ""},
		{"dir list", payload.NewMap("cmd", "_dir_list", "saltenv", "base"), []any{"emptydir", "indir", "indir/deep", "outdir", "sub", "sub/deep"}},
		{"empty dirs", payload.NewMap("cmd", "_file_list_emptydirs", "saltenv", "base"), []any{"emptydir"}},
		{"symlinks", payload.NewMap("cmd", "_symlink_list", "saltenv", "base"), payload.NewMap("indir", "sub", "inlink", "sub/a.txt")},
		{"hash", payload.NewMap("cmd", "_file_hash", "path", "top.sls", "saltenv", "base"), wantHash},
		{"hash ignored", payload.NewMap("cmd", "_file_hash", "path", "skip.bak", "saltenv", "base"), ""},
		{"hash outside", payload.NewMap("cmd", "_file_hash", "path", "outdir/secret", "saltenv", "base"), ""},
		{"hash traversal", payload.NewMap("cmd", "_file_hash", "path", "sub/../../outside/secret", "saltenv", "base"), ""},
		{"hash missing", payload.NewMap("cmd", "_file_hash_and_stat", "path", "nope", "saltenv", "base"), []any{"", nil}},
		{"find missing", payload.NewMap("cmd", "_file_find", "path", "nope", "saltenv", "base"), payload.NewMap("path", "", "rel", "")},
		{"serve outside", payload.NewMap("cmd", "_serve_file", "path", "outlink", "saltenv", "base", "loc", 0), payload.NewMap("data", "", "dest", "")},
		{"serve negative loc", payload.NewMap("cmd", "_serve_file", "path", "top.sls", "saltenv", "base", "loc", -1), ""},
	} {
		if got := e.mustAES(tm, tc.load); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %#v, want %#v", tc.name, got, tc.want)
		}
	}

	hs := ask("cmd", "_file_hash_and_stat", "path", "top.sls", "saltenv", "base").([]any)
	if len(hs) != 2 || !reflect.DeepEqual(hs[0], wantHash) || len(hs[1].([]any)) != 10 {
		t.Fatalf("_file_hash_and_stat %v", hs)
	}
	ff := ask("cmd", "_file_find", "path", "inlink", "saltenv", "base").(*payload.Map)
	if ff.Str("rel") != "inlink" || ff.Str("back") != "roots" || ff.Str("path") != filepath.Join(root, "inlink") {
		t.Fatalf("_file_find %s", mapJSON(ff))
	}
	if got := ff.Keys(); !reflect.DeepEqual(got, []string{"path", "rel", "stat", "back"}) {
		t.Fatalf("_file_find keys %v", got)
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
	e.cfg.FileRoots = map[string][]string{"__env__": {filepath.Join(dir, "__env__")}}
	e.m.fs = newFileServer(e.cfg, quietLogger())
	tm := e.login("minion1", "m1")
	for _, env := range []string{"dev", "prod"} {
		got := e.mustAES(tm, payload.NewMap("cmd", "_serve_file", "path", "f", "saltenv", env, "loc", 0)).(*payload.Map)
		if string(got.Bytes("data")) != env {
			t.Errorf("%s: %s", env, mapJSON(got))
		}
	}
	if got := e.mustAES(tm, payload.NewMap("cmd", "_file_envs")); !reflect.DeepEqual(got, []any{"__env__"}) {
		t.Errorf("_file_envs %v", got)
	}
	// A saltenv that would lead __env__ out of its directory is unknown.
	got := e.mustAES(tm, payload.NewMap("cmd", "_serve_file", "path", "dev/f", "saltenv", "..", "loc", 0))
	if !reflect.DeepEqual(got, payload.NewMap("data", "", "dest", "")) {
		t.Errorf("saltenv ..: %v", got)
	}
}

// TestFileServerSocket downloads a file through a real ZeroMQ socket, the
// way a minion's fileclient does: _file_hash, then _serve_file chunks.
func TestFileServerSocket(t *testing.T) {
	e := newEnv(t, "file_buffer_size: 4096\n")
	tm := e.login("minion1", "m1")
	root := e.cfg.FileRoots["base"][0]
	content := bytes.Repeat([]byte("0123456789abcdef"), 1000) // 16000 bytes: 4 chunks
	if err := os.WriteFile(filepath.Join(root, "blob.bin"), content, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := transport.ListenReq(ctx, "127.0.0.1:0", e.m.HandleRequest, transport.ReqOptions{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	send := func(load *payload.Map) any {
		t.Helper()
		frame, nonce, err := message.EncodeAESRequest(tm.sess, load)
		if err != nil {
			t.Fatal(err)
		}
		reply, err := transport.Request(ctx, srv.Addr().String(), frame, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		v, err := message.OpenSendReply(tm.sess, reply, nonce, payload.DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	sum := sha256.Sum256(content)
	h := send(payload.NewMap("path", "blob.bin", "saltenv", "base", "cmd", "_file_hash")).(*payload.Map)
	if h.Str("hsum") != hex.EncodeToString(sum[:]) {
		t.Fatalf("hash %s", mapJSON(h))
	}
	var got []byte
	chunks := 0
	for {
		r := send(payload.NewMap("path", "blob.bin", "saltenv", "base", "cmd", "_serve_file", "loc", int64(len(got)))).(*payload.Map)
		data := r.Bytes("data")
		if len(data) == 0 {
			break
		}
		chunks++
		got = append(got, data...)
		if chunks > 10 {
			t.Fatal("too many chunks")
		}
	}
	if !bytes.Equal(got, content) || chunks != 4 {
		t.Fatalf("downloaded %d bytes in %d chunks", len(got), chunks)
	}
}
