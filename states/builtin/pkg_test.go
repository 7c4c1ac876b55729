package builtin

// Golden tests for the pkg and service state modules and the pkg/service
// execution functions. Nothing is installed and no service is touched:
// fake apt-get, apt-cache, dpkg, dpkg-query (../testdata/pkg/fakebin) and
// systemctl (../testdata/service/fakebin) keep a small package and unit
// database in a temporary directory. Every scenario runs once through real
// Salt 3006 with the same fakes on PATH (salt-call --local state.single or
// the execution function, with salt.utils.systemd.booted patched to True so
// that the systemd service module loads normally) and its return, the
// fake database afterwards and the log of the commands that changed it are
// kept in ../testdata/{pkg,service}/<scenario>.json. `go test -run
// PkgSvcGolden -update` with GSALT_SALT_SRC set regenerates them; without
// -update gsalt must produce the same.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/modules"
	mbuiltin "github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// psScenario is one golden case.
type psScenario struct {
	Name string
	// Fun is a state function ("pkg.installed") or, with Exec, an
	// execution function ("pkg.install").
	Fun  string
	Exec bool
	// Args are positional arguments (Exec only); Kwargs keyword arguments
	// as name, value pairs.
	Args   []any
	Kwargs []any
	Test   bool
	// Scope turns config systemd.scope on (apt and systemctl then run
	// under the fake systemd-run).
	Scope bool
	// Fake databases: apt status/repo/holds, systemd units, and
	// fail_<...> files (name -> content).
	Status, Repo, Holds, Units string
	Fail                       map[string]string
}

// psGolden is what a scenario produced.
type psGolden struct {
	Ret   any               `json:"ret"`
	Error string            `json:"error,omitempty"`
	After map[string]string `json:"after"`
}

func psDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata")
}

func psModule(sc psScenario) string { return sc.Fun[:strings.IndexByte(sc.Fun, '.')] }

