package builtin_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/fileserver"
	"github.com/gsalt/gsalt/internal/vectors"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/modules/salttest"
	"github.com/gsalt/gsalt/wire/payload"
)

// cpTree is a file_roots tree for the cp directory functions: nested
// files, an empty directory, a sibling whose name starts like another
// directory and templates.
var cpTree = map[string]string{
	"top.sls":           "base:\n  '*': []\n",
	"web/index.html":    "<h1>hi</h1>\n",
	"web/css/site.css":  "body {}\n",
	"web/js/app.js":     "let x = 1;\n",
	"web/empty/sub/":    "",
	"webapp/x.txt":      "not below web/\n",
	"tmpl/hello.txt":    "Hello {{ who }} from {{ grains.id }} in {{ saltenv }}{% if pillar.get('p') %} with {{ pillar.p }}{% endif %}\n",
	"tmpl/bad.txt":      "{{ nope( }}\n",
	"tmpl/fun.txt":      "{{ salt['slsutil.boolstr'](True) }} {{ opts.id }} {{ salt['cp.cache_dest']('salt://a?saltenv=x') | length > 0 }}\n",
	"tmpl/undef.txt":    "{{ nope.x }}\n",
	"tmpl/shebang.txt":  "#!yaml\nk: {{ who }}\n",
	"conf/{{x}}/a.conf": "literal braces\n",
}

// cpCacheRe matches the minion cache directory of either side: Salt's
// <root_dir>/var/cache/salt/minion and the golden harness's <tmp>/cache.
var cpCacheRe = regexp.MustCompile(`[^\s'"]*?/(?:root/var/cache/salt/minion|cache)/(files|localfiles|extrn_files)\b`)

// cpLocalRe matches the source directory in a localfiles cache path (the
// {dir} of another call).
var cpLocalRe = regexp.MustCompile(`/localfiles/\S*/`)

// cpNormalize puts {cache} for the cache directory in every string.
func cpNormalize(_ string, v any) any {
	return anyStrings(v, func(x string) string {
		x = cpCacheRe.ReplaceAllString(x, "{cache}/$1")
		return cpLocalRe.ReplaceAllString(x, "/localfiles/{other}/")
	})
}

