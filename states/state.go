// The state-function registry and the types state functions see.

package states

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/gsalt/gsalt/internal/fnreg"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/wire/payload"
)

// Result is a state's result: True, False or None (test mode: changes
// predicted). The zero value is False so a forgotten result never reads as
// success.
type Result int8

// Results.
const (
	False Result = iota
	True
	None
)

// Value returns the result as payload data (true, false or nil).
func (r Result) Value() any {
	switch r {
	case True:
		return true
	case None:
		return nil
	}
	return false
}

// ResultOf converts a bool (true/false) or nil to a Result.
func ResultOf(v any) Result {
	switch v {
	case nil:
		return None
	case true:
		return True
	}
	return False
}

// Ret is what a state function returns: Salt's ret dict without the
// bookkeeping keys the compiler adds (__id__, __run_num__, __sls__,
// start_time, duration).
type Ret struct {
	Name   string
	Result Result
	// Changes is the changes dict (nil means {}).
	Changes *payload.Map
	Comment string
	// Warnings, when set, become the ret's "warnings" list.
	Warnings []string
	// Extra holds further keys a state module puts in its ret
	// (postgres_schema's "dbname"), added after the standard ones.
	Extra *payload.Map
}

// Sentinel errors.
var (
	// ErrExecFailed: an execution function called by a state failed
	// (non-zero retcode); the error text is its return.
	ErrExecFailed = errors.New("states: execution function failed")
	// ErrNoState: the state function does not exist.
	ErrNoState = errors.New("states: state function not available")
)

// Call is one invocation of a state function for one low chunk.
type Call struct {
	// ID is the state's ID declaration, Name its name argument.
	ID, Name string
	// State and Fun split "file.managed" into "file" and "managed".
	State, Fun string
	// Args are the low chunk's keys bound to the function's Spec.
	Args *modules.Args
	// Low is the whole low chunk (read-only).
	Low *payload.Map
	// Test is test=True: predict, change nothing, result None for changes.
	Test bool
	// Saltenv and SLS locate the state.
	Saltenv, SLS string
	// Env is the minion environment (grains, pillar, opts, services);
	// Env.Registry runs execution modules.
	Env *modules.Env
	// Render renders templates (file.managed template=jinja).
	Render *render.Registry
	// Files fetches salt:// sources; nil when unavailable.
	Files render.FileSource
	// Watch is true when this is the module's mod_watch call (Function.Watch,
	// or a registered "<state>.mod_watch"), made because a watch requisite
	// reported changes or a listen requisite fired. Fun is then the watched
	// function's name (Salt's sfun).
	Watch bool
	// Reqs holds, for a mod_watch call after a watch requisite, the
	// requisite chunks by type ("watch", "require", ...): Salt's
	// __low__["__reqs__"]. nil otherwise.
	Reqs map[string][]*payload.Map
	// Running is the run's results so far, tag → ret (Salt's __running__).
	// Read-only.
	Running *payload.Map
	// Chunks are the run's low chunks (Salt's __lowstate__). Read-only.
	Chunks []*payload.Map
	// Accum is the run's file.accumulated data (nil outside a run).
	Accum *Accumulators
}

// Exec runs an execution function through Env.Registry with positional
// args and keyword kwargs (nil for none), as Python code calls a loaded
// function: a "name=value" string is a positional string (Binder.Direct). A failed call (non-zero retcode)
// returns ErrExecFailed wrapping its return text.
func (c *Call) Exec(ctx context.Context, fun string, args []any, kwargs *payload.Map) (any, error) {
	if c.Env == nil || c.Env.Registry == nil {
		return nil, fmt.Errorf("%w: no execution modules available for %s", ErrExecFailed, fun)
	}
	res := c.execute(ctx, fun, args, kwargs)
	if res.Retcode != 0 {
		return res.Return, fmt.Errorf("%w: %s", ErrExecFailed, payload.Text(res.Return))
	}
	return res.Return, nil
}

// execute runs fun through Env.Registry (non-nil) as Exec does and
// returns the whole result.
func (c *Call) execute(ctx context.Context, fun string, args []any, kwargs *payload.Map) modules.Result {
	all := append([]any(nil), args...)
	if kwargs != nil && kwargs.Len() > 0 {
		kw := kwargs.Clone()
		kw.Set("__kwarg__", true)
		all = append(all, kw)
	}
	return c.Env.Registry.Execute(ctx, modules.Binder{Direct: true}, c.Env, fun, all, nil)
}

