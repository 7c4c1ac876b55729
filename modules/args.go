package modules

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/payload"
)

// Args are a call's arguments bound to the function's Spec the way Python
// binds them after Salt's load_args_and_kwargs.
type Args struct {
	spec  Spec
	named map[string]any
	given map[string]bool
	// Varargs are the extra positional arguments (*args).
	Varargs []any
	// Kwargs are the extra keyword arguments (**kwargs), including the
	// __pub_* keys Salt adds for functions that take **kwargs.
	Kwargs *payload.Map
}

// Get returns a named parameter's value (its default when not given).
func (a *Args) Get(name string) any {
	if v, ok := a.named[name]; ok {
		return v
	}
	if a.Kwargs != nil {
		if v, ok := a.Kwargs.Get(name); ok {
			return v
		}
	}
	return nil
}

// Given reports whether the caller passed the parameter (or kwarg).
func (a *Args) Given(name string) bool {
	if a.given[name] {
		return true
	}
	return a.Kwargs != nil && a.Kwargs.Has(name)
}

// Str returns a parameter as text (Python str() of scalars, "" for None).
func (a *Args) Str(name string) string { return payload.Text(a.Get(name)) }

// Int returns a parameter as an integer, accepting numeric strings.
func (a *Args) Int(name string) (int64, error) {
	v := a.Get(name)
	if n, ok := payload.AsInt(v); ok {
		return n, nil
	}
	if s, ok := v.(string); ok {
		var n int64
		if _, err := fmt.Sscan(strings.TrimSpace(s), &n); err == nil {
			return n, nil
		}
	}
	return 0, fmt.Errorf("%w: %s must be an integer, got %s", ErrInvocation, name, payload.TypeName(v))
}

// Float returns a parameter as a float.
func (a *Args) Float(name string) (float64, error) {
	v := a.Get(name)
	switch x := v.(type) {
	case float64:
		return x, nil
	case string:
		var f float64
		if _, err := fmt.Sscan(strings.TrimSpace(x), &f); err == nil {
			return f, nil
		}
	}
	if n, ok := payload.AsInt(v); ok {
		return float64(n), nil
	}
	return 0, fmt.Errorf("%w: %s must be a number, got %s", ErrInvocation, name, payload.TypeName(v))
}

// Bool returns a parameter's truthiness, reading "true"/"false" strings the
// way Salt's is_true does.
func (a *Args) Bool(name string) bool { return IsTrue(a.Get(name)) }

// IsTrue is salt.utils.data.is_true: numbers by value, strings "true"/"1"
// (case-insensitive) and everything else by truthiness.
func IsTrue(v any) bool {
	switch x := v.(type) {
	case string:
		s := strings.ToLower(strings.TrimSpace(x))
		if s == "true" {
			return true
		}
		var n float64
		if _, err := fmt.Sscan(s, &n); err == nil {
			return n > 0
		}
		return false
	case int64:
		return x > 0
	case float64:
		return x > 0
	}
	return payload.Truthy(v)
}

// CleanKwargs returns the extra kwargs without the "__"-prefixed keys
// (salt.utils.args.clean_kwargs).
func (a *Args) CleanKwargs() *payload.Map {
	out := &payload.Map{}
	if a.Kwargs == nil {
		return out
	}
	for _, it := range a.Kwargs.Items() {
		if k, ok := it.Key.(string); ok && strings.HasPrefix(k, "__") {
			continue
		}
		out.SetKey(it.Key, it.Value)
	}
	return out
}

// Binder turns a published argument list into Args for a Spec.
type Binder struct {
	// Yamlify converts the value of a "name=value" string argument (Salt's
	// yamlify_arg). nil keeps the string as is.
	Yamlify func(string) any
	// Direct binds the arguments as Python code passes them to a loaded
	// function (__salt__['fun'](...) in a state, salt['fun'](...) in a
	// template): a "name=value" string stays a positional string. Salt
	// parses such strings into keyword arguments only for jobs and the
	// command line (load_args_and_kwargs).
	Direct bool
}

// ParseKwarg splits "name=value" like Salt's KWARG_REGEX
// (^([^\d\W][\w.-]*)=(?!=)(.*)$): the name starts with a letter or
// underscore, the '=' is not followed by another '=', and the value holds no
// newline other than a final one.
func ParseKwarg(s string) (name, value string, ok bool) {
	i := strings.IndexByte(s, '=')
	if i <= 0 {
		return "", "", false
	}
	name, value = s[:i], s[i+1:]
	if strings.HasPrefix(value, "=") {
		return "", "", false
	}
	if nl := strings.IndexByte(value, '\n'); nl >= 0 && nl != len(value)-1 {
		return "", "", false
	}
	value = strings.TrimSuffix(value, "\n")
	for j, r := range name {
		word := r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
		switch {
		case j == 0 && (!word || unicode.IsDigit(r)):
			return "", "", false
		case j > 0 && !word && r != '.' && r != '-':
			return "", "", false
		}
	}
	return name, value, true
}