// TestCPDirsGolden compares cp.get_dir, cache_dir, cache_master,
// cache_dest, cache_local_file, list_minion, stat_file, get_template and
// get_file's template argument with Salt 3006's
// (testdata/golden/cp_dirs.json). The calls share one minion cache, in
// order, as on a minion.
func TestCPDirsGolden(t *testing.T) {
	runSuite(t, salttest.Suite{
		Name:      "cp_dirs",
		Srv:       cpTree,
		Grains:    m("id", "golden", "os", "Debian"),
		Pillar:    m("p", "pillarval"),
		Normalize: cpNormalize,
		Calls: []salttest.Call{
			{Name: "get_dir", Fun: "cp.get_dir", Args: []any{"salt://web", "{dir}/out"}},
			{Name: "get_dir trailing slash", Fun: "cp.get_dir", Args: []any{"salt://web/", "{dir}"}},
			{Name: "get_dir nested", Fun: "cp.get_dir", Args: []any{"salt://web/css", "{dir}/d"}},
			{Name: "get_dir missing", Fun: "cp.get_dir", Args: []any{"salt://nope", "{dir}/d"}},
			{Name: "get_dir not salt", Fun: "cp.get_dir", Args: []any{"/etc", "{dir}/d"}},
			{Name: "get_dir saltenv query", Fun: "cp.get_dir", Args: []any{"salt://web/js?saltenv=base", "{dir}/q"}},
			{Name: "get_dir other saltenv", Fun: "cp.get_dir", Args: []any{"salt://web", "{dir}/o"}, Kwargs: []any{"saltenv", "dev"}},
			{Name: "get_dir template", Fun: "cp.get_dir", Args: []any{"salt://{{ 'web' }}/css", "{dir}/{{ saltenv }}-{{ grains.os }}"}, Kwargs: []any{"template", "jinja"}},
			{Name: "get_dir template literal", Fun: "cp.get_dir", Args: []any{"salt://conf", "{dir}/c"}},
			{Name: "get_dir template bad", Fun: "cp.get_dir", Args: []any{"salt://{{ nope( }}", "{dir}/x"}, Kwargs: []any{"template", "jinja"}},
			{Name: "get_dir template unavailable", Fun: "cp.get_dir", Args: []any{"salt://web", "{dir}/x"}, Kwargs: []any{"template", "nosuch"}},
			{Name: "get_dir gzip", Fun: "cp.get_dir", Args: []any{"salt://web/js", "{dir}/z"}, Kwargs: []any{"gzip", int64(5)}},
			{Name: "get_file template", Fun: "cp.get_file", Args: []any{"salt://web/{{ 'index' }}.html", "{dir}/{{ grains.id }}.html"}, Kwargs: []any{"template", "jinja"}},
			{Name: "get_file template unavailable", Fun: "cp.get_file", Args: []any{"salt://web/index.html", "{dir}/i.html"}, Kwargs: []any{"template", "nosuch"}},
			{Name: "cache_dir", Fun: "cp.cache_dir", Args: []any{"salt://web"}},
			{Name: "cache_dir include glob", Fun: "cp.cache_dir", Args: []any{"salt://web"}, Kwargs: []any{"include_pat", "*.css"}},
			{Name: "cache_dir exclude regex", Fun: "cp.cache_dir", Args: []any{"salt://web/"}, Kwargs: []any{"exclude_pat", `E@\.js$`}},
			{Name: "cache_dir include and exclude", Fun: "cp.cache_dir", Args: []any{"salt://web"}, Kwargs: []any{"include_pat", "E@(css|js)", "exclude_pat", "*app*"}},
			{Name: "cache_dir pattern lists", Fun: "cp.cache_dir", Args: []any{"salt://web"}, Kwargs: []any{"include_pat", []any{"*.html", "*.js"}, "exclude_pat", []any{"*nomatch*", "*index*"}}},
			{Name: "cache_dir include_empty", Fun: "cp.cache_dir", Args: []any{"salt://web"}, Kwargs: []any{"include_empty", true}},
			{Name: "cache_dir missing", Fun: "cp.cache_dir", Args: []any{"salt://nope"}},
			{Name: "cache_dir not salt", Fun: "cp.cache_dir", Args: []any{"web"}},
			{Name: "cache_master", Fun: "cp.cache_master", Sorted: true},
			{Name: "cache_master other env", Fun: "cp.cache_master", Args: []any{"dev"}},
			{Name: "cache_dest salt", Fun: "cp.cache_dest", Args: []any{"salt://web/index.html"}},
			{Name: "cache_dest salt query", Fun: "cp.cache_dest", Args: []any{"salt://web/index.html?saltenv=dev"}},
			{Name: "cache_dest saltenv arg", Fun: "cp.cache_dest", Args: []any{"salt://web/index.html"}, Kwargs: []any{"saltenv", "prod"}},
			{Name: "cache_dest local", Fun: "cp.cache_dest", Args: []any{"/etc/hosts"}},
			{Name: "cache_dest https", Fun: "cp.cache_dest", Args: []any{"https://example.com:8443/pub/x.tgz?v=1"}},
			{Name: "cache_local_file", Fun: "cp.cache_local_file", Args: []any{"{dir}/f.txt"}, Files: map[string]string{"f.txt": "local\n"}},
			{Name: "cache_local_file dir", Fun: "cp.cache_local_file", Args: []any{"{dir}/d"}, Files: map[string]string{"d/f": "x"}},
			{Name: "cache_local_file missing", Fun: "cp.cache_local_file", Args: []any{"{dir}/nope.txt"}},
			{Name: "list_minion", Fun: "cp.list_minion", Sorted: true},
			{Name: "list_minion other env", Fun: "cp.list_minion", Args: []any{"dev"}, Sorted: true},
			{Name: "stat_file salt", Fun: "cp.stat_file", Args: []any{"salt://web/index.html"}},
			{Name: "stat_file not octal", Fun: "cp.stat_file", Args: []any{"salt://web/index.html"}, Kwargs: []any{"octal", false}},
			{Name: "stat_file missing", Fun: "cp.stat_file", Args: []any{"salt://web/nope.html"}},
			{Name: "stat_file dir", Fun: "cp.stat_file", Args: []any{"salt://web"}},
			{Name: "stat_file local", Fun: "cp.stat_file", Args: []any{"{dir}/f.txt"}, Files: map[string]string{"f.txt": "x\n"}},
			{Name: "stat_file local missing", Fun: "cp.stat_file", Args: []any{"{dir}/nope"}},
			{Name: "get_template", Fun: "cp.get_template", Args: []any{"salt://tmpl/hello.txt", "{dir}/hello"}, Kwargs: []any{"who", "you"}},
			{Name: "get_template pillar kwarg", Fun: "cp.get_template", Args: []any{"salt://tmpl/hello.txt", "{dir}/hello"}, Kwargs: []any{"who", "me", "pillar", m()}},
			{Name: "get_template no dir", Fun: "cp.get_template", Args: []any{"salt://tmpl/hello.txt", "{dir}/a/b/hello"}, Kwargs: []any{"who", "x"}},
			{Name: "get_template makedirs", Fun: "cp.get_template", Args: []any{"salt://tmpl/hello.txt", "{dir}/a/b/hello"}, Kwargs: []any{"who", "x", "makedirs", true}},
			{Name: "get_template no dest", Fun: "cp.get_template", Args: []any{"salt://tmpl/hello.txt", ""}, Kwargs: []any{"who", "cache"}},
			{Name: "get_template shebang", Fun: "cp.get_template", Args: []any{"salt://tmpl/shebang.txt", "{dir}/s"}, Kwargs: []any{"who", "y"}},
			{Name: "get_template missing", Fun: "cp.get_template", Args: []any{"salt://tmpl/nope.txt", "{dir}/n"}},
			{Name: "get_template bad", Fun: "cp.get_template", Args: []any{"salt://tmpl/bad.txt", "{dir}/b"}},
			{Name: "get_template kwarg not rendered", Fun: "cp.get_template", Args: []any{"salt://tmpl/hello.txt", "{dir}/h"}, Kwargs: []any{"who", "{{ raise('x') }}"}},
			{Name: "get_template salt function", Fun: "cp.get_template", Args: []any{"salt://tmpl/fun.txt", "{dir}/f"}},
			{Name: "get_template undefined", Fun: "cp.get_template", Args: []any{"salt://tmpl/undef.txt", "{dir}/f"}},
			{Name: "get_template unavailable", Fun: "cp.get_template", Args: []any{"salt://tmpl/hello.txt", "{dir}/u"}, Kwargs: []any{"template", "nosuch"}},
		},
	})
}

