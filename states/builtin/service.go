package builtin

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/gsalt/gsalt/modules"
	mbuiltin "github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file is Salt's service state module (salt/states/service.py):
// service.running, dead, enabled, disabled, masked, unmasked and mod_watch
// over whatever service.* execution functions the minion has (gsalt's are
// systemd's).

// serviceStates returns the service state functions.
func serviceStates() []states.Function {
	runDead := modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("enable", nil), sbOpt("sig", nil), sbOpt("init_delay", nil)}, Kwargs: true}
	nameKw := modules.Spec{Params: []modules.Param{sbReq("name")}, Kwargs: true}
	mask := modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("runtime", false)}}
	watch := modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("sfun", nil), sbOpt("sig", nil), sbOpt("reload", false),
		sbOpt("full_restart", false), sbOpt("init_delay", nil), sbOpt("force", false)}, Kwargs: true}
	return []states.Function{
		{Name: "service.running", Spec: runDead, Fn: svcRunning, Watch: svcModWatch},
		{Name: "service.dead", Spec: runDead, Fn: svcDead, Watch: svcModWatch},
		{Name: "service.enabled", Spec: nameKw, Fn: svcEnabledState},
		{Name: "service.disabled", Spec: nameKw, Fn: svcDisabledState},
		{Name: "service.masked", Spec: mask, Fn: func(ctx context.Context, c *states.Call) (states.Ret, error) {
			return pkgsToRet(svcMaskState(ctx, c, sbName(c), payload.Truthy(c.Args.Get("runtime")), true)), nil
		}},
		{Name: "service.unmasked", Spec: mask, Fn: func(ctx context.Context, c *states.Call) (states.Ret, error) {
			return pkgsToRet(svcMaskState(ctx, c, sbName(c), payload.Truthy(c.Args.Get("runtime")), false)), nil
		}},
		{Name: "service.mod_watch", Spec: watch, Fn: svcModWatch},
		{Name: "service.mod_beacon", Spec: nameKw, Fn: beaconModBeacon("service", "beacon", []string{"running", "dead"}, svcBeaconKwargs)},
	}
}

// svcBeaconKwargs is the beacon.present of service.mod_beacon: a service
// beacon on the service, with onchangeonly, delay and emitatstartup from
// beacon_data, and uncleanshutdown set from emitatstartup as Salt 3006
// does.
func svcBeaconKwargs(name, _ string, _, data *payload.Map) (*payload.Map, error) {
	services := &payload.Map{}
	services.Set(name, payload.NewMap("onchangeonly", beaconGet(data, "onchangeonly", true), "delay", beaconGet(data, "delay", int64(0)),
		"emitatstartup", beaconGet(data, "emitatstartup", false), "uncleanshutdown", beaconGet(data, "emitatstartup", nil)))
	return payload.NewMap("services", services, "interval", beaconGet(data, "interval", int64(60)), "beacon_module", "service"), nil
}

// svcst carries one service state call.
type svcst struct {
	ctx context.Context
	c   *states.Call
	kw  *payload.Map
}

func newSvcst(ctx context.Context, c *states.Call) *svcst {
	return &svcst{ctx: ctx, c: c, kw: pkgsKwargs(c)}
}

// call runs __salt__[fun](name, *args, **kw).
func (s *svcst) call(fun string, args []any, kw *payload.Map) (any, error) {
	return sbExec(s.ctx, s.c, fun, args, kw)
}

// truth calls a function returning a bool; errors other than
// CommandExecutionError are returned, which the state reports as an
// exception.
func (s *svcst) truth(fun string, args []any, kw *payload.Map) (bool, error) {
	v, err := s.call(fun, args, kw)
	return payload.Truthy(v), err
}

func (s *svcst) has(fun string) bool { return pkgsHas(s.c, fun) }

