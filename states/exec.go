package states

import (
	"context"
	"fmt"
	"strings"
	"time"

	saltjid "github.com/gsalt/gsalt/internal/jid"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/pillar"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/wire/payload"
)

// Salt's exit codes (salt.defaults.exitcodes) the state functions set.
const (
	exitCompilerError = 1
	exitStateFailure  = 2
	exitPillarFailure = 5
)

// filesService is the modules.Env.Services key of the minion's file
// client (a render.FileSource, optionally a FileLister).
const filesService = "files"

// execModule holds what the state.* execution functions share.
type execModule struct {
	states *Registry
	rd     *render.Registry
}

// RegisterExec registers Salt's state execution module (salt/modules/state.py)
// into mods: state.apply, sls, highstate, test, single, sls_id, high, low,
// show_sls, show_low_sls, show_highstate, show_lowstate, show_top,
// show_states, sls_exists, id_exists and running. State functions come
// from st, templates are rendered with rd (nil means render.Default()).
// SLS and top files are fetched through the "files" service of the
// calling environment (a render.FileSource; a FileLister too for globs
// and environments).
func RegisterExec(mods *modules.Registry, st *Registry, rd *render.Registry) error {
	if mods == nil || st == nil {
		return fmt.Errorf("states: RegisterExec needs a modules and a states registry")
	}
	if rd == nil {
		rd = render.Default()
	}
	x := &execModule{states: st, rd: rd}
	return mods.Register(append(x.functions(), x.templateFuncs()...)...)
}

func opt(name string, def any) modules.Param { return modules.Param{Name: name, Default: def} }
func req(name string) modules.Param          { return modules.Param{Name: name, Required: true} }

// kwargsOf collects a call's named parameters (those given) and its
// **kwargs into one dict, as Python sees them inside the function.
func kwargsOf(c *modules.Call, params ...string) *payload.Map {
	kw := &payload.Map{}
	for _, p := range params {
		if c.Args.Given(p) {
			kw.Set(p, c.Args.Get(p))
		}
	}
	if c.Args.Kwargs != nil {
		for _, it := range c.Args.Kwargs.Items() {
			kw.SetKey(it.Key, it.Value)
		}
	}
	return kw
}

