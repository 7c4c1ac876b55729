package jinja

import (
	"fmt"
	"math"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/payload"
)

// List is a Python list: a mutable sequence shared by reference.
type List struct{ Items []any }

// NewList wraps items as a List.
func NewList(items ...any) *List { return &List{Items: items} }

// Tuple is a Python tuple.
type Tuple []any

// String is the tuple's repr (it also tells tuples apart as dict keys).
func (t Tuple) String() string { return Repr(t) }

// Undefined is Jinja2's undefined value: what a missing variable, key or
// attribute evaluates to. Strict ones (StrictUndefined, Salt's default)
// fail on every use but `is defined` and `default`.
type Undefined struct {
	Name   string
	Obj    any  // the object the attribute or item was looked up on
	HasObj bool // Obj is meaningful
	Key    any  // non-string item key (for "has no element")
	IsKey  bool
	Hint   string
	Strict bool
	// Kind is the exception using the value raises (UndefinedError when
	// empty; SecurityError for the sandbox's unsafe attributes).
	Kind string
}

// Message is Jinja2's text for the undefined value.
func (u *Undefined) Message() string {
	if u.Hint != "" {
		return u.Hint
	}
	if !u.HasObj {
		return pyStrRepr(u.Name) + " is undefined"
	}
	if u.IsKey {
		return objectTypeRepr(u.Obj) + " has no element " + Repr(u.Key)
	}
	return pyStrRepr(objectTypeRepr(u.Obj)) + " has no attribute " + pyStrRepr(u.Name)
}

func (u *Undefined) err() error {
	kind := u.Kind
	if kind == "" {
		kind = "UndefinedError"
	}
	return &Error{Kind: kind, Msg: u.Message()}
}

// objectTypeRepr is Jinja2's object_type_repr: builtins by name, other
// classes with their module.
func objectTypeRepr(v any) string {
	if v == nil {
		return "None"
	}
	mod := map[string]string{
		"TemplateModule": "jinja2.environment.", "Namespace": "jinja2.utils.", "Cycler": "jinja2.utils.",
		"LoopContext": "jinja2.runtime.", "Macro": "jinja2.runtime.", "TemplateReference": "jinja2.runtime.",
		"_GroupTuple": "jinja2.filters.", "Undefined": "jinja2.runtime.", "StrictUndefined": "jinja2.runtime.",
	}
	if t, ok := v.(PyTyper); ok {
		m, n := t.PyType()
		if m != "" && m != "builtins" {
			return m + "." + n + " object"
		}
		return n + " object"
	}
	n := TypeName(v)
	return mod[n] + n + " object"
}

// Callable is a value templates can call.
type Callable interface {
	Call(r *Runtime, args []any, kwargs *payload.Map) (any, error)
}

// Func adapts a Go function to Callable; args and kwargs are the call's
// positional and keyword arguments (kwargs in call order, possibly nil).
type Func func(r *Runtime, args []any, kwargs *payload.Map) (any, error)

// Call calls f.
func (f Func) Call(r *Runtime, args []any, kwargs *payload.Map) (any, error) {
	return f(r, args, kwargs)
}

// Class is a Python class templates can call (dict, namespace): a
// callable whose repr is "<class 'name'>".
type Class struct {
	Name string // the qualified name: "dict", "jinja2.utils.Namespace"
	Fn   Func
}

// Call calls the class (constructs an instance).
func (c *Class) Call(r *Runtime, args []any, kw *payload.Map) (any, error) {
	return c.Fn(r, args, kw)
}

// Attrs is a value with attributes (obj.name).
type Attrs interface {
	GetAttr(name string) (any, bool)
}

// Items is a value that can be subscripted with obj[key] and is not a
// dict or list.
type Items interface {
	GetItem(key any) (any, bool)
}

// Namespace is the value of namespace(): attributes set with
// {% set ns.x = ... %}.
type Namespace struct{ M *payload.Map }

// GetAttr returns an attribute.
func (n *Namespace) GetAttr(name string) (any, bool) { return n.M.Get(name) }

// PyTyper is a Go value that names its Python class (module and name),
// for error messages.
type PyTyper interface {
	PyType() (module, name string)
}

