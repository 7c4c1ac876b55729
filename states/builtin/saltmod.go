package builtin

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/output"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/target"
	"github.com/gsalt/gsalt/wire/payload"
)

// MasterClientService is the modules.Env.Services key under which the
// master offers its MasterClient to the salt.* state functions (Salt's
// saltutil.cmd / saltutil.runner / saltutil.wheel and the master event
// bus, as the orchestrate runner's MasterMinion reaches them).
const MasterClientService = "master_client"

// Sentinel errors of the salt.* states.
var (
	// ErrNoMasterClient: the environment offers no MasterClient (the
	// salt.* states run on the master, under state.orchestrate).
	ErrNoMasterClient = errors.New("states/builtin: no master client available (the salt state module runs on the master, e.g. under salt-run state.orchestrate)")
	// ErrMasterFunction: a runner or wheel function does not exist (Salt
	// raises a KeyError from the client's loader).
	ErrMasterFunction = errors.New("states/builtin: master function not available")
)

// MasterJob is a job the salt.state and salt.function states publish
// through MasterClient.RunJob.
type MasterJob struct {
	// Tgt and TgtType select the minions (TgtType "" means glob).
	Tgt     any
	TgtType string
	// Fun is the execution function.
	Fun string
	// Arg holds the arguments; keyword arguments are one trailing map
	// with "__kwarg__": true.
	Arg []any
	// Ret names returners ("" for none).
	Ret string
	// Timeout is how long to wait for returns before asking outstanding
	// minions with saltutil.find_job; zero takes the master's timeout.
	Timeout time.Duration
	// Kwargs are client options of the publish (ret_config, ret_kwargs,
	// ...); nil for none.
	Kwargs *payload.Map
}

// MinionReturn is one minion's return event data (return, retcode, jid,
// id, fun, fun_args, success, out, ...).
type MinionReturn struct {
	ID   string
	Data *payload.Map
}

// MasterJobResult is what MasterClient.RunJob collected.
type MasterJobResult struct {
	JID string
	// Minions are the minions expected to return; Missing the listed
	// minions (list targets) without an accepted key.
	Minions, Missing []string
	// Returns are the minions' returns, in a stable order.
	Returns []MinionReturn
}

// MasterEvent is one event of the master event bus.
type MasterEvent struct {
	Tag  string
	Data *payload.Map
}

// MasterClient is the master as the salt.* states reach it. The master
// registers one under MasterClientService.
type MasterClient interface {
	// RunJob publishes a job and collects the returns like LocalClient's
	// cmd_iter (waiting for the expected minions, asking late ones with
	// saltutil.find_job). A target that matches no minion gives a result
	// without returns and a nil error.
	RunJob(ctx context.Context, job MasterJob) (*MasterJobResult, error)
	// RunRunner runs a runner like RunnerClient.cmd with full_return:
	// it returns the ret event data {fun, jid, user, fun_args, return,
	// success}. An unknown function is ErrMasterFunction.
	RunRunner(ctx context.Context, fun string, args []any, kwargs *payload.Map, user string) (*payload.Map, error)
	// RunWheel runs a wheel function like WheelClient.cmd with
	// full_return and returns its ret event data. An unknown function is
	// ErrMasterFunction.
	RunWheel(ctx context.Context, fun string, args []any, kwargs *payload.Map, user string) (*payload.Map, error)
	// FunctionParams returns the parameter names of a runner (kind
	// "runner") or wheel (kind "wheel") function; ok is false when it
	// does not exist.
	FunctionParams(kind, fun string) (params []string, ok bool)
	// FireEvent fires an event on the master bus.
	FireEvent(tag string, data *payload.Map) error
	// WatchEvents subscribes to the master events whose tag matches the
	// fnmatch pattern; events arrive on the channel until stop is called
	// or ctx ends (the channel is then closed).
	WatchEvents(ctx context.Context, pattern string) (events <-chan MasterEvent, stop func(), err error)
}

// saltmodStates is Salt's salt state module (salt/states/saltmod.py),
// meant for orchestration on the master: salt.state, salt.function,
// salt.runner, salt.parallel_runners, salt.wheel and salt.wait_for_event.
// They reach the master through the MasterClient of
// Env.Services[MasterClientService]; salt.state on a masterless minion
// (file_client: local) runs the state function locally, as Salt's does.
func saltmodStates() []states.Function {
	stateSpec := modules.Spec{Params: []modules.Param{sbReq("name"), sbReq("tgt"), sbOpt("ssh", false), sbOpt("tgt_type", "glob"),
		sbOpt("ret", ""), sbOpt("ret_config", nil), sbOpt("ret_kwargs", nil), sbOpt("highstate", nil), sbOpt("sls", nil),
		sbOpt("top", nil), sbOpt("saltenv", nil), sbOpt("test", nil), sbOpt("pillar", nil), sbOpt("pillarenv", nil),
		sbOpt("expect_minions", true), sbOpt("exclude", nil), sbOpt("fail_minions", nil), sbOpt("allow_fail", int64(0)),
		sbOpt("concurrent", false), sbOpt("timeout", nil), sbOpt("batch", nil), sbOpt("queue", false), sbOpt("subset", nil),
		sbOpt("orchestration_jid", nil), sbOpt("failhard", nil)}, Kwargs: true}
	funcSpec := modules.Spec{Params: []modules.Param{sbReq("name"), sbReq("tgt"), sbOpt("ssh", false), sbOpt("tgt_type", "glob"),
		sbOpt("ret", ""), sbOpt("ret_config", nil), sbOpt("ret_kwargs", nil), sbOpt("expect_minions", false),
		sbOpt("fail_minions", nil), sbOpt("fail_function", nil), sbOpt("arg", nil), sbOpt("kwarg", nil), sbOpt("timeout", nil),
		sbOpt("batch", nil), sbOpt("subset", nil), sbOpt("failhard", nil)}, Kwargs: true}
	kwSpec := modules.Spec{Params: []modules.Param{sbReq("name")}, Kwargs: true}
	return []states.Function{
		{Name: "salt.state", Spec: stateSpec, Fn: func(ctx context.Context, c *states.Call) (states.Ret, error) {
			return saltState(ctx, c)
		}},
		{Name: "salt.function", Spec: funcSpec, Fn: func(ctx context.Context, c *states.Call) (states.Ret, error) {
			return saltFunction(ctx, c)
		}},
		{Name: "salt.runner", Spec: kwSpec, Fn: func(ctx context.Context, c *states.Call) (states.Ret, error) {
			return saltRunner(ctx, c, sbLowKwargs(c, kwSpec))
		}},
		{Name: "salt.wheel", Spec: kwSpec, Fn: func(ctx context.Context, c *states.Call) (states.Ret, error) {
			return saltWheel(ctx, c, sbLowKwargs(c, kwSpec))
		}},
		{Name: "salt.parallel_runners", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbReq("runners")}, Kwargs: true},
			Fn: saltParallelRunners},
		{Name: "salt.wait_for_event", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbReq("id_list"),
			sbOpt("event_id", "id"), sbOpt("timeout", int64(300)), sbOpt("node", "master")}},
			Fn: saltWaitForEvent},
	}
}

