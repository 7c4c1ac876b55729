package proxymod_test

import (
	"context"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/gsalt/gsalt/minion"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/proxy/proxymod"
	"github.com/gsalt/gsalt/wire/payload"
)

// device is a minimal proxymod.Service: one module, calls serialised.
type device struct {
	mu  sync.Mutex
	id  string
	typ string
	mod proxymod.Module
}

func (d *device) ID() string        { return d.id }
func (d *device) ProxyType() string { return d.typ }
func (d *device) Do(ctx context.Context, fn func(context.Context, proxymod.Module) error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return fn(ctx, d.mod)
}

// dummyDevice initialises a dummy device whose cachedir is dir and returns
// a registry with its functions and an Env reaching it.
func dummyDevice(t *testing.T, dir string, proxyOpts *payload.Map) (*modules.Registry, *modules.Env, *proxymod.Dummy) {
	t.Helper()
	typ, ok := proxymod.Default().Lookup(proxymod.DummyTypeName)
	if !ok {
		t.Fatal("no dummy proxytype")
	}
	mod := typ.New().(*proxymod.Dummy)
	if proxyOpts == nil {
		proxyOpts = payload.NewMap("proxytype", "dummy")
	}
	if err := mod.Init(context.Background(), &proxymod.Config{ID: "p1", ProxyType: "dummy", Proxy: proxyOpts, CacheDir: dir}); err != nil {
		t.Fatal(err)
	}
	reg := modules.NewRegistry()
	if err := reg.Register(typ.Functions()...); err != nil {
		t.Fatal(err)
	}
	env := &modules.Env{ID: "p1", Services: map[string]any{proxymod.ServiceName: &device{id: "p1", typ: "dummy", mod: mod}}}
	return reg, env, mod
}

// call runs fun with Salt's CLI argument conventions (name=value strings
// yamlified like the minion does).
func call(reg *modules.Registry, env *modules.Env, fun string, args ...any) modules.Result {
	if args == nil {
		args = []any{}
	}
	return reg.Execute(context.Background(), modules.Binder{Yamlify: minion.YamlifyArg}, env, fun, args, payload.NewMap("jid", "1"))
}

