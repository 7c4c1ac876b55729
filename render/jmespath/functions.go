package jmespath

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/render/jinja"
	"github.com/gsalt/gsalt/wire/payload"
)

// jmesTypes maps Python's type(v).__name__ to JMESPath's type names, as
// the Python functions check their arguments (a str subclass such as
// Markup is "unknown" there).
var jmesTypes = map[string]string{
	"bool": "boolean", "list": "array", "dict": "object", "NoneType": "null", "str": "string",
	"float": "number", "int": "number", "OrderedDict": "object", "_Expression": "expref",
}

// pyTypes are the Python type names each JMESPath type admits.
var pyTypes = map[string][]string{
	"boolean": {"bool"}, "array": {"list"}, "object": {"dict", "OrderedDict"}, "null": {"NoneType"},
	"string": {"str"}, "number": {"float", "int"}, "expref": {"_Expression"},
}

func typeName(v any) string {
	switch v.(type) {
	case exprRef:
		return "_Expression"
	case nil:
		return "NoneType"
	}
	return jinja.TypeName(v)
}

func jmesType(pyName string) string {
	if t, ok := jmesTypes[pyName]; ok {
		return t
	}
	return "unknown"
}

// sig is a function's signature: the allowed types of each argument
// ("array-number" for an array of numbers; none for any), variadic when
// the last may repeat.
type sig struct {
	args     [][]string
	variadic bool
}

type function struct {
	sig sig
	fn  func(in *interp, args []any) (any, error)
}

func one(types ...string) sig { return sig{args: [][]string{types}} }

var functions map[string]function

func init() {
	functions = map[string]function{
		"abs":         {one("number"), fnAbs},
		"avg":         {one("array-number"), fnAvg},
		"not_null":    {sig{args: [][]string{nil}, variadic: true}, fnNotNull},
		"to_array":    {one(), fnToArray},
		"to_string":   {one(), fnToString},
		"to_number":   {one(), fnToNumber},
		"contains":    {sig{args: [][]string{{"array", "string"}, nil}}, fnContains},
		"length":      {one("string", "array", "object"), fnLength},
		"ends_with":   {sig{args: [][]string{{"string"}, {"string"}}}, fnEndsWith},
		"starts_with": {sig{args: [][]string{{"string"}, {"string"}}}, fnStartsWith},
		"reverse":     {one("array", "string"), fnReverse},
		"ceil":        {one("number"), func(_ *interp, a []any) (any, error) { return round(a[0], math.Ceil) }},
		"floor":       {one("number"), func(_ *interp, a []any) (any, error) { return round(a[0], math.Floor) }},
		"join":        {sig{args: [][]string{{"string"}, {"array-string"}}}, fnJoin},
		"map":         {sig{args: [][]string{{"expref"}, {"array"}}}, fnMap},
		"max":         {one("array-number", "array-string"), func(_ *interp, a []any) (any, error) { return extreme(a[0], ">") }},
		"min":         {one("array-number", "array-string"), func(_ *interp, a []any) (any, error) { return extreme(a[0], "<") }},
		"merge":       {sig{args: [][]string{{"object"}}, variadic: true}, fnMerge},
		"sort":        {one("array-string", "array-number"), fnSort},
		"sum":         {one("array-number"), fnSum},
		"keys":        {one("object"), fnKeys},
		"values":      {one("object"), fnValues},
		"type":        {one(), fnType},
		"sort_by":     {sig{args: [][]string{{"array"}, {"expref"}}}, fnSortBy},
		"min_by":      {sig{args: [][]string{{"array"}, {"expref"}}}, func(in *interp, a []any) (any, error) { return in.extremeBy(a, "min_by", "<") }},
		"max_by":      {sig{args: [][]string{{"array"}, {"expref"}}}, func(in *interp, a []any) (any, error) { return in.extremeBy(a, "max_by", ">") }},
	}
}

func plural(n int) string {
	if n == 1 {
		return "argument"
	}
	return "arguments"
}

