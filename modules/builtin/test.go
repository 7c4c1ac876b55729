package builtin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/version"
	"github.com/gsalt/gsalt/wire/payload"
)

// testFunctions is Salt's test module.
func testFunctions() []modules.Function {
	return []modules.Function{
		{Name: "test.ping", Doc: "Used to make sure the minion is up and responding. Not an ICMP ping.\n\nReturns ``True``.",
			Fn: func(context.Context, *modules.Call) (any, error) { return true, nil }},
		{Name: "test.true", Doc: "Always return True", Fn: func(context.Context, *modules.Call) (any, error) { return true, nil }},
		{Name: "test.false", Doc: "Always return False", Fn: func(context.Context, *modules.Call) (any, error) { return false, nil }},
		{Name: "test.echo", Doc: "Return a string - used for testing the connection", Spec: modules.Spec{Params: []modules.Param{req("text")}},
			Fn: func(_ context.Context, c *modules.Call) (any, error) { return c.Args.Get("text"), nil }},
		{Name: "test.arg", Doc: "Print out the data passed into the function ``*args`` and ``kwargs``, this\nis used to both test the publication data and cli argument passing, but\nalso to display the information available within the publication data.", Spec: modules.Spec{Varargs: true, Kwargs: true},
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				args := c.Args.Varargs
				if args == nil {
					args = []any{}
				}
				return payload.NewMap("args", args, "kwargs", c.Args.Kwargs), nil
			}},
		{Name: "test.arg_clean", Doc: "Like test.arg but cleans kwargs of the __pub* items", Spec: modules.Spec{Varargs: true, Kwargs: true},
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				args := c.Args.Varargs
				if args == nil {
					args = []any{}
				}
				return payload.NewMap("args", args, "kwargs", c.Args.CleanKwargs()), nil
			}},
		{Name: "test.kwarg", Doc: "Print out the data passed into the function ``**kwargs``", Spec: modules.Spec{Kwargs: true},
			Fn: func(_ context.Context, c *modules.Call) (any, error) { return c.Args.Kwargs, nil }},
		{Name: "test.version", Doc: "Return the version of salt on the minion",
			Fn: func(context.Context, *modules.Call) (any, error) { return version.Salt, nil }},
		{Name: "test.versions_report", Doc: "Returns versions of components used by salt", Fn: testVersionsReport},
		{Name: "test.versions", Doc: "Returns versions of components used by salt", Fn: testVersionsReport},
		{Name: "test.sleep", Doc: "Instruct the minion to initiate a process that will sleep for a given\nperiod of time.", Spec: modules.Spec{Params: []modules.Param{req("length")}},
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				n, err := c.Args.Int("length")
				if err != nil {
					return nil, err
				}
				select {
				case <-time.After(time.Duration(n) * time.Second):
					return true, nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}},
		{Name: "test.retcode", Doc: "Test that the returncode system is functioning correctly", Spec: modules.Spec{Params: []modules.Param{opt("code", int64(42))}},
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				n, err := c.Args.Int("code")
				if err != nil {
					return nil, err
				}
				c.Retcode = int(n)
				return true, nil
			}},
		{Name: "test.exception", Doc: "Raise an exception\n\nOptionally provide an error message or output the full stack.", Spec: modules.Spec{Params: []modules.Param{opt("message", "Test Exception")}},
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return nil, errors.New("Exception: " + c.Args.Str("message"))
			}},
		{Name: "test.fib", Doc: "Return the num-th Fibonacci number, and the time it took to compute in\nseconds. Used for performance tests.", Spec: modules.Spec{Params: []modules.Param{req("num")}},
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				n, err := c.Args.Int("num")
				if err != nil {
					return nil, err
				}
				if n < 0 {
					return nil, errors.New("ValueError: Negative number is not allowed!")
				}
				start := time.Now()
				if n < 2 {
					return []any{n, time.Since(start).Seconds()}, nil
				}
				prev, curr := int64(0), int64(1)
				for i := int64(1); i < n; i++ {
					prev, curr = curr, prev+curr
				}
				return []any{curr, time.Since(start).Seconds()}, nil
			}},
		{Name: "test.outputter", Doc: "Test the outputter, pass in data to return", Spec: modules.Spec{Params: []modules.Param{req("data")}},
			Fn: func(_ context.Context, c *modules.Call) (any, error) { return c.Args.Get("data"), nil }},
	}
}

func testVersionsReport(context.Context, *modules.Call) (any, error) {
	lines := []string{
		"Salt Version:",
		fmt.Sprintf("          Salt: %s", version.Salt),
		"",
		"gsalt Version:",
		fmt.Sprintf("         gsalt: %s", version.Gsalt),
	}
	return strings.Join(lines, "\n"), nil
}
