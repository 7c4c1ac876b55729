// Package runners is gsalt's registry of master-side runner functions
// (Salt's salt-run modules) and its runners: manage (status, up, down and
// the presence-detection functions), jobs, mine, pillar, event.send,
// fileserver, saltutil.sync_*, cache, salt.cmd and test. Runners run inside the master
// (the job cache is an embedded store that only the master process opens),
// started by the clear "runner" command; they reach the master through Env.
//
// Arguments are bound like Python binds them to the runner's parameters:
// positional arguments first, then keyword arguments, defaults for the rest;
// a binding failure is reported the way Salt's RunnerClient does.
package runners

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gsalt/gsalt/internal/fnreg"
	"github.com/gsalt/gsalt/master/jobcache"
	"github.com/gsalt/gsalt/wire/payload"
)

// Sentinel errors.
var (
	// ErrNotAvailable means no runner has the requested name.
	ErrNotAvailable = errors.New("runners: function not available")
	// ErrArguments means the arguments do not fit the runner's parameters.
	ErrArguments = errors.New("runners: invalid arguments")
	// ErrDuplicate means a runner name is registered twice.
	ErrDuplicate = errors.New("runners: duplicate runner")
	// ErrNoMinions is what Env.RunJob returns when the target matched no
	// accepted minion.
	ErrNoMinions = errors.New("runners: no minions matched the target")
)

// Job is a job a runner publishes through Env.RunJob.
type Job struct {
	// Tgt and TgtType select the minions (TgtType "" means glob).
	Tgt     any
	TgtType string
	// Fun and Arg are the function and its arguments.
	Fun string
	Arg []any
	// Timeout is how long to wait for returns before asking the
	// outstanding minions with saltutil.find_job whether they still run
	// the job; GatherJobTimeout is how long to wait for those answers.
	// Zero takes the master's timeout and gather_job_timeout.
	Timeout, GatherJobTimeout time.Duration
}

// JobResult is what Env.RunJob collected.
type JobResult struct {
	JID string
	// Minions are the minions expected to answer, Missing the listed
	// minions without an accepted key.
	Minions, Missing []string
	// Returns maps a minion id to its full return event data (return,
	// retcode, success, fun, fun_args, ...).
	Returns map[string]*payload.Map
}

// JobCache is the part of the job cache runners read.
type JobCache interface {
	List() ([]*jobcache.Job, error)
	Get(jid string) (*jobcache.Job, error)
	// Lost lists the jobs lost to a damaged cache file.
	Lost() ([]jobcache.LostJob, error)
}

// Env is the master as runners see it.
type Env interface {
	// Accepted returns the accepted minion ids, sorted.
	Accepted() ([]string, error)
	// Connected returns the ids Salt's presence detection considers
	// connected (CkMinions.connected_ids), with the address each one was
	// matched on.
	Connected() (map[string]string, error)
	// RunJob publishes a job and collects its returns like LocalClient's
	// cmd_iter. It returns ErrNoMinions when nothing matched.
	RunJob(ctx context.Context, job Job) (*JobResult, error)
	// Jobs returns the job cache.
	Jobs() JobCache
	// DeleteKey deletes the key of a minion in every state.
	DeleteKey(id string) error
	// Opt returns a master option.
	Opt(key string) (any, bool)
}

// Param is one parameter of a runner.
type Param struct {
	Name string
	// Default is used when the caller gives no value. Required params
	// have none.
	Default  any
	Required bool
}

// Call is one runner invocation.
type Call struct {
	// Fun is the runner name ("manage.status").
	Fun string
	// Args holds every parameter by name, defaults filled in.
	Args map[string]any
	// Kwargs holds extra keyword arguments when the runner accepts any.
	Kwargs map[string]any
	Env    Env
	// JID and User identify the run.
	JID, User string
	Log       *slog.Logger
	// Progress fires a progress event (salt/run/<jid>/progress); it may be
	// nil.
	Progress func(data *payload.Map)

	retcode int
}

// SetRetcode sets the run's return code (Salt's __context__["retcode"]);
// a non-zero code makes the run unsuccessful.
func (c *Call) SetRetcode(n int) { c.retcode = n }

// Retcode returns the code set by SetRetcode.
func (c *Call) Retcode() int { return c.retcode }

