package builtin

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// errSaltInvocation is Salt's SaltInvocationError raised by a state
// function (bad arguments); its text follows the prefix.
var errSaltInvocation = errors.New("SaltInvocationError")

// RunningChanges is the optional view of the current state run that
// test.mod_watch uses to list the watched states that changed. The state
// compiler registers it in modules.Env.Services under "state.running";
// tag is the requisite's "<state>_|-<id>_|-<name>_|-<fun>" run tag.
type RunningChanges interface {
	HasChanges(tag string) bool
}

// runningServiceName is the Env.Services key of RunningChanges.
const runningServiceName = "state.running"

// testStates is Salt's test state module (salt/states/test.py).
func testStates() []states.Function {
	nameKw := modules.Spec{Params: []modules.Param{sbReq("name")}, Kwargs: true}
	return []states.Function{
		{Name: "test.nop", Spec: nameKw, Watch: testModWatch,
			Fn: func(_ context.Context, c *states.Call) (states.Ret, error) {
				return states.Ret{Name: sbName(c), Result: states.True, Comment: "Success!"}, nil
			}},
		{Name: "test.succeed_without_changes", Spec: nameKw, Watch: testModWatch,
			Fn: func(_ context.Context, c *states.Call) (states.Ret, error) {
				return states.Ret{Name: sbName(c), Result: states.True, Comment: testComment(c, "Success!")}, nil
			}},
		{Name: "test.fail_without_changes", Spec: nameKw, Watch: testModWatch,
			Fn: func(_ context.Context, c *states.Call) (states.Ret, error) {
				ret := states.Ret{Name: sbName(c), Result: states.False, Comment: testComment(c, "Failure!")}
				if c.Test {
					ret.Comment = "If we weren't testing, this would be a failure!"
				}
				return ret, nil
			}},
		{Name: "test.succeed_with_changes", Spec: nameKw, Watch: testModWatch,
			Fn: func(_ context.Context, c *states.Call) (states.Ret, error) {
				ret := states.Ret{Name: sbName(c), Result: states.True, Comment: testComment(c, "Success!"), Changes: testChangeData()}
				if c.Test {
					ret.Result = states.None
					ret.Comment = "If we weren't testing, this would be successful with changes"
				}
				return ret, nil
			}},
		{Name: "test.fail_with_changes", Spec: nameKw, Watch: testModWatch,
			Fn: func(_ context.Context, c *states.Call) (states.Ret, error) {
				ret := states.Ret{Name: sbName(c), Result: states.False, Comment: testComment(c, "Failure!"), Changes: testChangeData()}
				if c.Test {
					ret.Result = states.None
					ret.Comment = "If we weren't testing, this would be failed with changes"
				}
				return ret, nil
			}},
		{Name: "test.configurable_test_state", Watch: testModWatch,
			Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("changes", true), sbOpt("result", true),
				sbOpt("comment", ""), sbOpt("warnings", nil)}},
			Fn: testConfigurable},
		{Name: "test.show_notification", Watch: testModWatch,
			Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("text", nil)}, Kwargs: true},
			Fn: func(_ context.Context, c *states.Call) (states.Ret, error) {
				text := c.Args.Get("text")
				if !payload.Truthy(text) {
					return states.Ret{}, fmt.Errorf("%w: Missing required argument text.", errSaltInvocation)
				}
				return states.Ret{Name: sbName(c), Result: states.True, Comment: pyfmt.Str(text)}, nil
			}},
		{Name: "test.mod_watch", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("sfun", nil)}, Kwargs: true},
			Fn: testModWatch},
	}
}

// testComment is kwargs.get("comment", def).
func testComment(c *states.Call, def string) string {
	if c.Args != nil && c.Args.Kwargs != nil {
		if v, ok := c.Args.Kwargs.Get("comment"); ok {
			return pyfmt.Str(v)
		}
	}
	return def
}

