package render

import (
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"

	"github.com/nikolalohinski/gonja/v2/exec"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/wire/payload"
)

// ErrRaised marks an error raised by a template with raise('msg'); it
// also wraps ErrTemplate.
var ErrRaised = fmt.Errorf("%w: raised", ErrTemplate)

// decodeYAMLText decodes YAML like Salt's load_yaml (safe_load).
func decodeYAMLText(text string) (any, error) {
	return config.DecodeYAMLPayload([]byte(text))
}

// globalFunctions are Salt's Jinja globals plus safer replacements for
// gonja's.
func (st *renderState) globalFunctions() map[string]any {
	return map[string]any{
		"none":  nil,
		"true":  true,
		"false": false,
		"raise": func(va *exec.VarArgs) (any, error) {
			msg := ""
			if len(va.Args) > 0 {
				msg = pyStr(va.Args[0].Interface())
			}
			err := fmt.Errorf("%w: %s", ErrRaised, msg)
			st.fail(err)
			return nil, err
		},
		"show_full_context": func(va *exec.VarArgs) (any, error) {
			m := st.contextVars()
			return toJinja(m), nil
		},
		"odict": func(va *exec.VarArgs) (any, error) {
			d := exec.NewDict()
			if len(va.Args) > 0 {
				if src := asDict(va.Args[0]); src != nil {
					d.Pairs = append(d.Pairs, src.Pairs...)
				} else if items, ok := listItems(va.Args[0]); ok {
					for _, it := range items {
						pair, ok := listItems(exec.ToValue(it))
						if !ok || len(pair) != 2 {
							return nil, errors.New("odict() needs (key, value) pairs")
						}
						setDictItem(d, exec.ToValue(pair[0]), pair[1])
					}
				}
			}
			for _, k := range sortedKwargs(va) {
				setDictItem(d, exec.AsValue(k), va.KwArgs[k].Interface())
			}
			return d, nil
		},
		"range": func(va *exec.VarArgs) (any, error) {
			start, stop, step := 0, 0, 1
			for _, a := range va.Args {
				if !a.IsInteger() {
					return nil, fmt.Errorf("range() arguments must be integers, not %s", pyRepr(a))
				}
			}
			switch len(va.Args) {
			case 1:
				stop = va.Args[0].Integer()
			case 2:
				start, stop = va.Args[0].Integer(), va.Args[1].Integer()
			case 3:
				start, stop, step = va.Args[0].Integer(), va.Args[1].Integer(), va.Args[2].Integer()
			default:
				return nil, errors.New("range expected 1 to 3 arguments")
			}
			if step == 0 {
				return nil, errors.New("range() arg 3 must not be zero")
			}
			var out []any
			for i := start; (step > 0 && i < stop) || (step < 0 && i > stop); i += step {
				if len(out) >= maxListLen {
					return nil, fmt.Errorf("range() longer than %d items", maxListLen)
				}
				out = append(out, i)
			}
			return newList(out), nil
		},
		"dict": func(va *exec.VarArgs) (any, error) {
			d := exec.NewDict()
			if len(va.Args) > 0 {
				if src := asDict(va.Args[0]); src != nil {
					for _, p := range src.Pairs {
						setDictItem(d, p.Key, p.Value)
					}
				} else if items, ok := listItems(va.Args[0]); ok {
					for _, it := range items {
						pair, ok := listItems(exec.ToValue(it))
						if !ok || len(pair) != 2 {
							return nil, errors.New("dict() needs (key, value) pairs")
						}
						setDictItem(d, exec.ToValue(pair[0]), pair[1])
					}
				}
			}
			for _, k := range sortedKwargs(va) {
				setDictItem(d, exec.AsValue(k), va.KwArgs[k])
			}
			return d, nil
		},
	}
}

// sortedKwargs returns keyword argument names in a stable order (gonja
// keeps them in a Go map, so the call order is lost).
func sortedKwargs(va *exec.VarArgs) []string {
	keys := make([]string, 0, len(va.KwArgs))
	for k := range va.KwArgs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// saltFuncs is the template's "salt" object: salt['mod.fun'](...) and
// salt.mod.fun(...) call Context.Salt; log.* functions log locally.
type saltFuncs struct{ st *renderState }

// GetItem returns the function named key.
func (s *saltFuncs) GetItem(key any) (*exec.Value, bool) {
	name, ok := key.(string)
	if !ok || !strings.Contains(name, ".") {
		return exec.AsValue(nil), false
	}
	return exec.AsValue(s.st.saltFunction(name)), true
}

// GetAttribute returns the module named name (salt.cmd.run form).
func (s *saltFuncs) GetAttribute(name string) (*exec.Value, bool) {
	return exec.AsValue(&saltModule{st: s.st, mod: name}), true
}

// String is what printing the object shows.
func (s *saltFuncs) String() string { return "<salt functions>" }

// saltModule is salt.<module>.
type saltModule struct {
	st  *renderState
	mod string
}

// GetAttribute returns salt.<module>.<name>.
func (m *saltModule) GetAttribute(name string) (*exec.Value, bool) {
	return exec.AsValue(m.st.saltFunction(m.mod + "." + name)), true
}

// String is what printing the object shows.
func (m *saltModule) String() string { return "<salt module " + m.mod + ">" }

// saltFunction returns a template callable running fun.
func (st *renderState) saltFunction(fun string) func(*exec.VarArgs) (any, error) {
	return func(va *exec.VarArgs) (any, error) {
		if err := st.ctx.Err(); err != nil {
			return nil, err
		}
		args := make([]any, len(va.Args))
		for i, a := range va.Args {
			args[i] = fromJinja(a)
		}
		var kwargs *payload.Map
		if len(va.KwArgs) > 0 {
			kwargs = payload.NewMap()
			for _, k := range sortedKwargs(va) {
				kwargs.Set(k, fromJinja(va.KwArgs[k]))
			}
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
			err := fmt.Errorf("%w: salt[%q] is not available here (no execution function caller)", ErrTemplate, fun)
			st.fail(err)
			return nil, err
		}
		out, err := st.rc.Salt.CallFunction(st.ctx, fun, args, kwargs)
		if err != nil {
			err = fmt.Errorf("%w: Problem running salt function in Jinja template: %s: %w", ErrTemplate, fun, err)
			st.fail(err)
			return nil, err
		}
		return toJinja(out), nil
	}
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