// TypeName is Python's type(v).__name__ for engine values.
func TypeName(v any) string {
	switch x := v.(type) {
	case PyTyper:
		_, n := x.PyType()
		return n
	case *List:
		return "list"
	case Tuple:
		return "tuple"
	case *Undefined:
		if x.Strict {
			return "StrictUndefined"
		}
		return "Undefined"
	case *Macro:
		return "Macro"
	case *Class:
		return "type"
	case *boundMethod:
		return "builtin_function_or_method"
	case Func:
		return "function"
	case *Namespace:
		return "Namespace"
	case *LoopContext:
		return "LoopContext"
	case *Module:
		return "TemplateModule"
	case *payload.Map:
		return "dict"
	case []any:
		return "list"
	case *DictView:
		return "dict_" + x.Kind
	case *rangeVal:
		return "range"
	case *GroupTuple:
		return "_GroupTuple"
	case *Cycler:
		return "Cycler"
	case *selfRef:
		return "TemplateReference"
	}
	return pyfmt.TypeName(v)
}

// Import converts Go data (payload values, Go slices and maps) into the
// engine's values: lists become *List, integers int64 (or *big.Int),
// floats float64, maps *payload.Map; it copies containers, so templates
// never change the caller's data.
func Import(v any) any { return importDepth(v, 0) }

// Live hands an engine value (one Import returned) to a render without
// the copy Import makes: the template's changes to it (dict.update in a
// {% do %}) reach the caller, as Python shares the object.
type Live struct{ V any }

func importDepth(v any, depth int) any {
	if depth > 1000 {
		return nil
	}
	switch x := v.(type) {
	case Live:
		return x.V
	case nil, string, bool, int64, float64, *big.Int, []byte, Tuple, *List, *Undefined, Callable, *Namespace, time.Time, Markup:
		return v
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = importDepth(e, depth+1)
		}
		return &List{Items: out}
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return &List{Items: out}
	case *payload.Map:
		if x == nil {
			return payload.NewMap()
		}
		m := &payload.Map{}
		for _, it := range x.Items() {
			m.SetKey(importKey(it.Key), importDepth(it.Value, depth+1))
		}
		return m
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		m := &payload.Map{}
		for _, k := range keys {
			m.Set(k, importDepth(x[k], depth+1))
		}
		return m
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case int16:
		return int64(x)
	case int8:
		return int64(x)
	case uint8:
		return int64(x)
	case uint16:
		return int64(x)
	case uint32:
		return int64(x)
	case uint:
		return normBig(new(big.Int).SetUint64(uint64(x)))
	case uint64:
		return normBig(new(big.Int).SetUint64(x))
	case float32:
		return float64(x)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = importDepth(rv.Index(i).Interface(), depth+1)
		}
		return &List{Items: out}
	case reflect.Pointer:
		if rv.IsNil() {
			return nil
		}
	}
	return v
}

// importShallow converts what a filter or function returned when it is
// not an engine value (a []any, a Go int, ...) and keeps engine values,
// dicts included, as they are: a method like setdefault returns the
// stored dict itself, which the template may change.
func importShallow(v any) any {
	switch v.(type) {
	case nil, string, bool, int64, float64, *big.Int, *payload.Map, *List, Tuple, *Undefined, Markup:
		return v
	}
	return Import(v)
}

func importKey(k any) any {
	switch x := k.(type) {
	case []any:
		return Tuple(x)
	case []byte:
		return x
	}
	return importDepth(k, 0)
}

// Export converts engine values back to plain payload data: *List and
// Tuple become []any, dicts are copied; undefined becomes nil.
func Export(v any) any { return ExportOptions{}.Export(v) }

// ExportOptions says which engine values an export keeps as they are
// below the top level of the value, where Python code handed the value
// would still meet them as such: Jinja2's Undefined object, a tuple, an
// unconsumed iterator. Salt's filters written in Go work on exported data
// and return the items they do not touch as the same objects.
type ExportOptions struct {
	// Undefined keeps undefined items (Export makes them None).
	Undefined bool
	// Tuples keeps tuple items (Export makes them lists).
	Tuples bool
	// Iterators keeps iterators (generators, reversed lists, dict views)
	// unconsumed, also at the top level (Export reads them as lists).
	Iterators bool
	// TupleKeys keeps a dict's tuple keys as the keys they are: a Tuple
	// with Tuples, else a list (what YAML's dumper writes for a tuple).
	// Export writes their repr, a str key the wire and modules can take.
	TupleKeys bool
}

// Export converts v as the options say.
func (o ExportOptions) Export(v any) any { return o.export(v, 0) }

