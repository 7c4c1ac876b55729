package reactor

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"

	saltjid "github.com/gsalt/gsalt/internal/jid"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/master"
	mbuiltin "github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/wire/payload"
)

// Reaction types (the part of a reaction's key before the first dot).
const (
	TypeLocal  = "local"
	TypeRunner = "runner"
	TypeWheel  = "wheel"
	TypeCaller = "caller"
)

// EventUser is the user runner and wheel reactions run as (Salt's
// ReactWrap.event_user). The reactor ignores events whose data has this
// user, so the salt/run/<jid>/new and ret events of its own runners do not
// trigger reactions.
const EventUser = "Reactor"

// reactorInternal reports the low chunk keys Salt's legacy runner/wheel
// argument matching never treats as arguments (REACTOR_INTERNAL_KEYWORDS).
func reactorInternal(k string) bool {
	switch k {
	case "__id__", "__sls__", "name", "order", "fun", "key", "state":
		return true
	}
	return false
}

// Reaction is a low chunk turned into a client call, as Salt's ReactWrap.run
// builds it.
type Reaction struct {
	// Type is local, runner, wheel or caller.
	Type string
	// ID and SLS name the reaction (__id__ and __sls__); Fun is the
	// function ("cmd.run", "state.orchestrate").
	ID, SLS, Fun string
	// Publish is the job of a local reaction: target, function, the
	// arguments with the keyword arguments packed as a trailing
	// {"__kwarg__": true, ...} map, ret, jid, timeout, and the remaining
	// low keys as the publish kwargs, exactly as Salt's LocalClient.cmd_async
	// sends them.
	Publish master.PublishRequest
	// Arg and Kwarg are the positional and keyword arguments of a runner,
	// wheel or caller reaction.
	Arg   []any
	Kwarg *payload.Map
	// User is the user runner and wheel reactions run as (EventUser).
	User string
	// Warnings are the warnings Salt logs while building the reaction
	// (arg/kwarg ignored because args is present).
	Warnings []string
	// Notes are gsalt's own remarks (options gsalt does not implement).
	Notes []string
}

// Param is one parameter of a runner or wheel function, in Python order.
type Param struct {
	Name string
	// Default is the value used when the parameter is not given; Required
	// parameters have none.
	Default  any
	Required bool
}

// Signature is a runner or wheel function's Python signature, needed for
// legacy reactions that give arguments at the top level of the reaction.
type Signature struct {
	Params []Param
	// VarKwargs is true when the function takes **kwargs.
	VarKwargs bool
}

// SignatureFunc returns the signature of a function, or false when there
// is no such function.
type SignatureFunc func(fun string) (Signature, bool)

// Builder turns low chunks into reactions like Salt's ReactWrap.run.
type Builder struct {
	// Runners and Wheels look up function signatures for legacy runner and
	// wheel reactions; nil means no function is available.
	Runners, Wheels SignatureFunc
	// Timeout is the master's timeout option, the publish timeout of
	// local reactions that give none or an unusable one (Salt's
	// LocalClient._get_timeout).
	Timeout int
}

