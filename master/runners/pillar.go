package runners

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/pillar"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/wire/payload"
)

// maxDataFile bounds a minion data cache file (data.p) read by the pillar
// runners.
const maxDataFile = 64 << 20

// PillarRunners is Salt's pillar runner (salt/runners/pillar.py):
// pillar.show_pillar and pillar.show_top. They compile with the master's
// options (Env.Opt) and the grains of the minion data cache
// (cachedir/minions/<id>/data.p), without the pillar cache, as Salt's do.
func PillarRunners() []Runner {
	return []Runner{
		{Name: "pillar.show_pillar", Fn: showPillar, Params: []Param{{Name: "minion", Default: "*"}}, VarKwargs: true,
			Doc: "Returns the compiled pillar either of a specific minion\nor just the global available pillars. This function assumes\nthat no minion has the id ``*``.\nFunction also accepts pillarenv as attribute in order to limit to a specific pillar branch of git\n\nCLI Example:\n\n    salt-run pillar.show_pillar 'www.example.com'\n    salt-run pillar.show_pillar\n    salt-run pillar.show_pillar 'pillarenv=dev'\n    salt-run pillar.show_pillar 'saltenv=dev' 'pillarenv=dev'"},
		{Name: "pillar.show_top", Fn: showTop, Params: []Param{{Name: "minion"}, {Name: "saltenv", Default: "base"}},
			Doc: "Returns the compiled top data for pillar for a specific minion.  If no\nminion is specified, we use the first minion we find.\n\nCLI Example:\n\n    salt-run pillar.show_top"},
	}
}

// NewPillarCompiler builds the master's pillar compiler from its options:
// templates call execution modules (salt['mod.fun']) on the master with
// the minion's id and grains, as Salt's master does.
func NewPillarCompiler(opts pillar.Getter, log *slog.Logger) *pillar.Compiler {
	if log == nil {
		log = slog.Default()
	}
	reg := modules.NewRegistry()
	if err := builtin.Register(reg); err != nil {
		log.Error("pillar: some execution modules are not available to templates", "err", err)
	}
	return pillar.New(pillar.ConfigFromOpts(opts), pillar.Options{
		Logger: log,
		Caller: func(id string, grains *payload.Map) render.Caller {
			return masterCaller{env: &modules.Env{ID: id, Opts: opts, Grains: grains, Registry: reg, Log: log}}
		},
	})
}

// masterCaller runs execution functions for templates on the master.
type masterCaller struct{ env *modules.Env }

// CallFunction runs fun with args and kwargs; a function error is
// returned as the error, like a Python exception in the template.
func (mc masterCaller) CallFunction(ctx context.Context, fun string, args []any, kwargs *payload.Map) (ret any, err error) {
	fn, ok := mc.env.Registry.Lookup(fun)
	if !ok {
		return nil, fmt.Errorf("%w: '%s' is not available.", modules.ErrNotAvailable, fun)
	}
	all := append([]any(nil), args...)
	if kwargs != nil && kwargs.Len() > 0 {
		kw := kwargs.Clone()
		kw.Set("__kwarg__", true)
		all = append(all, kw)
	}
	bound, err := modules.Binder{Direct: true}.Bind(fn, all, nil)
	if err != nil {
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s raised: %v\n%s", fun, p, debug.Stack())
		}
	}()
	return fn.Fn(ctx, &modules.Call{Fun: fun, Env: mc.env, Args: bound})
}

// envGetter adapts Env.Opt to pillar.Getter.
func envGetter(env Env) pillar.Getter { return pillar.GetterFunc(env.Opt) }

// minionData is salt.utils.minions.get_minion_data: the grains and pillar
// of id in the minion data cache (nil when unknown or minion_data_cache
// is off). With id "" it returns the data of the last cached minion.
func minionData(env Env, id string) (grains, pil *payload.Map) {
	if v, ok := env.Opt("minion_data_cache"); ok && !payload.Truthy(v) {
		return nil, nil
	}
	dirV, _ := env.Opt("cachedir")
	dir, _ := dirV.(string)
	if dir == "" {
		return nil, nil
	}
	base := filepath.Join(dir, "minions")
	ids := []string{id}
	if id == "" {
		ents, err := os.ReadDir(base)
		if err != nil {
			return nil, nil
		}
		ids = nil
		for _, e := range ents {
			if e.IsDir() {
				ids = append(ids, e.Name())
			}
		}
		sort.Strings(ids)
	}
	for _, mid := range ids {
		if mid == "" || mid == "." || mid == ".." || strings.ContainsAny(mid, "/\\\x00") {
			continue
		}
		d, err := readDataFile(filepath.Join(base, mid, "data.p"))
		if err != nil || d == nil {
			continue
		}
		grains = d.Map("grains")
		pil = d.Map("pillar")
	}
	return grains, pil
}

func readDataFile(path string) (*payload.Map, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxDataFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxDataFile {
		return nil, errors.New("runners: minion data file too large")
	}
	return payload.UnmarshalMap(b)
}

// showPillar is pillar.show_pillar: the pillar of minion compiled with
// its cached grains ({"fqdn": minion} when unknown); saltenv and
// pillarenv keyword arguments select environments, any other keyword
// argument sets a grain.
func showPillar(ctx context.Context, c *Call) (any, error) {
	id := c.Str("minion")
	grains, _ := minionData(c.Env, id)
	if grains == nil {
		grains = payload.NewMap("fqdn", c.Args["minion"])
	} else {
		grains = grains.Clone()
	}
	saltenv, pillarenv := "base", ""
	keys := make([]string, 0, len(c.Kwargs))
	for k := range c.Kwargs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := c.Kwargs[k]
		switch k {
		case "saltenv":
			saltenv = payload.Text(v)
		case "pillarenv":
			pillarenv = payload.Text(v)
		default:
			grains.Set(k, v)
		}
	}
	comp := NewPillarCompiler(envGetter(c.Env), c.Log)
	return comp.Compile(ctx, pillar.Request{ID: id, Grains: grains, Saltenv: saltenv, Pillarenv: pillarenv, NoCache: true})
}

// showTop is pillar.show_top: the merged pillar top as the minion's
// grains render it; on top errors the errors are returned (and fired as
// a progress event).
func showTop(ctx context.Context, c *Call) (any, error) {
	id := c.Str("minion")
	grains, _ := minionData(c.Env, id)
	comp := NewPillarCompiler(envGetter(c.Env), c.Log)
	top, errs, err := comp.Top(ctx, pillar.Request{ID: id, Grains: grains, Saltenv: c.Str("saltenv"), NoCache: true})
	if err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		l := make([]any, len(errs))
		for i, e := range errs {
			l[i] = e
		}
		if c.Progress != nil {
			c.Progress(payload.NewMap("data", l, "outputter", "nested"))
		}
		return l, nil
	}
	return top, nil
}
