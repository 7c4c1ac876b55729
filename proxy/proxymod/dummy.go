package proxymod

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"github.com/gsalt/gsalt/internal/atomicfile"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// DummyTypeName is the proxytype of Salt's test proxy.
const DummyTypeName = "dummy"

// ErrDummyInit is the failure the dummy proxy's init raises on request
// (proxy options raise_minion_error and raise_commandexec_error).
var ErrDummyInit = errors.New("proxymod: dummy init failure requested")

// DummyType is Salt's dummy proxy (salt/proxy/dummy.py): a fake device
// with services and packages whose state lives in
// <cachedir>/dummy-proxy-<id>.cache (msgpack, the same file and format as
// Salt's, so a device keeps its state across restarts and between Salt and
// gsalt). It registers the pkg.* and service.* functions of Salt's
// dummyproxy_pkg and dummyproxy_service modules.
func DummyType() Type {
	return Type{
		Name:      DummyTypeName,
		New:       func() Module { return &Dummy{} },
		Functions: dummyFunctions,
	}
}

// Dummy is one dummy device. Salt reads the state file on every call; the
// dummy keeps the state in memory after Init and writes the file after
// every change.
type Dummy struct {
	id    string
	path  string
	state *payload.Map
}

// dummyInitialState is _initial_state().
func dummyInitialState() *payload.Map {
	return payload.NewMap(
		"services", payload.NewMap("apache", "running", "ntp", "running", "samba", "stopped"),
		"packages", payload.NewMap("coreutils", "1.0", "apache", "2.4", "tinc", "1.4", "redbull", "999.99"),
	)
}

// Init implements Module: it honours raise_minion_error and
// raise_commandexec_error, loads (or creates) the state file and marks the
// device initialized.
func (d *Dummy) Init(_ context.Context, cfg *Config) error {
	if payload.Truthy(mapGet(cfg.Proxy, "raise_minion_error")) {
		return fmt.Errorf("%w: Raising A MinionError.", ErrDummyInit)
	}
	if payload.Truthy(mapGet(cfg.Proxy, "raise_commandexec_error")) {
		return fmt.Errorf("%w: Raising A CommandExecutionError.", ErrDummyInit)
	}
	d.id = cfg.ID
	d.path = filepath.Join(cfg.CacheDir, "dummy-proxy-"+cfg.ID+".cache")
	if err := d.load(cfg); err != nil {
		return err
	}
	d.state.Set("initialized", true)
	return d.save()
}

