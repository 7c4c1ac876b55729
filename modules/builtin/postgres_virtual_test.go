package builtin_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestPostgresVirtual runs the postgres module's __virtual__ (Salt's
// salt/modules/postgres.py loads the module only when psql is found on
// PATH or in postgres.bins_dir) with a PATH that lacks psql: sys.list_modules
// leaves postgres out, sys.list_functions has none of its functions, and
// calling one gives Salt's missing_fun_string text for a module whose
// __virtual__ returned (False, "psql was not found"). A psql in
// postgres.bins_dir, or on PATH, loads it again.
func TestPostgresVirtual(t *testing.T) {
	empty := t.TempDir()
	withPsql := t.TempDir()
	if err := os.WriteFile(filepath.Join(withPsql, "psql"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		path     string
		binsDir  string
		loaded   bool
		wantCall string
	}{
		{name: "no psql", path: empty, loaded: false, wantCall: "'postgres' __virtual__ returned False: psql was not found"},
		{name: "empty PATH", path: "", loaded: false, wantCall: "'postgres' __virtual__ returned False: psql was not found"},
		{name: "bins_dir without psql", path: empty, binsDir: empty, loaded: false, wantCall: "'postgres' __virtual__ returned False: psql was not found"},
		{name: "psql in bins_dir", path: empty, binsDir: withPsql, loaded: true},
		{name: "psql on PATH", path: empty + ":" + withPsql, loaded: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PATH", tc.path)
			r := modules.NewRegistry()
			if err := builtin.Register(r); err != nil {
				t.Fatal(err)
			}
			// the machine's /usr/bin may hold psql: search PATH only
			r.SetVirtual("postgres", func(env *modules.Env) error {
				return builtin.PostgresVirtualInForTest(env, os.Getenv("PATH"), nil)
			})
			env := testEnv(r)
			if tc.binsDir != "" {
				env.Opts = payload.NewMap("file_client", "local", "postgres.bins_dir", tc.binsDir)
			}
			res := r.Execute(t.Context(), modulesBinder(), env, "sys.list_modules", nil, nil)
			mods := sortedStrings(res.Return)
			if got := slices.Contains(mods, "postgres"); got != tc.loaded {
				t.Fatalf("sys.list_modules has postgres: %v, want %v", got, tc.loaded)
			}
			if !slices.Contains(mods, "test") {
				t.Fatalf("sys.list_modules %v lost other modules", mods)
			}
			res = r.Execute(t.Context(), modulesBinder(), env, "sys.list_functions", []any{"postgres"}, nil)
			if fns := sortedStrings(res.Return); (len(fns) > 0) != tc.loaded {
				t.Fatalf("sys.list_functions postgres = %v (loaded %v)", fns, tc.loaded)
			}
			res = r.Execute(t.Context(), modulesBinder(), env, "postgres.user_list", nil, nil)
			if tc.loaded {
				if s, _ := res.Return.(string); s == tc.wantCall || s == "'postgres' __virtual__ returned False: psql was not found" {
					t.Fatalf("postgres.user_list refused with psql present: %v", res.Return)
				}
				return
			}
			if res.Return != tc.wantCall || res.Retcode == 0 {
				t.Fatalf("postgres.user_list = %#v (retcode %d), want %q", res.Return, res.Retcode, tc.wantCall)
			}
		})
	}
}

// TestPostgresVirtualSaltWhich checks the module as registered: like
// salt.utils.path.which, it also looks in /usr/bin and the other standard
// directories, so a psql there loads the module whatever PATH says (Salt
// 3006's salt-call lists postgres with such a PATH too).
func TestPostgresVirtualSaltWhich(t *testing.T) {
	std := ""
	for _, d := range []string{"/sbin", "/bin", "/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"} {
		if fi, err := os.Stat(filepath.Join(d, "psql")); err == nil && fi.Mode().IsRegular() {
			std = d
			break
		}
	}
	t.Setenv("PATH", t.TempDir())
	r := modules.NewRegistry()
	if err := builtin.Register(r); err != nil {
		t.Fatal(err)
	}
	res := r.Execute(t.Context(), modulesBinder(), testEnv(r), "sys.list_modules", []any{"postgres"}, nil)
	got := slices.Contains(sortedStrings(res.Return), "postgres")
	if got != (std != "") {
		t.Fatalf("postgres loaded %v with psql in a standard directory %q", got, std)
	}
}
