package builtin_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/salttest"
	"github.com/gsalt/gsalt/wire/payload"
)

// gzipB64 is s gzipped and base64-encoded, as salt-cp sends a chunk.
func gzipB64(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

// TestCPRecvGolden compares cp.recv and cp.recv_chunked, the minion side
// of salt-cp, with Salt 3006's (testdata/golden/cp_recv.json): returns,
// error texts and the files they leave. Chunks ending in "=" are passed
// by name: a positional "xxx=" string is a key=value argument.
func TestCPRecvGolden(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString
	runSuite(t, salttest.Suite{
		Name: "cp_recv",
		Calls: []salttest.Call{
			{Name: "recv into dir", Fun: "cp.recv", Args: []any{m("/src/a.txt", "A\n", "/src/b.txt", "B\n"), "{dir}/out"}, Files: map[string]string{"out/keep/": ""}},
			{Name: "recv same basename", Fun: "cp.recv", Args: []any{m("/src/a.txt", "A\n"), "{dir}/a.txt"}},
			{Name: "recv other name", Fun: "cp.recv", Args: []any{m("/src/a.txt", "A\n"), "{dir}/renamed"}},
			{Name: "recv overwrite", Fun: "cp.recv", Args: []any{m("/src/a.txt", "new\n"), "{dir}/a.txt"}, Files: map[string]string{"a.txt": "old content\n"}},
			{Name: "recv unavailable", Fun: "cp.recv", Args: []any{m("/src/a.txt", "A\n"), "{dir}/no/such/x"}},
			{Name: "recv empty", Fun: "cp.recv", Args: []any{m(), "{dir}/x"}},
			{Name: "chunked plain", Fun: "cp.recv_chunked", Args: []any{"{dir}/f.txt", b64([]byte("hello\n"))}, Kwargs: []any{"compressed", false}},
			{Name: "chunked gzip", Fun: "cp.recv_chunked", Args: []any{"{dir}/f.txt", gzipB64(t, "zipped\n")}},
			{Name: "chunked truncates", Fun: "cp.recv_chunked", Args: []any{"{dir}/f.txt", b64([]byte("B"))}, Kwargs: []any{"compressed", false}, Files: map[string]string{"f.txt": "long old text\n"}},
			{Name: "chunked append", Fun: "cp.recv_chunked", Args: []any{"{dir}/f.txt", gzipB64(t, "second\n")}, Kwargs: []any{"append", true}, Files: map[string]string{"f.txt": "first\n"}},
			{Name: "chunked makes parents", Fun: "cp.recv_chunked", Args: []any{"{dir}/a/b/f.txt"}, Kwargs: []any{"chunk", b64([]byte("deep\n")), "compressed", false, "mode", int64(0o600)}},
			{Name: "chunked mode", Fun: "cp.recv_chunked", Args: []any{"{dir}/m.txt"}, Kwargs: []any{"chunk", b64([]byte("m\n")), "compressed", false, "mode", int64(0o640)}},
			{Name: "chunked into a dir", Fun: "cp.recv_chunked", Args: []any{"{dir}/d", b64([]byte("x"))}, Kwargs: []any{"compressed", false}, Files: map[string]string{"d/keep": "k"}},
			{Name: "chunked not gzip", Fun: "cp.recv_chunked", Args: []any{"{dir}/f.txt"}, Kwargs: []any{"chunk", b64([]byte("hello"))}},
			{Name: "chunked parent is a file", Fun: "cp.recv_chunked", Args: []any{"{dir}/p/f.txt", b64([]byte("x"))}, Kwargs: []any{"compressed", false}, Files: map[string]string{"p": "file"}},
			{Name: "dir made", Fun: "cp.recv_chunked", Args: []any{"{dir}/new/sub", nil}},
			{Name: "dir exists", Fun: "cp.recv_chunked", Args: []any{"{dir}/d", nil}, Files: map[string]string{"d/keep": "k"}},
			{Name: "dir is a file", Fun: "cp.recv_chunked", Args: []any{"{dir}/f", nil}, Files: map[string]string{"f": "x"}},
			{Name: "dir below a file", Fun: "cp.recv_chunked", Args: []any{"{dir}/f/g/h", nil}, Files: map[string]string{"f": "x"}},
		},
	})
}

// TestCPRecvChunkedModeAndRetcode checks what the golden files cannot
// see: the mode the first chunk sets (not an appended one) and retcode
// 1 for a failed chunk, which Salt sets through __context__["retcode"].
func TestCPRecvChunkedModeAndRetcode(t *testing.T) {
	r := goldenRegistry(t)
	env := &modules.Env{ID: "m1", Registry: r, Opts: payload.NewMap("id", "m1"), Log: slog.New(slog.DiscardHandler)}
	dir := t.TempDir()
	f := filepath.Join(dir, "sub", "f")
	run := func(args ...any) modules.Result {
		return r.Execute(context.Background(), modules.Binder{}, env, "cp.recv_chunked", args, nil)
	}
	kw := func(kv ...any) *payload.Map { return payload.NewMap(append(kv, "__kwarg__", true)...) }
	if res := run(f, kw("chunk", gzipB64(t, "one"), "mode", int64(0o640))); res.Retcode != 0 || res.Return != true {
		t.Fatalf("first chunk: %d %v", res.Retcode, res.Return)
	}
	// salt-cp sends the chunk positionally as bytes (b64encode's result),
	// which a trailing "=" does not turn into a key=value argument.
	if res := run(f, []byte(gzipB64(t, "two")), true, true, int64(0o600)); res.Retcode != 0 || res.Return != true {
		t.Fatalf("second chunk: %d %v", res.Retcode, res.Return)
	}
	st, err := os.Stat(f)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(f)
	if st.Mode().Perm() != 0o640 || string(b) != "onetwo" {
		t.Fatalf("got mode %o content %q, want 640 %q", st.Mode().Perm(), b, "onetwo")
	}
	if res := run(dir, kw("chunk", gzipB64(t, "x"))); res.Retcode != 1 || res.Return != "[Errno 21] Is a directory: '"+dir+"'" {
		t.Fatalf("chunk into a directory: %d %v", res.Retcode, res.Return)
	}
	if res := run(f, nil); res.Retcode != 0 || res.Return != "Path exists and is a file" {
		t.Fatalf("dir over a file: %d %v", res.Retcode, res.Return)
	}
}