// psFake writes the fake databases into a fresh directory.
func psFake(t *testing.T, sc psScenario) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{"status": sc.Status, "repo": sc.Repo, "holds": sc.Holds, "units": sc.Units}
	for k, v := range sc.Fail {
		files[k] = v
	}
	for name, content := range files {
		if content != "" && !strings.HasSuffix(content, "\n") {
			content += "\n"
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// psAfter reads the fake databases and the change log.
func psAfter(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range []string{"status", "holds", "units", "log"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		out[name] = string(b)
	}
	return out
}

func psFakePath() string {
	d := psDir()
	return filepath.Join(d, "pkg", "fakebin") + string(os.PathListSeparator) + filepath.Join(d, "service", "fakebin")
}

// psNormalize round-trips a value through JSON so that Salt's and gsalt's
// returns compare as plain data (map keys sorted, numbers float64).
func psNormalize(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(payload.FromGo(v))
	if err != nil {
		t.Fatalf("marshal %v: %v", v, err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func psJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// psOpts is a static Options.
type psOpts map[string]any

func (o psOpts) Get(k string) (any, bool) { v, ok := o[k]; return v, ok }

// psBooted is a SystemdProbe that says systemd is PID 1.
type psBooted bool

func (b psBooted) Booted() bool { return bool(b) }

// psEnv is the minion environment of a gsalt run: a Debian amd64 minion
// booted with systemd, systemd.scope off (like the golden config).
func psEnv(t *testing.T, test, scope bool) *modules.Env {
	t.Helper()
	r := modules.NewRegistry()
	if err := r.Register(mbuiltin.PkgFunctions()...); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(mbuiltin.ServiceFunctions()...); err != nil {
		t.Fatal(err)
	}
	return &modules.Env{
		ID:       "golden",
		Registry: r,
		Grains:   payload.NewMap("os", "Debian", "os_family", "Debian", "kernel", "Linux", "osarch", "amd64", "cpuarch", "x86_64"),
		Opts:     psOpts{"cachedir": t.TempDir(), "systemd.scope": scope, "test": test},
		Services: map[string]any{"systemd": psBooted(true)},
	}
}

func psStateFuncs() map[string]states.Function {
	out := map[string]states.Function{}
	for _, f := range append(pkgStates(), serviceStates()...) {
		out[f.Name] = f
	}
	return out
}

// psRunGsalt runs a scenario through gsalt with the fakes in dir.
func psRunGsalt(t *testing.T, sc psScenario, dir string) psGolden {
	t.Helper()
	t.Setenv("FAKEAPT_DIR", dir)
	t.Setenv("FAKESD_DIR", dir)
	t.Setenv("PATH", psFakePath()+string(os.PathListSeparator)+os.Getenv("PATH"))
	env := psEnv(t, sc.Test, sc.Scope)
	ctx := context.Background()
	kw := payload.NewMap(sc.Kwargs...)
	if sc.Exec {
		args := append([]any(nil), sc.Args...)
		if kw.Len() > 0 {
			m := kw.Clone()
			m.Set("__kwarg__", true)
			args = append(args, m)
		}
		res := env.Registry.Execute(ctx, modules.Binder{}, env, sc.Fun, args, nil)
		g := psGolden{After: psAfter(t, dir)}
		if s, ok := res.Return.(string); ok && res.Retcode != 0 && strings.HasPrefix(s, "ERROR: ") {
			g.Error = strings.TrimPrefix(s, "ERROR: ")
		} else {
			g.Ret = psNormalize(t, res.Return)
		}
		return g
	}
	fn, ok := psStateFuncs()[sc.Fun]
	if !ok {
		t.Fatalf("no state %s", sc.Fun)
	}
	state, fun, _ := strings.Cut(sc.Fun, ".")
	name := kw.Str("name")
	low := kw.Clone()
	low.Set("state", state)
	low.Set("fun", fun)
	low.Set("__id__", name)
	args, err := modules.BindKeywords(fn.Spec, kw)
	if err != nil {
		t.Fatal(err)
	}
	if state == "pkg" {
		PkgModInit(env, low)
	}
	c := &states.Call{ID: name, Name: name, State: state, Fun: fun, Args: args, Low: low, Test: sc.Test, Saltenv: "base", Env: env}
	ret, err := fn.Fn(ctx, c)
	if err != nil {
		t.Fatalf("%s: %v", sc.Fun, err)
	}
	m := payload.NewMap("name", ret.Name, "changes", ret.Changes, "result", ret.Result.Value(), "comment", ret.Comment)
	if ret.Changes == nil {
		m.Set("changes", &payload.Map{})
	}
	if len(ret.Warnings) > 0 {
		m.Set("warnings", ret.Warnings)
	}
	return psGolden{Ret: psNormalize(t, m), After: psAfter(t, dir)}
}

// psRunSalt runs a scenario through real Salt with the fakes in dir.
func psRunSalt(t *testing.T, src string, sc psScenario, dir string) psGolden {
	t.Helper()
	root := t.TempDir()
	conf := filepath.Join(root, "conf")
	for _, d := range []string{conf, filepath.Join(root, "srv"), filepath.Join(root, "pillar")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := fmt.Sprintf("id: golden\nfile_client: local\nroot_dir: %s\nfile_roots: {base: [%s/srv]}\npillar_roots: {base: [%s/pillar]}\n"+
		"enable_fqdns_grains: False\nipv6: False\nlog_level: quiet\nsystemd.scope: %v\n", root, root, root, sc.Scope)
	if err := os.WriteFile(filepath.Join(conf, "minion"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	var cli []string
	enc := func(v any) string {
		b, err := json.Marshal(payload.FromGo(v))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	kw := payload.NewMap(sc.Kwargs...)
	if sc.Exec {
		cli = append(cli, sc.Fun)
		for _, a := range sc.Args {
			cli = append(cli, enc(a))
		}
	} else {
		cli = append(cli, "state.single", sc.Fun)
	}
	for _, it := range kw.Items() {
		cli = append(cli, payload.KeyString(it.Key)+"="+enc(it.Value))
	}
	if sc.Test {
		cli = append(cli, "test=True")
	}
	code := "import sys, salt.utils.systemd as s; s.booted = lambda context=None: True; " +
		"sys.argv = ['salt-call'] + sys.argv[1:]; from salt.scripts import salt_call; salt_call()"
	cmd := saltpeer.PythonCommand(context.Background(), src, code, append([]string{"-c", conf, "--local", "--out", "json"}, cli...)...)
	cmd.Env = append(cmd.Env, "FAKEAPT_DIR="+dir, "FAKESD_DIR="+dir, "PATH="+psFakePath()+string(os.PathListSeparator)+os.Getenv("PATH"))
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatalf("salt-call: %v", err)
	}
	g := psGolden{}
	if sc.Exec {
		if i := strings.Index(stderr.String(), fmt.Sprintf("Error running '%s': ", sc.Fun)); i >= 0 && stdout.Len() == 0 {
			g.Error = strings.TrimRight(stderr.String()[i+len(fmt.Sprintf("Error running '%s': ", sc.Fun)):], "\n")
			g.After = psAfter(t, dir)
			return g
		}
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(stdout.String()), &out); err != nil {
		t.Fatalf("salt-call %v: %v\nstdout: %s\nstderr: %s", cli, err, stdout.String(), stderr.String())
	}
	ret := out["local"]
	if !sc.Exec {
		m, ok := ret.(map[string]any)
		if !ok || len(m) != 1 {
			t.Fatalf("state.single returned %v", ret)
		}
		for _, v := range m {
			r := v.(map[string]any)
			for _, k := range []string{"__sls__", "__run_num__", "start_time", "duration", "__id__"} {
				delete(r, k)
			}
			ret = r
		}
	}
	g.Ret = ret
	g.After = psAfter(t, dir)
	return g
}

// psRun compares (or, with -update, regenerates) a module's scenarios.
func psRun(t *testing.T, scenarios []psScenario) {
	src := ""
	if testutil.Update() {
		src = saltpeer.Require(t)
	}
	for _, sc := range scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			path := filepath.Join(psDir(), psModule(sc), sc.Name+".json")
			var want psGolden
			if src != "" {
				want = psRunSalt(t, src, sc, psFake(t, sc))
				if err := os.WriteFile(path, []byte(psJSON(t, want)+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (regenerate with -update and GSALT_SALT_SRC)", err)
				}
				if err := json.Unmarshal(b, &want); err != nil {
					t.Fatal(err)
				}
			}
			got := psRunGsalt(t, sc, psFake(t, sc))
			if g, w := psJSON(t, got.Ret), psJSON(t, psNormalize(t, want.Ret)); g != w || got.Error != want.Error {
				t.Errorf("%s %v: return differs\ngsalt: %s %s\nsalt:  %s %s", sc.Fun, sc.Kwargs, g, got.Error, w, want.Error)
			}
			keys := make([]string, 0, len(want.After))
			for k := range want.After {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if got.After[k] != want.After[k] {
					t.Errorf("%s afterwards differs\ngsalt:\n%s\nsalt:\n%s", k, got.After[k], want.After[k])
				}
			}
		})
	}
}

// Fake apt databases shared by the scenarios.
const (
	psStatus = "install ok installed bar 1.0-1 amd64\n" +
		"install ok installed libz 2:1.2-3 amd64\n" +
		"deinstall ok config-files oldpkg 0.9-1 amd64\n" +
		"install ok installed zlib1g 1:1.2.13-1 i386"
	psRepo = "bar 1.1-1 amd64\nbar 1.0-1 amd64\nbaz 3.0-2 all\nfoo 2.0-1 amd64\nfoo 1.5-1 amd64\nlibz 2:1.2-3 amd64\nzlib1g 1:1.2.13-1 i386"
)

func psPkg(name, fun string, test bool, kwargs ...any) psScenario {
	return psScenario{Name: name, Fun: fun, Test: test, Kwargs: kwargs, Status: psStatus, Repo: psRepo}
}

func psPkgExec(name, fun string, args []any, kwargs ...any) psScenario {
	return psScenario{Name: name, Fun: fun, Exec: true, Args: args, Kwargs: kwargs, Status: psStatus, Repo: psRepo}
}

func psScope(sc psScenario) psScenario { sc.Scope = true; return sc }

func pkgScenarios() []psScenario {
	failInstall := psPkg("installed_apt_error", "pkg.installed", false, "name", "x", "pkgs", []any{"foo", "nosuch"})
	failRemove := psPkg("removed_apt_error", "pkg.removed", false, "name", "bar")
	failRemove.Fail = map[string]string{"fail_remove": "E: Sub-process /usr/bin/dpkg returned an error code (1)"}
	held := psPkg("installed_held_package", "pkg.installed", false, "name", "bar", "version", "1.1-1")
	held.Holds = "bar"
	return []psScenario{
		psPkg("installed_new", "pkg.installed", false, "name", "foo"),
		psPkg("installed_new_test", "pkg.installed", true, "name", "foo"),
		psPkg("installed_already", "pkg.installed", false, "name", "bar"),
		psPkg("installed_version", "pkg.installed", false, "name", "foo", "version", "1.5-1"),
		psPkg("installed_version_already", "pkg.installed", false, "name", "bar", "version", "1.0-1"),
		psPkg("installed_upgrade_version", "pkg.installed", false, "name", "bar", "version", "1.1-1"),
		psPkg("installed_version_glob", "pkg.installed", false, "name", "bar", "version", "1.0*"),
		psPkg("installed_version_compare", "pkg.installed", false, "name", "bar", "version", ">=1.0"),
		psPkg("installed_epoch", "pkg.installed", false, "name", "libz", "version", "1.2-3"),
		psPkg("installed_pkgs", "pkg.installed", false, "name", "mylist", "pkgs", []any{"foo", "bar", payload.NewMap("baz", "3.0-2")}),
		psPkg("installed_pkgs_test", "pkg.installed", true, "name", "mylist", "pkgs", []any{"foo", "bar", payload.NewMap("baz", "3.0-2")}),
		psPkg("installed_pkgs_long", "pkg.installed", false, "name", "mylist", "pkgs", []any{payload.NewMap("foo", "2.0-1"), payload.NewMap("baz", "3.0-2")}),
		psPkg("installed_pkgs_empty", "pkg.installed", false, "name", "mylist", "pkgs", []any{}),
		psPkg("installed_refresh_false", "pkg.installed", false, "name", "foo", "refresh", false),
		psPkg("installed_fromrepo_skip_verify", "pkg.installed", false, "name", "foo", "fromrepo", "bookworm-backports", "skip_verify", true),
		psPkg("installed_latest_version", "pkg.installed", false, "name", "bar", "version", "latest"),
		psPkg("installed_foreign_arch", "pkg.installed", false, "name", "zlib1g:i386"),
		psPkg("installed_reinstall", "pkg.installed", false, "name", "bar", "reinstall", true),
		psPkg("installed_reinstall_test", "pkg.installed", true, "name", "bar", "reinstall", true),
		psPkg("installed_version_test", "pkg.installed", true, "name", "foo", "version", "1.5-1"),
		psPkg("installed_pkgs_refresh", "pkg.installed", false, "name", "x", "refresh", true, "pkgs", []any{payload.NewMap("foo", "2.0-1"), "baz"}),
		psScope(psPkg("installed_scope", "pkg.installed", false, "name", "foo")),
		psPkg("installed_missing_version", "pkg.installed", false, "name", "foo", "version", "9.9-9"),
		failInstall,
		held,
		psPkg("latest_upgrade", "pkg.latest", false, "name", "bar"),
		psPkg("latest_uptodate", "pkg.latest", false, "name", "libz"),
		psPkg("latest_test", "pkg.latest", true, "name", "x", "pkgs", []any{"bar", "libz", "foo"}),
		psPkg("latest_pkgs", "pkg.latest", false, "name", "x", "pkgs", []any{"bar", "libz", "foo"}),
		psPkg("latest_fromrepo", "pkg.latest", false, "name", "bar", "fromrepo", "bookworm-backports", "refresh", false),
		psPkg("latest_unknown", "pkg.latest", false, "name", "nosuch"),
		psPkg("removed", "pkg.removed", false, "name", "bar"),
		psPkg("removed_test", "pkg.removed", true, "name", "bar"),
		psPkg("removed_absent", "pkg.removed", false, "name", "foo"),
		psPkg("removed_version_mismatch", "pkg.removed", false, "name", "bar", "version", "9.9"),
		psPkg("removed_version_match", "pkg.removed", false, "name", "bar", "version", "1.0-1"),
		psPkg("removed_pkgs", "pkg.removed", false, "name", "x", "pkgs", []any{"bar", "foo", "libz"}),
		failRemove,
		psPkg("purged", "pkg.purged", false, "name", "bar"),
		psPkg("purged_config_files", "pkg.purged", false, "name", "oldpkg"),
		psPkg("purged_test", "pkg.purged", true, "name", "x", "pkgs", []any{"bar", "oldpkg", "foo"}),
		psPkg("purged_absent", "pkg.purged", false, "name", "foo"),
		psPkgExec("exec_list_pkgs", "pkg.list_pkgs", nil),
		psPkgExec("exec_list_pkgs_as_list", "pkg.list_pkgs", nil, "versions_as_list", true),
		psPkgExec("exec_list_pkgs_removed", "pkg.list_pkgs", nil, "removed", true),
		psPkgExec("exec_version", "pkg.version", []any{"bar"}),
		psPkgExec("exec_version_many", "pkg.version", []any{"bar", "foo", "lib*"}),
		psPkgExec("exec_latest_version", "pkg.latest_version", []any{"bar", "foo", "libz", "nosuch"}),
		psPkgExec("exec_latest_version_one", "pkg.latest_version", []any{"bar"}, "refresh", false),
		psPkgExec("exec_upgrade_available", "pkg.upgrade_available", []any{"bar"}),
		psPkgExec("exec_refresh_db", "pkg.refresh_db", nil),
		psPkgExec("exec_install", "pkg.install", []any{"foo"}),
		psPkgExec("exec_install_pkgs_downgrade", "pkg.install", nil, "pkgs", []any{payload.NewMap("bar", "1.0-1"), "baz"}, "install_recommends", false),
		psPkgExec("exec_install_error", "pkg.install", nil, "pkgs", []any{"foo", "nosuch"}),
		psPkgExec("exec_remove", "pkg.remove", []any{"bar,libz"}),
		psPkgExec("exec_purge", "pkg.purge", nil, "pkgs", []any{"bar", "oldpkg"}),
		psPkgExec("exec_list_upgrades", "pkg.list_upgrades", nil),
		psPkgExec("exec_version_cmp", "pkg.version_cmp", []any{"1:1.0~rc1-1", "1:1.0-1"}),
		psPkgExec("exec_hold", "pkg.hold", []any{"bar"}),
		psPkgExec("exec_get_selections", "pkg.get_selections", nil),
		psPkgExec("exec_unhold_not_held", "pkg.unhold", nil, "pkgs", []any{"bar", "nosuch"}),
		psPkgExec("exec_install_version_refresh", "pkg.install", []any{"foo"}, "version", "1.5-1", "refresh", true),
		psPkgExec("exec_install_compare", "pkg.install", []any{"foo"}, "version", "<2.0"),
		psPkgExec("exec_install_reinstall", "pkg.install", nil, "pkgs", []any{"bar", "foo"}, "reinstall", true),
		psPkgExec("exec_latest_version_fromrepo", "pkg.latest_version", []any{"foo"}, "fromrepo", "unstable", "refresh", false),
		psPkgExec("exec_list_repo_pkgs", "pkg.list_repo_pkgs", []any{"bar", "foo"}),
		psPkgExec("exec_normalize_name", "pkg.normalize_name", []any{"zlib1g:amd64"}),
		psPkgExec("exec_parse_arch", "pkg.parse_arch", []any{"zlib1g:i386"}),
		psScope(psPkgExec("exec_remove_scope", "pkg.remove", []any{"bar"})),
	}
}

// TestPkgSvcGoldenPkg compares the pkg states and functions with Salt's.
func TestPkgSvcGoldenPkg(t *testing.T) { psRun(t, pkgScenarios()) }