// pyStr is Python's str() of a value for error texts.
func pyStr(v any) string {
	switch x := v.(type) {
	case exprRef:
		return "<jmespath.visitor._Expression object>"
	case *jinja.Undefined:
		return ""
	default:
		s, err := jinja.Str(x)
		if err != nil {
			return jinja.Repr(x)
		}
		return s
	}
}

func pyList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = "'" + s + "'"
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func typeErr(fn string, v any, actual string, expected []string) error {
	return &Error{Kind: "JMESPathTypeError", Msg: fmt.Sprintf("In function %s(), invalid type for value: %s, expected one of: %s, received: \"%s\"", fn, pyStr(v), pyList(expected), actual)}
}

func (in *interp) call(name string, args []any) (any, error) {
	f, ok := functions[name]
	if !ok {
		return nil, &Error{Kind: "UnknownFunctionError", Msg: fmt.Sprintf("Unknown function: %s()", name)}
	}
	n := len(f.sig.args)
	if f.sig.variadic {
		if len(args) < n {
			return nil, &Error{Kind: "VariadictArityError", Msg: fmt.Sprintf("Expected at least %d %s for function %s(), received %d", n, plural(n), name, len(args))}
		}
	} else if len(args) != n {
		return nil, &Error{Kind: "ArityError", Msg: fmt.Sprintf("Expected %d %s for function %s(), received %d", n, plural(n), name, len(args))}
	}
	for i, types := range f.sig.args {
		if len(types) > 0 {
			if err := checkType(args[i], types, name); err != nil {
				return nil, err
			}
		}
	}
	return f.fn(in, args)
}

func checkType(v any, types []string, fn string) error {
	var allowed []string
	var sub [][]string
	for _, t := range types {
		base, subtype, ok := strings.Cut(t, "-")
		if ok {
			sub = append(sub, pyTypes[subtype])
		}
		allowed = append(allowed, pyTypes[base]...)
	}
	actual := typeName(v)
	if !slices.Contains(allowed, actual) {
		return typeErr(fn, v, jmesType(actual), types)
	}
	if len(sub) == 0 {
		return nil
	}
	items := v.(*jinja.List).Items
	want := sub[0]
	if len(sub) > 1 {
		if len(items) == 0 {
			return nil
		}
		first := typeName(items[0])
		want = nil
		for _, s := range sub {
			if slices.Contains(s, first) {
				want = s
				break
			}
		}
		if want == nil {
			return typeErr(fn, items[0], first, types)
		}
	}
	for _, e := range items {
		if t := typeName(e); !slices.Contains(want, t) {
			return typeErr(fn, e, t, types)
		}
	}
	return nil
}

func items(v any) []any { return v.(*jinja.List).Items }

func fnAbs(_ *interp, a []any) (any, error) {
	switch x := a[0].(type) {
	case int64:
		if x == math.MinInt64 {
			return new(big.Int).Neg(big.NewInt(x)), nil
		}
		if x < 0 {
			return -x, nil
		}
		return x, nil
	case *big.Int:
		return new(big.Int).Abs(x), nil
	case float64:
		return math.Abs(x), nil
	}
	return a[0], nil
}

func sum(l []any) (any, error) {
	var acc any = int64(0)
	for _, e := range l {
		var err error
		if acc, err = jinja.BinOp("+", acc, e); err != nil {
			return nil, err
		}
	}
	return acc, nil
}

func fnSum(_ *interp, a []any) (any, error) { return sum(items(a[0])) }

func fnAvg(_ *interp, a []any) (any, error) {
	l := items(a[0])
	if len(l) == 0 {
		return nil, nil
	}
	s, err := sum(l)
	if err != nil {
		return nil, err
	}
	return jinja.BinOp("/", s, float64(len(l)))
}

func fnNotNull(_ *interp, a []any) (any, error) {
	for _, v := range a {
		if v != nil {
			return v, nil
		}
	}
	return nil, nil
}