// rootsChannel is a MasterChannel answered by the master's file server
// handler (package fileserver), so the remote file client sends the same
// loads a minion sends to gsalt-master.
type rootsChannel struct {
	fs   *fileserver.Roots
	cmds *[]string
}

func (r rootsChannel) SendMaster(ctx context.Context, load *payload.Map) (any, error) {
	*r.cmds = append(*r.cmds, load.Str("cmd"))
	return r.fs.Handle(ctx, load.Str("cmd"), load)
}

// TestCPDirsRemoteMatchesLocal runs the directory functions through the
// remote file client (the _file_list, _file_list_emptydirs, _file_find
// and _serve_file loads of a minion) and checks they return and write
// what the masterless client (checked against Salt by TestCPDirsGolden)
// does.
func TestCPDirsRemoteMatchesLocal(t *testing.T) {
	srv := t.TempDir()
	salttest.WriteTree(t, srv, srv, cpTree)
	if err := os.Chmod(filepath.Join(srv, "web", "index.html"), 0o640); err != nil {
		t.Fatal(err)
	}
	roots := map[string][]string{"base": {srv}}
	var cmds []string
	r := goldenRegistry(t)
	type client struct {
		name, cache string
		files       *builtin.SaltFileClient
	}
	localCache, remoteCache := filepath.Join(t.TempDir(), "cache"), filepath.Join(t.TempDir(), "cache")
	clients := []client{
		{"local", localCache, builtin.NewLocalFileClient(roots, localCache, "sha256")},
		{"remote", remoteCache, builtin.NewRemoteFileClient(rootsChannel{fileserver.New(fileserver.Options{Roots: roots, FollowSymlinks: true, HashType: "sha256"}), &cmds},
			remoteCache, "sha256")},
	}
	calls := []struct {
		fun  string
		args []any
	}{
		{"cp.get_dir", []any{"salt://web", "{dir}"}},
		{"cp.cache_dir", []any{"salt://web", payload.NewMap("include_empty", true, "exclude_pat", "*.js", "__kwarg__", true)}},
		{"cp.stat_file", []any{"salt://web/index.html"}},
		{"cp.stat_file", []any{"salt://web/nope"}},
		{"cp.cache_master", nil},
		{"cp.list_minion", nil},
	}
	for _, call := range calls {
		var want any
		for _, cl := range clients {
			dir := t.TempDir()
			args := make([]any, len(call.args))
			for i, a := range call.args {
				switch x := a.(type) {
				case string:
					a = strings.ReplaceAll(x, "{dir}", dir)
				case *payload.Map:
					a = x.Clone() // Execute consumes the kwargs map
				}
				args[i] = a
			}
			env := &modules.Env{ID: "m1", Registry: r, Opts: payload.NewMap("id", "m1"), Log: slog.New(slog.DiscardHandler),
				Services: map[string]any{"files": cl.files}}
			res := r.Execute(context.Background(), modules.Binder{}, env, call.fun, args, nil)
			if res.Retcode != 0 {
				t.Fatalf("%s %s: retcode %d: %v", cl.name, call.fun, res.Retcode, res.Return)
			}
			got := anyStrings(res.Return, func(s string) string {
				s = strings.ReplaceAll(s, dir, "{dir}")
				return strings.ReplaceAll(s, cl.cache, "{cache}")
			})
			if want == nil {
				want = got
				continue
			}
			if d := vectors.Equal(got, want); d != "" {
				t.Errorf("%s %v: %s differs from local: %s\ngot  %v\nwant %v", call.fun, call.args, cl.name, d, got, want)
			}
		}
	}
	for _, c := range []string{"_file_list_emptydirs", "_file_find", "_serve_file"} {
		if !slices.Contains(cmds, c) {
			t.Errorf("the remote client sent no %s (sent %v)", c, cmds)
		}
	}
}