// TestDummyFunctions replays a session run against a real Salt 3006
// salt-proxy (proxytype dummy) with `salt p1 <fun> <args> --out json`; the
// wanted returns are what it printed (exceptions become gsalt's shorter
// "caused an exception" texts without the Python traceback).
func TestDummyFunctions(t *testing.T) {
	reg, env, _ := dummyDevice(t, t.TempDir(), nil)
	pkgs := func(kv ...any) *payload.Map { return payload.NewMap(kv...) }
	steps := []struct {
		fun     string
		args    []any
		want    any
		retcode int
		prefix  string // when set, the return is a string with this prefix
	}{
		{fun: "pkg.list_pkgs", want: pkgs("coreutils", "1.0", "apache", "2.4", "tinc", "1.4", "redbull", "999.99")},
		{fun: "service.list", want: []any{"apache", "ntp", "samba"}},
		{fun: "service.get_all", want: []any{"apache", "ntp", "samba"}},
		{fun: "service.status", args: []any{"apache"}, want: true},
		{fun: "service.status", args: []any{"samba"}, want: false},
		{fun: "service.start", args: []any{"samba"}, want: "running"},
		{fun: "service.status", args: []any{"samba"}, want: true},
		{fun: "service.stop", args: []any{"samba"}, want: "stopped"},
		{fun: "service.restart", args: []any{"ntp"}, want: true},
		{fun: "service.enabled", args: []any{"redbull"}, want: true},
		{fun: "service.enabled", args: []any{"apache"}, want: false},
		{fun: "service.running", args: []any{"apache"}, retcode: 1, prefix: "The minion function caused an exception: AttributeError: 'bool' object has no attribute 'get'"},
		{fun: "pkg.version", args: []any{"apache"}, want: "2.4"},
		{fun: "pkg.version", args: []any{"apache", "tinc"}, want: pkgs("apache", "2.4", "tinc", "1.4")},
		{fun: "pkg.install", args: []any{"foo"}, want: pkgs("foo", "1.0")},
		{fun: "pkg.install", args: []any{"bar", "version=2.5"}, want: pkgs("bar", 2.5)},
		{fun: "pkg.remove", args: []any{"foo"}, want: pkgs("coreutils", "1.0", "apache", "2.4", "tinc", "1.4", "redbull", "999.99", "bar", 2.5)},
		{fun: "pkg.installed", args: []any{"apache"}, want: true},
		{fun: "pkg.upgrade", want: pkgs(
			"coreutils", pkgs("old", "1.0", "new", "2.0"),
			"apache", pkgs("old", "2.4", "new", "3.4"),
			"tinc", pkgs("old", "1.4", "new", "2.4"),
			"redbull", pkgs("old", "999.99", "new", "1000.99"),
			"bar", pkgs("old", 2.5, "new", "3.5"))},
		{fun: "pkg.list_pkgs", want: pkgs("coreutils", "2.0", "apache", "3.4", "tinc", "2.4", "redbull", "1000.99", "bar", "3.5")},
		{fun: "pkg.version", args: []any{"nope"}, retcode: 1, prefix: "Passed invalid arguments to pkg.version: 'NoneType' object is not subscriptable\n"},
		{fun: "service.status", args: []any{"nope"}, retcode: 1, prefix: "The minion function caused an exception: KeyError: 'nope'"},
		{fun: "pkg.remove", args: []any{"nope"}, retcode: 1, prefix: "The minion function caused an exception: KeyError: 'nope'"},
		{fun: "pkg.installed", args: []any{"nope"}, retcode: 1, prefix: "Passed invalid arguments to pkg.installed: argument of type 'NoneType' is not iterable"},
		{fun: "pkg.installed", args: []any{"nope", "version=1.0"}, want: nil},
	}
	for i, s := range steps {
		res := call(reg, env, s.fun, s.args...)
		if res.Retcode != s.retcode {
			t.Errorf("%d %s %v: retcode %d, want %d (%v)", i, s.fun, s.args, res.Retcode, s.retcode, res.Return)
		}
		if s.prefix != "" {
			if str, _ := res.Return.(string); !strings.HasPrefix(str, s.prefix) {
				t.Errorf("%d %s %v: %q, want prefix %q", i, s.fun, s.args, res.Return, s.prefix)
			}
			continue
		}
		if !reflect.DeepEqual(res.Return, s.want) {
			t.Errorf("%d %s %v: %#v, want %#v", i, s.fun, s.args, res.Return, s.want)
		}
	}
}

