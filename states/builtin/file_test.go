package builtin

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/modules"
	mbuiltin "github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// ftEnv is a minion environment with a local file client over srv.
func ftEnv(t *testing.T, srv string, opts ...any) *modules.Env {
	t.Helper()
	cache := t.TempDir()
	fc := mbuiltin.NewLocalFileClient(map[string][]string{"base": {srv}}, cache, "sha256")
	o := payload.NewMap("hash_type", "sha256", "cachedir", cache, "user", "root")
	for i := 0; i+1 < len(opts); i += 2 {
		o.Set(opts[i].(string), opts[i+1])
	}
	return &modules.Env{ID: "t", Opts: o, Grains: &payload.Map{}, Pillar: &payload.Map{},
		Services: map[string]any{fileServiceName: fc}}
}

// ftRun runs file.<fun> with keyword arguments.
func ftRun(t *testing.T, env *modules.Env, fun string, test bool, kv ...any) (states.Ret, error) {
	t.Helper()
	var fn *states.Function
	for _, f := range fileStates() {
		if f.Name == "file."+fun {
			f := f
			fn = &f
		}
	}
	if fn == nil {
		t.Fatalf("no file.%s", fun)
	}
	low := payload.NewMap(kv...)
	a, err := modules.BindKeywords(fn.Spec, low)
	if err != nil {
		t.Fatal(err)
	}
	c := &states.Call{ID: low.Str("name"), Name: low.Str("name"), State: "file", Fun: fun, Args: a, Low: low,
		Test: test, Saltenv: "base", Env: env, Render: render.Default()}
	return fn.Fn(context.Background(), c)
}

func TestFileStatesRegistered(t *testing.T) {
	reg := states.NewRegistry()
	if err := reg.Register(fileStates()...); err != nil {
		t.Fatal(err)
	}
	want := []string{"file.absent", "file.append", "file.blockreplace", "file.directory", "file.exists",
		"file.line", "file.managed", "file.missing", "file.mod_run_check_cmd", "file.recurse", "file.replace", "file.symlink", "file.touch"}
	if got := reg.Names(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("names = %v", got)
	}
	for _, f := range fileStates() {
		if f.Name == "file.mod_run_check_cmd" {
			continue // (cmd, filename): check_cmd's hook, not a state
		}
		if f.Spec.Params[0].Name != "name" || !f.Spec.Params[0].Required {
			t.Errorf("%s: first parameter must be the required name", f.Name)
		}
		if f.Watch != nil {
			t.Errorf("%s: Salt's file module has no mod_watch", f.Name)
		}
	}
}

