package builtin_test

// Unit tests of the pkg (aptpkg) module. They run apt through the fake
// apt-get, apt-cache, dpkg and dpkg-query of ../../states/testdata/pkg/fakebin
// (a tiny package database in a temporary directory); nothing is ever
// installed. The golden comparisons with real Salt are in states/builtin.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/internal/vectors"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/wire/payload"
)

type pkgTestOpts map[string]any

func (o pkgTestOpts) Get(k string) (any, bool) { v, ok := o[k]; return v, ok }

type pkgTestProbe bool

func (p pkgTestProbe) Booted() bool { return bool(p) }

// pkgFakeEnv puts the fake apt and systemctl on PATH with the given
// databases and returns the fake directory and a Debian amd64 minion env.
func pkgFakeEnv(t *testing.T, files map[string]string) (string, *modules.Env) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bins, err := filepath.Abs(filepath.Join("..", "..", "states", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("FAKEAPT_DIR", dir)
	t.Setenv("FAKESD_DIR", dir)
	t.Setenv("PATH", filepath.Join(bins, "pkg", "fakebin")+string(os.PathListSeparator)+
		filepath.Join(bins, "service", "fakebin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	r := modules.NewRegistry()
	if err := r.Register(builtin.PkgFunctions()...); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(builtin.ServiceFunctions()...); err != nil {
		t.Fatal(err)
	}
	return dir, &modules.Env{
		ID: "m1", Registry: r,
		Grains:   payload.NewMap("os", "Debian", "os_family", "Debian", "kernel", "Linux", "osarch", "amd64", "cpuarch", "x86_64"),
		Opts:     pkgTestOpts{"cachedir": t.TempDir(), "systemd.scope": false},
		Services: map[string]any{"systemd": pkgTestProbe(true)},
	}
}

func pkgKw(kv ...any) *payload.Map { return payload.NewMap(append([]any{"__kwarg__", true}, kv...)...) }

func TestDebVersionCompare(t *testing.T) {
	tests := []struct {
		a, b        string
		ignoreEpoch bool
		want        int
	}{
		{"1.0", "1.0", false, 0},
		{"1.0-1", "1.0-2", false, -1},
		{"1.0~rc1", "1.0", false, -1},
		{"1.0~rc1", "1.0~", false, 1},
		{"1.0", "1.0+b1", false, -1},
		{"1.0a", "1.0", false, 1},
		{"1.0.1", "1.0a", false, 1},
		{"1:0.1", "2.0", false, 1},
		{"1:0.1", "2.0", true, -1},
		{"2:1.2-3", "1.2-3", true, 0},
		{"0:1.2", "1.2", false, 0},
		{"1.10", "1.9", false, 1},
		{"1.010", "1.10", false, 0},
		{"2.30-1ubuntu1", "2.30-1", false, 1},
		{"1.2.13.dfsg-1", "1.2.13-1", false, 1},
		{"7.4.052-1ubuntu3", "7.4.052-1ubuntu3.1", false, -1},
		{"", "0", false, 0},
	}
	for _, tc := range tests {
		if got := builtin.DebVersionCompare(tc.a, tc.b, tc.ignoreEpoch); got != tc.want {
			t.Errorf("compare(%q, %q, %v) = %d, want %d", tc.a, tc.b, tc.ignoreEpoch, got, tc.want)
		}
		if got := builtin.DebVersionCompare(tc.b, tc.a, tc.ignoreEpoch); got != -tc.want {
			t.Errorf("compare(%q, %q, %v) = %d, want %d", tc.b, tc.a, tc.ignoreEpoch, got, -tc.want)
		}
	}
	// Cross-check with the real dpkg when the machine has one (dpkg
	// --compare-versions only compares, it changes nothing).
	dpkg, err := exec.LookPath("/usr/bin/dpkg")
	if err != nil {
		return
	}
	for _, tc := range tests {
		if tc.ignoreEpoch || tc.a == "" {
			continue
		}
		for _, op := range []struct {
			name string
			want int
		}{{"lt", -1}, {"eq", 0}, {"gt", 1}} {
			err := exec.Command(dpkg, "--compare-versions", tc.a, op.name, tc.b).Run()
			if (err == nil) != (tc.want == op.want) {
				t.Errorf("dpkg --compare-versions %s %s %s disagrees (want %d)", tc.a, op.name, tc.b, tc.want)
			}
		}
	}
}

func TestNestedText(t *testing.T) {
	info := payload.NewMap("errors", []any{"E: one\nsecond line", "E: two"}, "changes", payload.NewMap(),
		"nested", payload.NewMap("b", int64(1), "a", []any{payload.NewMap("x", true)}))
	want := "changes:\n    ----------\nerrors:\n    - E: one\n      second line\n    - E: two\nnested:\n    ----------\n    a:\n        |_\n          ----------\n          x:\n              True\n    b:\n        1"
	if got := builtin.NestedText(info); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	e := &builtin.ExecInfoError{Message: "Problem encountered installing package(s)", Info: payload.NewMap("errors", []any{"E: x"}, "changes", payload.NewMap())}
	if got := e.TextWithoutChanges(); got != "Problem encountered installing package(s). Additional info follows:\n\nerrors:\n    - E: x" {
		t.Errorf("without changes: %q", got)
	}
	only := &builtin.ExecInfoError{Message: "msg", Info: payload.NewMap("changes", payload.NewMap("a", int64(1)))}
	if only.TextWithoutChanges() != "msg" || only.Changes().Len() != 1 {
		t.Errorf("changes-only info: %q %v", only.TextWithoutChanges(), only.Changes())
	}
}

func TestPkgFunctions(t *testing.T) {
	status := "install ok installed bar 1.0-1 amd64\n" +
		"install ok installed bar 1.1-1 amd64\n" +
		"install ok installed libc6 2.36-9 i386\n" +
		"install ok installed tzdata 2024a-1 all\n" +
		"deinstall ok config-files gone 0.1 amd64\n" +
		"purge ok installed dep 3.0 amd64\n" +
		"hold ok installed pinned 5.0 amd64\n"
	repo := "bar 1.2-1 amd64\nfoo 2.0-1 amd64\n"
	tests := []struct {
		name    string
		fun     string
		args    []any
		want    any
		errPart string
	}{
		{"list_pkgs joins versions, marks foreign arch, keeps purge-desired first", "pkg.list_pkgs", nil,
			payload.NewMap("dep", "3.0", "bar", "1.0-1,1.1-1", "libc6:i386", "2.36-9", "tzdata", "2024a-1", "pinned", "5.0"), ""},
		{"list_pkgs purge_desired", "pkg.list_pkgs", []any{pkgKw("purge_desired", true)}, payload.NewMap("dep", "3.0"), ""},
		{"list_pkgs removed as list", "pkg.list_pkgs", []any{pkgKw("removed", true, "versions_as_list", true)}, payload.NewMap("gone", []any{"0.1"}), ""},
		{"version of a missing package", "pkg.version", []any{"nosuch"}, "", ""},
		{"version glob", "pkg.version", []any{"ba*"}, payload.NewMap("bar", "1.0-1,1.1-1"), ""},
		{"latest_version without refresh", "pkg.latest_version", []any{"bar", "foo", pkgKw("refresh", false)}, payload.NewMap("bar", "1.2-1", "foo", "2.0-1"), ""},
		{"latest_version repo argument", "pkg.latest_version", []any{"bar", pkgKw("repo", "x")}, nil, "ERROR executing 'pkg.latest_version': The 'repo' argument is invalid, use 'fromrepo' instead"},
		{"normalize_name own arch", "pkg.normalize_name", []any{"bar:amd64"}, "bar", ""},
		{"normalize_name foreign arch", "pkg.normalize_name", []any{"bar:i386"}, "bar:i386", ""},
		{"version_cmp", "pkg.version_cmp", []any{"1.0", "1.0~b1"}, int64(1), ""},
		{"install of nothing", "pkg.install", nil, payload.NewMap(), ""},
		{"remove of a package that is not installed", "pkg.remove", []any{"foo"}, payload.NewMap(), ""},
		{"install error keeps changes in the text", "pkg.install", []any{pkgKw("pkgs", []any{"nosuch"})}, nil,
			"ERROR: Problem encountered installing package(s). Additional info follows:\n\nchanges:\n    ----------\nerrors:\n    - E: Unable to locate package nosuch"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, env := pkgFakeEnv(t, map[string]string{"status": status, "repo": repo})
			res := env.Registry.Execute(context.Background(), modules.Binder{}, env, tc.fun, tc.args, nil)
			if tc.errPart != "" {
				if res.Retcode == 0 || !strings.HasPrefix(payload.Text(res.Return), tc.errPart) {
					t.Fatalf("got %d %q, want error %q", res.Retcode, payload.Text(res.Return), tc.errPart)
				}
				return
			}
			if res.Retcode != 0 {
				t.Fatalf("retcode %d: %v", res.Retcode, res.Return)
			}
			if d := vectors.Equal(res.Return, tc.want); d != "" {
				t.Fatalf("return %v: %s", res.Return, d)
			}
		})
	}
}

// TestPkgRefreshAndVirtual: refresh_db removes the state system's refresh
// tag and reports apt's error; a non-Debian minion has no apt module.
func TestPkgRefreshAndVirtual(t *testing.T) {
	dir, env := pkgFakeEnv(t, map[string]string{"status": "", "repo": ""})
	cachedir, _ := env.Opts.Get("cachedir")
	rtag := filepath.Join(cachedir.(string), "pkg_refresh")
	if err := os.WriteFile(rtag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res := env.Registry.Execute(ctx, modules.Binder{}, env, "pkg.refresh_db", nil, nil)
	want := payload.NewMap("http://deb.example.org/debian bookworm InRelease", nil, "http://deb.example.org/debian bookworm-updates InRelease", true)
	if d := vectors.Equal(res.Return, want); d != "" || res.Retcode != 0 {
		t.Fatalf("refresh_db: %v %s", res.Return, d)
	}
	if _, err := os.Stat(rtag); !os.IsNotExist(err) {
		t.Errorf("refresh tag still there: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fail_update"), []byte("E: The repository is not signed."), 0o644); err != nil {
		t.Fatal(err)
	}
	res = env.Registry.Execute(ctx, modules.Binder{}, env, "pkg.refresh_db", nil, nil)
	if res.Retcode == 0 || res.Return != "ERROR: E: The repository is not signed." {
		t.Errorf("failing refresh_db: %d %v", res.Retcode, res.Return)
	}
	env.Grains = payload.NewMap("os_family", "RedHat")
	res = env.Registry.Execute(ctx, modules.Binder{}, env, "pkg.list_pkgs", nil, nil)
	if res.Retcode == 0 || res.Return != "ERROR: The pkg module could not be loaded: unsupported OS family" {
		t.Errorf("RedHat minion: %d %v", res.Retcode, res.Return)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "log")); strings.Count(string(b), "apt-get -q update") != 2 {
		t.Errorf("apt-get calls: %s", b)
	}
}

// TestPkgSplitComparison mirrors salt.utils.pkg.split_comparison.
func TestPkgSplitComparison(t *testing.T) {
	for in, want := range map[string][2]string{
		">=1.2": {">=", "1.2"}, "1.2": {"", "1.2"}, "= 1.2": {"=", "1.2"}, "<<2": {"<<", "2"}, "1<2": {"", "1<2"},
	} {
		if o, v := builtin.PkgSplitComparison(in); o != want[0] || v != want[1] {
			t.Errorf("%q: %q %q, want %v", in, o, v, want)
		}
	}
}
