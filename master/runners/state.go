package runners

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/gsalt/gsalt/grains"
	"github.com/gsalt/gsalt/modules"
	mbuiltin "github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/pillar"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/states"
	sbuiltin "github.com/gsalt/gsalt/states/builtin"
	"github.com/gsalt/gsalt/wire/payload"
)

// OrchestrateEnv is the part of the master the state runners need besides
// Env: the client through which the salt.* states of an orchestration
// publish jobs, run runners and wheel functions and watch the event bus.
// Without it the orchestration still compiles and runs, but its salt.*
// states fail.
type OrchestrateEnv interface {
	// MasterClient returns the master client for a run by user.
	MasterClient(user string) sbuiltin.MasterClient
}

// stateRunners is Salt's state runner (salt/runners/state.py):
// state.orchestrate (aliases state.orch and state.sls),
// state.orchestrate_single, state.orchestrate_high and
// state.orchestrate_show_sls (alias state.orch_show_sls). They run the
// state system on the master like Salt's MasterMinion does: the master's
// options with file_client: local (SLS files from the master's
// file_roots), the master's grains, the pillar compiled for the master's
// id, and the salt.* states reaching the master through OrchestrateEnv.
// state.event is run by gsalt-run itself.
func stateRunners() []Runner {
	orchParams := []Param{{Name: "mods", Required: true}, {Name: "saltenv", Default: "base"}, {Name: "test"},
		{Name: "exclude"}, {Name: "pillar"}, {Name: "pillarenv"}, {Name: "pillar_enc"}, {Name: "orchestration_jid"}}
	orchDoc := "Execute a state run from the master, used as a powerful orchestration\nsystem.\n\nCLI Examples:\n\n" +
		"    salt-run state.orchestrate webserver\n    salt-run state.orchestrate webserver saltenv=dev test=True\n" +
		"    salt-run state.orchestrate webserver saltenv=dev pillarenv=aws"
	showParams := []Param{{Name: "mods", Required: true}, {Name: "saltenv", Default: "base"}, {Name: "test"},
		{Name: "queue", Default: false}, {Name: "pillar"}, {Name: "pillarenv"}, {Name: "pillar_enc"}}
	showDoc := "Display the state data from a specific sls, or list of sls files, after\nbeing render using the master minion.\n\n" +
		"Note, the master minion adds a \"_master\" suffix to its minion id.\n\nCLI Example:\n\n" +
		"    salt-run state.orch_show_sls my-orch-formula.my-orch-state 'pillar={ nodegroup: ng1 }'"
	return []Runner{
		{Name: "state.orchestrate", Params: orchParams, Doc: orchDoc, Fn: orchestrate},
		{Name: "state.orch", Params: orchParams, Doc: orchDoc, Fn: orchestrate},
		{Name: "state.sls", Params: orchParams, Doc: orchDoc, Fn: orchestrate},
		{Name: "state.orchestrate_single", Params: []Param{{Name: "fun", Required: true}, {Name: "name", Required: true},
			{Name: "test"}, {Name: "queue", Default: false}, {Name: "pillar"}}, VarKwargs: true, Fn: orchestrateSingle,
			Doc: "Execute a single state orchestration routine\n\nCLI Example:\n\n    salt-run state.orchestrate_single fun=salt.wheel name=key.list_all"},
		{Name: "state.orchestrate_high", Params: []Param{{Name: "data", Required: true}, {Name: "test"},
			{Name: "queue", Default: false}, {Name: "pillar"}}, VarKwargs: true, Fn: orchestrateHigh,
			Doc: "Execute a single state orchestration routine\n\nCLI Example:\n\n    salt-run state.orchestrate_high '{\n" +
				"        stage_one:\n            {salt.state: [{tgt: \"db*\"}, {sls: postgres_setup}]},\n" +
				"        stage_two:\n            {salt.state: [{tgt: \"web*\"}, {sls: apache_setup}, {\n" +
				"                require: [{salt: stage_one}],\n            }]},\n        }'"},
		{Name: "state.orchestrate_show_sls", Params: showParams, Doc: showDoc, Fn: orchestrateShowSLS},
		{Name: "state.orch_show_sls", Params: showParams, Doc: showDoc, Fn: orchestrateShowSLS},
	}
}

// stateRegistries returns the registries the master's state runs use: the
// built-in execution modules plus state.* over the built-in state modules
// (the salt.* orchestration states included).
func stateRegistries() (*modules.Registry, error) {
	reg := modules.NewRegistry()
	if err := mbuiltin.Register(reg); err != nil {
		return nil, fmt.Errorf("runners: execution modules: %w", err)
	}
	st := states.NewRegistry()
	if err := sbuiltin.Register(st); err != nil {
		return nil, fmt.Errorf("runners: state modules: %w", err)
	}
	if err := states.RegisterExec(reg, st, render.Default()); err != nil {
		return nil, fmt.Errorf("runners: state functions: %w", err)
	}
	return reg, nil
}