// Bind applies load_args_and_kwargs and Python's call binding. pub, when
// non-nil and the function takes **kwargs, is passed as __pub_<key>. The
// kwarg maps in args lose their "__kwarg__" marker in place, as in Salt (the
// job's fun_args show them without it).
func (b Binder) Bind(fn *Function, args []any, pub *payload.Map) (*Args, error) {
	spec := fn.Spec
	var positional []any
	kwargs := &payload.Map{}
	var invalid []string
	accepts := func(k string) bool {
		if spec.Kwargs {
			return true
		}
		for _, p := range spec.Params {
			if p.Name == k {
				return true
			}
		}
		return false
	}
	for _, arg := range args {
		if m, ok := arg.(*payload.Map); ok {
			if marker, has := m.Get("__kwarg__"); has {
				m.Delete("__kwarg__")
				if marker == true {
					for _, it := range m.Items() {
						k := payload.KeyString(it.Key)
						if accepts(k) {
							kwargs.Set(k, it.Value)
						} else {
							invalid = append(invalid, k+"="+pyStr(it.Value))
						}
					}
					continue
				}
			}
		}
		if s, ok := arg.(string); ok && !b.Direct {
			if name, val, ok := ParseKwarg(s); ok {
				var v any = val
				if b.Yamlify != nil {
					v = b.Yamlify(val)
				}
				if accepts(name) {
					kwargs.Set(name, v)
				} else {
					invalid = append(invalid, name+"="+pyStr(v))
				}
				continue
			}
		}
		positional = append(positional, arg)
	}
	if len(invalid) > 0 {
		return nil, fmt.Errorf("%w: The following keyword arguments are not valid: %s", ErrInvocation, strings.Join(invalid, ", "))
	}
	a := &Args{spec: spec, named: map[string]any{}, given: map[string]bool{}, Kwargs: &payload.Map{}}
	short := fn.Name[strings.IndexByte(fn.Name, '.')+1:]
	if spec.PyName != "" {
		short = spec.PyName
	}
	for i, v := range positional {
		if i < len(spec.Params) {
			a.named[spec.Params[i].Name] = v
			a.given[spec.Params[i].Name] = true
			continue
		}
		if !spec.Varargs {
			return nil, fmt.Errorf("%w: %s() takes %d positional arguments but %d were given", ErrArguments, short, len(spec.Params), len(positional))
		}
		a.Varargs = append(a.Varargs, v)
	}
	for _, it := range kwargs.Items() {
		k := it.Key.(string)
		isParam := false
		for _, p := range spec.Params {
			if p.Name == k {
				isParam = true
				break
			}
		}
		if isParam {
			if a.given[k] {
				return nil, fmt.Errorf("%w: %s() got multiple values for argument '%s'", ErrArguments, short, k)
			}
			a.named[k] = it.Value
			a.given[k] = true
			continue
		}
		a.Kwargs.Set(k, it.Value)
	}
	var missing []string
	for _, p := range spec.Params {
		if a.given[p.Name] {
			continue
		}
		if p.Required {
			missing = append(missing, "'"+p.Name+"'")
			continue
		}
		a.named[p.Name] = p.Default
	}
	if len(missing) > 0 {
		noun := "argument"
		if len(missing) > 1 {
			noun = "arguments"
		}
		list := strings.Join(missing, ", ")
		if len(missing) > 1 {
			list = strings.Join(missing[:len(missing)-1], ", ") + " and " + missing[len(missing)-1]
		}
		return nil, fmt.Errorf("%w: %s() missing %d required positional %s: %s", ErrArguments, short, len(missing), noun, list)
	}
	if spec.Kwargs && pub != nil {
		for _, it := range pub.Items() {
			a.Kwargs.Set("__pub_"+payload.KeyString(it.Key), it.Value)
		}
	}
	return a, nil
}

// pyStr is Python's str() of a value, for messages.
func pyStr(v any) string { return pyfmt.Str(v) }

// BindKeywords binds keyword arguments only, as Salt's state system calls a
// state function with the keys of a low chunk: keys naming a parameter fill
// it, other keys go to **kwargs when the Spec takes them and are dropped
// otherwise (Salt filters the low chunk by the function's signature).
// Missing required parameters are an ErrArguments error naming them.
func BindKeywords(spec Spec, kw *payload.Map) (*Args, error) {
	a := &Args{spec: spec, named: make(map[string]any, len(spec.Params)), given: make(map[string]bool, len(spec.Params)), Kwargs: &payload.Map{}}
	params := make(map[string]bool, len(spec.Params))
	for _, p := range spec.Params {
		params[p.Name] = true
	}
	if kw != nil {
		for _, it := range kw.Items() {
			k := payload.KeyString(it.Key)
			switch {
			case params[k]:
				a.named[k] = it.Value
				a.given[k] = true
			case spec.Kwargs:
				a.Kwargs.Set(k, it.Value)
			}
		}
	}
	var missing []string
	for _, p := range spec.Params {
		if a.given[p.Name] {
			continue
		}
		if p.Required {
			missing = append(missing, p.Name)
			continue
		}
		a.named[p.Name] = p.Default
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: missing required argument(s): %s", ErrArguments, strings.Join(missing, ", "))
	}
	return a, nil
}

// NewArgs returns Args holding named values for spec, with defaults filled
// in for the parameters not in named (tests and internal callers).
func NewArgs(spec Spec, named map[string]any) *Args {
	kw := &payload.Map{}
	for k, v := range named {
		kw.Set(k, v)
	}
	a, err := BindKeywords(Spec{Params: optionalParams(spec.Params), Varargs: spec.Varargs, Kwargs: true}, kw)
	if err != nil { // cannot happen: no required parameters
		return &Args{spec: spec, named: map[string]any{}, given: map[string]bool{}, Kwargs: &payload.Map{}}
	}
	a.spec = spec
	return a
}

func optionalParams(ps []Param) []Param {
	out := make([]Param, len(ps))
	for i, p := range ps {
		p.Required = false
		out[i] = p
	}
	return out
}