func TestFileNormalizeMode(t *testing.T) {
	for _, c := range []struct {
		in   any
		want string
		ok   bool
	}{
		{int64(644), "0644", true}, {"0644", "0644", true}, {"644", "0644", true}, {"0o755", "0755", true},
		{"00600", "0600", true}, {`'0600'`, "0600", true}, {int64(4755), "4755", true}, {"0", "0000", true},
		{nil, "", false},
	} {
		got, ok := fileNormalizeMode(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("normalize(%v) = %q %v, want %q %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestFileFnmatchAndIncludeExclude(t *testing.T) {
	for _, c := range []struct {
		name, pat string
		want      bool
	}{
		{"a/b.keep", "*.keep", true}, {"b.keep", "*.kee", false}, {"x", "[!a]", true}, {"a", "[!a]", false},
		{"sub/two.txt", "sub/*", true}, {"one.txt", "sub/*", false}, {"a.c", "a?c", true}, {"[", "[", true},
	} {
		if got := py.Fnmatch(c.name, c.pat); got != c.want {
			t.Errorf("fnmatch(%q, %q) = %v", c.name, c.pat, got)
		}
	}
	if fileIncludeExclude("x.keep", nil, "*.keep") || !fileIncludeExclude("x", nil, "*.keep") {
		t.Error("exclude glob")
	}
	if !fileIncludeExclude("abc", "E@^a", nil) || fileIncludeExclude("abc", "E@^b", nil) {
		t.Error("include regex")
	}
	if !fileIncludeExclude("a.txt", []any{"*.md", "*.txt"}, nil) {
		t.Error("include list")
	}
}

func TestFilePyRegexp(t *testing.T) {
	for _, c := range []struct {
		pat   string
		flags any
		in    string
		want  bool
	}{
		{`abc\Z`, int64(0), "xabc", true},
		{`^b`, int64(8), "a\nb", true},
		{`^b`, int64(0), "a\nb", false},
		{`A`, "IGNORECASE", "a", true},
		{`a.b`, []any{"DOTALL"}, "a\nb", true},
		{"(?x) a b  # comment", int64(0), "ab", true},
		{`a(?#note)b`, int64(0), "ab", true},
		{`\101`, int64(0), "A", true},
		{`^\0101$`, int64(0), "\b1", true},
	} {
		f, err := filePyFlags(c.flags)
		if err != nil {
			t.Fatal(err)
		}
		re, err := filePyRegexp(c.pat, f)
		if err != nil {
			t.Errorf("%q: %v", c.pat, err)
			continue
		}
		if got := re.MatchString(c.in); got != c.want {
			t.Errorf("%q on %q = %v", c.pat, c.in, got)
		}
	}
	for _, bad := range []string{`a(?=b)`, `(?<!x)y`, `(a)\1`, `(?P<x>a)(?P=x)`} {
		if _, err := filePyRegexp(bad, 0); err == nil {
			t.Errorf("%q: expected an unsupported-regex error", bad)
		}
	}
	if _, err := filePyFlags("NOPE"); err == nil || err.Error() != "Invalid re flag given: NOPE" {
		t.Errorf("bad flag error: %v", err)
	}
}

func TestFilePySubn(t *testing.T) {
	for _, c := range []struct {
		pat, repl, in string
		count         int
		want          string
		n             int
	}{
		{`(\w+)=(\d)`, `\2=\1`, "a=1 b=2", 0, "1=a 2=b", 2},
		{`(?P<k>\w+)=(?P<v>\d)`, `\g<v>:\g<k>:\g<0>`, "a=1", 0, "1:a:a=1", 1},
		{`x`, `y`, "xxx", 2, "yyx", 2},
		{`x`, `\n\t\\`, "x", 0, "\n\t\\", 1},
		{`q`, `r`, "abc", 0, "abc", 0},
	} {
		re, err := filePyRegexp(c.pat, 0)
		if err != nil {
			t.Fatal(err)
		}
		got, n, err := filePySubn(re, c.repl, c.in, c.count)
		if err != nil || got != c.want || n != c.n {
			t.Errorf("sub(%q, %q, %q) = %q %d %v, want %q %d", c.pat, c.repl, c.in, got, n, err, c.want, c.n)
		}
	}
	re := regexp.MustCompile(`x`)
	if _, _, err := filePySubn(re, `\q`, "x", 0); err == nil {
		t.Error(`\q must be a bad escape as in Python`)
	}
}

func TestFileSplitters(t *testing.T) {
	if got := py.SplitLines("a\nb\r\nc\rd\x0be\u2028f", true); strings.Join(got, "|") != "a\n|b\r\n|c\r|d\x0b|e\u2028|f" {
		t.Errorf("splitlines keepends = %q", got)
	}
	if got := py.SplitLines("a\n\nb\n", false); strings.Join(got, "|") != "a||b" {
		t.Errorf("splitlines = %q", got)
	}
	if got := py.FileLines("a\r\nb\rc\nd"); strings.Join(got, "|") != "a\r\n|b\r|c\n|d" {
		t.Errorf("universal = %q", got)
	}
	if got := fileSplitBinaryLines("a\r\nb\rc"); strings.Join(got, "|") != "a\r\n|b\rc" {
		t.Errorf("binary = %q", got)
	}
}

func TestFileWhitespaceRegex(t *testing.T) {
	for _, c := range []struct {
		text, file string
		want       bool
	}{
		{"line   one", "line one\n", true},
		{"line one", "xline one\n", false},
		{`say "it's" now`, "say  \"it's\"  now\n", true},
		{"x = 1\ny = 2", "x = 1\n  y  =  2\n", true},
		{"a.b", "axb\n", false},
	} {
		expr, err := fileWhitespaceRegex(c.text)
		if err != nil {
			t.Fatal(err)
		}
		re, err := filePyRegexp(expr, filePyReM)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		if got := re.MatchString(c.file); got != c.want {
			t.Errorf("%q in %q = %v (%s)", c.text, c.file, got, expr)
		}
	}
	if _, err := fileWhitespaceRegex(`it's "open`); err == nil {
		t.Error("unclosed quote must fail like shlex")
	}
}

func TestFileManagedBackupMinion(t *testing.T) {
	dir, srv := t.TempDir(), t.TempDir()
	env := ftEnv(t, srv)
	target := filepath.Join(dir, "conf")
	if err := os.WriteFile(target, []byte("old\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	ret, err := ftRun(t, env, "managed", false, "name", target, "contents", "new", "backup", "minion")
	if err != nil || ret.Result != states.True {
		t.Fatalf("ret %+v err %v", ret, err)
	}
	cache, _ := env.Opts.Get("cachedir")
	bkdir := filepath.Join(cache.(string), "file_backup", strings.TrimPrefix(dir, "/"))
	ents, err := os.ReadDir(bkdir)
	if err != nil || len(ents) != 1 {
		t.Fatalf("backup dir %s: %v %v", bkdir, ents, err)
	}
	if !regexp.MustCompile(`^conf_[A-Z][a-z]{2}_[A-Z][a-z]{2}_\d\d_\d\d:\d\d:\d\d_\d{1,6}_\d{4}$`).MatchString(ents[0].Name()) {
		t.Errorf("backup name %q", ents[0].Name())
	}
	data, _ := os.ReadFile(filepath.Join(bkdir, ents[0].Name()))
	st, _ := os.Stat(filepath.Join(bkdir, ents[0].Name()))
	if string(data) != "old\n" || st.Mode().Perm() != 0o640 {
		t.Errorf("backup %q %v", data, st.Mode())
	}
	if st, _ := os.Stat(target); st.Mode().Perm() != 0o640 {
		t.Errorf("target mode changed to %v", st.Mode())
	}
}

func TestFileManagedKeepSourceFalse(t *testing.T) {
	dir, srv := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(srv, "src"), []byte("payload\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := ftEnv(t, srv)
	target := filepath.Join(dir, "out")
	ret, err := ftRun(t, env, "managed", false, "name", target, "source", "salt://src", "keep_source", false)
	if err != nil || ret.Result != states.True {
		t.Fatalf("ret %+v err %v", ret, err)
	}
	fc := env.Services[fileServiceName].(*mbuiltin.SaltFileClient)
	if p := fc.IsCached("salt://src", "base"); p != "" {
		t.Errorf("cached copy %s kept", p)
	}
	if data, _ := os.ReadFile(target); string(data) != "payload\n" {
		t.Errorf("target %q", data)
	}
}

func TestFileManagedWithoutFileClient(t *testing.T) {
	dir := t.TempDir()
	env := &modules.Env{ID: "t", Opts: &payload.Map{}}
	ret, err := ftRun(t, env, "managed", false, "name", filepath.Join(dir, "x"), "contents", []any{"a", int64(1)})
	if err != nil || ret.Result != states.True {
		t.Fatalf("contents without a file client: %+v %v", ret, err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "x")); string(data) != "a\n1\n" {
		t.Errorf("contents %q", data)
	}
	ret, err = ftRun(t, env, "managed", false, "name", filepath.Join(dir, "y"), "source", "salt://nope")
	if err != nil || ret.Result != states.False {
		t.Fatalf("salt:// without a file client must fail the state: %+v %v", ret, err)
	}
}

// ftDirLister adds DirList to the local file client.
type ftDirLister struct {
	*mbuiltin.SaltFileClient
	srv string
}

func (d ftDirLister) DirList(_ context.Context, _, prefix string) (any, error) {
	var out []any
	_ = filepath.WalkDir(d.srv, func(p string, e os.DirEntry, err error) error {
		if err == nil && e.IsDir() && p != d.srv {
			rel, _ := filepath.Rel(d.srv, p)
			if strings.HasPrefix(rel, prefix) {
				out = append(out, rel)
			}
		}
		return nil
	})
	return out, nil
}

func TestFileRecurseIncludeEmpty(t *testing.T) {
	dir, srv := t.TempDir(), t.TempDir()
	for _, d := range []string{"tree/empty", "tree/full"} {
		if err := os.MkdirAll(filepath.Join(srv, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(srv, "tree/full/f"), []byte("f\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := ftEnv(t, srv)
	env.Services[fileServiceName] = ftDirLister{env.Services[fileServiceName].(*mbuiltin.SaltFileClient), srv}
	out := filepath.Join(dir, "out")
	ret, err := ftRun(t, env, "recurse", false, "name", out, "source", "salt://tree", "include_empty", true, "dir_mode", "0750")
	if err != nil || ret.Result != states.True {
		t.Fatalf("%+v %v", ret, err)
	}
	st, err := os.Stat(filepath.Join(out, "empty"))
	if err != nil || !st.IsDir() || st.Mode().Perm() != 0o750 {
		t.Fatalf("empty dir: %v %v", st, err)
	}
	var keys []string
	for _, k := range ret.Changes.Keys() {
		keys = append(keys, strings.TrimPrefix(k, out))
	}
	sort.Strings(keys)
	if strings.Join(keys, ",") != "/empty,/full,/full/f" {
		t.Errorf("changes %v", keys)
	}
	// Again: nothing to do.
	ret, err = ftRun(t, env, "recurse", false, "name", out, "source", "salt://tree", "include_empty", true, "dir_mode", "0750")
	if err != nil || ret.Result != states.True || ret.Changes.Len() != 0 || ret.Comment != "The directory "+out+" is in the correct state" {
		t.Fatalf("second run %+v %v", ret, err)
	}
}

func TestFileSymlinkOwnership(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown needs root")
	}
	dir := t.TempDir()
	env := ftEnv(t, t.TempDir())
	link := filepath.Join(dir, "l")
	if err := os.Symlink("/etc/hosts", link); err != nil {
		t.Fatal(err)
	}
	ret, err := ftRun(t, env, "symlink", true, "name", link, "target", "/etc/hosts", "user", "nobody", "group", "nogroup")
	if err != nil || ret.Result != states.None || ret.Changes.Str("ownership") != "root:root" ||
		ret.Comment != "The symlink "+link+" is present, but the ownership of the symlink would be changed from root:root to nobody:nogroup" {
		t.Fatalf("test run %+v %v", ret, err)
	}
	ret, err = ftRun(t, env, "symlink", false, "name", link, "target", "/etc/hosts", "user", "nobody", "group", "nogroup")
	if err != nil || ret.Result != states.True || ret.Changes.Str("ownership") != "nobody:nogroup" {
		t.Fatalf("run %+v %v", ret, err)
	}
	u, g := fileLinkOwner(link)
	if u != "nobody" || g != "nogroup" {
		t.Errorf("owner %v:%v", u, g)
	}
}

func TestFileManagedCheckCmdOutput(t *testing.T) {
	dir := t.TempDir()
	env := ftEnv(t, t.TempDir())
	target := filepath.Join(dir, "x")
	ret, err := ftRun(t, env, "managed", false, "name", target, "contents", "v", "check_cmd", "/bin/sh -c 'echo out; echo err >&2; exit 3' --")
	if err != nil {
		t.Fatal(err)
	}
	if ret.Result != states.False || ret.Comment != "check_cmd execution failed\nout\nerr" {
		t.Fatalf("%+v", ret)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Errorf("target created despite failing check_cmd: %v", err)
	}
}

func TestFileShlexSplit(t *testing.T) {
	got := fileShlexSplit(`a 'b c' "d \"e\"" f\ g`)
	if strings.Join(got, "|") != `a|b c|d "e"|f g` {
		t.Errorf("%q", got)
	}
}