// load reads the state file; a missing or unreadable one is replaced by
// the initial state, as Salt does.
func (d *Dummy) load(cfg *Config) error {
	b, err := os.ReadFile(d.path)
	if err == nil {
		st, derr := payload.UnmarshalMap(b)
		if derr == nil && st.Map("services") != nil && st.Map("packages") != nil {
			d.state = st
			return nil
		}
		if cfg.Log != nil {
			cfg.Log.Warn("dummy proxy: unreadable state file; starting afresh", "path", d.path, "err", derr)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("proxymod: dummy state: %w", err)
	}
	d.state = dummyInitialState()
	return d.save()
}

// save writes the state file.
func (d *Dummy) save() error {
	b, err := payload.MarshalBin(d.state)
	if err != nil {
		return fmt.Errorf("proxymod: dummy state: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(d.path), 0o700); err != nil {
		return fmt.Errorf("proxymod: dummy state: %w", err)
	}
	if err := atomicfile.WriteFile(d.path, b, 0o600, false); err != nil {
		return fmt.Errorf("proxymod: dummy state: %w", err)
	}
	return nil
}

// Ping implements Module: always true.
func (d *Dummy) Ping(context.Context) (bool, error) { return true, nil }

// Grains implements Module: the three made-up grains, cached in the state.
func (d *Dummy) Grains(context.Context) (*payload.Map, error) {
	gc := d.state.Map("grains_cache")
	if gc == nil {
		gc = payload.NewMap("dummy_grain_1", "one", "dummy_grain_2", "two", "dummy_grain_3", "three")
		d.state.Set("grains_cache", gc)
		if err := d.save(); err != nil {
			return nil, err
		}
	}
	return payload.DeepClone(gc).(*payload.Map), nil
}

// Shutdown implements Module: it removes the file named by the state's
// filename key when there is one (Salt's behaviour; nothing sets it).
func (d *Dummy) Shutdown(context.Context) error {
	if d.state == nil {
		return nil
	}
	if fn := d.state.Str("filename"); fn != "" {
		if err := os.Remove(fn); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("proxymod: dummy shutdown: %w", err)
		}
	}
	return nil
}

// keyError is Python's KeyError for a missing name.
func keyError(name any) error {
	return fmt.Errorf("KeyError: %s", pyfmt.Repr(name))
}

// ServiceStart sets a service running (service_start).
func (d *Dummy) ServiceStart(name string) (string, error) {
	d.state.Map("services").Set(name, "running")
	return "running", d.save()
}

// ServiceStop sets a service stopped (service_stop).
func (d *Dummy) ServiceStop(name string) (string, error) {
	d.state.Map("services").Set(name, "stopped")
	return "stopped", d.save()
}

// ServiceList lists the service names (service_list).
func (d *Dummy) ServiceList() []any {
	out := []any{}
	for _, k := range d.state.Map("services").Items() {
		out = append(out, k.Key)
	}
	return out
}

// ServiceStatus is service_status: true when running; a KeyError for an
// unknown service.
func (d *Dummy) ServiceStatus(name string) (bool, error) {
	v, ok := d.state.Map("services").Get(name)
	if !ok {
		return false, keyError(name)
	}
	return v == "running", nil
}

// PackageList returns a copy of the packages (package_list).
func (d *Dummy) PackageList() *payload.Map {
	return d.state.Map("packages").Clone()
}

// PackageInstall installs name at version ("1.0" when version is falsy).
func (d *Dummy) PackageInstall(name string, version any) (*payload.Map, error) {
	if !payload.Truthy(version) {
		version = "1.0"
	}
	d.state.Map("packages").Set(name, version)
	return payload.NewMap(name, version), d.save()
}

// Upgrade adds 1.0 to every package version (float(v) + 1.0, printed the
// way Python prints floats) and returns the new package list.
func (d *Dummy) Upgrade() (*payload.Map, error) {
	pk := d.state.Map("packages")
	next := &payload.Map{}
	for _, it := range pk.Items() {
		f, err := pyFloat(it.Value)
		if err != nil {
			return nil, err
		}
		next.SetKey(it.Key, pyfmt.FloatRepr(f+1.0))
	}
	d.state.Set("packages", next)
	return next.Clone(), d.save()
}

// PackageRemove removes a package and returns the remaining ones; a
// KeyError for a package that is not installed.
func (d *Dummy) PackageRemove(name string) (*payload.Map, error) {
	pk := d.state.Map("packages")
	if _, ok := pk.Delete(name); !ok {
		return nil, keyError(name)
	}
	return pk.Clone(), d.save()
}

// PackageStatus returns {name: version}, or nil when not installed.
func (d *Dummy) PackageStatus(name string) *payload.Map {
	v, ok := d.state.Map("packages").Get(name)
	if !ok {
		return nil
	}
	return payload.NewMap(name, v)
}

// pyFloat is Python's float() of a version value.
func pyFloat(v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case int64:
		return float64(x), nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case string:
		s := strings.ReplaceAll(strings.TrimSpace(x), "_", "")
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f, nil
		}
		return 0, fmt.Errorf("ValueError: could not convert string to float: %s", pyfmt.Repr(x))
	}
	return 0, fmt.Errorf("TypeError: float() argument must be a string or a real number, not '%s'", payload.TypeName(v))
}

func mapGet(m *payload.Map, key string) any {
	if m == nil {
		return nil
	}
	v, _ := m.Get(key)
	return v
}

// dummyCall runs fn with the job's dummy device.
func dummyCall[R any](ctx context.Context, c *modules.Call, fn func(d *Dummy) (R, error)) (R, error) {
	return With(ctx, c, func(_ context.Context, d *Dummy) (R, error) { return fn(d) })
}