// CheckStateResult is salt.utils.state.check_result without highstate
// data: whether a state run's return (a dict of state returns, or a dict
// of such dicts with recurse) counts as a success. Onfail handlers are
// not considered, as Salt does not without highstate data.
func CheckStateResult(running any, recurse bool) bool {
	rm, ok := running.(*payload.Map)
	if !ok || rm.Len() == 0 {
		return false
	}
	ret := true
	for _, it := range rm.Items() {
		sr, isMap := it.Value.(*payload.Map)
		if !recurse {
			if payload.KeyString(it.Key) == "__extend__" {
				if _, isList := it.Value.([]any); !isList {
					ret = false
				}
			} else if !isMap {
				ret = false
			}
		}
		if ret && isMap {
			r, has := sr.Get("result")
			if has && r == false {
				ret = false
			} else if !has {
				ret = CheckStateResult(sr, true)
			}
		}
		if !ret {
			break
		}
	}
	return ret
}

// saltMaster returns the call's master client.
func saltMaster(c *states.Call) (MasterClient, bool) {
	return modules.Service[MasterClient](c.Env, MasterClientService)
}

// saltOpt reads a run option.
func saltOpt(c *states.Call, key string) any {
	if c.Env == nil || c.Env.Opts == nil {
		return nil
	}
	v, _ := c.Env.Opts.Get(key)
	return v
}

// saltOrchJID is __orchestration_jid__ (nil when the run has none).
func saltOrchJID(c *states.Call) any {
	if c.Low == nil {
		return nil
	}
	v, ok := c.Low.Get("__orchestration_jid__")
	if !ok {
		return nil
	}
	return v
}

// saltUser is __user__: the run's user option ("UNKNOWN" without one).
func saltUser(c *states.Call) string {
	if v := saltOpt(c, "user"); v != nil {
		return pyfmt.Str(v)
	}
	return "UNKNOWN"
}

// saltFireArgs is salt.utils.event.fire_args: with an orchestration jid,
// the arguments of the step go to salt/run/<jid>/args.
func saltFireArgs(c *states.Call, mc MasterClient, data *payload.Map) {
	jid := saltOrchJID(c)
	if jid == nil || mc == nil {
		sbLog(c).Debug("Unable to fire args event due to missing __orchestration_jid__")
		return
	}
	tag := "salt/run/" + pyfmt.Str(jid) + "/args"
	if err := mc.FireEvent(tag, data); err != nil {
		sbLog(c).Warn("Failed to fire args event", "tag", tag, "err", err)
	}
}

// saltFailMinions is the fail_minions normalisation; the warning is set
// when the value is neither a list nor a string.
func saltFailMinions(v any) (set map[string]bool, warning string) {
	set = map[string]bool{}
	switch x := v.(type) {
	case nil:
	case string:
		for _, p := range strings.Split(x, ",") {
			set[strings.TrimSpace(p)] = true
		}
	case []any:
		for _, e := range x {
			set[pyfmt.Str(e)] = true
		}
	default:
		warning = "'fail_minions' needs to be a list or a comma separated string. Ignored."
	}
	return set, warning
}

// saltPyInt is Python's int(v) for allow_fail: ok is false for a
// ValueError; a TypeError is returned as an error.
func saltPyInt(v any) (int64, bool, error) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1, true, nil
		}
		return 0, true, nil
	case float64:
		return int64(x), true, nil
	case string:
		n, err := strconv.ParseInt(strings.ReplaceAll(strings.TrimSpace(x), "_", ""), 10, 64)
		return n, err == nil, nil
	}
	if n, ok := payload.AsInt(v); ok {
		return n, true, nil
	}
	return 0, false, fmt.Errorf("%w: int() argument must be a string, a bytes-like object or a real number, not '%s'",
		modules.ErrArguments, saltPyType(v))
}

// saltPyType is the Python type name of a payload value.
func saltPyType(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case *payload.Map:
		return "dict"
	case []any:
		return "list"
	case string:
		return "str"
	case bool:
		return "bool"
	case float64:
		return "float"
	}
	return "int"
}

// saltSeconds converts a timeout argument (seconds) to a duration; zero
// means the master's default.
func saltSeconds(v any) time.Duration {
	switch x := v.(type) {
	case float64:
		return time.Duration(x * float64(time.Second))
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err == nil {
			return time.Duration(f * float64(time.Second))
		}
		return 0
	}
	if n, ok := payload.AsInt(v); ok {
		return time.Duration(n) * time.Second
	}
	return 0
}

// saltRetString turns the ret argument (a returner name, a comma list or
// a list) into the publish's ret field.
func saltRetString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = pyfmt.Str(e)
		}
		return strings.Join(parts, ",")
	}
	return pyfmt.Str(v)
}

