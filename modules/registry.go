// Package modules is gsalt's execution-module registry: Go functions
// registered under Salt's names ("test.ping", "grains.items", ...) and called
// with Salt's argument conventions. The minion, proxy, state system and virt
// all register into and call through a Registry; there is no global one.
package modules

import (
	"context"
	"errors"
	"fmt"
	"github.com/gsalt/gsalt/internal/fnreg"
	"log/slog"
	"strings"
	"sync"

	"github.com/gsalt/gsalt/wire/payload"
)

// Param describes one named parameter of a function, in Python order.
type Param struct {
	Name string
	// Default is used when the argument is not given. Required parameters
	// have no default.
	Default  any
	Required bool
}

// Spec is a function's Python-style signature: named parameters, then
// optional *args and **kwargs.
type Spec struct {
	Params  []Param
	Varargs bool
	Kwargs  bool
	// PyName is the Python function's name where Salt's module renames
	// it (__func_alias__: format_ is disk.format), for Python's argument
	// errors; "" means the registered name.
	PyName string
}

// Func is the Go body of an execution function.
type Func func(ctx context.Context, c *Call) (any, error)

// Function is one registered execution function.
type Function struct {
	// Name is "module.function".
	Name string
	// Doc is the docstring shown by sys.doc.
	Doc  string
	Spec Spec
	Fn   Func
	// Outputter names the outputter the CLI should use (__outputter__).
	Outputter string
}

// Registry maps function names to functions. It is safe for concurrent use.
type Registry struct {
	t fnreg.Table[Function]

	mu   sync.RWMutex
	virt map[string]Virtual
}

// Virtual is a module's __virtual__: nil when the module loads on the
// minion env describes, else an error whose text is Salt's reason
// ("psql was not found").
type Virtual func(env *Env) error

// SetVirtual makes module's functions available only where v returns nil,
// as Salt's loader keeps a module whose __virtual__ returns False out of
// __salt__.
func (r *Registry) SetVirtual(module string, v Virtual) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.virt == nil {
		r.virt = map[string]Virtual{}
	}
	r.virt[module] = v
}

// Unavailable is the reason module does not load on the minion env
// describes (nil when it loads).
func (r *Registry) Unavailable(module string, env *Env) error {
	r.mu.RLock()
	v := r.virt[module]
	r.mu.RUnlock()
	if v == nil {
		return nil
	}
	return v(env)
}

// NamesFor returns the names of the functions loaded on the minion env
// describes (Names without the modules whose __virtual__ refuses it).
func (r *Registry) NamesFor(env *Env) []string {
	names := r.Names()
	r.mu.RLock()
	n := len(r.virt)
	r.mu.RUnlock()
	if n == 0 {
		return names
	}
	refused := map[string]bool{}
	out := names[:0:0]
	for _, name := range names {
		m := name[:strings.IndexByte(name, '.')]
		no, seen := refused[m]
		if !seen {
			no = r.Unavailable(m, env) != nil
			refused[m] = no
		}
		if !no {
			out = append(out, name)
		}
	}
	return out
}

// ModulesFor returns the modules loaded on the minion env describes.
func (r *Registry) ModulesFor(env *Env) []string { return modulesOf(r.NamesFor(env)) }

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{} }

// Register adds functions; a duplicate name is an error.
func (r *Registry) Register(fns ...Function) error {
	for _, f := range fns {
		if !strings.Contains(f.Name, ".") || f.Fn == nil {
			return fmt.Errorf("modules: bad function %q", f.Name)
		}
		if !r.t.Add(f.Name, f) {
			return fmt.Errorf("modules: %q registered twice", f.Name)
		}
	}
	return nil
}

// Lookup returns a function by name.
func (r *Registry) Lookup(name string) (*Function, bool) { return r.t.Get(name) }

// Names returns every function name, sorted.
func (r *Registry) Names() []string { return r.t.Names() }

// Modules returns the module names, sorted and unique.
func (r *Registry) Modules() []string { return modulesOf(r.Names()) }

// modulesOf returns the module names of sorted function names.
func modulesOf(names []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		m := n[:strings.IndexByte(n, '.')]
		if !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	return out
}

// Errors a function returns to produce Salt's error returns. Wrap them:
// fmt.Errorf("%w: no such file", modules.ErrExecution).
var (
	// ErrExecution is CommandExecutionError: return "ERROR: <msg>".
	ErrExecution = errors.New("command execution error")
	// ErrInvocation is SaltInvocationError: "ERROR executing '<fun>': <msg>".
	ErrInvocation = errors.New("invocation error")
	// ErrCommandNotFound is CommandNotFoundError.
	ErrCommandNotFound = errors.New("command not found")
	// ErrArguments is Python's TypeError from a bad call:
	// "Passed invalid arguments to <fun>: <msg>\n<doc>".
	ErrArguments = errors.New("invalid arguments")
	// ErrNotAvailable: the function does not exist.
	ErrNotAvailable = errors.New("function not available")
)

// Env is what an execution function sees of the minion running it. The
// minion (or proxy, or a masterless caller) fills it; nil fields mean the
// facility is not available there.
type Env struct {
	// ID is the minion id.
	ID string
	// Opts holds the minion's configuration options.
	Opts Options
	// Grains and Pillar are the minion's current data (may be nil).
	Grains *payload.Map
	Pillar *payload.Map
	// Log is the logger for function output.
	Log *slog.Logger
	// Registry is the registry the call came from (sys.*, state modules).
	Registry *Registry
	// Services holds optional facilities keyed by name ("events", "files",
	// "master", "jobs", "grains"), each an interface declared by the module
	// that needs it, so this package stays free of minion internals.
	Services map[string]any
}

// Options reads configuration values.
type Options interface {
	Get(key string) (any, bool)
}

// Service returns the named service as T, or false.
func Service[T any](e *Env, name string) (T, bool) {
	var zero T
	if e == nil || e.Services == nil {
		return zero, false
	}
	v, ok := e.Services[name].(T)
	if !ok {
		return zero, false
	}
	return v, true
}

// Call is one invocation of a function.
type Call struct {
	// Fun is the function name.
	Fun string
	// Env is the minion environment.
	Env *Env
	// Args are the bound arguments.
	Args *Args
	// Pub is the publish load of the job (jid, tgt, user, ...), or nil.
	Pub *payload.Map
	// Retcode is the return code the function sets (Salt's
	// __context__["retcode"]); 0 by default.
	Retcode int
}

// Log returns the call's logger.
func (c *Call) Log() *slog.Logger {
	if c.Env != nil && c.Env.Log != nil {
		return c.Env.Log.With("fun", c.Fun)
	}
	return slog.Default().With("fun", c.Fun)
}
