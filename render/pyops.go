package render

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"net/netip"
	"regexp"
	"strings"

	"github.com/nikolalohinski/gonja/v2/exec"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/payload"
)

// pyTypeName is Python's type(v).__name__ for payload data.
func pyTypeName(v any) string { return pyfmt.TypeName(v) }

// pyEqual compares a template value with another like Python's ==.
func pyEqual(a any, b *exec.Value) bool { return pyEq(fromJinja(a), fromJinja(b)) }

// pyEq is Python's == on payload data.
func pyEq(a, b any) bool { return pyfmt.Equal(a, b) }

// numeric returns a number (bools count, as in Python) as float64.
func numeric(v any) (float64, bool) { return pyfmt.Float(v) }

// pyCompare orders two payload values like Python's < (numbers with
// numbers, strings with strings, lists lexicographically); other mixes
// are a TypeError.
func pyCompare(a, b any) (int, error) {
	if fa, ok := numeric(a); ok {
		if fb, ok := numeric(b); ok {
			switch {
			case fa < fb:
				return -1, nil
			case fa > fb:
				return 1, nil
			}
			return 0, nil
		}
	}
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), nil
		}
	case []any:
		if y, ok := b.([]any); ok {
			for i := 0; i < len(x) && i < len(y); i++ {
				if pyEq(x[i], y[i]) {
					continue
				}
				return pyCompare(x[i], y[i])
			}
			switch {
			case len(x) < len(y):
				return -1, nil
			case len(x) > len(y):
				return 1, nil
			}
			return 0, nil
		}
	}
	return 0, fmt.Errorf("'<' not supported between instances of '%s' and '%s'", pyTypeName(a), pyTypeName(b))
}

// pyAdd is Python's + for sum().
func pyAdd(a, b any) (any, error) {
	ia, aInt := a.(int64)
	ib, bInt := b.(int64)
	if aInt && bInt {
		return ia + ib, nil
	}
	if fa, ok := numeric(a); ok {
		if fb, ok := numeric(b); ok {
			if _, isBool := a.(bool); isBool {
				if _, isBool := b.(bool); isBool {
					return int64(fa + fb), nil
				}
			}
			if _, f1 := a.(float64); !f1 {
				if _, f2 := b.(float64); !f2 {
					return int64(fa + fb), nil
				}
			}
			return fa + fb, nil
		}
	}
	if x, ok := a.([]any); ok {
		if y, ok := b.([]any); ok {
			return append(append([]any{}, x...), y...), nil
		}
	}
	if x, ok := a.(string); ok {
		if y, ok := b.(string); ok {
			return x + y, nil
		}
	}
	return nil, fmt.Errorf("unsupported operand type(s) for +: '%s' and '%s'", pyTypeName(a), pyTypeName(b))
}

var rePercent = regexp.MustCompile(`%(\([^)]*\))?([-+ #0]*)(\*|\d+)?(?:\.(\*|\d+))?([diouxXeEfFgGcrsa%])`)

// pyPercent is Python's "fmt" % args (args a tuple; a single dict
// argument serves %(name)s).
func pyPercent(format string, args []any) (string, error) {
	var mapping *payload.Map
	if len(args) == 1 {
		if m, ok := args[0].(*payload.Map); ok {
			mapping = m
		}
	}
	next := 0
	var ferr error
	out := rePercent.ReplaceAllStringFunc(format, func(spec string) string {
		if ferr != nil {
			return ""
		}
		m := rePercent.FindStringSubmatch(spec)
		name, flags, width, prec, conv := m[1], m[2], m[3], m[4], m[5]
		if conv == "%" {
			return "%"
		}
		var v any
		if name != "" {
			if mapping == nil {
				ferr = errors.New("format requires a mapping")
				return ""
			}
			var ok bool
			v, ok = mapping.Get(name[1 : len(name)-1])
			if !ok {
				ferr = fmt.Errorf("KeyError: %q", name[1:len(name)-1])
				return ""
			}
		} else {
			if next >= len(args) {
				ferr = errors.New("not enough arguments for format string")
				return ""
			}
			v = args[next]
			next++
		}
		goSpec := "%" + strings.ReplaceAll(flags, "#", "")
		if width != "" && width != "*" {
			goSpec += width
		}
		if prec != "" && prec != "*" {
			goSpec += "." + prec
		}
		switch conv {
		case "s":
			return fmt.Sprintf(goSpec+"s", pyfmt.Str(v))
		case "r", "a":
			return fmt.Sprintf(goSpec+"s", pyfmt.Repr(v))
		case "d", "i", "u":
			f, ok := numeric(v)
			if !ok {
				ferr = fmt.Errorf("%%d format: a real number is required, not %s", pyTypeName(v))
				return ""
			}
			return fmt.Sprintf(goSpec+"d", int64(f))
		case "x", "X", "o":
			f, ok := numeric(v)
			if !ok {
				ferr = fmt.Errorf("%%%s format: an integer is required, not %s", conv, pyTypeName(v))
				return ""
			}
			s := fmt.Sprintf(goSpec+conv, int64(f))
			if strings.Contains(flags, "#") {
				s = "0" + map[string]string{"x": "x", "X": "X", "o": "o"}[conv] + s
			}
			return s
		case "e", "E", "f", "F", "g", "G":
			f, ok := numeric(v)
			if !ok {
				ferr = fmt.Errorf("must be real number, not %s", pyTypeName(v))
				return ""
			}
			if prec == "" {
				goSpec += ".6"
			}
			c := conv
			if c == "F" {
				c = "f"
			}
			return fmt.Sprintf(goSpec+c, f)
		case "c":
			if s, ok := v.(string); ok {
				return s
			}
			f, _ := numeric(v)
			return string(rune(int(f)))
		}
		return spec
	})
	if ferr != nil {
		return "", ferr
	}
	if mapping == nil && next < len(args) {
		return "", errors.New("not all arguments converted during string formatting")
	}
	return out, nil
}