// systemdOnly is _get_systemd_only: the no_block/unmask/unmask_runtime
// kwargs fun accepts, or warnings when systemd is not booted.
func (s *svcst) systemdOnly(fun string) (*payload.Map, []string) {
	out := &payload.Map{}
	var warnings []string
	if s.c.Env == nil || s.c.Env.Registry == nil {
		return out, nil
	}
	fn, ok := s.c.Env.Registry.Lookup(fun)
	if !ok || mbuiltin.DebianServiceActive(s.c.Env) {
		// debian_service's start, stop and status (what this is asked
		// about) take none of these arguments: no warning either
		return out, nil
	}
	booted := mbuiltin.SystemdBooted(s.c.Env)
	for _, arg := range []string{"no_block", "unmask", "unmask_runtime"} {
		v, given := s.kw.Get(arg)
		if !given {
			continue
		}
		valid := false
		for _, p := range fn.Spec.Params {
			if p.Name == arg {
				valid = true
			}
		}
		if !valid {
			continue
		}
		if booted {
			out.Set(arg, v)
		} else {
			warnings = append(warnings, fmt.Sprintf("The '%s' argument is not supported by this platform", arg))
		}
	}
	return out, warnings
}

// svcAddWarnings is _add_warnings.
func svcAddWarnings(ret pkgsRet, warnings []string) {
	cur, _ := kwv(ret, "warnings").([]any)
	for _, w := range warnings {
		dup := false
		for _, x := range cur {
			if x == w {
				dup = true
			}
		}
		if !dup {
			cur = append(cur, w)
		}
	}
	ret.Set("warnings", cur)
}

// svcUpdate is dict.update.
func svcUpdate(ret, other pkgsRet) {
	for _, it := range other.Items() {
		ret.SetKey(it.Key, it.Value)
	}
}

// available is _available: false sets the "not available" result.
func (s *svcst) available(name string, ret pkgsRet) (bool, error) {
	avail := false
	switch {
	case s.has("service.available"):
		v, err := s.truth("service.available", []any{name}, nil)
		if err != nil {
			return false, err
		}
		avail = v
	case s.has("service.get_all"):
		v, err := s.call("service.get_all", nil, nil)
		if err != nil {
			return false, err
		}
		l, _ := v.([]any)
		for _, x := range l {
			if x == name {
				avail = true
			}
		}
	}
	if !avail {
		ret.Set("result", false)
		ret.Set("comment", fmt.Sprintf("The named service %s is not available", name))
	}
	return avail, nil
}

// offline is _offline.
func (s *svcst) offline() (bool, error) {
	if !s.has("service.offline") {
		return false, nil
	}
	return s.truth("service.offline", nil, nil)
}

// startedWord picks the comment variant for started True / None / False.
func startedWord(started any, running, desired, dead string) string {
	switch started {
	case true:
		return running
	case nil:
		return desired
	}
	return dead
}

// bootToggle names what differs between Salt's _enable and _disable:
// the words of their comments, the kwargs the status query gets, the
// result when the service is not available, and whether an execution
// error of the toggle itself becomes part of the failure comment.
type bootToggle struct {
	verb, past, title string // "enable", "enabled", "Enable"
	queryKw           bool   // pass the state's kwargs to service.<past>
	unavailableTrue   bool   // _disable sets result True for a missing service
	catchToggleErr    bool   // _enable reports service.enable's CommandExecutionError
	failed            [3]string
}

var (
	bootEnable = bootToggle{
		verb: "enable", past: "enabled", title: "Enable",
		queryKw: true, catchToggleErr: true,
		failed: [3]string{
			"Failed when setting service %s to start at boot, but the service is running",
			"Failed when setting service %s to start at boot, but the service was already running",
			"Failed when setting service %s to start at boot, and the service is dead",
		},
	}
	bootDisable = bootToggle{
		verb: "disable", past: "disabled", title: "Disable",
		unavailableTrue: true,
		failed: [3]string{
			"Failed when setting service %s to not start at boot, and is running",
			"Failed when setting service %s to not start at boot, but the service was already running",
			"Failed when setting service %s to not start at boot, and the service is dead",
		},
	}
)