func (x *execModule) functions() []modules.Function {
	hs := "highstate"
	return []modules.Function{
		{Name: "state.apply", Outputter: hs, Spec: modules.Spec{Params: []modules.Param{opt("mods", nil)}, Kwargs: true},
			Doc: "Apply states: with mods, the SLS files named (state.sls); without, the highstate from the top file.\n\nCLI Example:\n\n    salt '*' state.apply\n    salt '*' state.apply stuff,pkgs test=True",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return x.apply(ctx, c, kwargsOf(c, "mods"))
			}},
		{Name: "state.test", Outputter: hs, Spec: modules.Spec{Varargs: true, Kwargs: true},
			Doc: "Alias for state.apply with test=True.\n\nCLI Example:\n\n    salt '*' state.test stuff",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				kw := kwargsOf(c)
				if len(c.Args.Varargs) > 0 {
					kw.Set("mods", c.Args.Varargs[0])
				}
				kw.Set("test", true)
				return x.apply(ctx, c, kw)
			}},
		{Name: "state.sls", Outputter: hs,
			Spec: modules.Spec{Params: []modules.Param{req("mods"), opt("test", nil), opt("exclude", nil), opt("queue", nil), opt("sync_mods", nil), opt("state_events", nil)}, Kwargs: true},
			Doc:  "Execute the states in one or more SLS files (comma-separated or a list).\n\nCLI Example:\n\n    salt '*' state.sls core,edit.vim saltenv=base pillar='{\"foo\": \"bar\"}'",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return x.sls(ctx, c, kwargsOf(c, "mods", "test", "exclude", "queue", "sync_mods", "state_events"))
			}},
		{Name: "state.highstate", Outputter: hs,
			Spec: modules.Spec{Params: []modules.Param{opt("test", nil), opt("queue", nil), opt("state_events", nil)}, Kwargs: true},
			Doc:  "Retrieve the state data from the top file for this minion and execute it.\n\nCLI Example:\n\n    salt '*' state.highstate test=True",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return x.highstate(ctx, c, kwargsOf(c, "test", "queue", "state_events"))
			}},
		{Name: "state.single", Outputter: hs,
			Spec: modules.Spec{Params: []modules.Param{req("fun"), req("name"), opt("test", nil), opt("queue", nil)}, Kwargs: true},
			Doc:  "Execute a single state function with the named kwargs.\n\nCLI Example:\n\n    salt '*' state.single pkg.installed name=vim",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return x.single(ctx, c, kwargsOf(c, "test", "queue"))
			}},
		{Name: "state.sls_id", Outputter: hs,
			Spec: modules.Spec{Params: []modules.Param{req("id_"), req("mods"), opt("test", nil), opt("queue", nil), opt("state_events", nil)}, Kwargs: true},
			Doc:  "Call a single ID from the named SLS file(s) and handle its requisites.\n\nCLI Example:\n\n    salt '*' state.sls_id my_state my_module,a_common_module",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return x.slsID(ctx, c, kwargsOf(c, "id_", "mods", "test", "queue", "state_events"))
			}},
		{Name: "state.high", Spec: modules.Spec{Params: []modules.Param{req("data"), opt("test", nil), opt("queue", nil)}, Kwargs: true},
			Doc: "Execute the compound calls stored in a single set of high data.\n\nCLI Example:\n\n    salt '*' state.high '{\"vim\": {\"pkg\": [\"installed\"]}}'",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return x.high(ctx, c, kwargsOf(c, "data", "test", "queue"))
			}},
		{Name: "state.low", Spec: modules.Spec{Params: []modules.Param{req("data"), opt("queue", nil)}, Kwargs: true},
			Doc: "Execute a single low data call.\n\nCLI Example:\n\n    salt '*' state.low '{\"state\": \"pkg\", \"fun\": \"installed\", \"name\": \"vi\"}'",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return x.low(ctx, c, kwargsOf(c, "data", "queue"))
			}},
		{Name: "state.show_sls", Spec: modules.Spec{Params: []modules.Param{req("mods"), opt("test", nil), opt("queue", nil)}, Kwargs: true},
			Doc: "Display the state data from a specific SLS or list of SLS files.\n\nCLI Example:\n\n    salt '*' state.show_sls core,edit.vim saltenv=dev",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return x.showSLS(ctx, c, kwargsOf(c, "mods", "test", "queue"), false)
			}},
		{Name: "state.show_low_sls", Spec: modules.Spec{Params: []modules.Param{req("mods"), opt("test", nil), opt("queue", nil)}, Kwargs: true},
			Doc: "Display the low data from a specific SLS.\n\nCLI Example:\n\n    salt '*' state.show_low_sls foo saltenv=dev",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return x.showSLS(ctx, c, kwargsOf(c, "mods", "test", "queue"), true)
			}},
		{Name: "state.sls_exists", Spec: modules.Spec{Params: []modules.Param{req("mods"), opt("test", nil), opt("queue", nil)}, Kwargs: true},
			Doc: "Tests for the existence of a specific SLS or list of SLS files.\n\nCLI Example:\n\n    salt '*' state.sls_exists core,edit.vim saltenv=dev",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				ret, err := x.showSLS(ctx, c, kwargsOf(c, "mods", "test", "queue"), false)
				c.Retcode = 0
				if err != nil {
					return nil, err
				}
				_, ok := ret.(*payload.Map)
				return ok, nil
			}},
		{Name: "state.id_exists", Spec: modules.Spec{Params: []modules.Param{req("ids"), req("mods"), opt("test", nil), opt("queue", nil)}, Kwargs: true},
			Doc: "Tests for the existence of a specific ID or list of IDs within the specified SLS file(s).\n\nCLI Example:\n\n    salt '*' state.id_exists create_myfile,update_template filestate saltenv=dev",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				ret, err := x.showSLS(ctx, c, kwargsOf(c, "mods", "test", "queue"), true)
				c.Retcode = 0
				if err != nil {
					return nil, err
				}
				have := map[string]bool{}
				for _, ch := range listOf(ret) {
					if m, ok := asMap(ch); ok {
						have[getStr(m, "__id__")] = true
					}
				}
				for _, id := range splitInput(c.Args.Get("ids")) {
					if !have[pyStr(id)] {
						return false, nil
					}
				}
				return true, nil
			}},
		{Name: "state.show_highstate", Spec: modules.Spec{Params: []modules.Param{opt("queue", nil)}, Kwargs: true},
			Doc: "Retrieve the highstate data from the top file and display it.\n\nCLI Example:\n\n    salt '*' state.show_highstate",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return x.showHighstate(ctx, c, kwargsOf(c, "queue"))
			}},
		{Name: "state.show_lowstate", Spec: modules.Spec{Params: []modules.Param{opt("queue", nil)}, Kwargs: true},
			Doc: "List out the low data that will be applied to this minion.\n\nCLI Example:\n\n    salt '*' state.show_lowstate",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return x.showLowstate(ctx, c, kwargsOf(c, "queue"), false)
			}},
		{Name: "state.show_states", Spec: modules.Spec{Params: []modules.Param{opt("queue", nil)}, Kwargs: true},
			Doc: "Returns the list of states that will be applied on highstate.\n\nCLI Example:\n\n    salt '*' state.show_states",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return x.showLowstate(ctx, c, kwargsOf(c, "queue"), true)
			}},
		{Name: "state.show_top", Spec: modules.Spec{Params: []modules.Param{opt("queue", nil)}, Kwargs: true},
			Doc: "Return the top data that the minion will use for a highstate.\n\nCLI Example:\n\n    salt '*' state.show_top",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return x.showTop(ctx, c, kwargsOf(c, "queue"))
			}},
		{Name: "state.running", Spec: modules.Spec{Params: []modules.Param{opt("concurrent", false)}},
			Doc: "Return a list of strings that contain state return data if a state function is already running.\n\nCLI Example:\n\n    salt '*' state.running",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return x.running(ctx, c, payload.NewMap(), payload.Truthy(c.Args.Get("concurrent"))), nil
			}},
	}
}