// tests returns Salt's Jinja tests and the builtins gsalt replaces
// (defined/undefined/none distinguish an undefined variable from None).
func (st *renderState) tests() map[string]exec.TestFunction {
	return map[string]exec.TestFunction{
		"defined": func(_ *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) (bool, error) {
			return !isUndefined(in) && !in.IsError(), nil
		},
		"undefined": func(_ *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) (bool, error) {
			return isUndefined(in), nil
		},
		"none": func(_ *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) (bool, error) {
			return !in.IsError() && in.IsNil(), nil
		},
		"list": func(_ *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) (bool, error) {
			_, ok := listItems(in)
			return ok, nil
		},
		"mapping": func(_ *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) (bool, error) {
			return asDict(in) != nil, nil
		},
		"sequence": func(_ *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) (bool, error) {
			_, ok := listItems(in)
			return ok || in.IsString() || asDict(in) != nil, nil
		},
		"iterable": func(_ *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) (bool, error) {
			_, ok := listItems(in)
			return ok || in.IsString() || asDict(in) != nil, nil
		},
		"string": func(_ *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) (bool, error) {
			_, ok := in.Interface().(string)
			return ok, nil
		},
		"number": func(_ *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) (bool, error) {
			switch fromJinja(in).(type) {
			case int64, float64, bool, *big.Int:
				return true, nil
			}
			return false, nil
		},
		"integer": func(_ *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) (bool, error) {
			switch fromJinja(in).(type) {
			case int64, *big.Int:
				return true, nil
			}
			return false, nil
		},
		"float": func(_ *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) (bool, error) {
			_, ok := fromJinja(in).(float64)
			return ok, nil
		},
		"boolean": func(_ *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) (bool, error) {
			_, ok := fromJinja(in).(bool)
			return ok, nil
		},
		"true": func(_ *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) (bool, error) {
			b, ok := fromJinja(in).(bool)
			return ok && b, nil
		},
		"false": func(_ *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) (bool, error) {
			b, ok := fromJinja(in).(bool)
			return ok && !b, nil
		},
		"equalto": func(_ *exec.Evaluator, in *exec.Value, va *exec.VarArgs) (bool, error) {
			return pyEq(fromJinja(in), fromJinja(va.First())), nil
		},
		"eq": func(_ *exec.Evaluator, in *exec.Value, va *exec.VarArgs) (bool, error) {
			return pyEq(fromJinja(in), fromJinja(va.First())), nil
		},
		"==": func(_ *exec.Evaluator, in *exec.Value, va *exec.VarArgs) (bool, error) {
			return pyEq(fromJinja(in), fromJinja(va.First())), nil
		},
		"ne": func(_ *exec.Evaluator, in *exec.Value, va *exec.VarArgs) (bool, error) {
			return !pyEq(fromJinja(in), fromJinja(va.First())), nil
		},
		"!=": func(_ *exec.Evaluator, in *exec.Value, va *exec.VarArgs) (bool, error) {
			return !pyEq(fromJinja(in), fromJinja(va.First())), nil
		},
		"in": func(_ *exec.Evaluator, in *exec.Value, va *exec.VarArgs) (bool, error) {
			return pyContains(va.First(), in)
		},
		"match": func(_ *exec.Evaluator, in *exec.Value, va *exec.VarArgs) (bool, error) {
			re, err := compilePyRegex(pyStr(arg(va, 0, "rgx", "")), arg(va, 1, "ignorecase", false).IsTrue(), arg(va, 2, "multiline", false).IsTrue())
			if err != nil {
				return false, err
			}
			loc := re.FindStringIndex(pyStr(in))
			return loc != nil && loc[0] == 0, nil
		},
		"ip": func(_ *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) (bool, error) {
			_, err := netip.ParseAddr(pyStr(in))
			return err == nil, nil
		},
	}
}

