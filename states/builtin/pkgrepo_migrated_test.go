package builtin

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sort"
	"testing"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/salttest"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestPkgrepoMigratedGolden compares pkgrepo.migrated with Salt 3006
// (testdata/golden/pkgrepo_migrated.json) on a Debian minion, where Salt
// supports no migration: every form of the call fails the same way.
func TestPkgrepoMigratedGolden(t *testing.T) {
	calls := []salttest.Call{
		single("defaults", "pkgrepo.migrated", false, "name", "/mnt"),
		single("defaults test", "pkgrepo.migrated", true, "name", "/mnt"),
		single("copy no keys", "pkgrepo.migrated", false, "name", "/mnt", "keys", false, "method", "copy"),
		single("bad method", "pkgrepo.migrated", false, "name", "/mnt", "method", "rsync"),
		{Name: "missing name", Fun: "state.single", Args: []any{"pkgrepo.migrated"}},
	}
	runStateSuite(t, salttest.Suite{Name: "pkgrepo_migrated", Calls: calls, Grains: payloadDebianGrains()})
}

// fakeZypp is an in-memory zypper and rpm keyring per root ("" is the
// minion's own), behind the execution functions pkgrepo.migrated calls.
type fakeZypp struct {
	repos map[string]*payload.Map // root -> alias -> info
	keys  map[string]*payload.Map // root -> key id -> info
	// brokenRoot: listing the root fails (an uninitialized root).
	brokenRoot bool
	// noWrite: mod_repo does nothing (a migration that fails).
	noWrite bool
	calls   []string
}

func (z *fakeZypp) table(m map[string]*payload.Map, root string) *payload.Map {
	if m[root] == nil {
		m[root] = &payload.Map{}
	}
	return m[root]
}

func (z *fakeZypp) functions() []modules.Function {
	root := func(c *modules.Call) string { return payload.Text(c.Args.Kwargs.Str("root")) }
	kw := modules.Spec{Varargs: true, Kwargs: true}
	rec := func(c *modules.Call) {
		b, _ := json.Marshal(append(append([]any{c.Fun}, c.Args.Varargs...), c.Args.Kwargs))
		z.calls = append(z.calls, string(b))
	}
	return []modules.Function{
		{Name: "pkg.list_repos", Spec: kw, Fn: func(_ context.Context, c *modules.Call) (any, error) {
			if root(c) != "" && z.brokenRoot {
				return nil, modules.ErrExecution
			}
			return payload.DeepClone(z.table(z.repos, root(c))), nil
		}},
		{Name: "pkg.mod_repo", Spec: kw, Fn: func(_ context.Context, c *modules.Call) (any, error) {
			rec(c)
			if !z.noWrite {
				info := c.Args.Kwargs.Clone()
				info.Delete("root")
				back := &payload.Map{}
				for from, to := range pkgrepoSuseFields {
					if v, ok := info.Get(to); ok {
						back.Set(from, v)
					}
				}
				z.table(z.repos, root(c)).Set(payload.Text(c.Args.Varargs[0]), back)
			}
			return &payload.Map{}, nil
		}},
		{Name: "pkg.del_repo", Spec: kw, Fn: func(_ context.Context, c *modules.Call) (any, error) {
			rec(c)
			z.table(z.repos, root(c)).Delete(payload.Text(c.Args.Varargs[0]))
			return &payload.Map{}, nil
		}},
		{Name: "lowpkg.list_gpg_keys", Spec: kw, Fn: func(_ context.Context, c *modules.Call) (any, error) {
			return payload.DeepClone(z.table(z.keys, root(c))), nil
		}},
		{Name: "lowpkg.import_gpg_key", Spec: kw, Fn: func(_ context.Context, c *modules.Call) (any, error) {
			rec(c)
			key := payload.Text(c.Args.Varargs[0])
			z.table(z.keys, root(c)).Set("gpg-pubkey-"+key, payload.NewMap("Description", key, "Other", "dropped"))
			return true, nil
		}},
		{Name: "lowpkg.remove_gpg_key", Spec: kw, Fn: func(_ context.Context, c *modules.Call) (any, error) {
			rec(c)
			z.table(z.keys, root(c)).Delete(payload.Text(c.Args.Varargs[0]))
			return true, nil
		}},
		{Name: "file.copy", Spec: kw, Fn: func(_ context.Context, c *modules.Call) (any, error) {
			rec(c)
			return true, nil
		}},
	}
}