// currentJID is the job id of the call ("" for salt-call).
func currentJID(c *modules.Call, kw *payload.Map) string {
	if c.Pub != nil {
		if v, ok := c.Pub.Get("jid"); ok && v != nil {
			return pyStr(v)
		}
	}
	if v, ok := kw.Get("__pub_jid"); ok && v != nil {
		return pyStr(v)
	}
	return ""
}

// runningStates returns the proc data of the other running state.* jobs.
func (x *execModule) runningStates(ctx context.Context, c *modules.Call, kw *payload.Map) []*payload.Map {
	if c.Env == nil || c.Env.Registry == nil {
		return nil
	}
	if _, ok := c.Env.Registry.Lookup("saltutil.is_running"); !ok {
		return nil
	}
	res := c.Env.Registry.Execute(ctx, modules.Binder{}, c.Env, "saltutil.is_running", []any{"state.*"}, nil)
	if res.Retcode != 0 {
		return nil
	}
	me := currentJID(c, kw)
	var out []*payload.Map
	for _, d := range listOf(res.Return) {
		m, ok := asMap(d)
		if !ok {
			continue
		}
		if me != "" && getStr(m, "jid") == me {
			continue
		}
		out = append(out, m)
	}
	return out
}

// running is state.running: Salt's conflict messages.
func (x *execModule) running(ctx context.Context, c *modules.Call, kw *payload.Map, concurrent bool) []any {
	ret := []any{}
	if concurrent {
		return ret
	}
	for _, d := range x.runningStates(ctx, c, kw) {
		jid := getStr(d, "jid")
		ret = append(ret, fmt.Sprintf("The function \"%s\" is running as PID %s and was started at %s with jid %s", getStr(d, "fun"), getStr(d, "pid"), jidTime(jid), jid))
	}
	return ret
}

// wait is modules.state._wait: wait for earlier state jobs to finish,
// unless more than maxQueue are queued (then false).
func (x *execModule) wait(ctx context.Context, c *modules.Call, kw *payload.Map, maxQueue int64) bool {
	jid := currentJID(c, kw)
	if jid == "" {
		jid = saltjid.New()
	}
	prior := func() int {
		n := 0
		for _, d := range x.runningStates(ctx, c, kw) {
			if jidLess(getStr(d, "jid"), jid) {
				n++
			}
		}
		return n
	}
	n := prior()
	if maxQueue != 0 && int64(n) >= maxQueue {
		return false
	}
	for n > 0 {
		select {
		case <-ctx.Done():
			return true
		case <-time.After(time.Second):
		}
		n = prior()
	}
	return true
}

// jidLess is int(a) < int(b) for decimal job ids (which overflow int64);
// a non-numeric a is never less.
func jidLess(a, b string) bool {
	digits := func(s string) (string, bool) {
		if s == "" {
			return "", false
		}
		for _, r := range s {
			if r < '0' || r > '9' {
				return "", false
			}
		}
		s = strings.TrimLeft(s, "0")
		return s, true
	}
	da, ok1 := digits(a)
	db, ok2 := digits(b)
	if !ok1 || !ok2 {
		return false
	}
	if len(da) != len(db) {
		return len(da) < len(db)
	}
	return da < db
}

