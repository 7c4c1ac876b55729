package render

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"unicode/utf8"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/render/jinja"
	"github.com/gsalt/gsalt/wire/payload"
)

// ErrRaised marks an error raised by a template with raise('msg'); it
// also wraps ErrTemplate.
var ErrRaised = fmt.Errorf("%w: raised", ErrTemplate)

// decodeYAMLText decodes YAML like Salt's load_yaml (safe_load).
func decodeYAMLText(text string) (any, error) {
	return config.DecodeYAMLPayload([]byte(text))
}

// loadYAMLError is the error Salt's load_yaml (filter, {% load_yaml %},
// {% import_yaml %}) raises for text its YAML loader refuses. libyaml's
// reader refuses a control character before anything is parsed: a
// TemplateRuntimeError naming it and its byte offset. Any other YAML
// error carries a mark without a buffer (Salt's loader is CSafeLoader),
// and Salt's report of it fails on that missing buffer: the
// AttributeError below is what Salt 3006 raises (cause, the YAML error,
// is wrapped for logs).
func loadYAMLError(text string, cause error) error {
	off := 0
	for _, c := range text {
		ok := c == 0x09 || c == 0x0A || c == 0x0D || (c >= 0x20 && c <= 0x7E) || c == 0x85 ||
			(c >= 0xA0 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF)
		if !ok {
			return &jinja.Error{Kind: "TemplateRuntimeError", Msg: fmt.Sprintf("Encountered error loading yaml: unacceptable character #x%04x: control characters are not allowed\n  in \"<unicode string>\", position %d", c, off)}
		}
		off += utf8.RuneLen(c)
	}
	// the YAML error itself stays in the chain (Err) for logs
	return &jinja.Error{Kind: "AttributeError", Msg: "'NoneType' object has no attribute 'splitlines'", Err: cause}
}

// globalFunctions are Salt's Jinja globals (raise, odict,
// show_full_context).
func (st *renderState) globalFunctions() map[string]any {
	return map[string]any{
		"raise": jinja.Func(func(r *jinja.Runtime, args []any, kw *payload.Map) (any, error) {
			msg := ""
			if len(args) > 0 {
				msg = pyStr(args[0])
			}
			return nil, st.fail(&jinja.Error{Kind: "TemplateError", Msg: msg, Err: ErrRaised})
		}),
		// Salt 3006 registers match.ifelse as a Jinja global without the
		// loader's globals: one argument is returned, an even count is
		// refused, and evaluating a pair fails on __context__, as in Salt
		// (salt['match.ifelse'](...) is the working form).
		"ifelse": jinja.Func(func(r *jinja.Runtime, args []any, kw *payload.Map) (any, error) {
			if kw != nil {
				for _, it := range kw.Items() {
					switch k := payload.KeyString(it.Key); k {
					case "tgt_type", "minion_id", "merge", "merge_lists":
					default:
						return nil, &jinja.Error{Kind: "TypeError", Msg: fmt.Sprintf("ifelse() got an unexpected keyword argument %s", jinja.Repr(k))}
					}
				}
			}
			switch {
			case len(args)%2 == 0:
				return nil, &jinja.Error{Kind: "SaltException", Msg: "The ifelse function must have an odd number of arguments!"}
			case len(args) == 1:
				return args[0], nil
			}
			return nil, &jinja.Error{Kind: "NameError", Msg: "name '__context__' is not defined"}
		}),
		"show_full_context": jinja.Func(func(r *jinja.Runtime, args []any, kw *payload.Map) (any, error) {
			return jinja.Import(st.contextVars()), nil
		}),
		"odict": jinja.Func(func(r *jinja.Runtime, args []any, kw *payload.Map) (any, error) {
			d, err := r.Call(st.env.Globals["dict"], args, kw)
			if err != nil {
				return nil, err
			}
			return d, nil
		}),
	}
}

// saltFuncs is the template's "salt" object: salt['mod.fun'](...) and
// salt.mod.fun(...) call Context.Salt; log.* functions log locally.
type saltFuncs struct{ st *renderState }

// GetItem returns the function named key.
func (s *saltFuncs) GetItem(key any) (any, bool) {
	name, ok := key.(string)
	if !ok || !strings.Contains(name, ".") {
		return nil, false
	}
	if fc, ok := s.st.rc.Salt.(FunctionChecker); ok && !fc.HasFunction(name) {
		if _, isLog := logLevel(name); !isLog {
			if fe, ok := s.st.rc.Salt.(FunctionExplainer); ok {
				if why := fe.ExplainMissing(name); why != "" {
					return &jinja.Undefined{Name: name, Hint: why, Strict: true}, true
				}
			}
			return nil, false
		}
	}
	return s.st.saltFunction(name), true
}

// GetAttr returns the module named name (salt.cmd.run form).
func (s *saltFuncs) GetAttr(name string) (any, bool) {
	if strings.Contains(name, ".") {
		return nil, false
	}
	return &saltModule{st: s.st, mod: name}, true
}

// String is what printing the object shows.
func (s *saltFuncs) String() string { return "<salt functions>" }

// PyType is the class of the salt object Salt's templates see.
func (s *saltFuncs) PyType() (string, string) { return "salt.utils.templates", "AliasedLoader" }

// saltModule is salt.<module>.
type saltModule struct {
	st  *renderState
	mod string
}