func (o ExportOptions) export(v any, depth int) any {
	if depth > 1000 {
		return nil
	}
	switch x := v.(type) {
	case *List:
		out := make([]any, len(x.Items))
		for i, e := range x.Items {
			out[i] = o.export(e, depth+1)
		}
		return out
	case Tuple:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = o.export(e, depth+1)
		}
		if o.Tuples && depth > 0 {
			return Tuple(out)
		}
		return out
	case *payload.Map:
		if x == nil {
			return x
		}
		m := &payload.Map{}
		for _, it := range x.Items() {
			k := demote(it.Key)
			if t, ok := k.(Tuple); ok {
				if o.TupleKeys {
					k = o.export(t, depth+1)
				} else {
					k = Repr(t)
				}
			}
			m.SetKey(k, o.export(it.Value, depth+1))
		}
		return m
	case *Undefined:
		if o.Undefined && depth > 0 {
			return x
		}
		return nil
	case Markup:
		return string(x)
	case *Namespace:
		return o.export(x.M, depth+1)
	case Iterable:
		if o.Iterators {
			switch x.(type) {
			case *Generator, *DictView:
				return x
			}
		}
		// dict views, range objects and groupby items leave as lists
		items, err := x.Iter()
		if err != nil {
			return nil
		}
		return o.export(&List{Items: items}, depth)
	}
	return v
}

func normBig(b *big.Int) any {
	if b.IsInt64() {
		return b.Int64()
	}
	return b
}

func parseBigInt(s string, base int) (any, bool) {
	b, ok := new(big.Int).SetString(s, base)
	if !ok {
		return int64(0), false
	}
	return normBig(b), true
}

// Truthy is Python's bool(v); a strict undefined value is an error.
func Truthy(v any) (bool, error) {
	switch x := v.(type) {
	case nil:
		return false, nil
	case bool:
		return x, nil
	case int64:
		return x != 0, nil
	case *big.Int:
		return x.Sign() != 0, nil
	case float64:
		return x != 0, nil
	case string:
		return x != "", nil
	case Markup:
		return x != "", nil
	case []byte:
		return len(x) > 0, nil
	case *List:
		return len(x.Items) > 0, nil
	case []any:
		return len(x) > 0, nil
	case Tuple:
		return len(x) > 0, nil
	case *payload.Map:
		return x.Len() > 0, nil
	case *Undefined:
		if x.Strict {
			return false, x.err()
		}
		return false, nil
	case *rangeVal:
		return x.n() > 0, nil
	case *DictView:
		return len(x.Items) > 0, nil
	case *Set:
		return len(x.items) > 0, nil
	}
	return true, nil
}

func truthy(v any) bool { b, _ := Truthy(v); return b }

// Str is Python's str(v).
func Str(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case Markup:
		return string(x), nil
	case *Undefined:
		if x.Strict {
			return "", x.err()
		}
		return "", nil
	case time.Time:
		return pyfmt.Str(x), nil
	case *Module:
		return x.output, nil
	}
	s := Repr(v)
	if len(s) >= 2*maxReprNesting && nestedDeeper(v, maxReprNesting, 0) {
		return "", &Error{Kind: "RecursionError", Msg: "maximum recursion depth exceeded while getting the repr of an object"}
	}
	return s, nil
}

// maxReprNesting is how deeply nested lists, tuples and dicts Salt's
// Jinja can still str(): past it Python's repr meets the recursion limit
// (1000 frames, some taken by Salt's and Jinja2's own calls; measured
// with |string: a 990-deep list prints, a 991-deep one is a
// RecursionError).
const maxReprNesting = 990

// nestedDeeper reports whether containers nest in v deeper than limit.
func nestedDeeper(v any, limit, depth int) bool {
	if depth > limit {
		return true
	}
	var items []any
	switch x := v.(type) {
	case *List:
		items = x.Items
	case Tuple:
		items = x
	case *payload.Map:
		for _, it := range x.Items() {
			if nestedDeeper(it.Key, limit, depth+1) || nestedDeeper(it.Value, limit, depth+1) {
				return true
			}
		}
		return false
	default:
		return false
	}
	for _, e := range items {
		if nestedDeeper(e, limit, depth+1) {
			return true
		}
	}
	return false
}

// Repr is Python's repr(v).
func Repr(v any) string {
	var b strings.Builder
	writeRepr(&b, v, 0)
	return b.String()
}

func pyStrRepr(s string) string { return pyfmt.Repr(s) }