// RenderContext returns the template context of this call: the minion's
// grains, pillar and opts, saltenv, sls, and salt['mod.fun'] through
// Env.Registry.
func (c *Call) RenderContext() *render.Context {
	rc := &render.Context{Saltenv: c.Saltenv, SLS: c.SLS, Files: c.Files, Salt: ExecCaller{Env: c.Env}}
	if c.Env != nil {
		rc.Grains, rc.Pillar, rc.Log = c.Env.Grains, c.Env.Pillar, c.Env.Log
	}
	return rc
}

// ExecCaller implements render.Caller over a minion environment.
type ExecCaller struct{ Env *modules.Env }

// CallFunction runs fun through Env.Registry, as a template's
// salt['mod.fun'](...) calls it: a function that raised is an error
// (ErrExecFailed), one that returned keeps its return even with a
// non-zero retcode (salt['cmd.run']('test -f missing') is "" in Salt).
func (e ExecCaller) CallFunction(ctx context.Context, fun string, args []any, kwargs *payload.Map) (any, error) {
	c := &Call{Env: e.Env}
	if e.Env == nil || e.Env.Registry == nil {
		return c.Exec(ctx, fun, args, kwargs)
	}
	res := c.execute(ctx, fun, args, kwargs)
	if res.Raised {
		return res.Return, fmt.Errorf("%w: %s", ErrExecFailed, payload.Text(res.Return))
	}
	return res.Return, nil
}

// HasFunction reports whether fun is an execution function of Env.Registry.
func (e ExecCaller) HasFunction(fun string) bool {
	if e.Env == nil || e.Env.Registry == nil {
		return false
	}
	_, ok := e.Env.Registry.Lookup(fun)
	return ok
}

// ExplainMissing says why fun is missing when it is a function of a
// custom Python execution module synced to the minion (extension_modules,
// or cachedir/extmods): gsalt loads no Python modules. "" otherwise.
func (e ExecCaller) ExplainMissing(fun string) string {
	return builtin.PythonModuleMissing(extensionModules(e.Env), "modules", fun)
}

// ExplainMissingRenderer says why renderer name is missing when it is a
// custom Python renderer synced to the minion; "" otherwise.
func (e ExecCaller) ExplainMissingRenderer(name string) string {
	return builtin.PythonRendererMissing(extensionModules(e.Env), name)
}

// extensionModules is the minion's extension_modules folder (else
// cachedir/extmods), where saltutil.sync_* put custom modules; "" when
// env has no options.
func extensionModules(env *modules.Env) string {
	if env == nil || env.Opts == nil {
		return ""
	}
	str := func(k string) string {
		v, _ := env.Opts.Get(k)
		s, _ := v.(string)
		return s
	}
	ext := str("extension_modules")
	if ext == "" {
		if c := str("cachedir"); c != "" {
			ext = filepath.Join(c, "extmods")
		}
	}
	return ext
}

// Func is the Go body of a state function. A returned error becomes a
// False result whose comment is the error text (Salt's "An exception
// occurred in this state").
type Func func(ctx context.Context, c *Call) (Ret, error)

// Function is one registered state function.
type Function struct {
	// Name is "module.function", e.g. "file.managed".
	Name string
	// Spec lists the keyword parameters, "name" first; Kwargs accepts
	// the remaining low-chunk keys.
	Spec modules.Spec
	Fn   Func
	// Watch is the module's mod_watch, run instead of Fn when a watch
	// requisite had changes (service restart, cmd.wait runs). nil means
	// Fn runs as usual.
	Watch Func
}

// Registry maps state function names to functions; safe for concurrent use.
type Registry struct {
	t     fnreg.Table[Function]
	mu    sync.RWMutex
	inits map[string]ModInitFunc
	aggs  map[string]ModAggregateFunc
	virts map[string]Virtual
}

// Virtual records a Salt state module whose __virtual__ refuses to load
// without an execution function: Salt then reports "'<module>' __virtual__
// returned False: <reason>" for its state functions instead of
// "'<module>.<fun>' is not available.". For a state module gsalt does not
// run it explains the missing functions; for one gsalt runs (cron,
// postgres_user) its functions are missing too while the execution
// function is not loaded (absent, or its module's __virtual__ refuses the
// minion), as in Salt's loader.
type Virtual struct {
	// Needs is the execution function whose presence loads the module
	// ("mysql.user_create").
	Needs string
	// Reason is the __virtual__ message.
	Reason string
}