// enable is _enable.
func (s *svcst) enable(name string, started any, result any) (pkgsRet, error) {
	return s.setBoot(bootEnable, name, started, result)
}

// disable is _disable.
func (s *svcst) disable(name string, started any, result any) (pkgsRet, error) {
	return s.setBoot(bootDisable, name, started, result)
}

// setBoot is the body _enable and _disable share, with what differs in t.
func (s *svcst) setBoot(t bootToggle, name string, started any, result any) (pkgsRet, error) {
	ret := &payload.Map{}
	ok, err := s.available(name, ret)
	if err != nil {
		if pkgsIsExecErr(err) {
			return payload.NewMap("result", false, "comment", sbErrText(err)), nil
		}
		return nil, err
	}
	if !ok {
		if t.unavailableTrue {
			ret.Set("result", true)
		}
		return ret, nil
	}
	ret.Set("result", result)
	word := func(format string) string {
		return startedWord(started,
			fmt.Sprintf(format, name, "is running"),
			fmt.Sprintf(format, name, "is in the desired state"),
			fmt.Sprintf(format, name, "is dead"))
	}
	toggleFn, queryFn := "service."+t.verb, "service."+t.past
	if !s.has(toggleFn) || !s.has(queryFn) {
		ret.Set("comment", startedWord(started,
			fmt.Sprintf("%s is not available on this minion, service %s started", t.title, name),
			fmt.Sprintf("%s is not available on this minion, service %s is in the desired state", t.title, name),
			fmt.Sprintf("%s is not available on this minion, service %s is dead", t.title, name)))
		return ret, nil
	}
	var queryKw *payload.Map
	if t.queryKw {
		queryKw = s.kw
	}
	before, err := s.truth(queryFn, []any{name}, queryKw)
	if err != nil {
		return nil, err
	}
	if before {
		if started == nil {
			ret.Set("changes", &payload.Map{})
		}
		ret.Set("comment", word("Service %s is already "+t.past+", and %s"))
		return ret, nil
	}
	if s.c.Test {
		ret.Set("result", nil)
		ret.Set("comment", fmt.Sprintf("Service %s set to be %s", name, t.past))
		return ret, nil
	}
	toggleError := ""
	done, err := s.truth(toggleFn, []any{name}, s.kw)
	switch {
	case err != nil && t.catchToggleErr && pkgsIsExecErr(err):
		toggleError = sbErrText(err)
	case err != nil:
		return nil, err
	case done:
		ch := &payload.Map{}
		after, err := s.truth(queryFn, []any{name}, queryKw)
		if err != nil {
			return nil, err
		}
		if before != after {
			ch.Set(name, true)
		}
		ret.Set("changes", ch)
		ret.Set("comment", word("Service %s has been "+t.past+", and %s"))
		return ret, nil
	}
	ret.Set("result", false)
	comment := startedWord(started,
		fmt.Sprintf(t.failed[0], name), fmt.Sprintf(t.failed[1], name), fmt.Sprintf(t.failed[2], name))
	if toggleError != "" {
		comment += ". Additional information follows:\n\n" + toggleError
	}
	ret.Set("comment", comment)
	return ret, nil
}

// toggle runs _enable (enable true) or _disable (enable false) and merges
// the result into ret; enable nil does nothing.
func (s *svcst) toggle(ret pkgsRet, name string, enable any, started, result any) error {
	var r pkgsRet
	var err error
	switch enable {
	case true:
		r, err = s.enable(name, started, result)
	case false:
		r, err = s.disable(name, started, result)
	default:
		return nil
	}
	if err != nil {
		return err
	}
	svcUpdate(ret, r)
	return nil
}

// svcEnableArg converts a string enable argument with is_true.
func svcEnableArg(v any) any {
	if s, ok := v.(string); ok {
		return modules.IsTrue(s)
	}
	if v == nil {
		return nil
	}
	return payload.Truthy(v)
}