// saltCmd is saltutil.cmd on the master (LocalClient.cmd_iter collected
// into a dict, with cmd_batch or cmd_subset when asked): per minion
// {"ret": ..., "out": ..., "retcode": ..., "jid": ...} (plus the raw
// return data with meta), {"failed": true} for expected minions that did
// not return (with expect) and for listed minions without a key.
func saltCmd(ctx context.Context, c *states.Call, mc MasterClient, job MasterJob, expect, meta bool, batch, subset any) ([]MinionReturn, error) {
	if batch != nil {
		return saltCmdBatch(ctx, c, mc, job, pyfmt.Str(batch))
	}
	if subset != nil && payload.Truthy(subset) {
		n, _ := payload.AsInt(subset)
		list, err := saltSubset(ctx, mc, job, int(n))
		if err != nil {
			return nil, err
		}
		if len(list) == 0 {
			return nil, nil
		}
		job.Tgt, job.TgtType = list, "list"
	}
	res, err := mc.RunJob(ctx, job)
	if err != nil {
		return nil, err
	}
	var out []MinionReturn
	seen := map[string]bool{}
	for _, r := range res.Returns {
		if r.Data == nil || seen[r.ID] {
			continue
		}
		seen[r.ID] = true
		ret, _ := r.Data.Get("return")
		m := payload.NewMap("ret", ret)
		for _, k := range []string{"out", "retcode", "jid"} {
			if v, ok := r.Data.Get(k); ok {
				m.Set(k, v)
			}
		}
		if meta {
			for _, it := range r.Data.Items() {
				m.SetKey(it.Key, it.Value)
			}
		}
		out = append(out, MinionReturn{ID: r.ID, Data: m})
	}
	var failed []string
	if expect {
		for _, id := range res.Minions {
			if !seen[id] {
				failed = append(failed, id)
			}
		}
	}
	for _, id := range res.Missing {
		if !seen[id] {
			failed = append(failed, id)
		}
	}
	sort.Strings(failed)
	for _, id := range failed {
		if seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, MinionReturn{ID: id, Data: payload.NewMap("failed", true)})
	}
	return out, nil
}

// saltSubset is LocalClient.cmd_subset's choice: sys.list_functions on
// the target, the minions shuffled, the first n offering the function.
func saltSubset(ctx context.Context, mc MasterClient, job MasterJob, n int) ([]any, error) {
	res, err := mc.RunJob(ctx, MasterJob{Tgt: job.Tgt, TgtType: job.TgtType, Fun: "sys.list_functions", Timeout: job.Timeout})
	if err != nil {
		return nil, err
	}
	rets := append([]MinionReturn(nil), res.Returns...)
	rand.Shuffle(len(rets), func(i, j int) { rets[i], rets[j] = rets[j], rets[i] })
	var out []any
	for _, r := range rets {
		if len(out) >= n {
			break
		}
		list, _ := r.Data.Get("return")
		l, _ := list.([]any)
		for _, f := range l {
			if f == job.Fun {
				out = append(out, r.ID)
				break
			}
		}
	}
	return out, nil
}

// saltBatchSize is salt.cli.batch.get_bnum; ok is false for bad batch data.
func saltBatchSize(batch string, n int) (int, bool) {
	if strings.Contains(batch, "%") {
		f, err := strconv.ParseFloat(strings.Trim(batch, "%"), 64)
		if err != nil {
			return 0, false
		}
		res := f / 100 * float64(n)
		if res < 1 {
			if res > 0 {
				return 1, true
			}
			return 0, true
		}
		return int(res), true
	}
	b, err := strconv.Atoi(strings.TrimSpace(batch))
	return b, err == nil
}

// saltCmdBatch is cmd_batch as saltutil.cmd sees it: the minions that
// answer test.ping run the job in groups of the batch size (gsalt runs
// the groups one after the other where Salt keeps a sliding window);
// each minion's entry is {"out": ..., "ret": its return}.
func saltCmdBatch(ctx context.Context, c *states.Call, mc MasterClient, job MasterJob, batch string) ([]MinionReturn, error) {
	ping, err := mc.RunJob(ctx, MasterJob{Tgt: job.Tgt, TgtType: job.TgtType, Fun: "test.ping", Timeout: job.Timeout})
	if err != nil {
		return nil, err
	}
	var up []string
	for _, r := range ping.Returns {
		up = append(up, r.ID)
	}
	sort.Strings(up)
	size, ok := saltBatchSize(batch, len(up))
	if !ok || size <= 0 {
		sbLog(c).Warn("Invalid batch data sent; data must be in the form of %10, 10% or 3", "batch", batch)
		return nil, nil
	}
	sbLog(c).Info("running the job in sequential batches (Salt keeps a sliding window)", "batch", size, "minions", len(up))
	var out []MinionReturn
	for i := 0; i < len(up); i += size {
		group := up[i:min(i+size, len(up))]
		tgt := make([]any, len(group))
		for j, id := range group {
			tgt[j] = id
		}
		part := job
		part.Tgt, part.TgtType = tgt, "list"
		res, err := mc.RunJob(ctx, part)
		if err != nil {
			return out, err
		}
		for _, r := range res.Returns {
			ret, _ := r.Data.Get("return")
			outName := "highstate"
			if rm, ok := ret.(*payload.Map); ok {
				if o, has := rm.Get("out"); has {
					outName = pyfmt.Str(o)
				}
			}
			out = append(out, MinionReturn{ID: r.ID, Data: payload.NewMap("out", outName, "ret", ret)})
		}
	}
	return out, nil
}

// joinIDs joins minion ids with ", ".
func joinIDs(ids []string) string { return strings.Join(ids, ", ") }

