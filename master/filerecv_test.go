package master

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestFileRecv drives _file_recv (cp.push's request) through the AES
// request path: Salt's answers for each refusal, the destination under
// cachedir/minions/<id>/files, chunks written at their offsets.
func TestFileRecv(t *testing.T) {
	e := newEnv(t, "file_recv: true\nfile_recv_max_size: 1\n")
	var logs testutil.Buffer
	e.m.log = slog.New(slog.NewTextHandler(&logs, nil))
	tm := e.login("minion1", "m1")
	p1 := e.login("proxy1", "p1")
	files := filepath.Join(e.cfg.CacheDir, "minions", "m1", "files")
	recv := func(pairs ...any) *payload.Map {
		return payload.NewMap(append([]any{"cmd", "_file_recv", "id", "m1", "tok", tm.tok(t)}, pairs...)...)
	}
	mb := 1024 * 1024
	cases := []struct {
		name string
		load *payload.Map
		want any
		// file is the path under files that must hold content afterwards
		// ("" checks nothing); log is a text the master must have logged.
		file, content, log string
	}{
		{name: "first chunk", load: recv("path", []any{"etc", "fstab"}, "size", 6, "loc", 0, "data", []byte("abc")),
			want: true, file: "etc/fstab", content: "abc"},
		{name: "second chunk appends", load: recv("path", []any{"etc", "fstab"}, "size", 6, "loc", 3, "data", []byte("def")),
			want: true, file: "etc/fstab", content: "abcdef"},
		{name: "a re-sent chunk lands at its offset", load: recv("path", []any{"etc", "fstab"}, "loc", 3, "data", []byte("DEF")),
			want: true, file: "etc/fstab", content: "abcDEF"},
		{name: "loc 0 truncates", load: recv("path", []any{"etc", "fstab"}, "loc", 0, "data", "x"),
			want: true, file: "etc/fstab", content: "x"},
		{name: "normalised", load: recv("path", []any{"a", ".", "b", "..", "c"}, "loc", 0, "data", []byte("n")),
			want: true, file: "a/c", content: "n"},
		{name: "climbs inside", load: recv("path", []any{"a", "..", "top"}, "loc", 0, "data", []byte("t")),
			want: true, file: "top", content: "t"},
		{name: "climbs out", load: recv("path", []any{"a", "..", "..", "..", "p1", "files", "x"}, "loc", 0, "data", []byte("x")),
			want: false, log: "Attempt to write received file outside of master cache directory!"},
		{name: "dot-dot element", load: recv("path", []any{"../", "x"}, "loc", 0, "data", []byte("x")), want: false},
		{name: "absolute", load: recv("path", []any{"", "etc", "passwd"}, "loc", 0, "data", []byte("x")), want: false},
		{name: "empty path", load: recv("path", []any{}, "loc", 0, "data", []byte("x")), want: false},
		{name: "path not a list", load: recv("path", "etc/fstab", "loc", 0, "data", []byte("x")), want: false},
		{name: "no loc", load: recv("path", []any{"x"}, "data", []byte("x")), want: false},
		{name: "negative loc", load: recv("path", []any{"x"}, "loc", -1, "data", []byte("x")), want: false,
			log: "Invalid file pointer: load[loc] < 0"},
		{name: "at the size limit", load: recv("path", []any{"big"}, "loc", mb-1, "data", []byte("z")),
			want: true, file: "big", content: string(make([]byte, mb-1)) + "z"},
		{name: "beyond the size limit", load: recv("path", []any{"big"}, "loc", mb, "data", []byte("z")), want: false,
			log: "file_recv_max_size limit of 1048576 MB exceeded! ['big'] will be truncated."},
		{name: "no tok", load: payload.NewMap("cmd", "_file_recv", "id", "m1", "path", []any{"x"}, "loc", 0, "data", "x"), want: false,
			log: "Received incomplete call from m1 for '_file_recv', missing 'tok'"},
		{name: "another minion's tok", load: payload.NewMap("cmd", "_file_recv", "id", "m1", "tok", p1.tok(t), "path", []any{"x"}, "loc", 0, "data", "x"),
			want: payload.NewMap()},
		{name: "bad id", load: recv("id", "../m1", "path", []any{"x"}, "loc", 0, "data", "x"), want: false},
	}
	for _, c := range cases {
		got := e.mustAES(tm, c.load)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %#v, want %#v", c.name, got, c.want)
		}
		if c.file != "" {
			b, err := os.ReadFile(filepath.Join(files, filepath.FromSlash(c.file)))
			if err != nil || !bytes.Equal(b, []byte(c.content)) {
				t.Errorf("%s: %s holds %.40q (%v), want %.40q", c.name, c.file, b, err, c.content)
			}
		}
		if c.log != "" && !strings.Contains(logs.String(), c.log) {
			t.Errorf("%s: no log %q in\n%s", c.name, c.log, logs.String())
		}
	}
	if _, err := os.Stat(filepath.Join(e.cfg.CacheDir, "minions", "p1", "files", "x")); err == nil {
		t.Error("m1 wrote into p1's files")
	}
}

// TestFileRecvOff: with file_recv off (Salt's default) every chunk is
// refused and nothing is written; a symbolic link in the files folder
// does not lead out of it.
func TestFileRecvOff(t *testing.T) {
	e := newEnv(t, "")
	tm := e.login("minion1", "m1")
	load := payload.NewMap("cmd", "_file_recv", "id", "m1", "tok", tm.tok(t), "path", []any{"x"}, "loc", 0, "data", []byte("x"))
	if got := e.mustAES(tm, load); got != false {
		t.Fatalf("file_recv off: %v", got)
	}
	if _, err := os.Stat(filepath.Join(e.cfg.CacheDir, "minions", "m1", "files")); err == nil {
		t.Fatal("files folder created with file_recv off")
	}

	e2 := newEnv(t, "file_recv: true\n")
	tm2 := e2.login("minion1", "m1")
	files := filepath.Join(e2.cfg.CacheDir, "minions", "m1", "files")
	outside := t.TempDir()
	if err := os.MkdirAll(files, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(files, "link")); err != nil {
		t.Fatal(err)
	}
	load = payload.NewMap("cmd", "_file_recv", "id", "m1", "tok", tm2.tok(t), "path", []any{"link", "x"}, "loc", 0, "data", []byte("x"))
	if got := e2.mustAES(tm2, load); got != false {
		t.Fatalf("through a link: %v", got)
	}
	if _, err := os.Stat(filepath.Join(outside, "x")); err == nil {
		t.Fatal("written through a symbolic link out of the files folder")
	}
}

// BenchmarkFileRecv is one 1 MiB _file_recv chunk (a master's
// file_buffer_size) through the AES request path: decryption, the tok
// check (an RSA public-key operation per chunk, as in Salt) and the write
// at its offset; the minion side's encryption runs in the same process.
func BenchmarkFileRecv(b *testing.B) {
	e := newEnv(b, "file_recv: true\nfile_recv_max_size: 100000\n")
	tm := e.login("minion1", "m1")
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 1<<16)
	tok := tm.tok(b)
	b.SetBytes(int64(len(chunk)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		load := payload.NewMap("cmd", "_file_recv", "id", "m1", "tok", tok, "path", []any{"bench.bin"},
			"loc", int64(i%64)*int64(len(chunk)), "data", chunk)
		if got := e.mustAES(tm, load); got != true {
			b.Fatalf("chunk %d: %v", i, got)
		}
	}
}