// checkQueue is _check_queue: queue or refuse when other state runs are
// in progress. A non-nil return is the conflict list to return.
func (x *execModule) checkQueue(ctx context.Context, c *modules.Call, kw *payload.Map) []any {
	queue, _ := kw.Get("queue")
	if queue == nil && c.Env != nil && c.Env.Opts != nil {
		queue, _ = c.Env.Opts.Get("state_queue")
	}
	queue = goToPayload(queue)
	if queue == true {
		x.wait(ctx, c, kw, 0)
		return nil
	}
	queued := false
	if n, ok := queue.(int64); ok {
		queued = x.wait(ctx, c, kw, n)
	}
	if !queued {
		if conflict := x.running(ctx, c, kw, payload.Truthy(mapGetStr(kw, "concurrent"))); len(conflict) > 0 {
			c.Retcode = exitCompilerError
			return conflict
		}
	}
	return nil
}

// disabledMsgs is modules.state._disabled: the state_runs_disabled grain.
func disabledMsgs(env *modules.Env, funs []any) []any {
	var out []any
	if env == nil || env.Grains == nil {
		return out
	}
	v, _ := env.Grains.Get("state_runs_disabled")
	list, ok := v.([]any)
	if !ok {
		return out
	}
	for _, f := range funs {
		state := pyStr(f)
		for _, d := range list {
			ds := pyStr(d)
			if strings.Contains(ds, ".*") {
				t := strings.SplitN(ds, ".", 2)[0]
				if !strings.HasSuffix(t, ".") {
					t += "."
				}
				if strings.HasPrefix(state, t) {
					out = append(out, fmt.Sprintf("The state file \"%s\" is currently disabled by \"%s\", to re-enable, run state.enable %s.", state, ds, ds))
					continue
				}
			} else if ds == state {
				out = append(out, fmt.Sprintf("The state file \"%s\" is currently disabled, to re-enable, run state.enable %s.", ds, ds))
			}
		}
	}
	return out
}

// setup is what prepare builds for one state.* call.
type setup struct {
	run *stateRun
	hs  *highState
	kw  *payload.Map
}

// prepareOpts selects what prepare applies from the call.
type prepareOpts struct {
	test   bool
	pillar bool
	// baseEnv falls back to saltenv "base" (state.sls and friends).
	baseEnv bool
	// jid passes the job id to the run (state.sls and state.highstate).
	jid bool
}

// testValue is modules.state._get_test_value.
func testValue(env *modules.Env, kw *payload.Map) bool {
	if v, ok := kw.Get("test"); ok && v != nil {
		return modules.IsTrue(v)
	}
	for _, it := range kw.Items() {
		if k, ok := it.Key.(string); ok && strings.ToLower(k) == "test" && modules.IsTrue(it.Value) {
			return true
		}
	}
	if env != nil {
		var v any
		found := false
		if env.Grains != nil {
			v, found = env.Grains.Get("test")
		}
		if !found && env.Pillar != nil {
			v, found = env.Pillar.Get("test")
		}
		if found && v == true {
			return true
		}
		if env.Opts != nil {
			if v, ok := env.Opts.Get("test"); ok {
				return payload.Truthy(goToPayload(v))
			}
		}
	}
	return false
}

// pillarCompiler is the minion's "pillar" service as the state run uses
// it (builtin.PillarStore): a fresh compilation by the master, or by the
// local pillar compiler of a masterless minion.
type pillarCompiler interface {
	CompilePillar(ctx context.Context, pillarenv any, override *payload.Map) (*payload.Map, error)
}

// gatherPillar is State._gather_pillar as State.__init__ uses it: every
// state run compiles the pillar afresh (so a changed pillar reaches the run
// without saltutil.refresh_pillar), with the override sent along. Only
// salt-call with the same pillarenv and no override keeps the pillar it
// compiled at start (modules.state._get_initial_pillar). Without a pillar
// service (tests, a bare registry) the environment's pillar is used.
func gatherPillar(ctx context.Context, c *modules.Call, base *modules.Env, ro *runOpts, override *payload.Map) (*payload.Map, error) {
	st, ok := modules.Service[pillarCompiler](base, "pillar")
	if !ok {
		return base.Pillar, nil
	}
	pe, _ := ro.Get("pillarenv")
	var basePE any
	if base.Opts != nil {
		basePE, _ = base.Opts.Get("pillarenv")
	}
	cli := ""
	if base.Opts != nil {
		if v, ok := base.Opts.Get("__cli"); ok {
			cli, _ = v.(string)
		}
	}
	if cli == "salt-call" && override == nil && samePillarenv(pe, basePE) && base.Pillar != nil {
		return base.Pillar, nil
	}
	var ov *payload.Map
	if override != nil {
		ov = payload.DeepClone(override).(*payload.Map)
	}
	p, err := st.CompilePillar(ctx, pe, ov)
	if err != nil {
		// Salt's RemotePillar raises SaltClientError here and the job fails.
		return nil, fmt.Errorf("%w: Failed to gather pillar data for the state run: %w", modules.ErrExecution, err)
	}
	return p, nil
}