// sleep waits init_delay seconds (or until ctx ends).
func (s *svcst) sleep(delay any) {
	f, ok := delay.(float64)
	if !ok {
		n, isInt := payload.AsInt(delay)
		if !isInt || n <= 0 {
			return
		}
		f = float64(n)
	}
	if f <= 0 {
		return
	}
	select {
	case <-s.ctx.Done():
	case <-time.After(time.Duration(f * float64(time.Second))):
	}
}

func svcRunning(ctx context.Context, c *states.Call) (states.Ret, error) {
	ret, err := newSvcst(ctx, c).running()
	if err != nil {
		return states.Ret{}, err
	}
	return pkgsToRet(ret), nil
}

func (s *svcst) running() (pkgsRet, error) {
	p, done, err := s.prologue("started")
	if done || err != nil {
		return p.ret, err
	}
	ret, name, enable, sig, initDelay := p.ret, p.name, p.enable, p.sig, p.initDelay
	before, beforeEnable, err := s.observe(name, sig, p.statusKw)
	if err != nil {
		return nil, err
	}
	unmaskComment := ""
	if payload.Truthy(kwv(s.kw, "unmask")) {
		r := svcMaskState(s.ctx, s.c, name, payload.Truthy(kwv(s.kw, "unmask_runtime")), false)
		unmaskComment = payload.Text(kwv(r, "comment"))
	}
	joinNonEmpty := func(parts ...string) string {
		var out []string
		for _, p := range parts {
			if p != "" {
				out = append(out, p)
			}
		}
		return strings.Join(out, "\n")
	}
	if before {
		ret.Set("comment", joinNonEmpty(fmt.Sprintf("The service %s is already running", name), unmaskComment))
		return ret, s.enforceEnable(ret, name, enable, beforeEnable)
	}
	if s.c.Test {
		ret.Set("result", nil)
		ret.Set("comment", joinNonEmpty(fmt.Sprintf("Service %s is set to start", name), unmaskComment))
		return ret, nil
	}
	startKw, warnings := s.systemdOnly("service.start")
	if len(warnings) > 0 {
		svcAddWarnings(ret, warnings)
	}
	started, err := s.truth("service.start", []any{name}, startKw)
	if err != nil {
		return s.excRet(ret, err)
	}
	if !started {
		ret.Set("result", false)
		ret.Set("comment", fmt.Sprintf("Service %s failed to start", name))
		return ret, s.toggle(ret, name, enable, false, false)
	}
	s.sleep(initDelay)
	after, afterEnable, err := s.observe(name, sig, p.statusKw)
	if err != nil {
		return nil, err
	}
	if (beforeEnable != afterEnable || before != after) && !payload.Truthy(kwv(ret, "changes")) {
		ret.Map("changes").Set(name, after)
	}
	if after {
		ret.Set("comment", fmt.Sprintf("Started service %s", name))
	} else {
		ret.Set("comment", fmt.Sprintf("Service %s failed to start", name))
		ret.Set("result", false)
	}
	if err := s.toggle(ret, name, enable, after, after); err != nil {
		return nil, err
	}
	if payload.Truthy(initDelay) {
		ret.Set("comment", fmt.Sprintf("%s\nDelayed return for %s seconds", payload.Text(kwv(ret, "comment")), payload.Text(initDelay)))
	}
	if payload.Truthy(kwv(s.kw, "unmask")) {
		ret.Set("comment", payload.Text(kwv(ret, "comment"))+"\n"+unmaskComment)
	}
	return ret, nil
}

// svcPrologue is what running and dead share before they look at the
// service: the checked arguments and the return being built.
type svcPrologue struct {
	ret                    pkgsRet
	name                   string
	enable, sig, initDelay any
	statusKw               *payload.Map
}