// pyArgErr is the TypeError a Salt function raises on a bad value, shown as
// "Passed invalid arguments to <fun>: <msg>".
func pyArgErr(msg string) error { return fmt.Errorf("%w: %s", modules.ErrArguments, msg) }

func p(name string, def any) modules.Param { return modules.Param{Name: name, Default: def} }
func rp(name string) modules.Param         { return modules.Param{Name: name, Required: true} }

// dummyFunctions are Salt's dummyproxy_pkg (pkg.*) and dummyproxy_service
// (service.*) execution modules.
func dummyFunctions() []modules.Function {
	svcSig := modules.Spec{Params: []modules.Param{rp("name"), p("sig", nil)}}
	return []modules.Function{
		{Name: "pkg.list_pkgs", Doc: "List the packages installed on the dummy device.\n\nCLI Example:\n\n    salt '*' pkg.list_pkgs",
			Spec: modules.Spec{Params: []modules.Param{p("versions_as_list", false)}, Kwargs: true},
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return dummyCall(ctx, c, func(d *Dummy) (any, error) { return d.PackageList(), nil })
			}},
		{Name: "pkg.install", Doc: "Install a package on the dummy device (version=... or 1.0).\n\nCLI Example:\n\n    salt '*' pkg.install <package name> version=<version>",
			Spec: modules.Spec{Params: []modules.Param{p("name", nil), p("refresh", false), p("fromrepo", nil), p("pkgs", nil), p("sources", nil)}, Kwargs: true},
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return dummyCall(ctx, c, func(d *Dummy) (any, error) {
					var version any
					if c.Args.Kwargs != nil {
						version, _ = c.Args.Kwargs.Get("version")
					}
					return d.PackageInstall(pyStr(c.Args.Get("name")), version)
				})
			}},
		{Name: "pkg.remove", Doc: "Remove a package from the dummy device; returns the remaining packages.\n\nCLI Example:\n\n    salt '*' pkg.remove <package name>",
			Spec: modules.Spec{Params: []modules.Param{p("name", nil), p("pkgs", nil)}, Kwargs: true},
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return dummyCall(ctx, c, func(d *Dummy) (any, error) { return d.PackageRemove(pyStr(c.Args.Get("name"))) })
			}},
		{Name: "pkg.version", Doc: "Return the version of one package, or a dict of name/version pairs for several.\n\nCLI Example:\n\n    salt '*' pkg.version <package name>\n    salt '*' pkg.version <package1> <package2> ...",
			Spec: modules.Spec{Varargs: true, Kwargs: true},
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return dummyCall(ctx, c, func(d *Dummy) (any, error) {
					names := c.Args.Varargs
					if len(names) == 1 {
						st := d.PackageStatus(pyStr(names[0]))
						if st == nil {
							return nil, pyArgErr("'NoneType' object is not subscriptable")
						}
						v, ok := st.GetKey(names[0])
						if !ok {
							return nil, keyError(names[0])
						}
						return v, nil
					}
					out := &payload.Map{}
					for _, n := range names {
						st := d.PackageStatus(pyStr(n))
						if st == nil {
							return nil, pyArgErr("'NoneType' object is not iterable")
						}
						for _, it := range st.Items() {
							out.SetKey(it.Key, it.Value)
						}
					}
					return out, nil
				})
			}},
		{Name: "pkg.upgrade", Doc: "Upgrade every package of the dummy device by 1.0; returns the changes.\n\nCLI Example:\n\n    salt '*' pkg.upgrade",
			Spec: modules.Spec{Params: []modules.Param{p("name", nil), p("pkgs", nil), p("refresh", true), p("skip_verify", true), p("normalize", true)}, Kwargs: true},
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return dummyCall(ctx, c, func(d *Dummy) (any, error) {
					old := d.PackageList()
					installed, err := d.Upgrade()
					if err != nil {
						return nil, err
					}
					return compareDicts(old, installed), nil
				})
			}},
		{Name: "pkg.installed", Doc: "Report whether a package is installed (and at version when given).\n\nCLI Example:\n\n    salt '*' pkg.installed <package name>",
			Spec: modules.Spec{Params: []modules.Param{rp("name"), p("version", nil), p("refresh", false), p("fromrepo", nil), p("skip_verify", false), p("pkgs", nil), p("sources", nil)}, Kwargs: true},
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return dummyCall(ctx, c, func(d *Dummy) (any, error) {
					st := d.PackageStatus(pyStr(c.Args.Get("name")))
					version := c.Args.Get("version")
					if version == nil {
						if st == nil {
							return nil, pyArgErr("argument of type 'NoneType' is not iterable")
						}
						if v, ok := st.Get("ret"); ok {
							return pyStr(v), nil
						}
						return true, nil
					}
					if st == nil {
						return nil, nil
					}
					s, ok := version.(string)
					return ok && s == pyfmt.Str(st), nil
				})
			}},
		{Name: "service.get_all", Doc: "Return a list of all available services.\n\nCLI Example:\n\n    salt '*' service.get_all",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return dummyCall(ctx, c, func(d *Dummy) (any, error) { return d.ServiceList(), nil })
			}},
		{Name: "service.list", Doc: "Return a list of all available services.\n\nCLI Example:\n\n    salt '*' service.list",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return dummyCall(ctx, c, func(d *Dummy) (any, error) { return d.ServiceList(), nil })
			}},
		{Name: "service.start", Doc: "Start the specified service on the dummy device.\n\nCLI Example:\n\n    salt '*' service.start <service name>", Spec: svcSig,
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return dummyCall(ctx, c, func(d *Dummy) (any, error) { return d.ServiceStart(pyStr(c.Args.Get("name"))) })
			}},
		{Name: "service.stop", Doc: "Stop the specified service on the dummy device.\n\nCLI Example:\n\n    salt '*' service.stop <service name>", Spec: svcSig,
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return dummyCall(ctx, c, func(d *Dummy) (any, error) { return d.ServiceStop(pyStr(c.Args.Get("name"))) })
			}},
		{Name: "service.restart", Doc: "Restart the specified service on the dummy device.\n\nCLI Example:\n\n    salt '*' service.restart <service name>", Spec: svcSig,
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return dummyCall(ctx, c, func(*Dummy) (any, error) { return true, nil })
			}},
		{Name: "service.status", Doc: "Return whether the service is running on the dummy device.\n\nCLI Example:\n\n    salt '*' service.status <service name>", Spec: svcSig,
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return dummyCall(ctx, c, func(d *Dummy) (any, error) { return d.ServiceStatus(pyStr(c.Args.Get("name"))) })
			}},
		{Name: "service.running", Doc: "Return whether this service is running (fails like Salt's: status returns a bool).", Spec: svcSig,
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return dummyCall(ctx, c, func(d *Dummy) (any, error) {
					if _, err := d.ServiceStatus(pyStr(c.Args.Get("name"))); err != nil {
						return nil, err
					}
					return nil, errors.New("AttributeError: 'bool' object has no attribute 'get'")
				})
			}},
		{Name: "service.enabled", Doc: "Only the 'redbull' service is enabled on the dummy device.", Spec: svcSig,
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return pyStr(c.Args.Get("name")) == "redbull", nil
			}},
	}
}

// pyStr is the text of a name argument (Python would use the value as a
// dict key as is; names are strings in practice).
func pyStr(v any) string {
	if v == nil {
		return "None"
	}
	return pyfmt.Str(v)
}

// compareDicts is salt.utils.data.compare_dicts, in the order of old's
// keys then new's new keys (Salt iterates a set, in no fixed order).
func compareDicts(old, new *payload.Map) *payload.Map {
	ret := &payload.Map{}
	for _, it := range old.Items() {
		nv, ok := new.GetKey(it.Key)
		switch {
		case !ok:
			ret.SetKey(it.Key, payload.NewMap("new", "", "old", it.Value))
		case !reflect.DeepEqual(nv, it.Value):
			ret.SetKey(it.Key, payload.NewMap("old", it.Value, "new", nv))
		}
	}
	for _, it := range new.Items() {
		if _, ok := old.GetKey(it.Key); !ok {
			ret.SetKey(it.Key, payload.NewMap("old", "", "new", it.Value))
		}
	}
	return ret
}
