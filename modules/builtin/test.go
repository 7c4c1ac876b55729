package builtin

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/internal/pyhash"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/render/jinja"
	"github.com/gsalt/gsalt/version"
	"github.com/gsalt/gsalt/wire/payload"
)

// testFunctions is Salt's test module.
func testFunctions() []modules.Function {
	fns := []modules.Function{
		{Name: "test.ping", Doc: "Used to make sure the minion is up and responding. Not an ICMP ping.\n\nReturns ``True``.",
			Fn: func(context.Context, *modules.Call) (any, error) { return true, nil }},
		{Name: "test.true", Doc: "Always return True", Fn: func(context.Context, *modules.Call) (any, error) { return true, nil }},
		{Name: "test.false", Doc: "Always return False", Fn: func(context.Context, *modules.Call) (any, error) { return false, nil }},
		{Name: "test.echo", Doc: "Return a string - used for testing the connection", Spec: modules.Spec{Params: []modules.Param{req("text")}},
			Fn: func(_ context.Context, c *modules.Call) (any, error) { return c.Args.Get("text"), nil }},
		{Name: "test.arg", Doc: "Print out the data passed into the function ``*args`` and ``kwargs``, this\nis used to both test the publication data and cli argument passing, but\nalso to display the information available within the publication data.", Spec: modules.Spec{Varargs: true, Kwargs: true},
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				// *args is a tuple in Python: a template sees it as one
				return payload.NewMap("args", jinja.Tuple(append([]any{}, c.Args.Varargs...)), "kwargs", c.Args.Kwargs), nil
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
	return append(fns, testMoreFunctions()...)
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

// testMoreFunctions is the rest of Salt's test module: calls through the
// registry, argument introspection and small computations.
func testMoreFunctions() []modules.Function {
	argsOf := func(c *modules.Call) []any {
		if c.Args.Varargs == nil {
			return []any{}
		}
		return c.Args.Varargs
	}
	return []modules.Function{
		{Name: "test.attr_call", Doc: "Call grains.items via the attribute\n\nCLI Example:\n\n    salt '*' test.attr_call",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return callFunction(ctx, c, "grains.items", nil, nil)
			}},
		{Name: "test.conf_test", Doc: "Return the value for test.foo in the minion configuration file, or return\nthe default value\n\nCLI Example:\n\n    salt '*' test.conf_test",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return callFunction(ctx, c, "config.option", []any{"test.foo"}, nil)
			}},
		{Name: "test.get_opts", Doc: "Return the configuration options passed to this minion\n\nCLI Example:\n\n    salt '*' test.get_opts",
			Fn: func(_ context.Context, c *modules.Call) (any, error) { return optsMap(c), nil }},
		{Name: "test.opts_pkg", Doc: "Return an ``opts`` package with the ``grains`` and ``opts`` for this Minion.\nThis is primarily used to create the options used for Master side\nstate compiling routines\n\nCLI Example:\n\n    salt '*' test.opts_pkg",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				ret := optsMap(c).Clone()
				ret.Set("grains", grainsData(c))
				return ret, nil
			}},
		{Name: "test.cross_test", Spec: modules.Spec{Params: []modules.Param{req("func"), opt("args", nil)}},
			Doc: "Execute a minion function via the ``__salt__`` object in the test\nmodule, used to verify that the Minion functions can be called\nvia the ``__salt__`` module.\n\nCLI Example:\n\n    salt '*' test.cross_test file.gid_to_group 0",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				args, _ := pyfmt.List(c.Args.Get("args"))
				return callFunction(ctx, c, c.Args.Str("func"), args, nil)
			}},
		{Name: "test.arg_type", Spec: modules.Spec{Varargs: true, Kwargs: true},
			Doc: "Print out the types of the ``args`` and ``kwargs``. This is used to test the types\nof the ``args`` and ``kwargs`` passed down to the Minion\n\n:rtype: dict\n\nCLI Example:\n\n    salt '*' test.arg_type 1 'int'",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				args := []any{}
				for _, a := range c.Args.Varargs {
					args = append(args, "<class '"+pyfmt.TypeName(a)+"'>")
				}
				kws := &payload.Map{}
				for _, it := range c.Args.Kwargs.Items() {
					kws.SetKey(it.Key, "<class '"+pyfmt.TypeName(it.Value)+"'>")
				}
				return payload.NewMap("args", args, "kwargs", kws), nil
			}},
		{Name: "test.arg_repr", Spec: modules.Spec{Varargs: true, Kwargs: true},
			Doc: "Print out the data passed into the function ``*args`` and ``kwargs``, this\nis used to both test the publication data and cli argument passing, but\nalso to display the information available within the publication data.\n\n:return: ``{\"args\": repr(args), \"kwargs\": repr(kwargs)}``\n\nCLI Example:\n\n    salt '*' test.arg_repr 1 2 3 4 a=1 b=2",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				args := argsOf(c)
				r := "("
				for i, a := range args {
					if i > 0 {
						r += ", "
					}
					r += pyfmt.Repr(a)
				}
				if len(args) == 1 {
					r += ","
				}
				return payload.NewMap("args", r+")", "kwargs", pyfmt.Repr(c.Args.Kwargs)), nil
			}},
		{Name: "test.collatz", Spec: modules.Spec{Params: []modules.Param{req("start")}},
			Doc: "Execute the collatz conjecture from the passed starting number,\nreturns the sequence and the time it took to compute. Used for\nperformance tests.\n\nCLI Example:\n\n    salt '*' test.collatz 3",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				n, err := c.Args.Int("start")
				if err != nil {
					return nil, fmt.Errorf("ValueError: invalid literal for int() with base 10: %s", pyfmt.Repr(c.Args.Get("start")))
				}
				if n < 1 {
					return nil, errors.New("ValueError: collatz needs a positive start (Salt loops forever)")
				}
				begin := time.Now()
				steps := []any{}
				isFloat := false
				for n != 1 {
					if len(steps) > 100000 || ctx.Err() != nil {
						return nil, errors.New("collatz: too many steps")
					}
					if isFloat {
						steps = append(steps, float64(n))
					} else {
						steps = append(steps, n)
					}
					// Python's "/" makes every later value a float.
					if n%2 == 0 {
						n /= 2
						isFloat = true
					} else {
						n = n*3 + 1
					}
				}
				return []any{steps, time.Since(begin).Seconds()}, nil
			}},
		{Name: "test.rand_str", Spec: modules.Spec{Params: []modules.Param{opt("size", int64(9999999999)), opt("hash_type", nil)}},
			Doc: "This function has been renamed to test.random_hash. This function will stay to\nensure backwards compatibility, but please switch to using the preferred name\ntest.random_hash.\n\nCLI Example:\n\n    salt '*' test.rand_str",
			Fn:  testRandomHash},
		{Name: "test.random_hash", Spec: modules.Spec{Params: []modules.Param{opt("size", int64(9999999999)), opt("hash_type", nil)}},
			Doc: "Generates a random number between 1 and ``size``, then returns a hash of\nthat number. If no ``hash_type`` is passed, the ``hash_type`` specified by the\nMinion's hash_type config option is used.\n\nCLI Example:\n\n    salt '*' test.random_hash\n    salt '*' test.random_hash hash_type=sha512",
			Fn:  testRandomHash},
		{Name: "test.rand_sleep", Spec: modules.Spec{Params: []modules.Param{opt("max", int64(60))}},
			Doc: "Sleep for a random number of seconds, used to test long-running commands\nand minions returning at differing intervals\n\nCLI Example:\n\n    salt '*' test.rand_sleep 60",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				n, err := c.Args.Int("max")
				if err != nil {
					return nil, err
				}
				if n < 0 {
					return nil, fmt.Errorf("ValueError: empty range for randrange() (0, %d, %d)", n+1, n+1)
				}
				select {
				case <-time.After(time.Duration(rand.Int64N(n+1)) * time.Second):
					return true, nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}},
		{Name: "test.stack", Doc: "Return the current stack trace\n\nCLI Example:\n\n    salt '*' test.stack",
			Fn: func(context.Context, *modules.Call) (any, error) { return string(debug.Stack()), nil }},
		{Name: "test.tty", Spec: modules.Spec{Varargs: true, Kwargs: true}, Doc: "Deprecated! Moved to cmd.tty\n\nCLI Example:\n\n    salt '*' test.tty tty0 'This is a test'",
			Fn: func(context.Context, *modules.Call) (any, error) {
				return "ERROR: This function has been moved to cmd.tty", nil
			}},
		{Name: "test.try", Spec: modules.Spec{Params: []modules.Param{req("module"), opt("return_try_exception", false)}, Kwargs: true},
			Doc: "Try to run a module command. On an exception return ``None``.\nIf ``return_try_exception`` is set to ``True``, return the exception.\nThis can be helpful in templates where running a module might fail as expected.\n\nCLI Example:\n\n    salt '*' test.try cmd.run_stdout cmd='echo hello'",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				ret, err := callFunction(ctx, c, c.Args.Str("module"), nil, c.Args.CleanKwargs())
				if err != nil {
					if argsBool(c, "return_try_exception") {
						return err.Error(), nil
					}
					return nil, nil
				}
				return ret, nil
			}},
		{Name: "test.assertion", Spec: modules.Spec{Params: []modules.Param{req("assertion")}},
			Doc: "Assert the given argument\n\nCLI Example:\n\n    salt '*' test.assertion False",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				if !payload.Truthy(c.Args.Get("assertion")) {
					return nil, errors.New("AssertionError: ")
				}
				return nil, nil
			}},
		{Name: "test.raise_exception", Spec: modules.Spec{Params: []modules.Param{req("name")}, Varargs: true, Kwargs: true},
			Doc: "Raise an exception. Built-in exceptions and those in salt.exceptions\ncan be raised by this test function. If no matching exception is found,\nthen no exception will be raised and this function will return ``False``.\n\nCLI Example:\n\n    salt '*' test.raise_exception TimeoutError 'An integer is required'\n    salt '*' test.raise_exception salt.exceptions.CommandExecutionError 'Something went wrong'",
			Fn:  testRaiseException},
		{Name: "test.deprecation_warning", Doc: "Return True, but also produce two DeprecationWarnings. One by date, the\nother by the codename - release Oganesson, which should correspond to Salt\n3108.\n\nCLI Example:\n\n    salt \\* test.deprecation_warning",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				c.Log().Warn("This is a test deprecation warning by version.")
				c.Log().Warn("This is a test deprecation warning by date very far into the future (3000-01-01).")
				return true, nil
			}},
		{Name: "test.versions_information", Doc: "Report the versions of dependent and system software\n\nCLI Example:\n\n    salt '*' test.versions_information",
			Fn: func(context.Context, *modules.Call) (any, error) {
				return payload.NewMap("Salt Version", payload.NewMap("Salt", version.Salt), "gsalt Version", payload.NewMap("gsalt", version.Gsalt)), nil
			}},
	}
}