// TestDummyStateFile: the state file has Salt's name and bytes, a file
// written by Salt's dummy proxy is read back, and state survives a new
// module instance.
func TestDummyStateFile(t *testing.T) {
	dir := t.TempDir()
	dummyDevice(t, dir, nil)
	path := filepath.Join(dir, "dummy-proxy-p1.cache")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// msgpack.packb(state, use_bin_type=True) of the state after init().
	want := "83a8736572766963657383a6617061636865a772756e6e696e67a36e7470a772756e6e696e67a573616d6261a773746f70706564" +
		"a87061636b6167657384a9636f72657574696c73a3312e30a6617061636865a3322e34a474696e63a3312e34a772656462756c6c" +
		"a63939392e3939ab696e697469616c697a6564c3"
	if got := hex.EncodeToString(b); got != want {
		t.Errorf("state file:\n%s\nwant\n%s", got, want)
	}

	// The file a real salt-proxy left after pkg.upgrade and friends.
	salt, err := os.ReadFile("testdata/salt-dummy-proxy.cache")
	if err != nil {
		t.Fatal(err)
	}
	dir2 := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir2, "dummy-proxy-p1.cache"), salt, 0o600); err != nil {
		t.Fatal(err)
	}
	reg, env, mod := dummyDevice(t, dir2, nil)
	res := call(reg, env, "pkg.list_pkgs")
	wantPkgs := payload.NewMap("coreutils", "2.0", "apache", "3.4", "tinc", "2.4", "redbull", "1000.99", "bar", "3.5")
	if !reflect.DeepEqual(res.Return, wantPkgs) {
		t.Errorf("list_pkgs from Salt's state file: %v", res.Return)
	}
	g, err := mod.Grains(context.Background())
	if err != nil || g.Str("dummy_grain_2") != "two" || g.Len() != 3 {
		t.Errorf("grains: %v %v", g, err)
	}
	if res := call(reg, env, "service.start", "samba"); res.Return != "running" {
		t.Fatalf("service.start: %v", res.Return)
	}
	// A new instance (a restarted device) sees the change.
	reg, env, _ = dummyDevice(t, dir2, nil)
	if res := call(reg, env, "service.status", "samba"); res.Return != true {
		t.Errorf("state after restart: %v", res.Return)
	}

	// A corrupt file is replaced by the initial state, as Salt does.
	if err := os.WriteFile(path, []byte("\xc1garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	reg, env, _ = dummyDevice(t, dir, nil)
	if res := call(reg, env, "pkg.version", "redbull"); res.Return != "999.99" {
		t.Errorf("after a corrupt state file: %v", res.Return)
	}
}

func TestDummyInitFailures(t *testing.T) {
	for _, key := range []string{"raise_minion_error", "raise_commandexec_error"} {
		mod := proxymod.DummyType().New()
		err := mod.Init(context.Background(), &proxymod.Config{ID: "p1", Proxy: payload.NewMap("proxytype", "dummy", key, true), CacheDir: t.TempDir()})
		if !errors.Is(err, proxymod.ErrDummyInit) {
			t.Errorf("%s: %v", key, err)
		}
	}
}

func TestRegistryAndWith(t *testing.T) {
	r := proxymod.Default()
	if got := r.Names(); !reflect.DeepEqual(got, []string{"deltaproxy", "dummy"}) {
		t.Errorf("Names: %v", got)
	}
	if err := r.Register(proxymod.DummyType()); err == nil {
		t.Error("duplicate proxytype accepted")
	}
	if err := r.Register(proxymod.Type{Name: "x"}); err == nil {
		t.Error("proxytype without New accepted")
	}
	reg, _, _ := dummyDevice(t, t.TempDir(), nil)
	// Not on a proxy: an ERROR return, no panic.
	res := reg.Execute(context.Background(), modules.Binder{}, &modules.Env{ID: "m"}, "pkg.list_pkgs", nil, nil)
	if s, _ := res.Return.(string); !strings.HasPrefix(s, "ERROR: ") || !strings.Contains(s, "not running on a proxy minion") {
		t.Errorf("without a device: %v", res.Return)
	}
	// A device of another proxytype.
	env := &modules.Env{ID: "c", Services: map[string]any{proxymod.ServiceName: &device{id: "c", typ: "deltaproxy", mod: proxymod.DeltaproxyType().New()}}}
	res = reg.Execute(context.Background(), modules.Binder{}, env, "pkg.list_pkgs", nil, nil)
	if s, _ := res.Return.(string); !strings.Contains(s, "c is a deltaproxy proxy") || res.Retcode != 1 {
		t.Errorf("wrong module: %v", res.Return)
	}
	// Framework errors of Do come back as ERROR returns.
	busy := &busyDevice{}
	env = &modules.Env{ID: "b", Services: map[string]any{proxymod.ServiceName: busy}}
	res = reg.Execute(context.Background(), modules.Binder{}, env, "service.list", nil, nil)
	if s, _ := res.Return.(string); !strings.HasPrefix(s, "ERROR: ") || !strings.Contains(s, "too many commands") {
		t.Errorf("busy device: %v", res.Return)
	}
}

type busyDevice struct{}

func (busyDevice) ID() string        { return "b" }
func (busyDevice) ProxyType() string { return "dummy" }
func (busyDevice) Do(context.Context, func(context.Context, proxymod.Module) error) error {
	return proxymod.ErrBusy
}