func (c *Call) progress(msg string) {
	if c.Progress != nil {
		c.Progress(payload.NewMap("message", msg))
	}
}

// Func is a runner implementation. Its return value must be built from
// payload types (strings, numbers, bools, nil, []any, *payload.Map).
type Func func(ctx context.Context, c *Call) (any, error)

// Runner describes one runner function.
type Runner struct {
	// Name is "module.function".
	Name string
	// Params are the parameters in Python order.
	Params []Param
	// VarKwargs is true when the runner takes **kwargs.
	VarKwargs bool
	// VarArgs names the runner's *args parameter ("" when it has none):
	// positional arguments beyond Params are bound to it as a list.
	VarArgs string
	// Doc is the usage text shown on argument errors.
	Doc string
	Fn  Func
}

// Registry holds runners by name. It is safe for concurrent use.
type Registry struct {
	t fnreg.Table[Runner]
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{t: fnreg.Table[Runner]{Kind: "runner", ErrInvalid: ErrArguments, ErrDuplicate: ErrDuplicate,
		Entry: func(rn Runner) (string, bool) { return rn.Name, rn.Fn != nil }}}
}

// Default returns a registry with every runner of this package.
func Default() *Registry {
	r := NewRegistry()
	r.t.MustRegister(slices.Concat(manageRunners(), jobsRunners(), mineRunners(), PillarRunners(),
		eventRunners(), reactorRunners(), fileserverRunners(), saltutilRunners(), cacheRunners(), saltRunners(), testRunners(), stateRunners(), gitPillarRunners())...)
	return r
}

// Register adds a runner. An incomplete one fails with ErrArguments,
// registering a name twice with ErrDuplicate.
func (r *Registry) Register(rn Runner) error { return r.t.Register(rn) }

// Lookup returns the runner called name.
func (r *Registry) Lookup(name string) (*Runner, bool) { return r.t.Get(name) }

// Names returns the registered names, sorted.
func (r *Registry) Names() []string { return r.t.Names() }

// Bind maps positional and keyword arguments onto the runner's parameters
// like a Python call. Maps in args carrying "__kwarg__": true are merged
// into the keyword arguments. Errors wrap ErrArguments and read like
// Python's TypeError messages.
func (rn *Runner) Bind(args []any, kwargs *payload.Map) (bound, extra map[string]any, err error) {
	short := rn.Name[strings.LastIndex(rn.Name, ".")+1:]
	kw := payload.NewMap()
	var pos []any
	for _, a := range args {
		if m, ok := a.(*payload.Map); ok && m.Bool("__kwarg__") {
			for _, it := range m.Items() {
				if payload.KeyString(it.Key) != "__kwarg__" {
					kw.SetKey(payload.KeyString(it.Key), it.Value)
				}
			}
			continue
		}
		pos = append(pos, a)
	}
	if kwargs != nil {
		for _, it := range kwargs.Items() {
			kw.SetKey(payload.KeyString(it.Key), it.Value)
		}
	}
	var rest []any
	if len(pos) > len(rn.Params) && rn.VarArgs != "" {
		pos, rest = pos[:len(rn.Params)], pos[len(rn.Params):]
	}
	if len(pos) > len(rn.Params) {
		return nil, nil, fmt.Errorf("%w: %s() takes %s positional arguments but %d were given",
			ErrArguments, short, takes(rn.Params), len(pos))
	}
	bound = map[string]any{}
	extra = map[string]any{}
	for i, a := range pos {
		bound[rn.Params[i].Name] = a
	}
	if rn.VarArgs != "" {
		bound[rn.VarArgs] = append([]any{}, rest...)
	}
	for _, it := range kw.Items() {
		k := payload.KeyString(it.Key)
		if strings.HasPrefix(k, "__") {
			continue // client internals (__user__, __jid__, __tag__, ...)
		}
		known := false
		for _, p := range rn.Params {
			if p.Name == k {
				known = true
			}
		}
		switch {
		case known:
			if _, dup := bound[k]; dup {
				return nil, nil, fmt.Errorf("%w: %s() got multiple values for argument '%s'", ErrArguments, short, k)
			}
			bound[k] = it.Value
		case rn.VarKwargs:
			extra[k] = it.Value
		default:
			return nil, nil, fmt.Errorf("%w: %s() got an unexpected keyword argument '%s'", ErrArguments, short, k)
		}
	}
	var missing []string
	for _, p := range rn.Params {
		if _, ok := bound[p.Name]; ok {
			continue
		}
		if p.Required {
			missing = append(missing, "'"+p.Name+"'")
			continue
		}
		bound[p.Name] = p.Default
	}
	if len(missing) > 0 {
		return nil, nil, fmt.Errorf("%w: %s() missing %d required positional argument%s: %s",
			ErrArguments, short, len(missing), plural(len(missing)), joinPy(missing))
	}
	return bound, extra, nil
}