// TestPkgrepoMigratedSuse runs pkgrepo.migrated through state.single on a
// Suse minion whose zypper and rpm keyring are fakes: plans, test mode,
// migration and drop, a failed migration, the copy method and the
// refusals.
func TestPkgrepoMigratedSuse(t *testing.T) {
	repo := func(url string) *payload.Map {
		return payload.NewMap("alias", "x", "name", "Repo "+url, "baseurl", url, "enabled", true, "autorefresh", false, "priority", int64(99), "type", "rpm-md")
	}
	key := func(d string) *payload.Map { return payload.NewMap("Description", d, "Fingerprint", "ff") }
	src := func() *payload.Map {
		return payload.NewMap("oss", repo("http://o/oss"), "update", repo("http://o/update"))
	}
	cases := []struct {
		name      string
		kwargs    []any
		test      bool
		noLowpkg  bool
		setup     func(z *fakeZypp)
		want      string
		wantCalls []string
	}{
		{name: "already migrated", kwargs: []any{"keys", false},
			setup: func(z *fakeZypp) { z.repos["/mnt"] = src() },
			want:  `{"name":"/mnt","result":true,"changes":{},"comment":"Repositories are already migrated"}`},
		{name: "test mode", test: true, kwargs: []any{"drop", true},
			setup: func(z *fakeZypp) {
				z.repos["/mnt"] = payload.NewMap("old", repo("http://x"), "oss", repo("http://o/oss"))
				z.keys[""] = payload.NewMap("gpg-pubkey-a", key("A key"))
			},
			want: `{"name":"/mnt","result":null,"changes":{"repos to migrate":["update"],"repos to drop":["old"],"keys to migrate":["gpg-pubkey-a"],"keys to drop":[]},"comment":"There are keys or repositories to migrate or drop"}`},
		{name: "migrate and drop", kwargs: []any{"drop", true},
			setup: func(z *fakeZypp) {
				z.repos["/mnt"] = payload.NewMap("old", repo("http://x"))
				z.keys[""] = payload.NewMap("gpg-pubkey-A key", key("A key"))
				z.keys["/mnt"] = payload.NewMap("gpg-pubkey-B", key("B"))
			},
			want: `{"name":"/mnt","result":true,"changes":{"repos migrated":["oss","update"],"repos dropped":["old"],"keys migrated":["gpg-pubkey-A key"],"keys dropped":["gpg-pubkey-B"]},"comment":"Repositories synchronized"}`,
			wantCalls: []string{
				`["pkg.mod_repo","oss",{"enabled":true,"humanname":"Repo http://o/oss","priority":99,"refresh":false,"url":"http://o/oss","root":"/mnt"}]`,
				`["pkg.mod_repo","update",{"enabled":true,"humanname":"Repo http://o/update","priority":99,"refresh":false,"url":"http://o/update","root":"/mnt"}]`,
				`["pkg.del_repo","old",{"root":"/mnt"}]`,
				`["lowpkg.import_gpg_key","A key",{"root":"/mnt"}]`,
				`["lowpkg.remove_gpg_key","gpg-pubkey-B",{"root":"/mnt"}]`}},
		{name: "uninitialized root", kwargs: []any{"keys", false},
			setup: func(z *fakeZypp) { z.brokenRoot = true },
			want:  `{"name":"/mnt","result":false,"changes":{},"comment":"Migration of repositories failed"}`,
			wantCalls: []string{
				`["pkg.mod_repo","oss",{"enabled":true,"humanname":"Repo http://o/oss","priority":99,"refresh":false,"url":"http://o/oss","root":"/mnt"}]`,
				`["pkg.mod_repo","update",{"enabled":true,"humanname":"Repo http://o/update","priority":99,"refresh":false,"url":"http://o/update","root":"/mnt"}]`}},
		{name: "copy method", kwargs: []any{"keys", false, "method", "copy"},
			setup: func(z *fakeZypp) { z.noWrite = true },
			want:  `{"name":"/mnt","result":false,"changes":{},"comment":"Migration of repositories failed"}`,
			wantCalls: []string{
				`["file.copy",{"src":"/etc/zypp/repos.d","dst":"/mnt/etc/zypp/repos.d","recurse":true}]`,
				`["file.copy",{"src":"/etc/zypp/repos.d","dst":"/mnt/etc/zypp/repos.d","recurse":true}]`}},
		{name: "keys without lowpkg", noLowpkg: true,
			want: `{"name":"/mnt","result":false,"changes":{},"comment":"Keys cannot be migrated for this platform"}`},
		{name: "unknown method", kwargs: []any{"method", int64(1)},
			want: `{"name":"/mnt","result":false,"changes":{},"comment":"Migration method not supported"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			z := &fakeZypp{repos: map[string]*payload.Map{"": src()}, keys: map[string]*payload.Map{}}
			if tc.setup != nil {
				tc.setup(z)
			}
			reg := modules.NewRegistry()
			for _, f := range z.functions() {
				if tc.noLowpkg && f.Name == "lowpkg.import_gpg_key" {
					continue
				}
				if err := reg.Register(f); err != nil {
					t.Fatal(err)
				}
			}
			st := states.NewRegistry()
			if err := Register(st); err != nil {
				t.Fatal(err)
			}
			if err := states.RegisterExec(reg, st, render.Default()); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			env := &modules.Env{ID: "m1", Registry: reg,
				Grains: payload.NewMap("os", "SUSE", "os_family", "Suse", "kernel", "Linux"),
				Pillar: &payload.Map{},
				Opts: payload.NewMap("id", "m1", "file_client", "local", "cachedir", filepath.Join(dir, "cache"),
					"file_roots", payload.NewMap("base", []any{dir}))}
			kw := payload.NewMap(append([]any{"__kwarg__", true, "name", "/mnt"}, tc.kwargs...)...)
			if tc.test {
				kw.Set("test", true)
			}
			res := reg.Execute(context.Background(), modules.Binder{}, env, "state.single", []any{"pkgrepo.migrated", kw}, nil)
			rets, ok := res.Return.(*payload.Map)
			if !ok || rets.Len() != 1 {
				t.Fatalf("state.single: %d %v", res.Retcode, res.Return)
			}
			r := rets.Items()[0].Value.(*payload.Map)
			got := &payload.Map{}
			for _, k := range []string{"name", "result", "changes", "comment"} {
				v, _ := r.Get(k)
				got.Set(k, v)
			}
			b, _ := json.Marshal(got)
			if string(b) != tc.want {
				t.Errorf("ret\n got %s\nwant %s", b, tc.want)
			}
			sort.Strings(z.calls)
			want := append([]string(nil), tc.wantCalls...)
			sort.Strings(want)
			if g, w := callsJSON(z.calls), callsJSON(want); g != w {
				t.Errorf("calls\n got %s\nwant %s", g, w)
			}
		})
	}
}

// callsJSON is a list of recorded calls as one JSON text ([] for none).
func callsJSON(l []string) string {
	if len(l) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(l)
	return string(b)
}