// pyContains is Python's "x in container".
func pyContains(container, x *exec.Value) (bool, error) {
	if d := asDict(container); d != nil {
		p, _ := dictLookup(d, x)
		return p != nil, nil
	}
	if l, ok := listItems(container); ok {
		return containsPy(fromJinja(newList(l)).([]any), fromJinja(x)), nil
	}
	if container.IsString() {
		return strings.Contains(container.String(), pyStr(x)), nil
	}
	return false, fmt.Errorf("argument of type '%s' is not iterable", pyTypeName(fromJinja(container)))
}

// operatorFilters implement Python's %, // and ** (see rewriteTemplate).
func operatorFilters() map[string]filterFunc {
	return map[string]filterFunc{
		opModulo: func(e *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
			if in.IsError() {
				return in
			}
			right := va.First()
			if right.IsError() {
				return right
			}
			l, r := fromJinja(in), fromJinja(right)
			if s, ok := l.(string); ok {
				var args []any
				switch x := r.(type) {
				case []any:
					if _, isTuple := right.Interface().(pyTuple); isTuple {
						args = x
					} else {
						args = []any{x}
					}
				default:
					args = []any{x}
				}
				out, err := pyPercent(s, args)
				if err != nil {
					return exec.AsValue(err)
				}
				return exec.AsValue(out)
			}
			return numOp(l, r, "%")
		},
		opTuple: func(e *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
			if in.IsError() {
				return in
			}
			items, _ := listItems(in)
			return exec.AsValue(pyTuple(append([]any{}, items...)))
		},
		opFloorDiv: func(e *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
			if in.IsError() {
				return in
			}
			return numOp(fromJinja(in), fromJinja(va.First()), "//")
		},
		opPower: func(e *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
			if in.IsError() {
				return in
			}
			return numOp(fromJinja(in), fromJinja(va.First()), "**")
		},
	}
}

// numOp applies a Python arithmetic operator to two numbers.
func numOp(l, r any, op string) *exec.Value {
	li, lInt := asPyInt(l)
	ri, rInt := asPyInt(r)
	if lInt && rInt {
		switch op {
		case "%", "//":
			if ri == 0 {
				return exec.AsValue(errors.New("integer division or modulo by zero"))
			}
			q, m := li/ri, li%ri
			if m != 0 && (m < 0) != (ri < 0) {
				q--
				m += ri
			}
			if op == "%" {
				return exec.AsValue(int(m))
			}
			return exec.AsValue(int(q))
		case "**":
			if ri >= 0 {
				res := new(big.Int).Exp(big.NewInt(li), big.NewInt(ri), nil)
				if res.IsInt64() {
					return exec.AsValue(int(res.Int64()))
				}
				return exec.AsValue(res)
			}
			return exec.AsValue(math.Pow(float64(li), float64(ri)))
		}
	}
	lf, ok1 := numeric(l)
	rf, ok2 := numeric(r)
	if !ok1 || !ok2 {
		return exec.AsValue(fmt.Errorf("unsupported operand type(s) for %s: '%s' and '%s'", op, pyTypeName(l), pyTypeName(r)))
	}
	switch op {
	case "%":
		if rf == 0 {
			return exec.AsValue(errors.New("float modulo"))
		}
		m := math.Mod(lf, rf)
		if m != 0 && (m < 0) != (rf < 0) {
			m += rf
		}
		return exec.AsValue(m)
	case "//":
		if rf == 0 {
			return exec.AsValue(errors.New("float floor division by zero"))
		}
		return exec.AsValue(math.Floor(lf / rf))
	}
	return exec.AsValue(math.Pow(lf, rf))
}

func asPyInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}
