package builtin_test

import (
	"context"
	"github.com/gsalt/gsalt/modules/salttest"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/wire/payload"
)

// syncTree is a file server with custom Python modules.
var syncTree = map[string]string{
	"top.sls":                  "base:\n  '*': []\n",
	"_modules/foo.py":          "def hello():\n    return 'hi'\n",
	"_modules/virt.py":         "__virtualname__ = 'vname'\ndef f():\n    pass\n",
	"_modules/pkg/__init__.py": "",
	"_modules/README.md":       "not a module\n",
	"_states/bar.py":           "def present(name):\n    pass\n",
	"_grains/g.py":             "def main():\n    return {}\n",
	"_renderers/r.py":          "def render(data, **kw):\n    return data\n",
	"_proxy/p.py":              "",
	"_output/o.py":             "def output(data, **kw):\n    return str(data)\n",
}

// stripNote removes gsalt's "(not loaded: ...)" note from synced names.
func stripNote(_ string, v any) any {
	switch x := v.(type) {
	case string:
		return strings.TrimSuffix(x, " ("+builtin.PythonNotLoaded+")")
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = stripNote("", e)
		}
		return out
	case *payload.Map:
		out := &payload.Map{}
		for _, it := range x.Items() {
			out.SetKey(it.Key, stripNote("", it.Value))
		}
		return out
	}
	return v
}

// TestSaltutilSyncGolden: the sync functions copy the same files to
// extension_modules and name the same modules as Salt 3006 (gsalt marks
// each name as not loaded).
func TestSaltutilSyncGolden(t *testing.T) {
	ext := []any{"extension_modules", "{dir}/ext", "cachedir", "{dir}/cache"}
	runSuite(t, salttest.Suite{
		Name:       "saltutil_sync",
		Srv:        syncTree,
		Normalize:  stripNote,
		FilesUnder: "ext/",
		Calls: []salttest.Call{
			{Name: "sync_modules", Fun: "saltutil.sync_modules", Kwargs: []any{"refresh", false}, Opts: ext, Sorted: true},
			{Name: "sync_modules cleans stale", Fun: "saltutil.sync_modules", Kwargs: []any{"refresh", false}, Opts: ext, Sorted: true,
				Files: map[string]string{"ext/modules/old.py": "x", "ext/modules/foo.py": "def hello():\n    return 'hi'\n"}},
			{Name: "sync_modules whitelist", Fun: "saltutil.sync_modules", Kwargs: []any{"refresh", false, "extmod_whitelist", "foo"}, Opts: ext},
			{Name: "sync_modules blacklist", Fun: "saltutil.sync_modules", Kwargs: []any{"refresh", false, "extmod_blacklist", "foo,virt"}, Opts: ext},
			{Name: "sync_states", Fun: "saltutil.sync_states", Kwargs: []any{"refresh", false}, Opts: ext},
			{Name: "sync_grains", Fun: "saltutil.sync_grains", Kwargs: []any{"refresh", false, "saltenv", "base"}, Opts: ext},
			{Name: "sync_renderers", Fun: "saltutil.sync_renderers", Kwargs: []any{"refresh", false}, Opts: ext},
			{Name: "sync_proxymodules", Fun: "saltutil.sync_proxymodules", Kwargs: []any{"refresh", false}, Opts: ext},
			{Name: "sync_output", Fun: "saltutil.sync_output", Kwargs: []any{"refresh", false}, Opts: ext},
			{Name: "sync_outputters", Fun: "saltutil.sync_outputters", Kwargs: []any{"refresh", false}, Opts: ext},
			{Name: "sync_returners empty", Fun: "saltutil.sync_returners", Kwargs: []any{"refresh", false}, Opts: ext},
			{Name: "sync_all", Fun: "saltutil.sync_all", Kwargs: []any{"refresh", false}, Opts: ext, Sorted: true},
		},
	})
}

// TestPythonModuleMissing: a function of a synced Python module is
// explained instead of "is not available", by file name and by
// __virtualname__.
func TestPythonModuleMissing(t *testing.T) {
	r := goldenRegistry(t)
	base := t.TempDir()
	srv := filepath.Join(base, "srv")
	salttest.WriteTree(t, srv, srv, syncTree)
	ext := filepath.Join(base, "ext")
	var logs strings.Builder
	env := &modules.Env{ID: "m1", Registry: r, Log: slog.New(slog.NewTextHandler(&logs, nil)),
		Opts:     payload.NewMap("extension_modules", ext, "cachedir", filepath.Join(base, "cache"), "file_client", "local"),
		Services: map[string]any{"files": builtin.NewLocalFileClient(map[string][]string{"base": {srv}}, filepath.Join(base, "cache"), "sha256")}}
	res := r.Execute(context.Background(), modules.Binder{}, env, "saltutil.sync_all", []any{payload.NewMap("__kwarg__", true, "refresh", false)}, nil)
	ret, ok := res.Return.(*payload.Map)
	if !ok || len(ret.List("modules")) != 3 {
		t.Fatalf("sync_all: %v", res.Return)
	}
	if !strings.Contains(logs.String(), "gsalt does not load Python extension modules") {
		t.Fatalf("no warning logged: %s", logs.String())
	}
	tests := []struct {
		kind, fun, want string
	}{
		{"modules", "foo.hello", "foo is a custom Python execution module (" + filepath.Join(ext, "modules", "foo.py")},
		{"modules", "vname.f", "vname is a custom Python execution module (" + filepath.Join(ext, "modules", "virt.py")},
		{"modules", "pkg.x", "pkg is a custom Python execution module (" + filepath.Join(ext, "modules", "pkg", "__init__.py")},
		{"states", "bar.present", "bar is a custom Python state module"},
		{"modules", "nope.x", ""},
		{"modules", "virt.f", ""},
	}
	for _, tc := range tests {
		got := builtin.PythonModuleMissing(ext, tc.kind, tc.fun)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.fun, got, tc.want)
		}
		if got != "" && !strings.HasSuffix(got, "gsalt does not load Python extension modules") {
			t.Errorf("%s: %q", tc.fun, got)
		}
	}
	if _, err := os.Stat(filepath.Join(ext, "modules", "README.md")); err == nil {
		t.Error("non-Python file synced")
	}
}