// sortedSet returns a set's members sorted (Salt joins Python sets, whose
// order is arbitrary).
func sortedSet(s map[string]bool) []string {
	out := make([]string, 0, len(s))
	for k := range s {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// saltState is salt.state: a state run (state.sls, state.highstate or
// state.top) on the targeted minions.
func saltState(ctx context.Context, c *states.Call) (states.Ret, error) {
	a := c.Args
	name := sbName(c)
	ret := states.Ret{Name: name, Result: states.True}
	cmdKw := payload.NewMap("arg", []any{}, "kwarg", payload.NewMap(), "ret", a.Get("ret"), "timeout", a.Get("timeout"))
	if v := a.Get("ret_config"); payload.Truthy(v) {
		cmdKw.Set("ret_config", v)
	}
	if v := a.Get("ret_kwargs"); payload.Truthy(v) {
		cmdKw.Set("ret_kwargs", v)
	}
	allowFail, ok, err := saltPyInt(a.Get("allow_fail"))
	if err != nil {
		return states.Ret{}, err
	}
	if !ok {
		ret.Result = states.False
		ret.Comment = "Passed invalid value for 'allow_fail', must be an int"
		return ret, nil
	}
	extra := sbLowKwargs(c, modules.Spec{Kwargs: true})
	cmdKw.Set("tgt_type", a.Get("tgt_type"))
	cmdKw.Set("ssh", a.Get("ssh"))
	if v, ok := extra.Get("roster"); ok {
		cmdKw.Set("roster", v)
	}
	expect := a.Get("expect_minions")
	cmdKw.Set("expect_minions", expect)
	args := []any{}
	var fun string
	highstate, top, sls := a.Get("highstate"), a.Get("top"), a.Get("sls")
	switch {
	case payload.Truthy(highstate):
		fun = "state.highstate"
	case payload.Truthy(top):
		fun = "state.top"
		args = append(args, top)
	case payload.Truthy(sls):
		fun = "state.sls"
		if l, isList := sls.([]any); isList {
			parts := make([]string, len(l))
			for i, e := range l {
				s, isStr := e.(string)
				if !isStr {
					return states.Ret{}, fmt.Errorf("%w: sequence item %d: expected str instance, %s found", modules.ErrArguments, i, saltPyType(e))
				}
				parts[i] = s
			}
			sls = strings.Join(parts, ",")
		}
		args = append(args, sls)
	default:
		ret.Comment = "No highstate or sls specified, no execution made"
		ret.Result = states.False
		return ret, nil
	}
	cmdKw.Set("arg", args)
	kwarg := cmdKw.Map("kwarg")
	test := a.Get("test")
	if test != nil || c.Test {
		if test != nil {
			kwarg.Set("test", test)
		} else {
			kwarg.Set("test", c.Test)
		}
	}
	if v := a.Get("pillar"); payload.Truthy(v) {
		kwarg.Set("pillar", v)
	}
	for _, k := range []string{"pillarenv", "saltenv", "exclude"} {
		if v := a.Get(k); v != nil {
			kwarg.Set(k, v)
		}
	}
	kwarg.Set("queue", a.Get("queue"))
	concurrent, isBool := a.Get("concurrent").(bool)
	if !isBool {
		ret.Comment = "Must pass in boolean for value of 'concurrent'"
		ret.Result = states.False
		return ret, nil
	}
	kwarg.Set("concurrent", concurrent)
	batch, subset := a.Get("batch"), a.Get("subset")
	if batch != nil {
		cmdKw.Set("batch", pyfmt.Str(batch))
	}
	if subset != nil {
		cmdKw.Set("subset", subset)
	}
	if a.Get("failhard") == true || payload.Truthy(saltOpt(c, "failhard")) {
		cmdKw.Set("failhard", true)
	}
	tgt := a.Get("tgt")
	var cmdRet []MinionReturn
	if payload.Text(saltOpt(c, "__role")) == "minion" && payload.Text(saltOpt(c, "file_client")) == "local" {
		cmdRet, err = saltStateLocal(ctx, c, fun, cmdKw)
		if err != nil {
			return states.Ret{}, err
		}
	} else {
		mc, ok := saltMaster(c)
		if !ok {
			return states.Ret{}, ErrNoMasterClient
		}
		if payload.Truthy(a.Get("ssh")) {
			return states.Ret{}, fmt.Errorf("%w: salt-ssh targets (ssh: True) are not supported by gsalt", modules.ErrExecution)
		}
		saltFireArgs(c, mc, payload.NewMap("type", "state", "tgt", tgt, "name", name, "args", cmdKw))
		jobArgs := append(append([]any{}, args...), kwarg.Clone().Set("__kwarg__", true))
		job := MasterJob{Tgt: tgt, TgtType: pyfmt.Str(a.Get("tgt_type")), Fun: fun, Arg: jobArgs,
			Ret: saltRetString(a.Get("ret")), Timeout: saltSeconds(a.Get("timeout")), Kwargs: saltClientKwargs(cmdKw)}
		cmdRet, err = saltCmd(ctx, c, mc, job, payload.Truthy(expect), false, batch, subset)
		if err != nil {
			return states.Ret{}, err
		}
	}
	failMinions, warning := saltFailMinions(a.Get("fail_minions"))
	if warning != "" {
		ret.Warnings = append(ret.Warnings, warning)
	}
	if len(cmdRet) == 0 && payload.Truthy(expect) {
		ret.Result = states.False
		ret.Comment = "No minions returned"
		return ret, nil
	}
	changes := payload.NewMap()
	fail := map[string]bool{}
	noChange := map[string]bool{}
	for _, mr := range cmdRet {
		mdata := mr.Data
		if mdata.Str("out") != "highstate" {
			sbLog(c).Warn("Output from salt state not highstate", "minion", mr.ID)
		}
		var mRet any = false
		if mdata.Has("return") && !mdata.Has("ret") {
			v, _ := mdata.Delete("return")
			mdata.Set("ret", v)
		}
		mState := true
		if payload.Truthy(mustGetAny(mdata, "failed")) {
			mState = false
		} else if v, has := mdata.Get("ret"); has {
			mRet = v
			mState = CheckStateResult(mRet, true)
		} else {
			mState = false
		}
		if !mState {
			if !failMinions[mr.ID] {
				fail[mr.ID] = true
			}
			changes.Set(mr.ID, mRet)
			continue
		}
		changed := false
		if rm, isMap := mRet.(*payload.Map); isMap {
			for _, it := range rm.Items() {
				if item, ok := it.Value.(*payload.Map); ok {
					if ch, has := item.Get("changes"); has && payload.Truthy(ch) {
						changes.Set(mr.ID, mRet)
						changed = true
						break
					}
				}
			}
		}
		if !changed {
			noChange[mr.ID] = true
		}
	}
	if changes.Len() > 0 {
		ret.Changes = payload.NewMap("out", "highstate", "ret", changes)
	}
	if int64(len(fail)) > allowFail {
		ret.Result = states.False
		ret.Comment = "Run failed on minions: " + joinIDs(sortedSet(fail))
	} else {
		ret.Comment = "States ran successfully."
		if changes.Len() > 0 {
			ret.Comment += " Updating " + joinIDs(changes.Keys()) + "."
		}
		if len(noChange) > 0 {
			ret.Comment += " No changes made to " + joinIDs(sortedSet(noChange)) + "."
		}
	}
	if (payload.Truthy(test) || c.Test) && changes.Len() > 0 && ret.Result == states.True {
		ret.Result = states.None
	}
	return ret, nil
}

// mustGetAny returns m[key] or nil.
func mustGetAny(m *payload.Map, key string) any {
	v, _ := m.Get(key)
	return v
}

// saltClientKwargs are the options of cmd_kw that travel in the publish's
// kwargs (returner configuration).
func saltClientKwargs(cmdKw *payload.Map) *payload.Map {
	out := payload.NewMap()
	for _, k := range []string{"ret_config", "ret_kwargs"} {
		if v, ok := cmdKw.Get(k); ok {
			out.Set(k, v)
		}
	}
	if out.Len() == 0 {
		return nil
	}
	return out
}

// saltStateLocal is salt.state on a masterless minion: the state
// function runs here with cmd_kw as keyword arguments.
func saltStateLocal(ctx context.Context, c *states.Call, fun string, cmdKw *payload.Map) ([]MinionReturn, error) {
	if c.Env == nil || c.Env.Registry == nil {
		return nil, fmt.Errorf("%w: '%s'", errNoFunction, fun)
	}
	kw := cmdKw.Clone()
	argV, _ := kw.Delete("arg")
	argList, _ := argV.([]any)
	joined := ""
	for _, e := range argList {
		joined += pyfmt.Str(e)
	}
	switch fun {
	case "state.top":
		kw.Set("topfn", joined)
	case "state.sls":
		kw.Set("mods", joined)
	}
	kwargV, _ := kw.Delete("kwarg")
	if km, ok := kwargV.(*payload.Map); ok {
		for _, it := range km.Items() {
			kw.SetKey(it.Key, it.Value)
		}
	}
	kw.Set("__kwarg__", true)
	res := c.Env.Registry.Execute(ctx, modules.Binder{}, c.Env, fun, []any{kw}, nil)
	outName := "highstate"
	if rm, ok := res.Return.(*payload.Map); ok {
		if o, has := rm.Get("out"); has {
			outName = pyfmt.Str(o)
		}
	}
	return []MinionReturn{{ID: c.Env.ID, Data: payload.NewMap("ret", res.Return, "out", outName)}}, nil
}

// saltFunction is salt.function: one execution function on the targeted
// minions.
func saltFunction(ctx context.Context, c *states.Call) (states.Ret, error) {
	a := c.Args
	name := sbName(c)
	ret := states.Ret{Name: name, Result: states.True}
	kwarg := a.Get("kwarg")
	if kwarg == nil {
		kwarg = payload.NewMap()
	}
	arg := a.Get("arg")
	if s, isStr := arg.(string); isStr {
		ret.Warnings = []string{"Please specify 'arg' as a list of arguments."}
		parts := strings.Fields(s)
		l := make([]any, len(parts))
		for i, p := range parts {
			l[i] = p
		}
		arg = l
	}
	argList, _ := arg.([]any)
	if !payload.Truthy(arg) {
		argList = []any{}
	}
	cmdKw := payload.NewMap("arg", argList, "kwarg", kwarg, "ret", a.Get("ret"), "timeout", a.Get("timeout"))
	batch, subset := a.Get("batch"), a.Get("subset")
	if batch != nil {
		cmdKw.Set("batch", pyfmt.Str(batch))
	}
	if subset != nil {
		cmdKw.Set("subset", subset)
	}
	cmdKw.Set("tgt_type", a.Get("tgt_type"))
	cmdKw.Set("ssh", a.Get("ssh"))
	extra := sbLowKwargs(c, modules.Spec{Kwargs: true})
	if v, ok := extra.Get("roster"); ok {
		cmdKw.Set("roster", v)
	}
	expect := a.Get("expect_minions")
	cmdKw.Set("expect_minions", expect)
	cmdKw.Set("_cmd_meta", true)
	if a.Get("failhard") == true || payload.Truthy(saltOpt(c, "failhard")) {
		cmdKw.Set("failhard", true)
	}
	if v := a.Get("ret_config"); payload.Truthy(v) {
		cmdKw.Set("ret_config", v)
	}
	if v := a.Get("ret_kwargs"); payload.Truthy(v) {
		cmdKw.Set("ret_kwargs", v)
	}
	tgt := a.Get("tgt")
	if c.Test {
		ret.Comment = fmt.Sprintf("Function %s would be executed on target %s", name, pyfmt.Str(tgt))
		ret.Result = states.None
		return ret, nil
	}
	mc, ok := saltMaster(c)
	if !ok {
		ret.Result = states.False
		ret.Comment = ErrNoMasterClient.Error()
		return ret, nil
	}
	var cmdRet []MinionReturn
	var err error
	if payload.Truthy(a.Get("ssh")) {
		err = errors.New("salt-ssh targets (ssh: True) are not supported by gsalt")
	} else {
		saltFireArgs(c, mc, payload.NewMap("type", "function", "tgt", tgt, "name", name, "args", cmdKw))
		jobArgs := append([]any{}, argList...)
		if km, isMap := kwarg.(*payload.Map); isMap && km.Len() > 0 {
			jobArgs = append(jobArgs, km.Clone().Set("__kwarg__", true))
		}
		job := MasterJob{Tgt: tgt, TgtType: pyfmt.Str(a.Get("tgt_type")), Fun: name, Arg: jobArgs,
			Ret: saltRetString(a.Get("ret")), Timeout: saltSeconds(a.Get("timeout")), Kwargs: saltClientKwargs(cmdKw)}
		cmdRet, err = saltCmd(ctx, c, mc, job, payload.Truthy(expect), true, batch, subset)
	}
	if err != nil {
		ret.Result = states.False
		ret.Comment = err.Error()
		return ret, nil
	}
	failMinions, warning := saltFailMinions(a.Get("fail_minions"))
	if warning != "" {
		ret.Warnings = append(ret.Warnings, warning)
	}
	failFunction := a.Get("fail_function")
	changes := payload.NewMap()
	fail := map[string]bool{}
	for _, mr := range cmdRet {
		mdata := mr.Data
		var mRet any = false
		if payload.Truthy(mustGetAny(mdata, "retcode")) {
			ret.Result = states.False
			fail[mr.ID] = true
		}
		var mFunc bool
		if payload.Truthy(mustGetAny(mdata, "failed")) {
			mFunc = false
		} else {
			if mdata.Has("return") && !mdata.Has("ret") {
				v, _ := mdata.Delete("return")
				mdata.Set("ret", v)
			}
			v, has := mdata.Get("ret")
			if !has {
				return states.Ret{}, fmt.Errorf("%w: 'ret'", errNoFunction)
			}
			mRet = v
			mFunc = true
			if payload.Truthy(failFunction) {
				ok, err := saltFailFunction(ctx, c, pyfmt.Str(failFunction), mRet)
				if err != nil {
					return states.Ret{}, err
				}
				mFunc = ok
			}
			if mRet == false {
				mFunc = false
			}
		}
		if !mFunc && !failMinions[mr.ID] {
			fail[mr.ID] = true
		}
		changes.Set(mr.ID, mRet)
	}
	if len(cmdRet) == 0 {
		ret.Result = states.False
		ret.Comment = "No minions responded"
		return ret, nil
	}
	if changes.Len() > 0 {
		ret.Changes = payload.NewMap("ret", changes)
	}
	if len(fail) > 0 {
		ret.Result = states.False
		ret.Comment = fmt.Sprintf("Running function %s failed on minions: %s", name, joinIDs(sortedSet(fail)))
	} else {
		ret.Comment = "Function ran successfully."
	}
	if changes.Len() > 0 {
		ret.Comment += fmt.Sprintf(" Function %s ran on %s.", name, joinIDs(changes.Keys()))
	}
	return ret, nil
}

// saltFailFunction is __salt__[fail_function](m_ret) on the master.
func saltFailFunction(ctx context.Context, c *states.Call, fun string, mRet any) (bool, error) {
	if c.Env == nil || c.Env.Registry == nil {
		return false, fmt.Errorf("%w: '%s'", errNoFunction, fun)
	}
	if _, ok := c.Env.Registry.Lookup(fun); !ok {
		return false, fmt.Errorf("%w: '%s'", errNoFunction, fun)
	}
	res := c.Env.Registry.Execute(ctx, modules.Binder{}, c.Env, fun, []any{mRet}, nil)
	if res.Retcode != 0 {
		return false, fmt.Errorf("%w: %s", modules.ErrExecution, pyfmt.Str(res.Return))
	}
	return payload.Truthy(res.Return), nil
}

// saltRunnerCall is saltutil.runner as salt.runner and
// salt.parallel_runners call it: arg and kwarg from the keyword
// arguments, saltenv for runners taking one, orchestration_jid for
// nested orchestrations, the args event, then the runner.
func saltRunnerCall(ctx context.Context, c *states.Call, mc MasterClient, name, user string, kw *payload.Map) (*payload.Map, error) {
	kw = kw.Clone()
	var arg []any
	if v, ok := kw.Delete("arg"); ok && v != nil {
		l, isList := v.([]any)
		if !isList {
			return nil, fmt.Errorf("%w: arg must be formatted as a list/tuple", modules.ErrInvocation)
		}
		arg = l
	}
	kwarg := payload.NewMap()
	if v, ok := kw.Delete("kwarg"); ok && v != nil {
		km, isMap := v.(*payload.Map)
		if !isMap {
			return nil, fmt.Errorf("%w: kwarg must be formatted as a dictionary", modules.ErrInvocation)
		}
		kwarg = km.Clone()
	}
	jid := saltOrchJID(c)
	if v, ok := kw.Delete("jid"); ok && jid == nil {
		jid = v
	}
	saltenv := c.Saltenv
	if v, ok := kw.Delete("saltenv"); ok && v != nil {
		saltenv = pyfmt.Str(v)
	}
	kw.Delete("full_return")
	for _, it := range kw.Items() {
		k := payload.KeyString(it.Key)
		if strings.HasPrefix(k, "__") {
			continue
		}
		kwarg.Set(k, it.Value)
	}
	params, ok := mc.FunctionParams("runner", name)
	if ok && containsStr(params, "saltenv") {
		kwarg.Set("saltenv", saltenv)
	}
	switch name {
	case "state.orchestrate", "state.orch", "state.sls":
		kwarg.Set("orchestration_jid", jid)
	}
	if payload.Truthy(jid) {
		argList := arg
		if argList == nil {
			argList = []any{}
		}
		if err := mc.FireEvent("salt/run/"+pyfmt.Str(jid)+"/args", payload.NewMap("type", "runner", "name", name,
			"args", argList, "kwargs", kwarg)); err != nil {
			sbLog(c).Warn("Failed to fire args event", "err", err)
		}
	}
	if !ok {
		return nil, fmt.Errorf("%w: '%s'", ErrMasterFunction, name)
	}
	return mc.RunRunner(ctx, name, arg, kwarg, user)
}

func containsStr(l []string, s string) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}

// saltRunner is salt.runner: a runner function on the master.
func saltRunner(ctx context.Context, c *states.Call, kw *payload.Map) (states.Ret, error) {
	name := sbName(c)
	if c.Test {
		return states.Ret{Name: name, Result: states.None, Comment: fmt.Sprintf("Runner function '%s' would be executed.", name)}, nil
	}
	mc, ok := saltMaster(c)
	if !ok {
		return states.Ret{}, ErrNoMasterClient
	}
	out, err := saltRunnerCall(ctx, c, mc, name, saltUser(c), kw)
	if err != nil {
		return states.Ret{}, err
	}
	return saltMasterRet(name, "Runner", out), nil
}

// saltMasterRet builds the salt.runner / salt.wheel return from the
// client's full return.
func saltMasterRet(name, kind string, out *payload.Map) states.Ret {
	rv, _ := out.Get("return")
	success := true
	if v, ok := out.Get("success"); ok {
		success = payload.Truthy(v)
	}
	if rm, ok := rv.(*payload.Map); ok && rm.Has("Error") {
		success = false
	}
	word := "executed"
	if !success {
		word = "failed"
	}
	return states.Ret{Name: name, Result: states.ResultOf(success), Changes: payload.NewMap("return", rv),
		Comment: fmt.Sprintf("%s function '%s' %s.", kind, name, word)}
}

// saltWheel is salt.wheel: a wheel function on the master.
func saltWheel(ctx context.Context, c *states.Call, kw *payload.Map) (states.Ret, error) {
	name := sbName(c)
	if c.Test {
		// Salt sets result to the tuple (None,), which the state output
		// unifier turns into True.
		return states.Ret{Name: name, Result: states.True, Comment: fmt.Sprintf("Wheel function '%s' would be executed.", name)}, nil
	}
	mc, ok := saltMaster(c)
	if !ok {
		return states.Ret{}, ErrNoMasterClient
	}
	jid := saltOrchJID(c)
	valid := payload.NewMap()
	for _, it := range kw.Items() {
		if !strings.HasPrefix(payload.KeyString(it.Key), "__") {
			valid.SetKey(it.Key, it.Value)
		}
	}
	params, known := mc.FunctionParams("wheel", name)
	if known && containsStr(params, "saltenv") {
		valid.Set("saltenv", c.Saltenv)
	}
	if payload.Truthy(jid) {
		if err := mc.FireEvent("salt/run/"+pyfmt.Str(jid)+"/args", payload.NewMap("type", "wheel", "name", name, "args", valid)); err != nil {
			sbLog(c).Warn("Failed to fire args event", "err", err)
		}
	}
	if !known {
		return states.Ret{}, fmt.Errorf("%w: '%s'", ErrMasterFunction, name)
	}
	out, err := mc.RunWheel(ctx, name, nil, valid, "UNKNOWN")
	if err != nil {
		return states.Ret{}, err
	}
	return saltMasterRet(name, "Wheel", out), nil
}

// saltParallelRunners is salt.parallel_runners: several runners at once.
func saltParallelRunners(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	runnersV := c.Args.Get("runners")
	if s, isStr := runnersV.(string); isStr {
		runnersV = payload.NewMap(s, []any{payload.NewMap(name, s)})
	}
	rm, ok := runnersV.(*payload.Map)
	if !ok {
		return states.Ret{Name: name, Result: states.False, Comment: "The runners parameter must be a string or dict."}, nil
	}
	mc, ok := saltMaster(c)
	if !ok {
		return states.Ret{}, ErrNoMasterClient
	}
	type job struct {
		id   string
		conf *payload.Map
	}
	var jobs []job
	for _, it := range rm.Items() {
		conf := payload.NewMap()
		if l, isList := it.Value.([]any); isList {
			for _, e := range l {
				if em, isMap := e.(*payload.Map); isMap {
					for _, kv := range em.Items() {
						conf.SetKey(kv.Key, kv.Value)
					}
				}
			}
		} else if m, isMap := it.Value.(*payload.Map); isMap {
			conf = m.Clone()
		}
		if !conf.Has("name") {
			conf.Set("name", it.Key)
		}
		jobs = append(jobs, job{id: payload.KeyString(it.Key), conf: conf})
	}
	outs := make([]*payload.Map, len(jobs))
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			kw := payload.NewMap()
			if km, ok := j.conf.Get("kwarg"); ok {
				if m, isMap := km.(*payload.Map); isMap {
					kw = m.Clone()
				}
			}
			// parallel_runners passes no __pub_user: the runs' user is
			// UNKNOWN.
			outs[i], errs[i] = saltRunnerCall(ctx, c, mc, pyfmt.Str(mustGetAny(j.conf, "name")), "UNKNOWN", kw)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if errors.Is(err, ErrMasterFunction) {
			// A KeyError, not a SaltException: the state raises.
			return states.Ret{}, err
		}
	}
	for _, err := range errs {
		if err != nil {
			return states.Ret{Name: name, Result: states.False, Changes: payload.NewMap(),
				Comment: "One of the runners raised an exception: " + err.Error()}, nil
		}
	}
	results := payload.NewMap()
	for i, j := range jobs {
		rv, _ := outs[i].Get("return")
		results.Set(j.id, rv)
	}
	highstate := true
	for _, it := range results.Items() {
		m, ok := it.Value.(*payload.Map)
		if !ok || m.Str("outputter") != "highstate" || !m.Has("data") {
			highstate = false
		}
	}
	ret := states.Ret{Name: name}
	var failed []string
	if highstate {
		changes := payload.NewMap()
		for _, it := range results.Items() {
			data := mustGetAny(it.Value.(*payload.Map), "data")
			if dm, ok := data.(*payload.Map); ok {
				if rc, _ := payload.AsInt(mustGetAny(dm, "retcode")); rc != 0 {
					failed = append(failed, payload.KeyString(it.Key))
				}
			}
			if ch := saltExtractChanges(data); payload.Truthy(ch) {
				changes.SetKey(it.Key, ch)
			}
		}
		ret.Changes = changes
		if len(failed) == 0 {
			ret.Comment = "All runner functions executed successfully."
		} else {
			color := payload.Truthy(saltOpt(c, "color")) || saltOpt(c, "color") == nil
			if payload.Truthy(saltOpt(c, "force_color")) {
				color = true
			} else if payload.Truthy(saltOpt(c, "no_color")) {
				color = false
			}
			var parts []string
			for _, id := range failed {
				v, _ := results.Get(id)
				parts = append(parts, fmt.Sprintf("Runner %s failed with return value:\n%s", id,
					output.Nested(v, output.Options{Color: color, NestedIndent: 2})))
			}
			ret.Comment = strings.Join(parts, "\n")
		}
	} else {
		for _, it := range results.Items() {
			if m, ok := it.Value.(*payload.Map); ok {
				if rc, _ := payload.AsInt(mustGetAny(m, "exit_code")); rc != 0 {
					failed = append(failed, payload.KeyString(it.Key))
				}
			}
		}
		switch len(failed) {
		case 0:
			ret.Comment = "All runner functions executed successfully."
		case 1:
			ret.Comment = fmt.Sprintf("Runner %s failed.", failed[0])
		default:
			ret.Comment = fmt.Sprintf("Runners %s failed.", strings.Join(failed, ", "))
		}
		ret.Changes = payload.NewMap("ret", results)
	}
	ret.Result = states.ResultOf(len(failed) == 0)
	return ret, nil
}

