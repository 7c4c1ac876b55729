// Package wheel is gsalt's registry of wheel functions (Salt's
// salt/wheel modules: key, config, file_roots, pillar_roots) and the
// low-data call logic of Salt's WheelClient. Wheel functions run inside the
// master and control it; they are reached through the clear "wheel"
// command and the reactor (see master.RunWheel).
//
// Arguments reach a function in one of the two ways Salt's
// SyncClientMixin.low accepts: a low with both "arg" and "kwarg" is a
// Python call (positional, then keyword arguments), any other low is
// matched to the parameters by name like salt.utils.args.format_call, the
// client's own keys (cmd, fun, eauth, token, __user__, ...) left
// out.
package wheel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/gsalt/gsalt/internal/fnreg"
	"github.com/gsalt/gsalt/master/keys"
	"github.com/gsalt/gsalt/master/runners"
	"github.com/gsalt/gsalt/wire/payload"
)

// Sentinel errors.
var (
	// ErrNotAvailable means no wheel function has the requested name.
	ErrNotAvailable = errors.New("wheel: function not available")
	// ErrArguments means the arguments do not fit the function.
	ErrArguments = errors.New("wheel: invalid arguments")
	// ErrDuplicate means a function name is registered twice.
	ErrDuplicate = errors.New("wheel: duplicate function")
)

// Env is the master as wheel functions see it.
type Env interface {
	// Keys is the master's key store; its changes fire salt/key events.
	Keys() *keys.Store
	// Opt returns a master option.
	Opt(key string) (any, bool)
}

// Param is one parameter of a wheel function (same shape as a runner's).
type Param = runners.Param

// Func is a wheel function implementation. Its return value must be built
// from payload types.
type Func func(ctx context.Context, c *Call) (any, error)

// Function describes one wheel function.
type Function struct {
	// Name is "module.function" as clients call it ("key.list").
	Name string
	// PyName is the name of Salt's Python function when it differs from
	// the part of Name after the dot ("list_" for key.list); it appears in
	// argument error messages.
	PyName string
	// Params are the parameters in Python order.
	Params []Param
	// VarKwargs is true when the function takes **kwargs.
	VarKwargs bool
	// Doc is the usage text shown on argument errors.
	Doc string
	Fn  Func
}

func (f *Function) pyName() string {
	if f.PyName != "" {
		return f.PyName
	}
	return f.Name[strings.LastIndex(f.Name, ".")+1:]
}

// Call is one wheel invocation.
type Call struct {
	// Fun is the function name ("key.accept").
	Fun string
	// Args holds every parameter by name, defaults filled in.
	Args map[string]any
	// Kwargs holds extra keyword arguments when the function accepts any.
	Kwargs map[string]any
	Env    Env
	// JID and User identify the run.
	JID, User string
	Log       *slog.Logger
}

// Str returns a string argument ("" for nil).
func (c *Call) Str(name string) string { return fnreg.Str(c.Args, name) }

// Bool returns an argument's Python truthiness.
func (c *Call) Bool(name string) bool { return payload.Truthy(c.Args[name]) }

// opt returns a master option (nil when unset).
func (c *Call) opt(key string) any {
	v, _ := c.Env.Opt(key)
	return v
}

// Registry holds wheel functions by name. It is safe for concurrent use.
type Registry struct {
	t fnreg.Table[Function]
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{t: fnreg.Table[Function]{Kind: "function", ErrInvalid: ErrArguments, ErrDuplicate: ErrDuplicate,
		Entry: func(f Function) (string, bool) { return f.Name, f.Fn != nil }}}
}

// Default returns a registry with every wheel function of this package.
func Default() *Registry {
	r := NewRegistry()
	r.t.MustRegister(slices.Concat(keyFunctions(), configFunctions(), fileRootsFunctions(), pillarRootsFunctions())...)
	return r
}

// Register adds a function. An incomplete one fails with ErrArguments,
// registering a name twice with ErrDuplicate.
func (r *Registry) Register(f Function) error { return r.t.Register(f) }

// Lookup returns the function called name.
func (r *Registry) Lookup(name string) (*Function, bool) { return r.t.Get(name) }

// Names returns the registered names, sorted.
func (r *Registry) Names() []string { return r.t.Names() }

// Request carries a call's arguments. With Low nil, Args and Kwargs are a
// Python call (the reactor's way). With Low set, it is the low data of a
// client: its "arg" and "kwarg" when it has both, else its keys matched to
// the parameters by name.
type Request struct {
	Args   []any
	Kwargs *payload.Map
	Low    *payload.Map
}

// Result is the outcome of Run, in the shape of the return event data of
// Salt's WheelClient.
type Result struct {
	// Return is the function's return value or an error text.
	Return any
	// Success is false when the function failed.
	Success bool
}

// clientInternal are the low keys format_call leaves out (Salt's
// CLIENT_INTERNAL_KEYWORDS).
var clientInternal = map[string]bool{
	"client": true, "cmd": true, "eauth": true, "fun": true, "kwarg": true, "match": true,
	"token": true, "__jid__": true, "__tag__": true, "__user__": true, "username": true,
	"password": true, "full_return": true, "print_event": true,
}