func testRandomHash(_ context.Context, c *modules.Call) (any, error) {
	size, err := c.Args.Int("size")
	if err != nil {
		return nil, err
	}
	htv := c.Args.Get("hash_type")
	if !payload.Truthy(htv) {
		htv = optStr(c, "hash_type")
		if htv == "" {
			htv = "md5"
		}
	}
	// Salt takes any attribute of hashlib (getattr), calls it on the
	// number's text and asks for hexdigest(); the errors come in that order.
	ht, isStr := htv.(string)
	if !isStr {
		return nil, fmt.Errorf("%w: attribute name must be string, not '%s'", modules.ErrArguments, pyfmt.TypeName(htv))
	}
	hh, ok := pyhash.New(ht)
	callErr, isAttr := hashlibNotHashers[ht]
	if !ok && !isAttr {
		return nil, &modules.PyException{Class: "AttributeError", Message: fmt.Sprintf("module 'hashlib' has no attribute '%s'", ht)}
	}
	if size < 0 {
		return nil, fmt.Errorf("ValueError: empty range for randrange() (0, %d, %d)", size+1, size+1)
	}
	if !ok {
		return nil, fmt.Errorf("%w: %s", modules.ErrArguments, callErr)
	}
	hh.Write([]byte(strconv.FormatInt(rand.Int64N(size+1), 10)))
	return hex.EncodeToString(hh.Sum(nil)), nil
}