// prologue checks the arguments, offline mode and whether the service
// exists; done means ret is the final answer. would is the verb of the
// test-mode comment of a missing service ("started", "stopped").
func (s *svcst) prologue(would string) (svcPrologue, bool, error) {
	a := s.c.Args
	p := svcPrologue{name: sbName(s.c)}
	p.ret = pkgsNewRet(p.name, true, "")
	ret := p.ret
	if s.kw.Has("enabled") {
		ret.Set("result", false)
		ret.Set("comment", fmt.Sprintf(`Service %s uses non-existent option "enabled".  Perhaps "enable" option was intended?`, p.name))
		return p, true, nil
	}
	p.enable = svcEnableArg(a.Get("enable"))
	p.sig, p.initDelay = a.Get("sig"), a.Get("init_delay")
	if off, err := s.offline(); err != nil {
		p.ret, err = s.excRet(ret, err)
		return p, true, err
	} else if off {
		ret.Set("comment", "Running in OFFLINE mode. Nothing to do")
		return p, true, nil
	}
	ok, err := s.available(p.name, ret)
	if err != nil {
		p.ret, err = s.excRet(ret, err)
		return p, true, err
	}
	if !ok {
		if s.c.Test {
			ret.Set("result", nil)
			ret.Set("comment", fmt.Sprintf("Service %s not present; if created in this state run, it would have been %s", p.name, would))
		} else if would == "stopped" {
			ret.Set("result", true)
		}
		return p, true, nil
	}
	statusKw, warnings := s.systemdOnly("service.status")
	if len(warnings) > 0 {
		svcAddWarnings(ret, warnings)
	}
	p.statusKw = statusKw
	return p, false, nil
}

// observe returns service.status (with sig when not nil) and
// service.enabled (true where the platform has no such function).
func (s *svcst) observe(name string, sig any, statusKw *payload.Map) (status, enabled bool, err error) {
	args := []any{name}
	if sig != nil {
		args = append(args, sig)
	}
	if status, err = s.truth("service.status", args, statusKw); err != nil {
		return false, false, err
	}
	enabled = true
	if s.has("service.enabled") {
		if enabled, err = s.truth("service.enabled", []any{name}, nil); err != nil {
			return false, false, err
		}
	}
	return status, enabled, nil
}

// enforceEnable enables or disables a service already in the wanted
// run state when enable asks for the other boot state.
func (s *svcst) enforceEnable(ret pkgsRet, name string, enable any, enabled bool) error {
	switch {
	case enable == true && !enabled:
		return s.toggle(ret, name, true, nil, true)
	case enable == false && enabled:
		return s.toggle(ret, name, false, nil, true)
	}
	return nil
}

// excRet turns a CommandExecutionError into a False result with its text;
// other errors propagate.
func (s *svcst) excRet(ret pkgsRet, err error) (pkgsRet, error) {
	if pkgsIsExecErr(err) {
		ret.Set("result", false)
		ret.Set("comment", sbErrText(err))
		return ret, nil
	}
	return nil, err
}

func svcDead(ctx context.Context, c *states.Call) (states.Ret, error) {
	ret, err := newSvcst(ctx, c).dead()
	if err != nil {
		return states.Ret{}, err
	}
	return pkgsToRet(ret), nil
}

