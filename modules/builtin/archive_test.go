package builtin_test

import (
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/modules/salttest"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestArchiveGolden compares the archive module with Salt 3006
// (testdata/golden/archive.json): listing every tar compression and zip,
// is_encrypted, zip/unzip (passwords, excludes, trim_output), the tar,
// gzip, gunzip and unzip binaries, and the error texts.
func TestArchiveGolden(t *testing.T) {
	srv := testutil.ArchiveSrv(t)
	src := map[string]string{"src/one.txt": "one\n", "src/two/three.txt": "three\n", "plain.txt": "plain text\n"}
	calls := []salttest.Call{
		{Name: "list tar", Fun: "archive.list", Args: []any{"{srv}/app.tar"}},
		{Name: "list tar.gz verbose", Fun: "archive.list", Args: []any{"{srv}/app.tar.gz"}, Kwargs: []any{"verbose", true}},
		{Name: "list tar.bz2", Fun: "archive.list", Args: []any{"{srv}/app.tar.bz2"}},
		{Name: "list tar.xz verbose", Fun: "archive.list", Args: []any{"{srv}/app.tar.xz"}, Kwargs: []any{"verbose", true}},
		{Name: "list salt url", Fun: "archive.list", Args: []any{"salt://app.tar.gz"}},
		{Name: "list strip 1", Fun: "archive.list", Args: []any{"{srv}/app.tar.gz"}, Kwargs: []any{"strip_components", 1}},
		{Name: "list strip 1 verbose", Fun: "archive.list", Args: []any{"{srv}/app.tar.gz"}, Kwargs: []any{"strip_components", 1, "verbose", true}},
		{Name: "list strip 5", Fun: "archive.list", Args: []any{"{srv}/app.tar.gz"}, Kwargs: []any{"strip_components", 5}},
		{Name: "list strip negative", Fun: "archive.list", Args: []any{"{srv}/app.tar.gz"}, Kwargs: []any{"strip_components", -1}},
		{Name: "list flat verbose", Fun: "archive.list", Args: []any{"{srv}/flat.tgz"}, Kwargs: []any{"verbose", true}},
		{Name: "list format given", Fun: "archive.list", Args: []any{"{srv}/app.bin"}, Kwargs: []any{"archive_format", "tar"}},
		{Name: "list format unguessable", Fun: "archive.list", Args: []any{"{srv}/app.bin"}},
		{Name: "list format unsupported", Fun: "archive.list", Args: []any{"{srv}/app.bin"}, Kwargs: []any{"archive_format", "7z"}},
		{Name: "list garbage tar", Fun: "archive.list", Args: []any{"{srv}/garbage.tgz"}},
		{Name: "list garbage zip", Fun: "archive.list", Args: []any{"{srv}/garbage.zip"}},
		{Name: "list missing", Fun: "archive.list", Args: []any{"{srv}/missing.tar"}},
		{Name: "list zip", Fun: "archive.list", Args: []any{"{srv}/app.zip"}},
		{Name: "list zip verbose", Fun: "archive.list", Args: []any{"{srv}/app.zip"}, Kwargs: []any{"verbose", true}},
		{Name: "list zip no dir entries", Fun: "archive.list", Args: []any{"{srv}/nodirs.zip"}, Kwargs: []any{"verbose", true}},
		{Name: "list flat zip verbose", Fun: "archive.list", Args: []any{"{srv}/flat.zip"}, Kwargs: []any{"verbose", true}},
		{Name: "list enc zip", Fun: "archive.list", Args: []any{"{srv}/enc.zip"}},
		{Name: "is_encrypted no", Fun: "archive.is_encrypted", Args: []any{"{srv}/app.zip"}},
		{Name: "is_encrypted yes", Fun: "archive.is_encrypted", Args: []any{"{srv}/enc.zip"}},
		{Name: "is_encrypted salt url", Fun: "archive.is_encrypted", Args: []any{"salt://enc.zip"}},
		{Name: "is_encrypted not zip", Fun: "archive.is_encrypted", Args: []any{"{srv}/garbage.zip"}},
		{Name: "is_encrypted missing", Fun: "archive.is_encrypted", Args: []any{"{srv}/nope.zip"}},
		{Name: "unzip", Fun: "archive.unzip", Args: []any{"{srv}/app.zip", "{dir}/out"}},
		{Name: "unzip no dir entries", Fun: "archive.unzip", Args: []any{"{srv}/nodirs.zip", "{dir}/out"}},
		{Name: "unzip excludes", Fun: "archive.unzip", Args: []any{"{srv}/app.zip", "{dir}/out"}, Kwargs: []any{"excludes", "app/run.sh, app/link"}},
		{Name: "unzip excludes list", Fun: "archive.unzip", Args: []any{"{srv}/flat.zip", "{dir}/out"}, Kwargs: []any{"excludes", []any{"x.txt"}}},
		{Name: "unzip trim", Fun: "archive.unzip", Args: []any{"{srv}/app.zip", "{dir}/out"}, Kwargs: []any{"trim_output", 2}},
		{Name: "unzip trim true", Fun: "archive.unzip", Args: []any{"{srv}/flat.zip", "{dir}/out"}, Kwargs: []any{"trim_output", true}},
		{Name: "unzip password", Fun: "archive.unzip", Args: []any{"{srv}/enc.zip", "{dir}/out"}, Kwargs: []any{"password", "pw123"}},
		{Name: "unzip no password", Fun: "archive.unzip", Args: []any{"{srv}/enc.zip", "{dir}/out"}},
		{Name: "unzip bad password", Fun: "archive.unzip", Args: []any{"{srv}/enc.zip", "{dir}/out"}, Kwargs: []any{"password", "wrong"}},
		{Name: "unzip not zip", Fun: "archive.unzip", Args: []any{"{srv}/garbage.zip", "{dir}/out"}},
		{Name: "unzip missing", Fun: "archive.unzip", Args: []any{"{srv}/nope.zip", "{dir}/out"}},
		{Name: "cmd_unzip", Fun: "archive.cmd_unzip", Args: []any{"{srv}/flat.zip", "{dir}/out"}},
		{Name: "cmd_unzip excludes password", Fun: "archive.cmd_unzip", Args: []any{"{srv}/enc.zip", "{dir}/out"}, Kwargs: []any{"password", "pw123", "excludes", "nothing"}},
		{Name: "cmd_unzip fails", Fun: "archive.cmd_unzip", Args: []any{"{srv}/garbage.zip", "{dir}/out"}},
		{Name: "tar extract", Fun: "archive.tar", Args: []any{"xf", "{srv}/app.tar.gz"}, Kwargs: []any{"dest", "{dir}"}},
		{Name: "tar create and list", Fun: "archive.tar", Args: []any{"-cvf", "{dir}/new.tar", "src"}, Kwargs: []any{"cwd", "{dir}"}, Files: src, Sorted: true},
		{Name: "tar empty options", Fun: "archive.tar", Args: []any{"", "{dir}/x.tar"}},
		{Name: "gzip", Fun: "archive.gzip", Args: []any{"{dir}/plain.txt"}, Files: src},
		{Name: "gzip options", Fun: "archive.gzip", Args: []any{"{dir}/plain.txt"}, Kwargs: []any{"options", "-9"}, Files: src},
		{Name: "gunzip missing", Fun: "archive.gunzip", Args: []any{"{dir}/nope.gz"}},
		{Name: "zip cwd", Fun: "archive.zip", Args: []any{"{dir}/out.zip", "src/one.txt"}, Kwargs: []any{"cwd", "{dir}"}, Files: src},
		{Name: "zip relative no cwd", Fun: "archive.zip", Args: []any{"{dir}/out.zip", "src"}, Files: src},
		{Name: "zip cwd relative", Fun: "archive.zip", Args: []any{"{dir}/out.zip", "src"}, Kwargs: []any{"cwd", "rel"}, Files: src},
		{Name: "zip bad target", Fun: "archive.zip", Args: []any{"{dir}/no/such/out.zip", "{dir}/plain.txt"}, Files: src},
	}
	for i := range calls {
		if calls[i].Files == nil {
			calls[i].Files = map[string]string{}
		}
	}
	// The zip files Salt and gsalt write differ in bytes (timestamps,
	// deflate); their members are checked by TestArchiveZipRoundTrip.
	runSuite(t, salttest.Suite{Name: "archive", Srv: srv, Calls: calls, FilesUnder: "out/"})
}

// TestArchiveZipRoundTrip zips a tree with archive.zip and checks what
// archive.list and archive.unzip (and the unzip binary) read back.
func TestArchiveZipRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for n, body := range map[string]string{"src/one.txt": "one\n", "src/two/three.txt": "three\n"} {
		p := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	r := goldenRegistry(t)
	res := r.Execute(t.Context(), modulesBinder(), testEnv(r), "archive.zip", []any{filepath.Join(dir, "o.zip"), "src", kwargs("cwd", dir)}, nil)
	if res.Retcode != 0 {
		t.Fatalf("zip: %v", res.Return)
	}
	got := sortedStrings(res.Return)
	want := []string{"src/", "src/one.txt", "src/two/", "src/two/three.txt"}
	if !equalStrings(got, want) {
		t.Fatalf("zip returned %v, want %v", got, want)
	}
	res = r.Execute(t.Context(), modulesBinder(), testEnv(r), "archive.list", []any{filepath.Join(dir, "o.zip")}, nil)
	if !equalStrings(sortedStrings(res.Return), want) {
		t.Fatalf("list returned %v", res.Return)
	}
	if out, err := exec.Command("unzip", "-t", filepath.Join(dir, "o.zip")).CombinedOutput(); err != nil {
		t.Fatalf("unzip -t: %v\n%s", err, out)
	}
	res = r.Execute(t.Context(), modulesBinder(), testEnv(r), "archive.unzip", []any{filepath.Join(dir, "o.zip"), filepath.Join(dir, "x")}, nil)
	if res.Retcode != 0 {
		t.Fatalf("unzip: %v", res.Return)
	}
	b, err := os.ReadFile(filepath.Join(dir, "x", "src", "two", "three.txt"))
	if err != nil || string(b) != "three\n" {
		t.Fatalf("extracted %q %v", b, err)
	}
	fi, err := os.Stat(filepath.Join(dir, "x", "src", "one.txt"))
	if err != nil || fi.Mode().Perm() != fs.FileMode(0o640) {
		t.Fatalf("mode %v %v, want 0640 kept", fi, err)
	}
}

func modulesBinder() modules.Binder { return modules.Binder{} }

// testEnv is a bare minion environment over r.
func testEnv(r *modules.Registry) *modules.Env {
	files := builtin.NewLocalFileClient(map[string][]string{"base": {}}, os.TempDir(), "sha256")
	return &modules.Env{ID: "t", Registry: r, Opts: payload.NewMap("file_client", "local"), Log: slog.New(slog.DiscardHandler),
		Services: map[string]any{"files": files}}
}

// kwargs is a keyword-argument map for Execute.
func kwargs(kv ...any) *payload.Map {
	return payload.NewMap(append([]any{"__kwarg__", true}, kv...)...)
}

func sortedStrings(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func equalStrings(a, b []string) bool { return slices.Equal(a, b) }