// saltExtractChanges is parallel_runners' extract_changes.
func saltExtractChanges(obj any) any {
	m, ok := obj.(*payload.Map)
	if !ok {
		return payload.NewMap()
	}
	if ch, has := m.Get("changes"); has {
		if cm, isMap := ch.(*payload.Map); isMap && cm.Str("out") == "highstate" && cm.Has("ret") {
			return mustGetAny(cm, "ret")
		}
		return ch
	}
	found := payload.NewMap()
	for _, it := range m.Items() {
		if ch := saltExtractChanges(it.Value); payload.Truthy(ch) {
			found.SetKey(it.Key, ch)
		}
	}
	return found
}

// saltWaitForEvent is salt.wait_for_event: block until an event matching
// name was seen for every id of id_list.
func saltWaitForEvent(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	ret := states.Ret{Name: name, Result: states.False}
	if c.Test {
		ret.Comment = fmt.Sprintf("Orchestration would wait for event '%s'", name)
		ret.Result = states.None
		return ret, nil
	}
	mc, ok := saltMaster(c)
	if !ok {
		return states.Ret{}, ErrNoMasterClient
	}
	if node := pyfmt.Str(c.Args.Get("node")); node != "master" {
		sbLog(c).Warn("wait_for_event watches the master event bus only", "node", node)
	}
	var idList []any
	switch x := c.Args.Get("id_list").(type) {
	case []any:
		idList = append(idList, x...)
	case nil:
	default:
		idList = []any{x}
	}
	eventID := pyfmt.Str(c.Args.Get("event_id"))
	timeout := saltSeconds(c.Args.Get("timeout"))
	events, stop, err := mc.WatchEvents(ctx, name)
	if err != nil {
		return states.Ret{}, err
	}
	defer stop()
	start := time.Now()
	deadline := start.Add(timeout)
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var seen []any
	timedOut := func() states.Ret {
		ret.Comment = "Timeout value reached."
		if len(seen) > 0 {
			ret.Changes = payload.NewMap("minions_seen", seen)
		}
		return ret
	}
	for {
		// Like Salt: take an event (waiting at most until the deadline),
		// note whether the time is up, handle the event, and only then
		// give up.
		var ev MasterEvent
		got := false
		select {
		case e, ok := <-events:
			if !ok {
				return states.Ret{}, errors.New("wait_for_event: the master event bus closed")
			}
			ev, got = e, true
		default:
		}
		if !got {
			select {
			case <-ctx.Done():
				return states.Ret{}, ctx.Err()
			case <-timer.C:
				return timedOut(), nil
			case e, ok := <-events:
				if !ok {
					return states.Ret{}, errors.New("wait_for_event: the master event bus closed")
				}
				ev = e
			}
		}
		late := time.Now().After(deadline)
		if target.Fnmatch(ev.Tag, name) && ev.Data != nil {
			val, _ := ev.Data.Get(eventID)
			if val == nil {
				if inner, ok := ev.Data.Get("data"); ok {
					if im, isMap := inner.(*payload.Map); isMap {
						val, _ = im.Get(eventID)
					}
				}
			}
			switch v := val.(type) {
			case nil:
				sbLog(c).Debug("wait_for_event: event identifier not in event; skipping", "event_id", eventID, "tag", ev.Tag)
			case []any:
				var keep []any
				for _, id := range idList {
					if saltContains(v, id) {
						seen = append(seen, id)
					} else {
						keep = append(keep, id)
					}
				}
				idList = keep
			default:
				for i, id := range idList {
					if saltPyEqual(id, v) {
						idList = append(idList[:i:i], idList[i+1:]...)
						seen = append(seen, v)
						break
					}
				}
			}
		}
		if len(idList) == 0 {
			ret.Result = states.True
			ret.Comment = fmt.Sprintf("All events seen in %s seconds.", pyfmt.FloatRepr(time.Since(start).Seconds()))
			if len(seen) > 0 {
				ret.Changes = payload.NewMap("minions_seen", seen)
			}
			return ret, nil
		}
		if late {
			return timedOut(), nil
		}
	}
}

// saltContains is Python's `x in list`.
func saltContains(l []any, x any) bool {
	for _, e := range l {
		if saltPyEqual(e, x) {
			return true
		}
	}
	return false
}

// saltPyEqual is Python's == on decoded values: numbers by value,
// everything else by its repr.
func saltPyEqual(a, b any) bool {
	fa, aNum := saltNumber(a)
	fb, bNum := saltNumber(b)
	if aNum && bNum {
		return fa == fb
	}
	if aNum != bNum {
		return false
	}
	return pyfmt.Repr(a) == pyfmt.Repr(b)
}

// saltNumber returns a number's value (bools count, as in Python).
func saltNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case float64:
		return x, true
	case string, nil:
		return 0, false
	}
	if n, ok := payload.AsInt(v); ok {
		return float64(n), true
	}
	return 0, false
}