// RegisterVirtual records state module state's __virtual__ condition.
func (r *Registry) RegisterVirtual(state string, v Virtual) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.virts == nil {
		r.virts = map[string]Virtual{}
	}
	r.virts[state] = v
}

// Refused is the __virtual__ reason state module mod does not load on the
// minion whose execution functions are exec and whose environment is env
// ("" and false when it loads). A module gsalt runs is judged only when
// exec is known.
func (r *Registry) Refused(mod string, exec *modules.Registry, env *modules.Env) (string, bool) {
	r.mu.RLock()
	v, ok := r.virts[mod]
	r.mu.RUnlock()
	if !ok {
		return "", false
	}
	implemented := r.hasModule(mod)
	if implemented && exec == nil {
		return "", false
	}
	if _, loaded := lookupExec(exec, v.Needs); loaded {
		emod, _, _ := strings.Cut(v.Needs, ".")
		if exec.Unavailable(emod, env) == nil {
			return "", false
		}
	}
	return fmt.Sprintf("'%s' __virtual__ returned False: %s", mod, v.Reason), true
}

// MissingFunString is the loader's missing_fun_string: why state function
// full ("mod.fun") is missing, given the minion's execution functions and
// environment.
func (r *Registry) MissingFunString(full string, exec *modules.Registry, env *modules.Env) string {
	mod, _, _ := strings.Cut(full, ".")
	if reason, refused := r.Refused(mod, exec, env); refused {
		return reason
	}
	if why := builtin.PythonModuleMissing(extensionModules(env), "states", full); why != "" {
		return why
	}
	return fmt.Sprintf("'%s' is not available.", full)
}

// hasModule reports whether any state function of module mod is registered.
func (r *Registry) hasModule(mod string) bool {
	for _, n := range r.t.Names() {
		if strings.HasPrefix(n, mod+".") {
			return true
		}
	}
	return false
}

func lookupExec(exec *modules.Registry, name string) (*modules.Function, bool) {
	if exec == nil {
		return nil, false
	}
	return exec.Lookup(name)
}

// ModAggregateFunc is a state module's mod_aggregate: before low runs
// (with aggregation on for its module), it may fold other not-yet-run
// chunks into low, marking them "__agg__". chunks and running are the
// run's low chunks and results so far.
type ModAggregateFunc func(low *payload.Map, chunks []*payload.Map, running *payload.Map)

// RegisterModAggregate sets the mod_aggregate of state module state.
func (r *Registry) RegisterModAggregate(state string, fn ModAggregateFunc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.aggs == nil {
		r.aggs = map[string]ModAggregateFunc{}
	}
	r.aggs[state] = fn
}

// ModAggregate returns the mod_aggregate of state module state, or nil.
func (r *Registry) ModAggregate(state string) ModAggregateFunc {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.aggs[state]
}

// ModInitFunc is a state module's mod_init: called once per state run
// before the module's first chunk runs (pkg refreshes its database there);
// returning false makes the run call it again before the next chunk.
type ModInitFunc func(env *modules.Env, low *payload.Map) bool

// RegisterModInit sets the mod_init of state module state ("pkg").
func (r *Registry) RegisterModInit(state string, fn ModInitFunc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.inits == nil {
		r.inits = map[string]ModInitFunc{}
	}
	r.inits[state] = fn
}

// ModInit returns the mod_init of state module state, or nil.
func (r *Registry) ModInit(state string) ModInitFunc {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.inits[state]
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{} }

// Register adds functions; a duplicate or malformed name is an error.
func (r *Registry) Register(fns ...Function) error {
	for _, f := range fns {
		if !strings.Contains(f.Name, ".") || f.Fn == nil {
			return fmt.Errorf("states: bad state function %q", f.Name)
		}
		if !r.t.Add(f.Name, f) {
			return fmt.Errorf("states: %q registered twice", f.Name)
		}
	}
	return nil
}

// Lookup returns a state function by name.
func (r *Registry) Lookup(name string) (*Function, bool) { return r.t.Get(name) }

// Names returns every state function name, sorted.
func (r *Registry) Names() []string { return r.t.Names() }