// hashlibNotHashers are the attributes of Debian's Python 3.11 hashlib
// that are not hash constructors taking only data, with the TypeError
// calling one as Salt's random_hash does gives (pyhash.New has the rest).
var hashlibNotHashers = map[string]string{
	"__all__":                     "'tuple' object is not callable",
	"__block_openssl_constructor": "'set' object is not callable",
	"__builtin_constructor_cache": "'dict' object is not callable",
	"__builtins__":                "'dict' object is not callable",
	"__cached__":                  "'str' object is not callable",
	"__doc__":                     "'str' object is not callable",
	"__file__":                    "'str' object is not callable",
	"__get_builtin_constructor":   `can only concatenate str (not "bytes") to str`,
	"__loader__":                  "'SourceFileLoader' object is not callable",
	"__name__":                    "'str' object is not callable",
	"__package__":                 "'str' object is not callable",
	"__spec__":                    "'ModuleSpec' object is not callable",
	"_hashlib":                    "'module' object is not callable",
	"algorithms_available":        "'set' object is not callable",
	"algorithms_guaranteed":       "'set' object is not callable",
	"file_digest":                 "file_digest() missing 1 required positional argument: 'digest'",
	"new":                         "name must be a string",
	"pbkdf2_hmac":                 "pbkdf2_hmac() missing required argument 'password' (pos 2)",
	"scrypt":                      "salt is required",
	"shake_128":                   "hexdigest() missing required argument 'length' (pos 1)",
	"shake_256":                   "hexdigest() missing required argument 'length' (pos 1)",
}