// samePillarenv compares two pillarenv option values (nil or strings).
func samePillarenv(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return pyStr(a) == pyStr(b)
}

// prepareShow is how the state.show_* functions (and state.template*)
// start: a conflicting state run is the answer (conflict), else the run is
// prepared with po and a pillar that failed to compile is an error.
func (x *execModule) prepareShow(ctx context.Context, c *modules.Call, kw *payload.Map, po prepareOpts) (s *setup, conflict any, err error) {
	if conflict := x.checkQueue(ctx, c, kw); conflict != nil {
		return nil, conflict, nil
	}
	s, err = x.prepare(ctx, c, kw, po)
	if err != nil {
		return nil, nil, err
	}
	if err := pillarFailureErr(c, s.run.env, kw); err != nil {
		return nil, nil, err
	}
	return s, nil, nil
}

// prepare is get_sls_opts + State/HighState construction: per-run opts
// (saltenv, pillarenv, test), the pillar override merged over the
// minion's pillar, and the runner.
func (x *execModule) prepare(ctx context.Context, c *modules.Call, kw *payload.Map, po prepareOpts) (*setup, error) {
	base := c.Env
	if base == nil {
		base = &modules.Env{}
	}
	ro := newRunOpts(base.Opts)
	if v, ok := kw.Get("saltenv"); ok && v != nil {
		sv := pyStr(v)
		if ro.boolDefault("lock_saltenv", false) && sv != ro.str("saltenv") {
			return nil, fmt.Errorf("%w: lock_saltenv is enabled, saltenv cannot be changed", modules.ErrExecution)
		}
		ro.Set("saltenv", sv)
	}
	if kw.Has("pillarenv") || ro.boolDefault("pillarenv_from_saltenv", false) {
		pe, _ := kw.Get("pillarenv")
		if !payload.Truthy(pe) {
			pe, _ = kw.Get("saltenv")
		}
		if pe != nil {
			pe = pyStr(pe)
		}
		ro.Set("pillarenv", pe)
	}
	if po.baseEnv && ro.str("saltenv") == "" {
		ro.Set("saltenv", "base")
	}
	env := *base
	if po.test {
		ro.Set("test", testValue(base, kw))
	}
	var om *payload.Map
	if po.pillar {
		override, _ := kw.Get("pillar")
		enc, _ := kw.Get("pillar_enc")
		if override != nil {
			m, isMap := asMap(override)
			switch {
			case !isMap && enc == nil:
				return nil, fmt.Errorf("%w: Pillar data must be formatted as a dictionary, unless pillar_enc is specified.", modules.ErrInvocation)
			case !isMap:
				c.Log().Warn("pillar_enc is not supported; ignoring the pillar override")
			default:
				om = m
			}
		}
	}
	basePillar, err := gatherPillar(ctx, c, base, ro, om)
	if err != nil {
		return nil, err
	}
	env.Pillar = basePillar
	if om != nil {
		if basePillar == nil {
			basePillar = &payload.Map{}
		} else {
			basePillar = payload.DeepClone(basePillar).(*payload.Map)
		}
		env.Pillar = pillar.Merge(basePillar, payload.DeepClone(om).(*payload.Map),
			ro.strDefault("pillar_source_merging_strategy", "smart"), ro.strDefault("renderer", "yaml"),
			ro.boolDefault("pillar_merge_lists", false))
	}
	env.Opts = ro
	files, _ := modules.Service[render.FileSource](&env, filesService)
	run := newStateRun(ctx, x.states, &env, ro, x.rd, files)
	run.test = ro.boolDefault("test", false)
	if po.jid {
		run.jid = currentJID(c, kw)
	}
	if v, ok := kw.Get("state_events"); ok && v != nil {
		ro.Set("state_events", v)
	}
	run.mocked = payload.Truthy(mapGetStr(kw, "mock"))
	return &setup{run: run, hs: newHighState(run), kw: kw}, nil
}

// jidTime is jid_to_time, "" where Salt would raise.
func jidTime(jid string) string {
	t, _ := saltjid.ToTime(jid)
	return t
}
