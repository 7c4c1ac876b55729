package master

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
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

// TestFileServerRecyclesReplies fetches the chunks of a file over a real
// socket from many goroutines at once, with the transport handing reply
// buffers back (ReplyRelease): every reply carries its own chunk (a
// buffer is never reused while a reply in it is being written), buffers
// are reused, and none is left lent out at the end.
func TestFileServerRecyclesReplies(t *testing.T) {
	const chunk = 64 << 10
	e := newEnv(t, "file_buffer_size: 65536\n")
	tm := e.login("minion1", "m1")
	root := e.cfg.FileRoots["base"][0]
	content := make([]byte, 24*chunk+100)
	for i := range content {
		content[i] = byte(i*31 + i/chunk)
	}
	if err := os.WriteFile(filepath.Join(root, "blob.bin"), content, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	released := 0
	var mu sync.Mutex
	rel := e.m.ReplyRelease()
	srv, err := transport.ListenReq(ctx, "127.0.0.1:0", e.m.HandleRequest, transport.ReqOptions{Logger: quietLogger(),
		Release: func(b []byte) {
			mu.Lock()
			released++
			mu.Unlock()
			rel(b)
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	pool := &transport.ReqPool{Addr: srv.Addr().String(), MaxIdle: 8}
	defer pool.Close()
	var fetches atomic.Int64
	fetch := func(loc int64) ([]byte, error) {
		fetches.Add(1)
		frame, nonce, err := message.EncodeAESRequest(tm.sess, payload.NewMap("path", "blob.bin", "saltenv", "base", "cmd", "_serve_file", "loc", loc))
		if err != nil {
			return nil, err
		}
		reply, err := pool.Send(ctx, frame, 1, 20*time.Second)
		if err != nil {
			return nil, err
		}
		v, err := message.OpenSendReplyInPlace(tm.sess, reply, nonce, payload.DefaultLimits)
		if err != nil {
			return nil, err
		}
		return v.(*payload.Map).Bytes("data"), nil
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range 3 {
				for i := w; i <= len(content)/chunk; i += 2 {
					loc := int64(i * chunk)
					data, err := fetch(loc)
					if err != nil {
						errs <- err
						return
					}
					if want := content[loc:min(int(loc)+chunk, len(content))]; !bytes.Equal(data, want) {
						errs <- fmt.Errorf("round %d: chunk at %d: %d bytes, not the file's", round, loc, len(data))
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Release runs once the write returned, which may be just after the
	// client read the last reply.
	testutil.Eventually(t, 10*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return released >= int(fetches.Load())
	}, "every reply released")
	lent := 0
	e.m.lent.Range(func(_, _ any) bool { lent++; return true })
	if lent != 0 {
		t.Errorf("%d reply buffers still lent out after every reply was written", lent)
	}
	if b := e.m.replyBufs.get(); cap(b) < chunk {
		t.Errorf("no chunk-sized reply buffer came back to the pool")
	}
}

// TestServeFileReplyBufferLent: a chunk reply's buffer is not reused until
// the transport releases the reply; once released, the next chunk reply
// is built in it.
func TestServeFileReplyBufferLent(t *testing.T) {
	const chunk = 64 << 10
	e := newEnv(t, "file_buffer_size: 65536\n")
	tm := e.login("minion1", "m1")
	root := e.cfg.FileRoots["base"][0]
	content := make([]byte, 4*chunk)
	for i := range content {
		content[i] = byte(i*13 + i/chunk)
	}
	if err := os.WriteFile(filepath.Join(root, "blob.bin"), content, 0o644); err != nil {
		t.Fatal(err)
	}
	release := e.m.ReplyRelease()
	serve := func(loc int64) ([]byte, []byte) {
		t.Helper()
		frame, nonce, err := message.EncodeAESRequest(tm.sess, payload.NewMap("path", "blob.bin", "saltenv", "base", "cmd", "_serve_file", "loc", loc))
		if err != nil {
			t.Fatal(err)
		}
		reply, ok := e.m.HandleRequest(context.Background(), frame)
		if !ok {
			t.Fatal("no reply")
		}
		v, err := message.OpenSendReply(tm.sess, reply, nonce, payload.DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		return reply, v.(*payload.Map).Bytes("data")
	}
	r1, d1 := serve(0)
	r1copy := bytes.Clone(r1)
	r2, d2 := serve(chunk)
	if !bytes.Equal(r1, r1copy) {
		t.Fatal("a reply not yet released was overwritten by the next one")
	}
	if !bytes.Equal(d1, content[:chunk]) || !bytes.Equal(d2, content[chunk:2*chunk]) {
		t.Fatal("chunk data differs from the file")
	}
	release(r1)
	r3, d3 := serve(2 * chunk)
	if !bytes.Equal(d3, content[2*chunk:3*chunk]) {
		t.Fatal("third chunk differs from the file")
	}
	if !within(r3, r1[:0:cap(r1)]) {
		t.Error("the released reply buffer was not reused for the next chunk")
	}
	// r3 is in a recycled buffer and not released yet: the next reply
	// must not overwrite it either.
	r3copy := bytes.Clone(r3)
	r4, d4 := serve(3 * chunk)
	if !bytes.Equal(r3, r3copy) {
		t.Fatal("a reply in a recycled buffer was overwritten before its release")
	}
	if !bytes.Equal(d4, content[3*chunk:]) {
		t.Fatal("fourth chunk differs from the file")
	}
	release(r2)
	release(r3)
	release(r4)
	lent := 0
	e.m.lent.Range(func(_, _ any) bool { lent++; return true })
	if lent != 0 {
		t.Errorf("%d reply buffers still lent out", lent)
	}
}