// GetAttr returns salt.<module>.<name>.
func (m *saltModule) GetAttr(name string) (any, bool) {
	return m.st.saltFunction(m.mod + "." + name), true
}

// String is what printing the object shows.
func (m *saltModule) String() string { return "<salt module " + m.mod + ">" }

// PyType is the class of Salt's loader object.
func (m *saltModule) PyType() (string, string) { return "salt.loader.lazy", "LazyLoader" }

// saltFunction returns a template callable running fun; keyword
// arguments reach it in call order.
func (st *renderState) saltFunction(fun string) jinja.Func {
	return func(r *jinja.Runtime, args []any, kw *payload.Map) (any, error) {
		if err := st.ctx.Err(); err != nil {
			return nil, err
		}
		// yamlex aggregates keep their marks across the copies
		// (AggregateMarks.Transfer)
		marks := AggregateMarksFrom(st.ctx)
		pargs := make([]any, len(args))
		for i, a := range args {
			pargs[i] = saltArg(a)
			marks.Transfer(a, pargs[i])
		}
		var kwargs *payload.Map
		if kw != nil && kw.Len() > 0 {
			kwargs = saltArgExport.Export(kw).(*payload.Map)
			marks.Transfer(kw, kwargs)
		}
		if level, ok := logLevel(fun); ok {
			msg := ""
			if len(args) > 0 {
				msg = pyStr(args[0])
			}
			st.log.Log(st.ctx, level, msg, "source", "jinja", "sls", st.rc.SLS)
			return nil, nil
		}
		if st.rc.Salt == nil {
			return nil, st.fail(fmt.Errorf("%w: salt[%q] is not available here (no execution function caller)", ErrTemplate, fun))
		}
		out, err := st.rc.Salt.CallFunction(st.ctx, fun, pargs, kwargs)
		if err != nil {
			if errors.Is(err, ErrTemplate) {
				return nil, st.fail(err)
			}
			return nil, st.fail(fmt.Errorf("%w: Problem running salt function in Jinja template: %s: %w", ErrTemplate, fun, err))
		}
		if inPlaceFunctions[fun] {
			for i, a := range args {
				syncBack(a, pargs[i])
			}
			if kw != nil {
				for _, it := range kw.Items() {
					if v, ok := kwargs.GetKey(it.Key); ok {
						syncBack(it.Value, v)
					}
				}
			}
		}
		res := jinja.Import(out)
		marks.Transfer(out, res)
		return res, nil
	}
}

// saltArgExport is how a template value reaches an execution function
// through salt['mod.fun'](...): Python passes the objects themselves, so a
// tuple stays a tuple (jinja.Tuple) at any depth and as a dict key, and
// dict keys that are bools, None or numbers stay so; what the function
// returns comes back through jinja.Import, which keeps them too.
var saltArgExport = jinja.ExportOptions{Tuples: true, TupleKeys: true}

// saltArg exports one positional argument (a tuple argument included).
func saltArg(a any) any {
	if t, ok := a.(jinja.Tuple); ok {
		items, _ := saltArgExport.Export(jinja.NewList(t...)).([]any)
		return jinja.Tuple(items)
	}
	return saltArgExport.Export(a)
}

// inPlaceFunctions are the execution functions that change a dict or
// list argument in place in Salt (Python passes references), as formulas
// rely on: {% do salt['defaults.merge'](defaults, osmap) %}.
var inPlaceFunctions = map[string]bool{
	"defaults.merge":  true,
	"defaults.update": true,
	"slsutil.update":  true,
}

// syncBack makes the template value orig (a dict or list passed to an
// in-place function) equal to out, the exported copy the function
// changed, keeping the identity of orig and of the dicts and lists
// nested in it, as Python's in-place update does.
func syncBack(orig, out any) {
	switch o := orig.(type) {
	case *payload.Map:
		om, ok := out.(*payload.Map)
		if !ok || o == nil || om == nil {
			return
		}
		fresh := payload.NewMap()
		for _, it := range om.Items() {
			key := it.Key
			if old, ok := o.GetKey(key); ok && sameContainer(old, it.Value) {
				syncBack(old, it.Value)
				fresh.SetKey(key, old)
				continue
			}
			fresh.SetKey(key, jinja.Import(it.Value))
		}
		*o = *fresh
	case *jinja.List:
		ol, ok := out.([]any)
		if !ok || o == nil {
			return
		}
		items := make([]any, len(ol))
		for i, v := range ol {
			if i < len(o.Items) && sameContainer(o.Items[i], v) {
				syncBack(o.Items[i], v)
				items[i] = o.Items[i]
				continue
			}
			items[i] = jinja.Import(v)
		}
		o.Items = items
	}
}

// sameContainer says whether the template value old and the exported
// value v are both dicts or both lists.
func sameContainer(old, v any) bool {
	switch old.(type) {
	case *payload.Map:
		_, ok := v.(*payload.Map)
		return ok
	case *jinja.List:
		_, ok := v.([]any)
		return ok
	}
	return false
}

// logLevel maps Salt's log execution functions to slog levels.
func logLevel(fun string) (slog.Level, bool) {
	switch fun {
	case "log.debug", "log.trace", "log.garbage", "log.profile":
		return slog.LevelDebug, true
	case "log.info":
		return slog.LevelInfo, true
	case "log.warning", "log.warn":
		return slog.LevelWarn, true
	case "log.error", "log.critical", "log.exception":
		return slog.LevelError, true
	}
	return 0, false
}