// anyStrings applies fn to every string in v (map keys included).
func anyStrings(v any, fn func(string) string) any {
	switch x := v.(type) {
	case string:
		return fn(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = anyStrings(e, fn)
		}
		return out
	case *payload.Map:
		out := &payload.Map{}
		for _, it := range x.Items() {
			out.SetKey(anyStrings(it.Key, fn), anyStrings(it.Value, fn))
		}
		return out
	}
	return v
}

// TestCPGetDirSkipsClimbingNames checks that a file list naming a path
// that climbs out of the file root writes nothing outside dest.
func TestCPGetDirSkipsClimbingNames(t *testing.T) {
	e := newCPEnv(t)
	e.fm.files["base"]["a/../../escaped.txt"] = []byte("bad\n")
	e.fm.files["base"]["a/c.txt"] = []byte("good\n")
	parent := t.TempDir()
	dest := filepath.Join(parent, "x", "dest")
	res := e.run(t, "cp.get_dir", "salt://a", dest)
	want := []any{dest + "/a/b.txt", dest + "/a/c.txt"}
	if res.Retcode != 0 || vectors.Equal(res.Return, want) != "" {
		t.Fatalf("got %d %v, want %v", res.Retcode, res.Return, want)
	}
	for _, p := range []string{filepath.Join(parent, "escaped.txt"), filepath.Join(parent, "x", "escaped.txt")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}
}
