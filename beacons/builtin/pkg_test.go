package builtin_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/gsalt/gsalt/beacons"
	"github.com/gsalt/gsalt/beacons/builtin"
	"github.com/gsalt/gsalt/beacons/internal/golden"
	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/modules"
	modbuiltin "github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/wire/payload"
)

// pkgTableCaller answers pkg.version and pkg.latest_version from tables
// and records every call with its keyword arguments, as the golden
// generator's stand-in __salt__ does.
type pkgTableCaller struct {
	installed, latest *payload.Map
	calls             []any
}

func (f *pkgTableCaller) Call(_ context.Context, fun string, args ...any) (any, error) {
	if len(args) != 2 {
		return nil, fmt.Errorf("%s: want a name and keyword arguments, got %v", fun, args)
	}
	kw := payload.DeepClone(args[1]).(*payload.Map)
	kw.Delete("__kwarg__")
	f.calls = append(f.calls, []any{fun, args[0], kw})
	table := f.installed
	if fun == "pkg.latest_version" {
		table = f.latest
	}
	if v, ok := table.Get(payload.Text(args[0])); ok {
		return v, nil
	}
	return "", nil
}

// TestPkgGolden replays the scenarios of testdata/pkg_goldens.json (from
// Salt 3006's pkg beacon, see gen_pkg_goldens.py): events per step, the
// calls made and validate's verdicts.
func TestPkgGolden(t *testing.T) {
	v, err := golden.Load("../testdata/pkg_goldens.json")
	if err != nil {
		t.Fatal(err)
	}
	g := v.(*payload.Map)
	mod := module(t, builtin.Options{}, "pkg")
	for _, c := range g.List("cases") {
		c := c.(*payload.Map)
		t.Run(c.Str("name"), func(t *testing.T) {
			caller := &pkgTableCaller{}
			b := mod.New(testEnv(caller))
			steps := c.List("steps")
			for i, ev := range c.List("events") {
				step := steps[i].(*payload.Map)
				caller.installed, caller.latest = step.Map("installed"), step.Map("latest")
				if got, want := run(t, b, c.List("config"), time.Now()), golden.PyJSON(ev); got != want {
					t.Errorf("step %d:\n got %s\nwant %s", i, got, want)
				}
			}
			if got, want := golden.PyJSON(caller.calls), golden.PyJSON(c.List("calls")); got != want {
				t.Errorf("calls:\n got %s\nwant %s", got, want)
			}
		})
	}
	for i, c := range g.List("validate") {
		c := c.(*payload.Map)
		cfg, _ := c.Get("config")
		ok, msg := mod.Validate(cfg)
		if got, want := golden.PyJSON([]any{ok, msg}), golden.PyJSON(c.List("result")); got != want {
			t.Errorf("validate %d %s: got %s, want %s", i, golden.PyJSON(cfg), got, want)
		}
	}
}

// TestPkgGoldenFresh regenerates pkg_goldens.json with real Salt (gated
// on GSALT_SALT_SRC) and checks the stored file still matches.
func TestPkgGoldenFresh(t *testing.T) {
	src := saltpeer.Require(t)
	out := t.TempDir()
	gen, err := filepath.Abs("../testdata/gen_pkg_goldens.py")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(context.Background(), saltpeer.Python(), gen, "--out", out)
	cmd.Env = saltpeer.Env(src)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("generator: %v\n%s", err, b)
	}
	fresh, err := golden.Load(filepath.Join(out, "pkg_goldens.json"))
	if err != nil {
		t.Fatal(err)
	}
	stored, err := golden.Load("../testdata/pkg_goldens.json")
	if err != nil {
		t.Fatal(err)
	}
	if golden.PyJSON(fresh) != golden.PyJSON(stored) {
		t.Error("pkg_goldens.json is stale: run gen_pkg_goldens.py (see its docstring)")
	}
}

// TestPkgThroughAptModule runs the beacon through gsalt's real pkg module
// against the fake apt/dpkg commands of states/testdata/pkg/fakebin (a
// package database and repository in files the test writes), never the
// machine's packages.
func TestPkgThroughAptModule(t *testing.T) {
	dir := t.TempDir()
	bins, err := filepath.Abs(filepath.Join("..", "..", "states", "testdata", "pkg", "fakebin"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("FAKEAPT_DIR", dir)
	t.Setenv("PATH", bins+string(os.PathListSeparator)+os.Getenv("PATH"))
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := modules.NewRegistry()
	if err := r.Register(modbuiltin.PkgFunctions()...); err != nil {
		t.Fatal(err)
	}
	env := &modules.Env{ID: "m1", Registry: r,
		Grains: payload.NewMap("os", "Debian", "os_family", "Debian", "kernel", "Linux", "osarch", "amd64", "cpuarch", "x86_64"),
		Opts:   payload.NewMap("cachedir", t.TempDir(), "systemd.scope", false)}
	caller := beacons.RegistryCaller{Registry: r, Env: func() *modules.Env { return env }}
	b := module(t, builtin.Options{}, "pkg").New(testEnv(caller))
	cfg := []any{payload.NewMap("pkgs", []any{"zsh", "curl"})}
	steps := []struct{ status, repo, want string }{
		{"install ok installed zsh 5.9-4 amd64\n", "zsh 5.9-4 amd64\ncurl 8.0-1 amd64\n", `[]`},
		{"install ok installed zsh 5.9-4 amd64\n", "zsh 5.9-5 amd64\nzsh 5.9-4 amd64\ncurl 8.0-1 amd64\n",
			`[{"pkg": "zsh", "version": "5.9-5", "status": "upgrade"}]`},
		{"install ok installed zsh 5.9-5 amd64\ninstall ok installed curl 8.0-1 amd64\n", "zsh 5.9-5 amd64\ncurl 8.0-1 amd64\n",
			`[{"pkg": "zsh", "version": "5.9-5", "status": "installed"}, {"pkg": "curl", "version": "8.0-1", "status": "installed"}]`},
		{"install ok installed zsh 5.9-5 amd64\n", "zsh 5.9-5 amd64\ncurl 8.0-1 amd64\n",
			`[{"pkg": "curl", "version": null, "status": "not-installed"}]`},
	}
	for i, s := range steps {
		write("status", s.status)
		write("repo", s.repo)
		if got := run(t, b, cfg, time.Now()); got != s.want {
			t.Errorf("step %d:\n got %s\nwant %s", i, got, s.want)
		}
	}
}