// masterOpts are the master's options as the master minion sees them:
// file_client local, the runner's user and the master role on top.
type masterOpts struct {
	env  Env
	over map[string]any
}

// Get implements modules.Options, pillar.Getter and fileserver.Getter.
func (o masterOpts) Get(key string) (any, bool) {
	if v, ok := o.over[key]; ok {
		return v, true
	}
	return o.env.Opt(key)
}

// noJobs is the master minion's job table: orchestrations do not count
// as running state jobs (Salt's MasterMinion writes no proc files).
type noJobs struct{}

// Running implements builtin.JobTable.
func (noJobs) Running() []*payload.Map { return nil }

// Signal implements builtin.JobTable.
func (noJobs) Signal(string, int) (int, bool) { return 0, false }

var _ mbuiltin.JobTable = noJobs{}

// masterMinion builds the environment of a state run on the master (Salt's
// MasterMinion): options, grains, the pillar compiled for the master's id
// with saltenv, pillarenv and the pillar override, the salt:// file client
// over file_roots and the master client.
func masterMinion(ctx context.Context, c *Call, saltenv, pillarenv any, override *payload.Map) (*modules.Env, error) {
	reg, err := stateRegistries()
	if err != nil {
		return nil, err
	}
	opts := masterOpts{env: c.Env, over: map[string]any{"file_client": "local", "__role": "master"}}
	if c.User != "" {
		opts.over["user"] = c.User
	}
	id := payload.Text(optValue(c.Env, "id"))
	gopts := grains.Options{ID: id, Opts: opts, Logger: c.Log}
	if conf := payload.Text(optValue(c.Env, "conf_file")); conf != "" {
		gopts.ConfDir = filepath.Dir(conf)
	}
	if g, ok := optValue(c.Env, "grains").(*payload.Map); ok {
		gopts.Grains = g
	}
	g, err := grains.Load(ctx, gopts)
	if err != nil {
		return nil, err
	}
	g.Set("id", id)
	req := pillar.Request{ID: id, Grains: g, Override: override, NoCache: true}
	if saltenv != nil {
		req.Saltenv = payload.Text(saltenv)
	}
	if pillarenv != nil {
		req.Pillarenv = payload.Text(pillarenv)
	}
	pil, err := NewPillarCompiler(opts, c.Log).Compile(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("runners: master pillar: %w", err)
	}
	cache := payload.Text(optValue(c.Env, "cachedir"))
	svc := map[string]any{
		"files": mbuiltin.NewLocalFileClientOpts(opts, cache),
		"jobs":  noJobs{},
	}
	if oe, ok := c.Env.(OrchestrateEnv); ok {
		user := c.User
		if user == "" {
			user = "UNKNOWN"
		}
		svc[sbuiltin.MasterClientService] = oe.MasterClient(user)
	} else {
		c.Log.Warn("the master offers no client to the salt.* states; they will fail")
	}
	return &modules.Env{ID: id, Opts: opts, Grains: g, Pillar: pil, Log: c.Log, Registry: reg, Services: svc}, nil
}

// pillarArg checks the pillar argument (a dict or None).
func pillarArg(v any) (*payload.Map, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(*payload.Map)
	if !ok {
		return nil, fmt.Errorf("%w: Pillar data must be formatted as a dictionary", ErrArguments)
	}
	return m, nil
}

// execState runs a state.* execution function of the master minion. A
// function error (Salt's exception in the runner) is returned as error.
func execState(ctx context.Context, env *modules.Env, fun string, args []any, kw *payload.Map, jid any) (any, error) {
	kw = kw.Clone()
	kw.Set("__kwarg__", true)
	var pub *payload.Map
	if jid != nil {
		pub = payload.NewMap("jid", jid)
	}
	res := env.Registry.Execute(ctx, modules.Binder{}, env, fun, append(append([]any{}, args...), kw), pub)
	if s, ok := res.Return.(string); ok && res.Retcode != 0 {
		return nil, errors.New(s)
	}
	return res.Return, nil
}

