package runners

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/gsalt/gsalt/wire/payload"
)

// testRunners is Salt's test runner (salt/runners/test.py).
func testRunners() []Runner {
	return []Runner{
		{Name: "test.arg", Fn: testArg, VarArgs: "args", VarKwargs: true,
			Doc: "Output the given args and kwargs (kwargs starting with __ are left out).\n\nCLI Example:\n\n    salt-run test.arg foo bar=baz"},
		{Name: "test.raw_arg", Fn: testArg, VarArgs: "args", VarKwargs: true,
			Doc: "Output the given args and kwargs.\n\nCLI Example:\n\n    salt-run test.raw_arg foo __bar=baz"},
		{Name: "test.metasyntactic", Fn: testMetasyntactic, Params: []Param{{Name: "locality", Default: "us"}},
			Doc: "Return common metasyntactic variables for the given locality.\n\nCLI Example:\n\n    salt-run test.metasyntactic locality=uk"},
		{Name: "test.stdout_print", Fn: testStdoutPrint,
			Doc: "Print 'foo' (to the master's log here) and return 'bar'.\n\nCLI Example:\n\n    salt-run test.stdout_print"},
		{Name: "test.sleep", Fn: testSleep, Params: []Param{{Name: "s_time", Default: int64(10)}},
			Doc: "Sleep s_time seconds, then return True.\n\nCLI Example:\n\n    salt-run test.sleep s_time=5"},
		{Name: "test.stream", Fn: testStream,
			Doc: "Fire a stream of 100 progress events, then return True.\n\nCLI Example:\n\n    salt-run test.stream"},
	}
}

// testArg is test.arg (and test.raw_arg, whose __ keys the binding has
// already dropped, as the runner client does with its internal keys).
func testArg(_ context.Context, c *Call) (any, error) {
	args, _ := c.Args["args"].([]any)
	if args == nil {
		args = []any{}
	}
	kw := payload.NewMap()
	for _, k := range sortedKeys(c.Kwargs) {
		if !strings.HasPrefix(k, "__") {
			kw.Set(k, c.Kwargs[k])
		}
	}
	return payload.NewMap("args", args, "kwargs", kw), nil
}

func testMetasyntactic(_ context.Context, c *Call) (any, error) {
	switch c.Args["locality"] {
	case "us":
		return strAny([]string{"foo", "bar", "baz", "qux", "quux", "quuz", "corge", "grault", "garply",
			"waldo", "fred", "plugh", "xyzzy", "thud"}), nil
	case "uk":
		return strAny([]string{"wibble", "wobble", "wubble", "flob"}), nil
	}
	return nil, nil
}

// testStdoutPrint is test.stdout_print. Salt prints "foo" on the standard
// output of the process running the runner (the master's, for runners
// started through the master); gsalt logs it.
func testStdoutPrint(_ context.Context, c *Call) (any, error) {
	c.Log.Info("test.stdout_print", "stdout", "foo")
	return "bar", nil
}

// testSleep is test.sleep: it waits s_time seconds (or until the master
// stops) and returns True.
func testSleep(ctx context.Context, c *Call) (any, error) {
	d, _ := c.Seconds("s_time")
	c.Log.Info("test.sleep", "s_time", c.Args["s_time"])
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
	}
	return true, nil
}

// testStream is test.stream: 99 progress events "Runner is N% done", one
// every 0.1 s, then True.
func testStream(ctx context.Context, c *Call) (any, error) {
	for i := 1; i < 100; i++ {
		c.progress("Runner is " + strconv.Itoa(i) + "% done")
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	return true, nil
}