func takes(ps []Param) string {
	req := 0
	for _, p := range ps {
		if p.Required {
			req++
		}
	}
	if req == len(ps) {
		return strconv.Itoa(len(ps))
	}
	return fmt.Sprintf("from %d to %d", req, len(ps))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func joinPy(l []string) string {
	switch len(l) {
	case 1:
		return l[0]
	case 2:
		return l[0] + " and " + l[1]
	}
	return strings.Join(l[:len(l)-1], ", ") + ", and " + l[len(l)-1]
}

// Result is the outcome of Run, in the shape of Salt's runner return
// event data.
type Result struct {
	// Return is the runner's return value (or an error text).
	Return any
	// Success is false when the runner failed or set a retcode.
	Success bool
}

// Run executes runner fun with Salt's RunnerClient.low behaviour: an unknown
// name or a runner error gives an "Exception occurred in runner ..." text
// and Success false; an argument error gives the "Passed invalid arguments"
// text with Success true (as in Salt, where only the retcode counts).
func (r *Registry) Run(ctx context.Context, fun string, args []any, kwargs *payload.Map, c *Call) Result {
	rn, ok := r.Lookup(fun)
	if !ok {
		return Result{Return: fmt.Sprintf("Exception occurred in runner %s: '%s' is not available.", fun, fun), Success: false}
	}
	bound, extra, err := rn.Bind(args, kwargs)
	if err != nil {
		return Result{Return: fnreg.InvalidArguments(err, ErrArguments, rn.Doc), Success: true}
	}
	c.Fun, c.Args, c.Kwargs = fun, bound, extra
	if c.Log == nil {
		c.Log = slog.Default()
	}
	ret, err := fnreg.Call(ctx, "runner", rn.Fn, c)
	if err != nil {
		return Result{Return: fmt.Sprintf("Exception occurred in runner %s: %v", fun, err), Success: false}
	}
	return Result{Return: ret, Success: c.retcode == 0}
}

// Argument helpers for runner implementations.

// Str returns a string argument ("" for nil).
func (c *Call) Str(name string) string { return fnreg.Str(c.Args, name) }

// Bool returns a boolean argument with Python truthiness; the strings
// "false", "no", "off" and "0" (any case) are false, as the CLI would have
// YAML-loaded them.
func (c *Call) Bool(name string) bool {
	if s, ok := c.Args[name].(string); ok {
		switch strings.ToLower(s) {
		case "false", "no", "off", "0", "":
			return false
		}
		return true
	}
	return payload.Truthy(c.Args[name])
}

// Seconds returns a duration argument given in seconds (int, float or
// numeric string); ok is false when it is unset (nil, 0 or "").
func (c *Call) Seconds(name string) (time.Duration, bool) {
	switch v := c.Args[name].(type) {
	case nil:
		return 0, false
	case float64:
		if v > 0 {
			return time.Duration(v * float64(time.Second)), true
		}
		return 0, false
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err == nil && f > 0 {
			return time.Duration(f * float64(time.Second)), true
		}
		return 0, false
	default:
		if n, ok := payload.AsInt(v); ok && n > 0 {
			return time.Duration(n) * time.Second, true
		}
	}
	return 0, false
}

// StrList returns a list argument given as a list or a comma-separated
// string (Salt's split_input).
func (c *Call) StrList(name string) []string {
	switch v := c.Args[name].(type) {
	case nil:
		return nil
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			out = append(out, payload.Text(e))
		}
		return out
	case string:
		var out []string
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out
	}
	return []string{payload.Text(c.Args[name])}
}

// strAny converts ids for payload values.
func strAny(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}