func fnToArray(_ *interp, a []any) (any, error) {
	if _, ok := a[0].(*jinja.List); ok {
		return a[0], nil
	}
	return jinja.NewList(a[0]), nil
}

// fnToString is json.dumps(arg, separators=(',', ':'), default=str) for
// what is not a str.
func fnToString(_ *interp, a []any) (any, error) {
	if isString(a[0]) {
		return a[0], nil
	}
	o := pyfmt.JSONOptions{Indent: pyfmt.NoIndent, Compact: true, EnsureASCII: true,
		Normalize: func(v any) any {
			switch x := v.(type) {
			case *jinja.List:
				return x.Items
			case jinja.Markup:
				return string(x)
			}
			return v
		},
		Default: func(v any) (any, error) {
			switch x := v.(type) {
			case jinja.Tuple:
				return []any(x), nil
			case *jinja.Undefined:
				if x.Strict {
					return nil, undefErr(x)
				}
				return "", nil
			}
			return jinja.Str(v)
		},
	}
	s, err := pyfmt.JSON(a[0], o)
	if err != nil {
		if _, ok := err.(*jinja.Error); ok {
			return nil, err
		}
		return nil, &Error{Kind: "TypeError", Msg: err.Error(), Err: err}
	}
	return s, nil
}

func fnToNumber(_ *interp, a []any) (any, error) {
	switch x := a[0].(type) {
	case *jinja.List, *payload.Map, bool, nil:
		return nil, nil
	case int64, *big.Int, float64:
		return x, nil
	case string:
		return strToNumber(x), nil
	case jinja.Markup:
		return strToNumber(string(x)), nil
	case *jinja.Undefined:
		return nil, undefErr(x)
	}
	return nil, &Error{Kind: "TypeError", Msg: fmt.Sprintf("int() argument must be a string, a bytes-like object or a real number, not '%s'", typeName(a[0]))}
}

// strToNumber is int(s), else float(s), else None.
func strToNumber(s string) any {
	t := strings.TrimFunc(s, unicode.IsSpace)
	if n, ok := pyInt(t); ok {
		return n
	}
	if f, ok := pyFloat(t); ok {
		return f
	}
	return nil
}

