package modules

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/gsalt/gsalt/wire/payload"
)

// Result is the outcome of running one function, shaped like the fields of
// a Salt _return load.
type Result struct {
	Return  any
	Retcode int
	Success bool
	// Out is the outputter name ("nested" on errors), or "".
	Out string
	// Raised: the call failed as a Python function raising an exception
	// does (not found, refused by __virtual__, bad arguments, an error or
	// a panic), as opposed to one that returned and set a non-zero
	// retcode (cmd.run of a failing command), whose return Python code
	// calling it through __salt__ still gets.
	Raised bool
}

// ExitGeneric is Salt's EX_GENERIC.
const ExitGeneric = 1

// Execute looks fun up, binds args and runs it, turning every failure into
// the return value Salt's minion would send (never a Go error: a job always
// has a return). A panic in the function is recovered and reported like a
// Python exception.
func (r *Registry) Execute(ctx context.Context, b Binder, env *Env, fun string, args []any, pub *payload.Map) (res Result) {
	fn, ok := r.Lookup(fun)
	if !ok {
		return Result{Return: fmt.Sprintf("'%s' is not available.", fun), Retcode: ExitGeneric, Out: "nested", Raised: true}
	}
	if mod, _, _ := strings.Cut(fun, "."); mod != "" {
		if err := r.Unavailable(mod, env); err != nil {
			// Salt's LazyLoader.missing_fun_string for a module whose
			// __virtual__ returned (False, reason)
			return Result{Return: fmt.Sprintf("'%s' __virtual__ returned False: %s", mod, err.Error()), Retcode: ExitGeneric, Out: "nested", Raised: true}
		}
	}
	bound, err := b.Bind(fn, args, pub)
	if err != nil {
		return errorResult(fn, err)
	}
	call := &Call{Fun: fun, Env: env, Args: bound, Pub: pub}
	defer func() {
		if p := recover(); p != nil {
			res = Result{
				Return:  fmt.Sprintf("The minion function caused an exception: %v\n%s", p, debug.Stack()),
				Retcode: ExitGeneric, Out: "nested", Raised: true,
			}
		}
	}()
	ret, err := fn.Fn(ctx, call)
	if err != nil {
		return errorResult(fn, err)
	}
	res = Result{Return: ret, Retcode: call.Retcode, Out: fn.Outputter}
	if res.Retcode == 0 {
		if m, ok := ret.(*payload.Map); ok {
			for _, k := range []string{"result", "success"} {
				if v, has := m.Get(k); has && !payload.Truthy(v) {
					res.Retcode = ExitGeneric
				}
			}
		}
	}
	res.Success = res.Retcode == 0
	return res
}

// errorResult formats err the way Salt's minion formats the matching
// Python exception.
func errorResult(fn *Function, err error) Result {
	var msg string
	switch {
	case errors.Is(err, ErrArguments):
		msg = fmt.Sprintf("Passed invalid arguments to %s: %s\n%s", fn.Name, stripSentinel(err, ErrArguments), fn.Doc)
	case errors.Is(err, ErrInvocation):
		msg = fmt.Sprintf("ERROR executing '%s': %s", fn.Name, stripSentinel(err, ErrInvocation))
	case errors.Is(err, ErrCommandNotFound):
		msg = fmt.Sprintf("Command required for '%s' not found: %s", fn.Name, stripSentinel(err, ErrCommandNotFound))
	case errors.Is(err, ErrExecution):
		msg = "ERROR: " + stripSentinel(err, ErrExecution)
	default:
		msg = fmt.Sprintf("The minion function caused an exception: %v", err)
	}
	return Result{Return: msg, Retcode: ExitGeneric, Out: "nested", Raised: true}
}

// stripSentinel removes the "<sentinel>: " prefix from a wrapped message.
func stripSentinel(err, sentinel error) string {
	s := err.Error()
	p := sentinel.Error() + ": "
	if len(s) > len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}