// orchestrate is state.orchestrate: state.sls of mods on the master
// minion, returned as {"data": {id: ret}, "outputter": "highstate",
// "retcode": 0|1}.
func orchestrate(ctx context.Context, c *Call) (any, error) {
	override, err := pillarArg(c.Args["pillar"])
	if err != nil {
		return nil, err
	}
	saltenv, pillarenv := c.Args["saltenv"], c.Args["pillarenv"]
	if pillarenv == nil {
		pillarenv = optValue(c.Env, "pillarenv")
	}
	if saltenv == nil {
		saltenv = optValue(c.Env, "saltenv")
	}
	jid := c.Args["orchestration_jid"]
	if jid == nil {
		jid = c.JID
	}
	if c.Args["pillar_enc"] != nil {
		c.Log.Warn("pillar_enc is not supported; the pillar override is used as given")
	}
	// state.sls is given pillarenv (None included), so its run's
	// pillarenv is pillarenv or saltenv (get_sls_opts).
	env, err := masterMinion(ctx, c, saltenv, orEnv(pillarenv, saltenv), override)
	if err != nil {
		return nil, err
	}
	kw := payload.NewMap("saltenv", saltenv, "pillarenv", pillarenv, "__pub_jid", jid, "orchestration_jid", jid)
	running, err := execState(ctx, env, "state.sls", []any{c.Args["mods"], c.Args["test"], c.Args["exclude"]}, kw, jid)
	if err != nil {
		return nil, err
	}
	data := payload.NewMap(env.ID, running)
	ret := payload.NewMap("data", data, "outputter", "highstate")
	if sbuiltin.CheckStateResult(data, false) {
		ret.Set("retcode", int64(0))
	} else {
		ret.Set("retcode", int64(1))
		c.SetRetcode(1)
	}
	return ret, nil
}

// orchestrateSingle is state.orchestrate_single: state.single on the
// master minion. As in Salt, test is not passed on (only the master's
// test option counts) and the result is also fired as a progress event
// for the highstate outputter.
func orchestrateSingle(ctx context.Context, c *Call) (any, error) {
	override, err := pillarArg(c.Args["pillar"])
	if err != nil {
		return nil, err
	}
	env, err := masterMinion(ctx, c, optValue(c.Env, "saltenv"), optValue(c.Env, "pillarenv"), override)
	if err != nil {
		return nil, err
	}
	kw := payload.NewMap("test", nil, "queue", false)
	for _, k := range sortedKeys(c.Kwargs) {
		kw.Set(k, c.Kwargs[k])
	}
	running, err := execState(ctx, env, "state.single", []any{c.Args["fun"], c.Args["name"]}, kw, nil)
	if err != nil {
		return nil, err
	}
	ret := payload.NewMap(env.ID, running)
	if c.Progress != nil {
		c.Progress(payload.NewMap("data", ret, "outputter", "highstate"))
	}
	return ret, nil
}

// orchestrateHigh is state.orchestrate_high: state.high on the master
// minion (test ignored like orchestrate_single), fired as a progress
// event too.
func orchestrateHigh(ctx context.Context, c *Call) (any, error) {
	override, err := pillarArg(c.Args["pillar"])
	if err != nil {
		return nil, err
	}
	env, err := masterMinion(ctx, c, optValue(c.Env, "saltenv"), optValue(c.Env, "pillarenv"), override)
	if err != nil {
		return nil, err
	}
	kw := payload.NewMap("test", nil, "queue", false)
	for _, k := range sortedKeys(c.Kwargs) {
		kw.Set(k, c.Kwargs[k])
	}
	running, err := execState(ctx, env, "state.high", []any{c.Args["data"]}, kw, nil)
	if err != nil {
		return nil, err
	}
	ret := payload.NewMap(env.ID, running)
	if c.Progress != nil {
		c.Progress(payload.NewMap("data", ret, "outputter", "highstate"))
	}
	return ret, nil
}

// orchestrateShowSLS is state.orchestrate_show_sls: the high data of mods
// as the master minion renders it, {id: high}.
func orchestrateShowSLS(ctx context.Context, c *Call) (any, error) {
	override, err := pillarArg(c.Args["pillar"])
	if err != nil {
		return nil, err
	}
	env, err := masterMinion(ctx, c, c.Args["saltenv"], orEnv(c.Args["pillarenv"], c.Args["saltenv"]), override)
	if err != nil {
		return nil, err
	}
	kw := payload.NewMap("pillarenv", c.Args["pillarenv"], "saltenv", c.Args["saltenv"])
	running, err := execState(ctx, env, "state.show_sls", []any{c.Args["mods"], c.Args["test"], c.Args["queue"]}, kw, nil)
	if err != nil {
		return nil, err
	}
	return payload.NewMap(env.ID, running), nil
}

// orEnv is Python's `a or b` for environment names.
func orEnv(a, b any) any {
	if payload.Truthy(a) {
		return a
	}
	return b
}