// Build returns the reaction for one low chunk. An unknown type fails with
// ErrUnknownType (Salt then skips the event's remaining reactions); a
// reaction Salt refuses to run fails with an error wrapping ErrReaction.
func (b Builder) Build(low *payload.Map) (*Reaction, error) {
	state := low.Str("state")
	rx := &Reaction{Type: state, ID: pyfmt.Str(mapGet(low, "__id__")), SLS: low.Str("__sls__"), Fun: low.Str("fun")}
	switch state {
	case TypeLocal, TypeRunner, TypeWheel, TypeCaller:
	default:
		return nil, fmt.Errorf("%w: ReactWrap is missing a wrapper function for '%s' (reaction '%s')", ErrUnknownType, state, rx.ID)
	}
	fail := func(format string, a ...any) error {
		msg := fmt.Sprintf("Reactor '%s' failed to execute %s '%s'", rx.ID, state, rx.Fun)
		if format != "" {
			msg += ": " + fmt.Sprintf(format, a...)
		}
		return fmt.Errorf("%w: %s", ErrReaction, msg)
	}
	// The wrapper's own signature: local(fun, tgt, **kwargs), the others
	// (fun, **kwargs).
	kw := low.Clone()
	kw.Delete("fun")
	var tgt any
	if state == TypeLocal {
		var ok bool
		if tgt, ok = kw.Delete("tgt"); !ok {
			return nil, fail("local takes at least 2 arguments (1 given): no tgt")
		}
	}
	if state == TypeRunner || state == TypeWheel {
		kw.Set("__user__", EventUser)
		st, _ := kw.Delete("state")
		kw.Set("__state__", st)
	}
	if args, ok := kw.Delete("args"); ok {
		// The 2017.7.2 syntax: every argument is a keyword argument.
		for _, item := range []string{"arg", "kwarg"} {
			if v, ok := low.Get(item); ok {
				rx.Warnings = append(rx.Warnings, fmt.Sprintf("Reactor '%s' is ignoring '%s' param %s due to presence of 'args' param. Check the Reactor System documentation for the correct argument format.",
					rx.ID, item, pyfmt.Repr(v)))
			}
		}
		var kwarg any
		if list, isList := args.([]any); state == TypeCaller && isList && !isDictlist(list) {
			// Legacy caller reactions gave positional args under args.
			kw.Set("arg", list)
			kwarg = payload.NewMap()
		} else {
			kw.Set("arg", []any{})
			kwarg = args
		}
		km, isMap := kwarg.(*payload.Map)
		if !isMap {
			km = mbuiltin.RepackDictlist(kwarg)
			if km.Len() == 0 {
				return nil, fail("Incorrect argument format, check the Reactor System documentation for the correct format.")
			}
		}
		kw.Set("kwarg", km)
	} else {
		var callArgs []any
		callKwargs := payload.NewMap()
		if (state == TypeRunner || state == TypeWheel) && (!kw.Has("arg") || !kw.Has("kwarg")) {
			lookup := b.Runners
			if state == TypeWheel {
				lookup = b.Wheels
			}
			var sig Signature
			found := false
			if lookup != nil {
				sig, found = lookup(rx.Fun)
			}
			if !found {
				return nil, fail("function not available")
			}
			var err error
			callArgs, callKwargs, err = formatCall(sig, low, rx.Fun)
			if err != nil {
				return nil, fail("%v", err)
			}
		}
		if !kw.Has("arg") {
			kw.Set("arg", callArgs)
		}
		if !kw.Has("kwarg") {
			kw.Set("kwarg", callKwargs)
		}
	}
	var err error
	switch state {
	case TypeLocal:
		err = b.buildLocal(rx, tgt, kw)
	default:
		err = buildCall(rx, kw)
		if state != TypeCaller {
			rx.User = EventUser
		}
	}
	if err != nil {
		return nil, fail("%v", err)
	}
	return rx, nil
}

// buildCall sets the arguments of a runner, wheel or caller reaction:
// func(*arg, **kwarg).
func buildCall(rx *Reaction, kw *payload.Map) error {
	arg, _ := kw.Get("arg")
	if !iterable(arg) {
		return fmt.Errorf("argument after * must be an iterable, not %s", pyTypeName(arg))
	}
	rx.Arg = append([]any{}, pyIterList(arg)...)
	kwarg, _ := kw.Get("kwarg")
	switch k := kwarg.(type) {
	case *payload.Map:
		rx.Kwarg = k.Clone()
	default:
		if payload.Truthy(kwarg) {
			return fmt.Errorf("argument after ** must be a mapping, not %s", pyTypeName(kwarg))
		}
		rx.Kwarg = payload.NewMap()
	}
	return nil
}

// buildLocal follows LocalClient.cmd_async → run_job → pub → _prep_pub.
func (b Builder) buildLocal(rx *Reaction, tgt any, kw *payload.Map) error {
	if kw.Has("listen") {
		return fmt.Errorf("run_job() got multiple values for keyword argument 'listen'")
	}
	argV, _ := kw.Delete("arg")
	kwargV, _ := kw.Delete("kwarg")
	if !iterable(argV) {
		return fmt.Errorf("'%s' object is not iterable", pyTypeName(argV))
	}
	req := master.PublishRequest{Tgt: tgt, TgtType: "glob", Fun: rx.Fun, Arg: conditionInput(pyIterList(argV), kwargV)}
	if v, ok := kw.Delete("tgt_type"); ok {
		s, isStr := v.(string)
		if !isStr {
			return fmt.Errorf("tgt_type must be a string, not %s", pyTypeName(v))
		}
		req.TgtType = s
	}
	if v, ok := kw.Delete("ret"); ok && v != nil {
		req.Ret = retString(v)
	}
	if v, ok := kw.Delete("jid"); ok && v != nil {
		req.JID = pyfmt.Str(v)
	}
	tv, _ := kw.Delete("timeout")
	req.Timeout = pyTimeout(tv, b.Timeout)
	// "batch" stays in the client kwargs: the master runs the job as a
	// batch (BatchAsync) and answers with the batch jid.
	if kw.Has("expr_form") {
		rx.Notes = append(rx.Notes, fmt.Sprintf("expr_form is ignored, as in Salt 3006 (use tgt_type); the target is matched as %s", req.TgtType))
	}
	req.Kwargs = kw
	rx.Publish = req
	return nil
}