func writeRepr(b *strings.Builder, v any, depth int) {
	if depth > maxReprNesting+1 || b.Len() > 1<<22 {
		b.WriteString("...")
		return
	}
	switch x := v.(type) {
	case *List:
		writeSeq(b, "[", "]", x.Items, depth, false)
	case []any:
		writeSeq(b, "[", "]", x, depth, false)
	case Tuple:
		writeSeq(b, "(", ")", x, depth, true)
	case *payload.Map:
		b.WriteByte('{')
		for i, it := range x.Items() {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, it.Key, depth+1)
			b.WriteString(": ")
			writeRepr(b, it.Value, depth+1)
		}
		b.WriteByte('}')
	case *Undefined:
		b.WriteString("Undefined")
	case Markup:
		b.WriteString("Markup(" + pyStrRepr(string(x)) + ")")
	case float64:
		b.WriteString(pyfmt.FloatRepr(x))
	case *Macro:
		if x.anonymous {
			b.WriteString("<Macro anonymous>")
			break
		}
		fmt.Fprintf(b, "<Macro %s>", pyStrRepr(x.Name))
	case *Namespace:
		b.WriteString("<Namespace ")
		writeRepr(b, x.M, depth+1)
		b.WriteString(">")
	case *LoopContext:
		fmt.Fprintf(b, "<LoopContext %d/%d>", x.index0+1, len(x.items))
	case *Module:
		fmt.Fprintf(b, "<Template %s>", pyStrRepr(x.name))
	case *Class:
		fmt.Fprintf(b, "<class %s>", pyStrRepr(x.Name))
	case *boundMethod:
		b.WriteString(x.String())
	case Func:
		b.WriteString("<function>")
	case fmt.Stringer:
		b.WriteString(x.String())
	default:
		b.WriteString(pyfmt.Repr(v))
	}
}

func writeSeq(b *strings.Builder, open, close string, items []any, depth int, tuple bool) {
	b.WriteString(open)
	for i, e := range items {
		if i > 0 {
			b.WriteString(", ")
		}
		writeRepr(b, e, depth+1)
	}
	if tuple && len(items) == 1 {
		b.WriteByte(',')
	}
	b.WriteString(close)
}

// number classification
type numKind int

const (
	nkNone numKind = iota
	nkInt
	nkBig
	nkFloat
)

func numOf(v any) (numKind, int64, *big.Int, float64) {
	switch x := v.(type) {
	case bool:
		if x {
			return nkInt, 1, nil, 0
		}
		return nkInt, 0, nil, 0
	case int64:
		return nkInt, x, nil, 0
	case *big.Int:
		return nkBig, 0, x, 0
	case float64:
		return nkFloat, 0, nil, x
	case int:
		return nkInt, int64(x), nil, 0
	}
	return nkNone, 0, nil, 0
}

func toBig(k numKind, i int64, b *big.Int) *big.Int {
	if k == nkBig {
		return b
	}
	return big.NewInt(i)
}

func toFloat(k numKind, i int64, b *big.Int, f float64) float64 {
	switch k {
	case nkInt:
		return float64(i)
	case nkBig:
		x, _ := new(big.Float).SetInt(b).Float64()
		return x
	}
	return f
}

// Equal is Python's ==.
func Equal(a, b any) bool { return equalDepth(a, b, 0) }

func equalDepth(a, b any, depth int) bool {
	if depth > 200 {
		return false
	}
	a, b = demote(a), demote(b)
	ka, ia, ba, fa := numOf(a)
	kb, ib, bb, fb := numOf(b)
	if ka != nkNone && kb != nkNone {
		if ka == nkFloat || kb == nkFloat {
			return numCmp(ka, ia, ba, fa, kb, ib, bb, fb) == 0
		}
		if ka == nkInt && kb == nkInt {
			return ia == ib
		}
		return toBig(ka, ia, ba).Cmp(toBig(kb, ib, bb)) == 0
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []byte:
		y, ok := b.([]byte)
		return ok && string(x) == string(y)
	case *List:
		y, ok := b.(*List)
		if !ok {
			return false
		}
		return seqEqual(x.Items, y.Items, depth)
	case Tuple:
		y, ok := b.(Tuple)
		return ok && seqEqual(x, y, depth)
	case *payload.Map:
		y, ok := b.(*payload.Map)
		if !ok || x.Len() != y.Len() {
			return false
		}
		eq := true
		x.Range(func(k, v any) bool {
			w, ok := mapGet(y, k)
			if !ok || !equalDepth(v, w, depth+1) {
				eq = false
			}
			return eq
		})
		return eq
	case *Undefined:
		_, ok := b.(*Undefined)
		return ok
	case *Set:
		y, ok := b.(*Set)
		if !ok || len(x.items) != len(y.items) {
			return false
		}
		for _, e := range x.items {
			if !seqContains(y.items, e) {
				return false
			}
		}
		return true
	}
	if ua, ok := b.(*Undefined); ok {
		_ = ua
		return false
	}
	return pyfmt.Equal(a, b)
}