func (s *svcst) dead() (pkgsRet, error) {
	p, done, err := s.prologue("stopped")
	if done || err != nil {
		return p.ret, err
	}
	ret, name, enable, sig, initDelay := p.ret, p.name, p.enable, p.sig, p.initDelay
	before, beforeEnable, err := s.observe(name, sig, p.statusKw)
	if err != nil {
		return nil, err
	}
	if !before {
		ret.Set("comment", fmt.Sprintf("The service %s is already dead", name))
		return ret, s.enforceEnable(ret, name, enable, beforeEnable)
	}
	if s.c.Test {
		ret.Set("result", nil)
		ret.Set("comment", fmt.Sprintf("Service %s is set to be killed", name))
		return ret, nil
	}
	stopKw, warnings := s.systemdOnly("service.stop")
	if len(warnings) > 0 {
		svcAddWarnings(ret, warnings)
	}
	stopped, err := s.truth("service.stop", []any{name}, stopKw)
	if err != nil {
		return nil, err
	}
	if !stopped {
		ret.Set("result", false)
		ret.Set("comment", fmt.Sprintf("Service %s failed to die", name))
		return ret, s.toggle(ret, name, enable, true, false)
	}
	s.sleep(initDelay)
	after, afterEnable, err := s.observe(name, nil, p.statusKw)
	if err != nil {
		return nil, err
	}
	if (beforeEnable != afterEnable || before != after) && !payload.Truthy(kwv(ret, "changes")) {
		ret.Map("changes").Set(name, after)
	}
	if after {
		ret.Set("result", false)
		ret.Set("comment", fmt.Sprintf("Service %s failed to die", name))
	} else {
		ret.Set("comment", fmt.Sprintf("Service %s was killed", name))
	}
	if err := s.toggle(ret, name, enable, after, !after); err != nil {
		return nil, err
	}
	return ret, nil
}

func svcEnabledState(ctx context.Context, c *states.Call) (states.Ret, error) {
	s := newSvcst(ctx, c)
	name := sbName(c)
	ret := pkgsNewRet(name, true, "")
	r, err := s.enable(name, nil, true)
	if err != nil {
		return states.Ret{}, err
	}
	svcUpdate(ret, r)
	if c.Test && kwv(ret, "comment") == fmt.Sprintf("The named service %s is not available", name) {
		ret.Set("result", nil)
		ret.Set("comment", fmt.Sprintf("Service %s not present; if created in this state run, it would have been enabled", name))
	}
	return pkgsToRet(ret), nil
}

func svcDisabledState(ctx context.Context, c *states.Call) (states.Ret, error) {
	s := newSvcst(ctx, c)
	name := sbName(c)
	ret := pkgsNewRet(name, true, "")
	r, err := s.disable(name, nil, true)
	if err != nil {
		return states.Ret{}, err
	}
	svcUpdate(ret, r)
	return pkgsToRet(ret), nil
}

// svcMaskState is service.masked (mask true) and service.unmasked.
func svcMaskState(ctx context.Context, c *states.Call, name string, runtime, mask bool) pkgsRet {
	s := newSvcst(ctx, c)
	ret := pkgsNewRet(name, true, "")
	if !s.has("service.masked") {
		ret.Set("comment", "Service masking not available on this minion")
		ret.Set("result", false)
		return ret
	}
	maskType, action := "masked", "unmasked"
	if runtime {
		maskType, action = "runtime masked", "runtime unmasked"
	}
	expected := payload.NewMap(maskType, payload.NewMap("old", !mask, "new", mask))
	fail := func(err error) pkgsRet {
		ret.Set("result", false)
		ret.Set("comment", sbErrText(err))
		return ret
	}
	isMasked, err := s.truth("service.masked", []any{name, runtime}, nil)
	if err != nil {
		return fail(err)
	}
	if isMasked == mask {
		if mask {
			ret.Set("comment", fmt.Sprintf("Service %s is already %s", name, maskType))
		} else {
			ret.Set("comment", fmt.Sprintf("Service %s was already %s", name, action))
		}
		return ret
	}
	if c.Test {
		ret.Set("result", nil)
		ret.Set("changes", expected)
		if mask {
			ret.Set("comment", fmt.Sprintf("Service %s would be %s", name, maskType))
		} else {
			ret.Set("comment", fmt.Sprintf("Service %s would be %s", name, action))
		}
		return ret
	}
	fun := "service.unmask"
	if mask {
		fun = "service.mask"
	}
	if _, err := s.call(fun, []any{name, runtime}, nil); err != nil {
		return fail(err)
	}
	now, err := s.truth("service.masked", []any{name, runtime}, nil)
	if err != nil {
		return fail(err)
	}
	switch {
	case now == mask && mask:
		ret.Set("changes", expected)
		ret.Set("comment", fmt.Sprintf("Service %s was %s", name, maskType))
	case now == mask:
		ret.Set("changes", expected)
		ret.Set("comment", fmt.Sprintf("Service %s was %s", name, action))
	case mask:
		ret.Set("comment", fmt.Sprintf("Failed to mask service %s", name))
	default:
		ret.Set("comment", fmt.Sprintf("Failed to unmask service %s", name))
	}
	return ret
}