// digitsOK reports whether s is digits with single underscores between
// them, as Python's int() and float() accept.
func digitsOK(s string) bool {
	if s == "" || s[0] == '_' || s[len(s)-1] == '_' || strings.Contains(s, "__") {
		return false
	}
	for _, c := range s {
		if c != '_' && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

func pyInt(s string) (any, bool) {
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) > 1 || !digitsOK(body) {
		return nil, false
	}
	n, ok := new(big.Int).SetString(strings.ReplaceAll(s, "_", ""), 10)
	if !ok {
		return nil, false
	}
	if n.IsInt64() {
		return n.Int64(), true
	}
	return n, true
}

func pyFloat(s string) (float64, bool) {
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) > 1 {
		return 0, false
	}
	neg := strings.HasPrefix(s, "-")
	switch strings.ToLower(body) {
	case "inf", "infinity":
		if neg {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	case "nan":
		return math.NaN(), true
	}
	mant, exp, hasExp := strings.Cut(strings.ToLower(body), "e")
	if hasExp {
		e := strings.TrimLeft(exp, "+-")
		if len(exp)-len(e) > 1 || !digitsOK(e) {
			return 0, false
		}
	}
	ip, fp, hasDot := strings.Cut(mant, ".")
	if ip == "" && fp == "" || ip != "" && !digitsOK(ip) || hasDot && fp != "" && !digitsOK(fp) {
		return 0, false
	}
	var f float64
	if _, err := fmt.Sscan(strings.ReplaceAll(s, "_", ""), &f); err != nil && !strings.Contains(err.Error(), "range") {
		return 0, false
	}
	return f, true
}

func fnContains(_ *interp, a []any) (any, error) {
	return jinja.Contains(a[0], a[1])
}

func fnLength(_ *interp, a []any) (any, error) {
	n, err := jinja.Len(a[0])
	return int64(n), err
}

func fnEndsWith(_ *interp, a []any) (any, error) {
	return strings.HasSuffix(a[0].(string), a[1].(string)), nil
}

func fnStartsWith(_ *interp, a []any) (any, error) {
	return strings.HasPrefix(a[0].(string), a[1].(string)), nil
}

func fnReverse(_ *interp, a []any) (any, error) {
	if s, ok := a[0].(string); ok {
		r := []rune(s)
		slices.Reverse(r)
		return string(r), nil
	}
	l := slices.Clone(items(a[0]))
	slices.Reverse(l)
	return jinja.NewList(l...), nil
}

// round is math.ceil/math.floor: an int for any number.
func round(v any, f func(float64) float64) (any, error) {
	x, ok := v.(float64)
	if !ok {
		return v, nil
	}
	switch {
	case math.IsInf(x, 0):
		return nil, &Error{Kind: "OverflowError", Msg: "cannot convert float infinity to integer"}
	case math.IsNaN(x):
		return nil, &Error{Kind: "ValueError", Msg: "cannot convert float NaN to integer"}
	}
	r := f(x)
	if math.Abs(r) < 1<<62 {
		return int64(r), nil
	}
	b, _ := new(big.Float).SetFloat64(r).Int(nil)
	return b, nil
}

func fnJoin(_ *interp, a []any) (any, error) {
	l := items(a[1])
	s := make([]string, len(l))
	for i, e := range l {
		s[i] = e.(string)
	}
	return strings.Join(s, a[0].(string)), nil
}

func (in *interp) apply(ref any, v any) (any, error) {
	return in.visit(ref.(exprRef).n, v)
}

func fnMap(in *interp, a []any) (any, error) {
	out := jinja.NewList()
	for _, e := range slices.Clone(items(a[1])) {
		r, err := in.apply(a[0], e)
		if err != nil {
			return nil, err
		}
		out.Items = append(out.Items, r)
	}
	return out, nil
}

// extreme is max() (op ">") or min() (op "<"): the first of the extreme
// items.
func extreme(v any, op string) (any, error) {
	l := items(v)
	if len(l) == 0 {
		return nil, nil
	}
	best := l[0]
	for _, e := range l[1:] {
		b, err := pyCompare(e, best, op)
		if err != nil {
			return nil, err
		}
		if b {
			best = e
		}
	}
	return best, nil
}

func fnMerge(_ *interp, a []any) (any, error) {
	out := payload.NewMap()
	for _, arg := range a {
		if err := dictUpdate(out, arg); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// dictUpdate is dict.update(arg) for what merge() passes (only its first
// argument is type-checked).
func dictUpdate(out *payload.Map, arg any) error {
	switch x := arg.(type) {
	case *payload.Map:
		for _, it := range x.Items() {
			jinja.DictSet(out, it.Key, it.Value)
		}
		return nil
	case *jinja.Undefined:
		return undefErr(x)
	case nil, bool, int64, *big.Int, float64:
		return &Error{Kind: "TypeError", Msg: fmt.Sprintf("'%s' object is not iterable", typeName(arg))}
	}
	seq, err := jinja.Iterate(arg)
	if err != nil {
		return err
	}
	for i, e := range seq {
		pair, err := jinja.Iterate(e)
		if err != nil {
			return &Error{Kind: "TypeError", Msg: fmt.Sprintf("cannot convert dictionary update sequence element #%d to a sequence", i)}
		}
		if len(pair) != 2 {
			return &Error{Kind: "ValueError", Msg: fmt.Sprintf("dictionary update sequence element #%d has length %d; 2 is required", i, len(pair))}
		}
		if _, ok := pair[0].(*jinja.List); ok {
			return &Error{Kind: "TypeError", Msg: "unhashable type: 'list'"}
		}
		if _, ok := pair[0].(*payload.Map); ok {
			return &Error{Kind: "TypeError", Msg: "unhashable type: 'dict'"}
		}
		jinja.DictSet(out, pair[0], pair[1])
	}
	return nil
}

// sortStable is Python's sorted() on keys with <: stable.
func sortStable(l []any, keys []any) error {
	idx := make([]int, len(l))
	for i := range idx {
		idx[i] = i
	}
	var err error
	sort.SliceStable(idx, func(i, j int) bool {
		if err != nil {
			return false
		}
		lt, e := pyCompare(keys[idx[i]], keys[idx[j]], "<")
		if e != nil {
			err = e
		}
		return lt
	})
	if err != nil {
		return err
	}
	sorted := make([]any, len(l))
	for i, k := range idx {
		sorted[i] = l[k]
	}
	copy(l, sorted)
	return nil
}

func fnSort(_ *interp, a []any) (any, error) {
	l := slices.Clone(items(a[0]))
	if err := sortStable(l, slices.Clone(l)); err != nil {
		return nil, err
	}
	return jinja.NewList(l...), nil
}

func fnKeys(_ *interp, a []any) (any, error) {
	out := jinja.NewList()
	for _, it := range a[0].(*payload.Map).Items() {
		out.Items = append(out.Items, it.Key)
	}
	return out, nil
}

func fnValues(_ *interp, a []any) (any, error) {
	out := jinja.NewList()
	for _, it := range a[0].(*payload.Map).Items() {
		out.Items = append(out.Items, it.Value)
	}
	return out, nil
}

// fnType is type(): isinstance checks, None for anything else.
func fnType(_ *interp, a []any) (any, error) {
	switch a[0].(type) {
	case string, jinja.Markup:
		return "string", nil
	case bool:
		return "boolean", nil
	case *jinja.List:
		return "array", nil
	case *payload.Map:
		return "object", nil
	case int64, *big.Int, float64:
		return "number", nil
	case nil:
		return "null", nil
	}
	return nil, nil
}

func (in *interp) keyFunc(ref any, allowed []string, fn string) func(any) (any, error) {
	return func(x any) (any, error) {
		r, err := in.apply(ref, x)
		if err != nil {
			return nil, err
		}
		if t := jmesType(typeName(r)); !slices.Contains(allowed, t) {
			return nil, typeErr(fn, r, t, allowed)
		}
		return r, nil
	}
}

func fnSortBy(in *interp, a []any) (any, error) {
	l := items(a[0])
	if len(l) == 0 {
		return a[0], nil
	}
	first, err := in.apply(a[1], l[0])
	if err != nil {
		return nil, err
	}
	req := jmesType(typeName(first))
	if req != "number" && req != "string" {
		return nil, typeErr("sort_by", l[0], req, []string{"string", "number"})
	}
	key := in.keyFunc(a[1], []string{req}, "sort_by")
	l = slices.Clone(l)
	keys := make([]any, len(l))
	for i, e := range l {
		if keys[i], err = key(e); err != nil {
			return nil, err
		}
	}
	if err := sortStable(l, keys); err != nil {
		return nil, err
	}
	return jinja.NewList(l...), nil
}

// extremeBy is min_by/max_by: min(array, key=...) or max(...), the first
// extreme item.
func (in *interp) extremeBy(a []any, fn, op string) (any, error) {
	key := in.keyFunc(a[1], []string{"number", "string"}, fn)
	l := items(a[0])
	if len(l) == 0 {
		return nil, nil
	}
	best := l[0]
	bestKey, err := key(best)
	if err != nil {
		return nil, err
	}
	for _, e := range l[1:] {
		k, err := key(e)
		if err != nil {
			return nil, err
		}
		b, err := pyCompare(k, bestKey, op)
		if err != nil {
			return nil, err
		}
		if b {
			best, bestKey = e, k
		}
	}
	return best, nil
}