// numCmp compares two numbers at least one of which is a float exactly,
// as Python does (2**53+1 != float(2**53+1)); 2 means unordered (NaN).
func numCmp(ka numKind, ia int64, ba *big.Int, fa float64, kb numKind, ib int64, bb *big.Int, fb float64) int {
	exact := func(k numKind, i int64, b *big.Int, f float64) (*big.Float, bool) {
		switch k {
		case nkFloat:
			if math.IsNaN(f) {
				return nil, false
			}
			return new(big.Float).SetFloat64(f), true
		case nkBig:
			return new(big.Float).SetInt(b), true
		}
		return new(big.Float).SetInt64(i), true
	}
	x, ok1 := exact(ka, ia, ba, fa)
	y, ok2 := exact(kb, ib, bb, fb)
	if !ok1 || !ok2 {
		return 2
	}
	return x.Cmp(y)
}

func seqEqual(x, y []any, depth int) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if !equalDepth(x[i], y[i], depth+1) {
			return false
		}
	}
	return true
}

func typeErr(format string, args ...any) error {
	return &Error{Kind: "TypeError", Msg: fmt.Sprintf(format, args...)}
}

func valueErr(format string, args ...any) error {
	return &Error{Kind: "ValueError", Msg: fmt.Sprintf(format, args...)}
}

// Compare orders a and b like Python's <, returning -1, 0 or 1; op names
// the operator for the TypeError.
func Compare(a, b any, op string) (int, error) {
	a, b = demote(a), demote(b)
	ka, ia, ba, fa := numOf(a)
	kb, ib, bb, fb := numOf(b)
	if ka != nkNone && kb != nkNone {
		if ka == nkFloat || kb == nkFloat {
			return numCmp(ka, ia, ba, fa, kb, ib, bb, fb), nil
		}
		if ka == nkInt && kb == nkInt {
			switch {
			case ia < ib:
				return -1, nil
			case ia > ib:
				return 1, nil
			}
			return 0, nil
		}
		return toBig(ka, ia, ba).Cmp(toBig(kb, ib, bb)), nil
	}
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), nil
		}
	case *List:
		if y, ok := b.(*List); ok {
			return seqCompare(x.Items, y.Items, op)
		}
	case Tuple:
		if y, ok := b.(Tuple); ok {
			return seqCompare(x, y, op)
		}
	case *Undefined:
		// Jinja2's Undefined (lenient too) raises on <, <=, >, >=
		return 0, x.err()
	}
	if u, ok := b.(*Undefined); ok {
		return 0, u.err()
	}
	return 0, typeErr("'%s' not supported between instances of '%s' and '%s'", op, TypeName(a), TypeName(b))
}

// seqCompare orders two lists or tuples as Python does: the first items
// not equal by == (the same object is equal; a strict undefined item
// raises in ==) decide, else the lengths.
func seqCompare(x, y []any, op string) (int, error) {
	for i := 0; i < len(x) && i < len(y); i++ {
		eq, err := eqStrict(x[i], y[i])
		if err != nil {
			return 0, err
		}
		if eq {
			continue
		}
		return Compare(x[i], y[i], op)
	}
	switch {
	case len(x) < len(y):
		return -1, nil
	case len(x) > len(y):
		return 1, nil
	}
	return 0, nil
}