// svcModWatch is service.mod_watch: restart (or reload, or start) a
// running service, stop a dead one, after a watched state changed.
func svcModWatch(ctx context.Context, c *states.Call) (states.Ret, error) {
	s := newSvcst(ctx, c)
	name := sbName(c)
	a := c.Args
	sfun := ""
	if v := a.Get("sfun"); v != nil {
		sfun = payload.Text(v)
	} else if c.Low != nil && c.Low.Str("sfun") != "" {
		sfun = c.Low.Str("sfun")
	} else if c.Fun != "mod_watch" {
		sfun = c.Fun
	}
	for _, k := range []string{"sfun", "reload", "full_restart", "init_delay", "force"} {
		s.kw.Delete(k)
	}
	sig := a.Get("sig")
	ret := pkgsNewRet(name, true, "")
	statusKw, warnings := s.systemdOnly("service.status")
	if len(warnings) > 0 {
		svcAddWarnings(ret, warnings)
	}
	var fun, verb, past string
	switch sfun {
	case "dead":
		verb, past = "stop", "stopped"
		up, err := s.truth("service.status", []any{name, sig}, statusKw)
		if err != nil {
			return states.Ret{}, err
		}
		if !up {
			ret.Set("comment", "Service is already "+past)
			return pkgsToRet(ret), nil
		}
		fun = "service.stop"
	case "running":
		up, err := s.truth("service.status", []any{name, sig}, statusKw)
		if err != nil {
			return states.Ret{}, err
		}
		switch {
		case up && s.has("service.reload") && payload.Truthy(a.Get("reload")):
			if s.has("service.force_reload") && payload.Truthy(a.Get("force")) {
				fun, verb = "service.force_reload", "forcefully reload"
			} else {
				fun, verb = "service.reload", "reload"
			}
		case up && s.has("service.full_restart") && payload.Truthy(a.Get("full_restart")):
			fun, verb = "service.full_restart", "fully restart"
		case up:
			fun, verb = "service.restart", "restart"
		default:
			fun, verb = "service.start", "start"
		}
		past = verb + "ed"
	default:
		ret.Set("comment", fmt.Sprintf("Unable to trigger watch for service.%s", sfunOrNone(sfun)))
		ret.Set("result", false)
		return pkgsToRet(ret), nil
	}
	if c.Test {
		ret.Set("result", nil)
		ret.Set("comment", "Service is set to be "+past)
		return pkgsToRet(ret), nil
	}
	if verb == "start" && s.has("service.stop") {
		if _, err := s.call("service.stop", []any{name}, nil); err != nil && !pkgsIsExecErr(err) {
			return states.Ret{}, err
		}
	}
	funKw, warnings := s.systemdOnly(fun)
	if len(warnings) > 0 {
		svcAddWarnings(ret, warnings)
	}
	res, err := s.call(fun, []any{name}, funKw)
	if err != nil {
		if pkgsIsExecErr(err) {
			ret.Set("result", false)
			ret.Set("comment", sbErrText(err))
			return pkgsToRet(ret), nil
		}
		return states.Ret{}, err
	}
	s.sleep(a.Get("init_delay"))
	ok := payload.Truthy(res)
	ret.Set("changes", payload.NewMap(name, res))
	ret.Set("result", res)
	if ok {
		ret.Set("comment", "Service "+past)
	} else {
		ret.Set("comment", fmt.Sprintf("Failed to %s the service", verb))
	}
	return pkgsToRet(ret), nil
}

func sfunOrNone(s string) string {
	if s == "" {
		return "None"
	}
	return s
}