// testChangeData is the pretend change the test states report.
func testChangeData() *payload.Map {
	return payload.NewMap("testing", payload.NewMap("old", "Unchanged", "new", "Something pretended to change"))
}

// testConfigurable is test.configurable_test_state.
func testConfigurable(_ context.Context, c *states.Call) (states.Ret, error) {
	a := c.Args
	comment := a.Get("comment")
	ret := states.Ret{Name: sbName(c), Result: states.False, Comment: pyfmt.Str(comment)}
	changes := a.Get("changes")
	switch changes {
	case true:
		ret.Changes = testChangeData()
	case false:
	default:
		if strings.ToLower(pyfmt.Str(changes)) != "random" {
			return states.Ret{}, fmt.Errorf("%w: You have specified the state option 'changes' with invalid arguments. It must be either True, False, or 'Random'", errSaltInvocation)
		}
		if rand.IntN(2) == 0 {
			ret.Changes = testChangeData()
		}
	}
	switch result := a.Get("result"); {
	case result == true || result == false:
		ret.Result = states.ResultOf(result)
	case strings.ToLower(pyfmt.Str(result)) == "random":
		ret.Result = states.ResultOf(rand.IntN(2) == 0)
	default:
		return states.Ret{}, fmt.Errorf("%w: You have specified the state option 'result' with invalid arguments. It must be either True, False, or 'Random'", errSaltInvocation)
	}
	switch w := a.Get("warnings").(type) {
	case nil:
	case string:
		ret.Warnings = []string{w}
	case []any:
		ret.Warnings = make([]string, 0, len(w))
		for _, x := range w {
			ret.Warnings = append(ret.Warnings, pyfmt.Str(x))
		}
	default:
		return states.Ret{}, fmt.Errorf("%w: You have specified the state option 'warnings' with invalid arguments. It must be a string or a list of strings", errSaltInvocation)
	}
	if c.Test {
		ret.Result = states.None
		if changes == false {
			ret.Result = states.True
		}
		if !payload.Truthy(comment) {
			ret.Comment = "This is a test"
		}
	}
	return ret, nil
}

// testModWatch is test.mod_watch: it reports which watched states had
// changes. The watched low chunks come from the low chunk's
// __reqs__["watch"]; with a RunningChanges service only those that changed
// are listed, without one every watched chunk is (the state system runs
// mod_watch only when one of them changed).
func testModWatch(_ context.Context, c *states.Call) (states.Ret, error) {
	kw := sbLowKwargs(c, sbModuleSpec("test"))
	var reqs any
	if v, ok := kw.Get("__reqs__"); ok {
		reqs = v
	} else if c.Low != nil {
		reqs, _ = c.Low.Get("__reqs__")
	}
	hasChanges := []any{}
	if rm, ok := reqs.(*payload.Map); ok {
		running, haveRunning := modules.Service[RunningChanges](c.Env, runningServiceName)
		watch, _ := rm.Get("watch")
		list, _ := watch.([]any)
		for _, r := range list {
			req, ok := r.(*payload.Map)
			if !ok {
				continue
			}
			tag := req.Str("state") + "_|-" + req.Str("__id__") + "_|-" + req.Str("name") + "_|-" + req.Str("fun")
			if haveRunning && !running.HasChanges(tag) {
				continue
			}
			hasChanges = append(hasChanges, req.Str("state")+": "+req.Str("__id__"))
		}
	}
	ret := states.Ret{Name: sbName(c), Result: states.True, Comment: "Watch statement fired.",
		Changes: payload.NewMap("Requisites with changes", hasChanges)}
	if v, ok := kw.Get("result"); ok {
		switch v {
		case nil:
			ret.Result = states.None
		default:
			ret.Result = states.ResultOf(payload.Truthy(v))
		}
	}
	if v, ok := kw.Get("comment"); ok {
		ret.Comment = pyfmt.Str(v)
	}
	if v, ok := kw.Get("changes"); ok {
		ret.Changes, _ = v.(*payload.Map)
	}
	return ret, nil
}