// retString renders a returner list for the publish load.
func retString(v any) string {
	if l, ok := v.([]any); ok {
		parts := make([]string, len(l))
		for i, x := range l {
			parts[i] = pyfmt.Str(x)
		}
		return strings.Join(parts, ",")
	}
	return pyfmt.Str(v)
}

// pyTimeout is LocalClient._get_timeout: None → the default, an int as is,
// a numeric string converted, anything else the default.
func pyTimeout(v any, def int) int {
	if v == nil {
		return def
	}
	if n, ok := pyInt(v); ok {
		return int(n)
	}
	if s, ok := v.(string); ok {
		t := strings.ReplaceAll(strings.TrimSpace(s), "_", "")
		if n, err := strconv.Atoi(t); err == nil && t != "" && !strings.HasPrefix(s, "_") {
			return n
		}
	}
	return def
}

// conditionInput is salt.utils.args.condition_input: integers that look
// like jids become strings, and a non-empty kwarg dict is appended as
// {"__kwarg__": true, ...}.
func conditionInput(args []any, kwarg any) []any {
	out := make([]any, 0, len(args)+1)
	for _, a := range args {
		if n, ok := a.(int64); ok && saltjid.Is(strconv.FormatInt(n, 10)) {
			a = strconv.FormatInt(n, 10)
		} else if n, ok := a.(uint64); ok && saltjid.Is(strconv.FormatUint(n, 10)) {
			a = strconv.FormatUint(n, 10)
		} else if n, ok := a.(*big.Int); ok && n != nil && saltjid.Is(n.String()) {
			a = n.String()
		}
		out = append(out, a)
	}
	if km, ok := kwarg.(*payload.Map); ok && km.Len() > 0 {
		kw := payload.NewMap("__kwarg__", true)
		for _, it := range km.Items() {
			kw.SetKey(it.Key, it.Value)
		}
		out = append(out, kw)
	}
	return out
}

// isDictlist is salt.utils.data.is_dictlist: a list of one-key dicts.
func isDictlist(l []any) bool {
	for _, e := range l {
		m, ok := e.(*payload.Map)
		if !ok || m.Len() != 1 {
			return false
		}
	}
	return true
}

// formatCall is salt.utils.args.format_call for a legacy runner or wheel
// reaction: required parameters are taken from the low chunk as positional
// arguments, parameters with defaults as keyword arguments (all of them,
// defaults filled in, in Python's reversed order), other keys are passed
// on when the function takes **kwargs and refused otherwise (the reactor's
// internal keys excepted).
func formatCall(sig Signature, low *payload.Map, fun string) ([]any, *payload.Map, error) {
	data := low.Clone()
	kwargs := payload.NewMap()
	for i := len(sig.Params) - 1; i >= 0; i-- {
		p := sig.Params[i]
		if p.Required {
			continue
		}
		v, ok := data.Delete(p.Name)
		if !ok {
			v = p.Default
		}
		kwargs.Set(p.Name, v)
	}
	args := []any{}
	missing := 0
	for _, p := range sig.Params {
		if !p.Required {
			continue
		}
		if v, ok := data.Delete(p.Name); ok {
			args = append(args, v)
		} else {
			missing++
		}
	}
	name := fun[strings.LastIndex(fun, ".")+1:]
	if missing > 0 {
		total := len(args) + missing
		s := ""
		if total > 1 {
			s = "s"
		}
		return nil, nil, fmt.Errorf("%s takes at least %d argument%s (%d given)", name, total, s, len(args))
	}
	var extra []string
	for _, it := range data.Items() {
		k := payload.KeyString(it.Key)
		if reactorInternal(k) {
			continue
		}
		if sig.VarKwargs {
			kwargs.SetKey(it.Key, it.Value)
			continue
		}
		extra = append(extra, k)
	}
	switch len(extra) {
	case 0:
		return args, kwargs, nil
	case 1:
		return nil, nil, fmt.Errorf("'%s' is an invalid keyword argument for '%s'", extra[0], fun)
	}
	quoted := make([]string, len(extra)-1)
	for i, e := range extra[:len(extra)-1] {
		quoted[i] = "'" + e + "'"
	}
	return nil, nil, fmt.Errorf("%s and '%s' are invalid keyword arguments for '%s'", strings.Join(quoted, ", "), extra[len(extra)-1], fun)
}

// pyIterList is what Python's "for x in v" visits (py.Iter), nothing for a
// value Python cannot iterate.
func pyIterList(v any) []any {
	l, _ := py.Iter(v)
	return l
}