// Run executes fun with Salt's SyncClientMixin.low behaviour. Once the
// function is found and its arguments are known, started is called with
// the fun_args Salt reports (the caller fires the "new" event there); it
// is not called when the function does not exist or a by-name low does not
// fit it. An unknown function, a low that does not fit and an error of the
// function give an "Exception occurred in wheel ..." text with Success
// false; a Python call that does not fit gives the "Passed invalid
// arguments" text with Success true, as in Salt.
func (r *Registry) Run(ctx context.Context, fun string, req Request, c *Call, started func(funArgs []any)) Result {
	exc := func(msg string) Result {
		return Result{Return: fmt.Sprintf("Exception occurred in wheel %s: %s", fun, msg), Success: false}
	}
	f, ok := r.Lookup(fun)
	if !ok {
		return exc(fmt.Sprintf("'%s' is not available.", fun))
	}
	args, kwargs := req.Args, req.Kwargs
	byName := false
	if req.Low != nil {
		if req.Low.Has("arg") && req.Low.Has("kwarg") {
			args, _ = mustGet(req.Low, "arg").([]any)
			kwargs, _ = mustGet(req.Low, "kwarg").(*payload.Map)
		} else {
			byName = true
		}
	}
	var bound, extra map[string]any
	var funArgs []any
	if byName {
		var err error
		bound, extra, funArgs, err = f.formatCall(req.Low)
		if err != nil {
			return exc(strings.TrimPrefix(err.Error(), ErrArguments.Error()+": "))
		}
	} else {
		funArgs = append([]any{}, args...)
		if kwargs != nil && kwargs.Len() > 0 {
			funArgs = append(funArgs, kwargs)
		}
	}
	if started != nil {
		started(funArgs)
	}
	if !byName {
		rn := runners.Runner{Name: "wheel." + f.pyName(), Params: f.Params, VarKwargs: f.VarKwargs}
		var err error
		bound, extra, err = rn.Bind(args, kwargs)
		if err != nil {
			return Result{Return: fnreg.InvalidArguments(err, runners.ErrArguments, f.Doc), Success: true}
		}
	}
	c.Fun, c.Args, c.Kwargs = fun, bound, extra
	if c.Log == nil {
		c.Log = slog.Default()
	}
	ret, err := fnreg.Call(ctx, "wheel function", f.Fn, c)
	if err != nil {
		return exc(err.Error())
	}
	return Result{Return: ret, Success: true}
}

// formatCall is salt.utils.args.format_call over a by-name low: required
// parameters are taken from the low in order, parameters with defaults
// from the low or their defaults; other keys (but the client's internal
// ones) are extra keyword arguments, an error unless the function takes
// **kwargs. funArgs is Salt's fun_args: the positional values, then the
// keyword map (parameters with defaults in reverse order, as Python's
// dict(zip(reversed...)) builds it) when it is not empty.
func (f *Function) formatCall(low *payload.Map) (bound, extra map[string]any, funArgs []any, err error) {
	data := map[string]any{}
	var order []string
	for _, it := range low.Items() {
		k := payload.KeyString(it.Key)
		if _, dup := data[k]; !dup {
			order = append(order, k)
		}
		data[k] = it.Value
	}
	bound = map[string]any{}
	extra = map[string]any{}
	used := map[string]bool{}
	kw := payload.NewMap()
	for i := len(f.Params) - 1; i >= 0; i-- {
		p := f.Params[i]
		if p.Required {
			continue
		}
		v, ok := data[p.Name]
		if ok {
			used[p.Name] = true
		} else {
			v = p.Default
		}
		bound[p.Name] = v
		kw.Set(p.Name, v)
	}
	var missing int
	for _, p := range f.Params {
		if !p.Required {
			continue
		}
		v, ok := data[p.Name]
		if !ok {
			missing++
			continue
		}
		used[p.Name] = true
		bound[p.Name] = v
		funArgs = append(funArgs, v)
	}
	if missing > 0 {
		given := len(funArgs)
		total := given + missing
		s := ""
		if total > 1 {
			s = "s"
		}
		return nil, nil, nil, fmt.Errorf("%w: %s takes at least %d argument%s (%d given)", ErrArguments, f.pyName(), total, s, given)
	}
	var unknown []string
	for _, k := range order {
		if used[k] || clientInternal[k] {
			continue
		}
		if f.VarKwargs {
			extra[k] = data[k]
			kw.Set(k, data[k])
			continue
		}
		unknown = append(unknown, "'"+k+"'")
	}
	if len(unknown) > 0 {
		where := "salt.loaded.int.wheel." + f.Name[:strings.LastIndex(f.Name, ".")] + "." + f.pyName()
		if len(unknown) == 1 {
			return nil, nil, nil, fmt.Errorf("%w: %s is an invalid keyword argument for '%s'", ErrArguments, unknown[0], where)
		}
		return nil, nil, nil, fmt.Errorf("%w: %s and %s are invalid keyword arguments for '%s'", ErrArguments,
			strings.Join(unknown[:len(unknown)-1], ", "), unknown[len(unknown)-1], where)
	}
	if funArgs == nil {
		funArgs = []any{}
	}
	if kw.Len() > 0 {
		funArgs = append(funArgs, kw)
	}
	return bound, extra, funArgs, nil
}

func mustGet(m *payload.Map, k string) any { v, _ := m.Get(k); return v }
