package runners

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"

	"github.com/gsalt/gsalt/grains"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/pillar"
	"github.com/gsalt/gsalt/wire/payload"
)

// saltRunners is the cmd function of Salt's salt runner
// (salt/runners/salt.py).
func saltRunners() []Runner {
	return []Runner{
		{Name: "salt.cmd", Fn: saltCmd, Params: []Param{{Name: "fun", Required: true}}, VarArgs: "args", VarKwargs: true,
			Doc: "Execute fun with the given args and kwargs on the master. Parameter fun\nshould be the string name of the execution module to call.\n\n    with_pillar : False\n        If True, pillar data will be compiled for the master\n\nCLI Example:\n\n    salt-run salt.cmd test.ping\n    # call functions with arguments and keyword arguments\n    salt-run salt.cmd test.arg 1 2 3 a=1\n    salt-run salt.cmd mymod.myfunc with_pillar=True"},
	}
}

// saltCmd is salt.cmd: it runs an execution function on the master with
// the master's options, its grains (computed like a minion computes its
// own) and, with with_pillar, the pillar compiled for the master's id. An
// unknown function gives the "'fun' is not available." text; an error of
// the function is the runner's error, as the exception is in Salt.
func saltCmd(ctx context.Context, c *Call) (any, error) {
	fun := c.Str("fun")
	reg := modules.NewRegistry()
	if err := builtin.Register(reg); err != nil {
		c.Log.Error("salt.cmd: some execution modules are not available", "err", err)
	}
	if _, ok := reg.Lookup(fun); !ok {
		return fmt.Sprintf("'%s' is not available.", fun), nil
	}
	kwargs := payload.NewMap()
	withPillar := false
	for _, k := range sortedKeys(c.Kwargs) {
		if k == "with_pillar" {
			withPillar = payload.Truthy(c.Kwargs[k])
			continue
		}
		kwargs.Set(k, c.Kwargs[k])
	}
	opts := pillar.GetterFunc(c.Env.Opt)
	id := payload.Text(optValue(c.Env, "id"))
	conf := payload.Text(optValue(c.Env, "conf_file"))
	gopts := grains.Options{ID: id, Opts: opts, Logger: c.Log}
	if conf != "" {
		gopts.ConfDir = filepath.Dir(conf)
	}
	if g, ok := optValue(c.Env, "grains").(*payload.Map); ok {
		gopts.Grains = g
	}
	g, err := grains.Load(ctx, gopts)
	if err != nil {
		return nil, err
	}
	pil := payload.NewMap()
	if withPillar {
		saltenv := payload.Text(optValue(c.Env, "saltenv"))
		pillarenv := payload.Text(optValue(c.Env, "pillarenv"))
		if optValue(c.Env, "saltenv") == nil {
			saltenv = ""
		}
		if optValue(c.Env, "pillarenv") == nil {
			pillarenv = ""
		}
		comp := NewPillarCompiler(opts, c.Log)
		if pil, err = comp.Compile(ctx, pillar.Request{ID: id, Grains: g, Saltenv: saltenv, Pillarenv: pillarenv, NoCache: true}); err != nil {
			return nil, err
		}
	}
	args, _ := c.Args["args"].([]any)
	mc := masterCaller{env: &modules.Env{ID: id, Opts: opts, Grains: g, Pillar: pil, Registry: reg, Log: c.Log}}
	return mc.CallFunction(ctx, fun, args, kwargs)
}

func optValue(env Env, key string) any {
	v, _ := env.Opt(key)
	return v
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