func hashable(v any) error {
	switch u := v.(type) {
	case *List, *payload.Map, []any, *Set:
		return typeErr("unhashable type: '%s'", TypeName(v))
	case *Undefined:
		if u.Strict {
			return u.err()
		}
	case Tuple:
		// hash(tuple) hashes every item
		for _, e := range u {
			if err := hashable(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// Contains is Python's "x in container".
func Contains(container, x any) (bool, error) {
	container = demote(container)
	if _, ok := container.(string); ok {
		x = demote(x)
	}
	switch c := container.(type) {
	case string:
		s, ok := x.(string)
		if !ok {
			// str.__contains__ refuses an undefined value as any other
			return false, typeErr("'in <string>' requires string as left operand, not %s", TypeName(x))
		}
		return strings.Contains(c, s), nil
	case *List:
		return seqContainsStrict(c.Items, x)
	case Tuple:
		return seqContainsStrict(c, x)
	case []any:
		return seqContainsStrict(c, x)
	case *payload.Map:
		if err := hashable(x); err != nil {
			return false, err
		}
		_, ok := mapGet(c, x)
		return ok, nil
	case *Undefined:
		if c.Strict {
			return false, c.err()
		}
		return false, nil
	case *Generator:
		// an iterator is read up to the first equal item (the rest is
		// left for the next reader), or to its end
		for {
			e, ok, err := c.Next()
			if err != nil || !ok {
				return false, err
			}
			if eq, err := eqStrict(e, x); err != nil || eq {
				return eq, err
			}
		}
	case *Set:
		// a set hashes x first: a strict undefined value raises even
		// when the set is empty
		if err := strictCheck(x); err != nil {
			return false, err
		}
		return seqContains(c.items, x), nil
	case Iterable:
		// range, dict views, ...: each member compared with x
		items, err := c.Iter()
		if err != nil {
			return false, err
		}
		return seqContainsStrict(items, x)
	case Items:
		_, ok := c.GetItem(x)
		return ok, nil
	}
	return false, typeErr("argument of type '%s' is not iterable", TypeName(container))
}

// seqContainsStrict is "x in list": comparing a strict undefined value
// with a member raises.
func seqContainsStrict(items []any, x any) (bool, error) {
	for _, e := range items {
		if eq, err := eqStrict(e, x); err != nil || eq {
			return eq, err
		}
	}
	return false, nil
}

// EqualStrict is Python's a == b: a strict undefined operand, or one met
// inside lists, tuples and dicts, raises its UndefinedError.
func EqualStrict(a, b any) (bool, error) {
	if err := strictCheck(a, b); err != nil {
		return false, err
	}
	return equalStrict(a, b, 0)
}

// eqStrict is PyObject_RichCompareBool(item, x, Py_EQ) as list.count,
// list.index, list.remove and `in` call it: the same object is equal,
// else comparing a strict undefined value (either side) raises.
func eqStrict(item, x any) (bool, error) { return eqStrictDepth(item, x, 0) }

func eqStrictDepth(a, b any, depth int) (bool, error) {
	switch x := a.(type) {
	case *Undefined:
		if y, ok := b.(*Undefined); ok && x == y {
			return true, nil
		}
	case *List:
		if y, ok := b.(*List); ok && x == y {
			return true, nil
		}
	case *payload.Map:
		if y, ok := b.(*payload.Map); ok && x == y {
			return true, nil
		}
	}
	if err := strictCheck(a, b); err != nil {
		return false, err
	}
	return equalStrict(a, b, depth)
}

// equalStrict is Python's == for operands that are not strict undefined
// values themselves: lists, tuples and dicts compare their items as
// Python's list, tuple and dict comparisons do (lengths first, then item
// by item with PyObject_RichCompareBool, a dict in its own key order), so
// a strict undefined value met inside raises, as StrictUndefined.__eq__
// does; the first unequal item ends the comparison before later ones are
// touched.
func equalStrict(a, b any, depth int) (bool, error) {
	if depth > 200 {
		return false, nil
	}
	switch x := a.(type) {
	case *List:
		if y, ok := b.(*List); ok {
			return seqEqualStrict(x.Items, y.Items, depth)
		}
	case Tuple:
		if y, ok := b.(Tuple); ok {
			return seqEqualStrict(x, y, depth)
		}
	case *payload.Map:
		y, ok := b.(*payload.Map)
		if !ok || x.Len() != y.Len() {
			break
		}
		eq := true
		var err error
		x.Range(func(k, v any) bool {
			w, ok := mapGet(y, k)
			if !ok {
				eq = false
				return false
			}
			eq, err = eqStrictDepth(v, w, depth+1)
			return eq && err == nil
		})
		return eq && err == nil, err
	}
	return equalDepth(a, b, depth), nil
}

func seqEqualStrict(x, y []any, depth int) (bool, error) {
	if len(x) != len(y) {
		return false, nil
	}
	for i := range x {
		if eq, err := eqStrictDepth(x[i], y[i], depth+1); err != nil || !eq {
			return false, err
		}
	}
	return true, nil
}

func seqContains(items []any, x any) bool {
	for _, e := range items {
		if Equal(e, x) {
			return true
		}
	}
	return false
}

// DictGet is Python's d[k] lookup of a dict: 1, 1.0 and True are one
// key, as are 2 ** 64 and 2.0 ** 64 or (1, 2) and (True, 2.0).
func DictGet(m *payload.Map, k any) (any, bool) { return mapGet(m, k) }

// DictSet is Python's d[k] = v: a key equal to an existing one replaces
// that key's value and keeps the key object.
func DictSet(m *payload.Map, k, v any) { mapSet(m, k, v) }

// mapGet looks a key up in a dict with Python's hashing rules (1, 1.0
// and True are the same key).
func mapGet(m *payload.Map, k any) (any, bool) {
	if v, ok := m.GetKey(k); ok {
		return v, true
	}
	// a Markup key is the same key as its str
	switch x := k.(type) {
	case Markup:
		return m.GetKey(string(x))
	case string:
		if v, ok := m.GetKey(Markup(x)); ok {
			return v, true
		}
	}
	switch x := k.(type) {
	case bool:
		if x {
			return mapGetAlt(m, int64(1), float64(1))
		}
		return mapGetAlt(m, int64(0), float64(0))
	case int64:
		return mapGetAlt(m, float64(x), x == 1 || x == 0)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<62 {
			return mapGetAlt(m, int64(x), x == 1 || x == 0)
		}
		if x == math.Trunc(x) && !math.IsInf(x, 0) {
			return mapGetEqual(m, k)
		}
	case *big.Int:
		return mapGetEqual(m, k)
	case Tuple:
		// (1, 2) and (True, 2.0) are one key
		return mapGetEqual(m, k)
	}
	return nil, false
}

// mapGetEqual finds a key equal to k by Python's == among the keys of
// k's kind (numbers, tuples): 2 ** 64 and 2.0 ** 64 are one key.
func mapGetEqual(m *payload.Map, k any) (any, bool) {
	_, tuple := k.(Tuple)
	for _, it := range m.Items() {
		switch it.Key.(type) {
		case Tuple:
			if !tuple {
				continue
			}
		case bool, int64, float64, *big.Int:
			if tuple {
				continue
			}
		default:
			continue
		}
		if Equal(it.Key, k) {
			return it.Value, true
		}
	}
	return nil, false
}

func mapGetAlt(m *payload.Map, alts ...any) (any, bool) {
	for _, a := range alts {
		if b, ok := a.(bool); ok {
			if !b {
				continue
			}
			// an int 0/1 or float may equal a bool key
			for _, it := range m.Items() {
				if _, isBool := it.Key.(bool); isBool && Equal(it.Key, alts[0]) {
					return it.Value, true
				}
			}
			continue
		}
		if v, ok := m.GetKey(a); ok {
			return v, true
		}
	}
	return nil, false
}

// mapSet sets a key, keeping an existing equal key (Python keeps the
// first key object).
func mapSet(m *payload.Map, k, v any) {
	if _, ok := m.GetKey(k); ok {
		m.SetKey(k, v)
		return
	}
	var alt any
	switch x := k.(type) {
	case Markup:
		alt = string(x)
	case string:
		alt = Markup(x)
	}
	if alt != nil {
		if _, ok := m.GetKey(alt); ok {
			m.SetKey(alt, v)
			return
		}
	}
	for _, it := range m.Items() {
		if Equal(it.Key, k) {
			if _, isStr := it.Key.(string); !isStr {
				m.SetKey(it.Key, v)
				return
			}
		}
	}
	m.SetKey(k, v)
}

// runesOf returns s as runes.
func runesOf(s string) []rune { return []rune(s) }

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// Len is Python's len(v).
func Len(v any) (int, error) {
	switch x := v.(type) {
	case string:
		return utf8.RuneCountInString(x), nil
	case Markup:
		return utf8.RuneCountInString(string(x)), nil
	case []byte:
		return len(x), nil
	case *List:
		return len(x.Items), nil
	case Tuple:
		return len(x), nil
	case []any:
		return len(x), nil
	case *payload.Map:
		return x.Len(), nil
	case *Undefined:
		if x.Strict {
			return 0, x.err()
		}
		return 0, nil
	case *rangeVal:
		return int(x.n()), nil
	case *DictView:
		return len(x.Items), nil
	case *Set:
		return len(x.items), nil
	}
	return 0, typeErr("object of type '%s' has no len()", TypeName(v))
}

// Iterate returns the items iterating v gives in Python (a dict gives its
// keys, a string its characters).
func Iterate(v any) ([]any, error) {
	v = demote(v)
	switch x := v.(type) {
	case *List:
		return append([]any(nil), x.Items...), nil
	case Tuple:
		return []any(x), nil
	case []any:
		return x, nil
	case string:
		out := make([]any, 0, len(x))
		for _, r := range x {
			out = append(out, string(r))
		}
		return out, nil
	case []byte:
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = int64(c)
		}
		return out, nil
	case *payload.Map:
		out := make([]any, 0, x.Len())
		for _, it := range x.Items() {
			out = append(out, it.Key)
		}
		return out, nil
	case *Undefined:
		if x.Strict {
			return nil, x.err()
		}
		return nil, nil
	case Iterable:
		return x.Iter()
	}
	return nil, typeErr("'%s' object is not iterable", TypeName(v))
}

// Iterable is a Go value templates can iterate.
type Iterable interface {
	Iter() ([]any, error)
}

// pyIndex normalises a Python index against length n.
func pyIndex(i, n int) (int, bool) {
	if i < 0 {
		i += n
	}
	return i, i >= 0 && i < n
}

func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case int:
		return int64(x), true
	}
	return 0, false
}

// sliceIndices is Python's slice.indices(n).
func sliceIndices(s *sliceVal, n int) (start, stop, step int, err error) {
	step = 1
	if s.step != nil {
		st, ok := asInt(s.step)
		if !ok {
			return 0, 0, 0, typeErr("slice indices must be integers or None or have an __index__ method")
		}
		if st == 0 {
			return 0, 0, 0, valueErr("slice step cannot be zero")
		}
		step = int(clampInt(st))
	}
	get := func(v any, def int) (int, error) {
		if v == nil {
			return def, nil
		}
		i, ok := asInt(v)
		if !ok {
			if b, isBig := v.(*big.Int); isBig {
				if b.Sign() < 0 {
					return math.MinInt32, nil
				}
				return math.MaxInt32, nil
			}
			return 0, typeErr("slice indices must be integers or None or have an __index__ method")
		}
		return int(clampInt(i)), nil
	}
	if step > 0 {
		if start, err = get(s.start, 0); err != nil {
			return
		}
		if stop, err = get(s.stop, n); err != nil {
			return
		}
		start = clampIdx(start, n, 0, n)
		stop = clampIdx(stop, n, 0, n)
	} else {
		if start, err = get(s.start, n-1); err != nil {
			return
		}
		if stop, err = get(s.stop, -n-1); err != nil {
			return
		}
		start = clampIdx(start, n, -1, n-1)
		stop = clampIdx(stop, n, -1, n-1)
	}
	return
}

func clampInt(i int64) int64 {
	if i > math.MaxInt32 {
		return math.MaxInt32
	}
	if i < math.MinInt32 {
		return math.MinInt32
	}
	return i
}

func clampIdx(i, n, lo, hi int) int {
	if i < 0 {
		i += n
		if i < lo {
			i = lo
		}
	} else if i > hi {
		i = hi
	}
	return i
}

type sliceVal struct{ start, stop, step any }

func sliceItems[T any](items []T, s *sliceVal) ([]T, error) {
	start, stop, step, err := sliceIndices(s, len(items))
	if err != nil {
		return nil, err
	}
	var out []T
	if step > 0 {
		for i := start; i < stop; i += step {
			out = append(out, items[i])
		}
	} else {
		for i := start; i > stop; i += step {
			out = append(out, items[i])
		}
	}
	return out, nil
}

func applySlice(v any, s *sliceVal) (any, error) {
	switch x := v.(type) {
	case Markup:
		out, err := applySlice(string(x), s)
		if str, ok := out.(string); ok {
			return Markup(str), err
		}
		return out, err
	case *List:
		out, err := sliceItems(x.Items, s)
		return &List{Items: out}, err
	case Tuple:
		out, err := sliceItems([]any(x), s)
		return Tuple(out), err
	case string:
		if isASCII(x) {
			out, err := sliceItems([]byte(x), s)
			return string(out), err
		}
		out, err := sliceItems(runesOf(x), s)
		return string(out), err
	case []byte:
		out, err := sliceItems(x, s)
		return out, err
	case *rangeVal:
		i0, i1, st, err := sliceIndices(s, int(x.n()))
		if err != nil {
			return nil, err
		}
		return &rangeVal{start: x.start + int64(i0)*x.step, stop: x.start + int64(i1)*x.step, step: x.step * int64(st)}, nil
	}
	return nil, typeErr("'%s' object is not subscriptable", TypeName(v))
}

// formatInt renders an int value in base 10.
func formatInt(v any) string {
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10)
	case *big.Int:
		return x.String()
	}
	return fmt.Sprint(v)
}