// testExceptions are the exceptions test.raise_exception knows, with the
// error sentinel gsalt's minion formats them by.
var testExceptions = map[string]error{
	"salt.exceptions.CommandExecutionError": modules.ErrExecution,
	"salt.exceptions.SaltInvocationError":   modules.ErrInvocation,
	"salt.exceptions.CommandNotFoundError":  modules.ErrCommandNotFound,
	"salt.exceptions.ArgumentValueError":    modules.ErrExecution,
	"salt.exceptions.SaltException":         nil, "salt.exceptions.SaltRenderError": nil, "salt.exceptions.TimedProcTimeoutError": nil,
	"Exception": nil, "ValueError": nil, "TypeError": modules.ErrArguments, "KeyError": nil, "IndexError": nil, "RuntimeError": nil,
	"OSError": nil, "IOError": nil, "TimeoutError": nil, "AttributeError": nil, "NotImplementedError": nil, "ZeroDivisionError": nil,
	"AssertionError": nil, "PermissionError": nil, "FileNotFoundError": nil, "LookupError": nil, "ArithmeticError": nil,
}

func testRaiseException(_ context.Context, c *modules.Call) (any, error) {
	name := c.Args.Str("name")
	sentinel, ok := testExceptions[name]
	if !ok {
		c.Log().Error("No such exception: " + name)
		return false, nil
	}
	var parts []string
	for _, a := range c.Args.Varargs {
		parts = append(parts, pyfmt.Str(a))
	}
	msg := strings.Join(parts, ", ")
	if len(parts) > 1 {
		var reprs []string
		for _, a := range c.Args.Varargs {
			reprs = append(reprs, pyfmt.Repr(a))
		}
		msg = "(" + strings.Join(reprs, ", ") + ")"
	}
	if sentinel != nil {
		return nil, fmt.Errorf("%w: %s", sentinel, msg)
	}
	return nil, fmt.Errorf("%s: %s", name, msg)
}
