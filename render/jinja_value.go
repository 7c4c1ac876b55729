package render

import (
	"fmt"
	"math"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nikolalohinski/gonja/v2/exec"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/payload"
)

// Value model inside templates (how Salt's Python data is carried through
// gonja):
//
//   - a dict is a *exec.Dict, gonja's own ordered dict (a slice of pairs):
//     gonja iterates, prints and sorts it in insertion order, the way
//     Python 3.7+ dicts behave. Plain Go maps would be iterated in sorted
//     key order by gonja, so they are never used for Salt data;
//   - a list is a *[]any: gonja dereferences the pointer for iteration,
//     indexing, slicing and "in", and the pointer gives Python's aliasing,
//     so {% do names.append(x) %} inside a loop changes the list the outer
//     scope sees;
//   - dict keys that are not strings in Python (ints, bools, None, floats)
//     are string-kinded Go types (intKey, ...) so that gonja's dict code,
//     which only accepts string keys, works; they turn back into their
//     Python type when data leaves the template;
//   - integers are int, floats float64, None is nil.
type (
	intKey   string
	boolKey  string
	noneKey  string
	floatKey string
)

// maxConvertDepth bounds recursive conversions of template data.
const maxConvertDepth = 512

// toJinja converts payload data to the template value model.
func toJinja(v any) any { return toJinjaDepth(v, 0) }

func toJinjaDepth(v any, depth int) any {
	if depth > maxConvertDepth {
		return nil
	}
	switch t := v.(type) {
	case *payload.Map:
		d := &exec.Dict{Pairs: make([]*exec.Pair, 0, t.Len())}
		for _, it := range t.Items() {
			d.Pairs = append(d.Pairs, &exec.Pair{Key: exec.AsValue(jinjaKey(it.Key)), Value: exec.AsValue(toJinjaDepth(it.Value, depth+1))})
		}
		return d
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = toJinjaDepth(e, depth+1)
		}
		return &out
	case []string:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = e
		}
		return &out
	case map[string]any:
		return toJinjaDepth(payload.FromGo(t), depth)
	case int64:
		return int(t)
	case int32:
		return int(t)
	case uint64:
		if t <= math.MaxInt64 {
			return int(t)
		}
		return new(big.Int).SetUint64(t)
	case float32:
		return float64(t)
	}
	return v
}

// jinjaKey converts a dict key to its template form.
func jinjaKey(k any) any {
	switch t := k.(type) {
	case string:
		return t
	case []byte:
		return string(t)
	case int64:
		return intKey(strconv.FormatInt(t, 10))
	case int:
		return intKey(strconv.Itoa(t))
	case uint64:
		return intKey(strconv.FormatUint(t, 10))
	case bool:
		if t {
			return boolKey("True")
		}
		return boolKey("False")
	case nil:
		return noneKey("None")
	case float64:
		return floatKey(pyfmt.FloatRepr(t))
	}
	return fmt.Sprint(k)
}

// fromJinjaKey converts a template dict key back to payload data.
func fromJinjaKey(k any) any {
	switch t := k.(type) {
	case *exec.Value:
		if t == nil || t.IsNil() {
			return nil
		}
		return fromJinjaKey(t.Interface())
	case intKey:
		if n, err := strconv.ParseInt(string(t), 10, 64); err == nil {
			return n
		}
		if n, err := strconv.ParseUint(string(t), 10, 64); err == nil {
			return n
		}
		return string(t)
	case boolKey:
		return t == "True"
	case noneKey:
		return nil
	case floatKey:
		if f, err := strconv.ParseFloat(string(t), 64); err == nil {
			return f
		}
		return string(t)
	}
	return fromJinja(k)
}

// fromJinja converts a template value back to payload data (ordered maps,
// []any, int64, float64, string, bool, nil). Callables become their
// Python-like description.
func fromJinja(v any) any { return fromJinjaDepth(v, 0) }

func fromJinjaDepth(v any, depth int) any {
	if depth > maxConvertDepth {
		return nil
	}
	switch t := v.(type) {
	case nil:
		return nil
	case *exec.Value:
		if t == nil || t.IsNil() {
			return nil
		}
		if t.IsError() {
			return t.Error()
		}
		return fromJinjaDepth(t.Interface(), depth)
	case *exec.Dict:
		if t == nil {
			return payload.NewMap()
		}
		return dictToPayload(t, depth)
	case exec.Dict:
		return dictToPayload(&t, depth)
	case *[]any:
		if t == nil {
			return []any{}
		}
		return listToPayload(*t, depth)
	case []any:
		return listToPayload(t, depth)
	case exec.ValuesList:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = fromJinjaDepth(e, depth+1)
		}
		return out
	case string:
		return t
	case intKey, boolKey, noneKey, floatKey:
		return fromJinjaKey(t)
	case bool:
		return t
	case int:
		return int64(t)
	case int64:
		return t
	case float64:
		return t
	case []byte:
		return t
	case *big.Int, time.Time, uint64:
		return t
	case *payload.Map:
		return t
	case *module:
		return t.output
	case *saltFuncs, *saltModule:
		return "<salt functions>"
	case pyTuple:
		return listToPayload(t, depth)
	case *exec.Pair:
		return []any{fromJinjaDepth(t.Key, depth+1), fromJinjaDepth(t.Value, depth+1)}
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Map:
		m := payload.NewMap()
		keys := rv.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i].Interface()) < fmt.Sprint(keys[j].Interface()) })
		for _, k := range keys {
			m.SetKey(fromJinjaKey(k.Interface()), fromJinjaDepth(rv.MapIndex(k).Interface(), depth+1))
		}
		return m
	case reflect.Slice, reflect.Array:
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = fromJinjaDepth(rv.Index(i).Interface(), depth+1)
		}
		return out
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32:
		return rv.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return int64(rv.Uint())
	case reflect.Float32:
		return rv.Float()
	case reflect.String:
		return rv.String()
	case reflect.Bool:
		return rv.Bool()
	case reflect.Func:
		return fmt.Sprintf("<function %s>", rv.Type())
	case reflect.Chan:
		var out []any
		for i := 0; i < maxListLen; i++ {
			x, ok := rv.Recv()
			if !ok {
				break
			}
			out = append(out, fromJinjaDepth(x.Interface(), depth+1))
		}
		return out
	}
	if s, ok := v.(fmt.Stringer); ok {
		return s.String()
	}
	return fmt.Sprint(v)
}

func dictToPayload(d *exec.Dict, depth int) *payload.Map {
	m := payload.NewMap()
	for _, p := range d.Pairs {
		m.SetKey(fromJinjaKey(p.Key), fromJinjaDepth(p.Value, depth+1))
	}
	return m
}

func listToPayload(l []any, depth int) []any {
	out := make([]any, len(l))
	for i, e := range l {
		out[i] = fromJinjaDepth(e, depth+1)
	}
	return out
}

// newList returns a template list holding items.
func newList(items []any) *[]any {
	if items == nil {
		items = []any{}
	}
	return &items
}

// listItems returns the members of any template sequence (list, tuple,
// ValuesList) or nil, false when v is not one.
func listItems(v *exec.Value) ([]any, bool) {
	if v == nil || v.IsNil() || v.IsError() {
		return nil, false
	}
	switch t := v.Interface().(type) {
	case *[]any:
		return *t, true
	case []any:
		return t, true
	case exec.ValuesList:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = raw(e)
		}
		return out, true
	}
	if !v.IsList() {
		return nil, false
	}
	rv := reflect.Indirect(v.Val)
	out := make([]any, rv.Len())
	for i := range out {
		out[i] = rv.Index(i).Interface()
	}
	return out, true
}

// keyValue is a dict key as a template value of its Python type (keys()
// and items() give 80, not "80").
func keyValue(k any) any {
	switch t := raw(k).(type) {
	case intKey:
		if n, err := strconv.Atoi(string(t)); err == nil {
			return n
		}
		return fromJinjaKey(t)
	case boolKey, noneKey, floatKey:
		return fromJinjaKey(t)
	default:
		return t
	}
}

// raw unwraps a *exec.Value (methods must not return one: gonja would
// wrap it again and take it for an error).
func raw(v any) any {
	if tv, ok := v.(*exec.Value); ok {
		if tv == nil {
			return nil
		}
		return raw(tv.Interface())
	}
	return v
}

// asDict returns the ordered dict behind v, or nil.
func asDict(v *exec.Value) *exec.Dict {
	if v == nil || v.IsNil() || v.IsError() {
		return nil
	}
	switch t := v.Interface().(type) {
	case *exec.Dict:
		return t
	case exec.Dict:
		return &t
	}
	if v.IsDict() {
		// a Go map (namespace(), macro kwargs): convert, sorted by key
		j, _ := toJinja(fromJinja(v)).(*exec.Dict)
		return j
	}
	return nil
}

// dictLookup finds key in d with Python's equality on the payload form.
func dictLookup(d *exec.Dict, key any) (*exec.Pair, int) {
	want := keyIdentity(fromJinjaKey(key))
	for i, p := range d.Pairs {
		if keyIdentity(fromJinjaKey(p.Key)) == want {
			return p, i
		}
	}
	return nil, -1
}

// keyIdentity is equal for keys Python treats as the same dict key.
func keyIdentity(k any) string {
	switch t := k.(type) {
	case nil:
		return "none"
	case bool:
		if t {
			return "n:1"
		}
		return "n:0"
	case int64:
		return "n:" + strconv.FormatInt(t, 10)
	case uint64:
		return "n:" + strconv.FormatUint(t, 10)
	case float64:
		if t == math.Trunc(t) && math.Abs(t) < 1e18 {
			return "n:" + strconv.FormatInt(int64(t), 10)
		}
		return "f:" + pyfmt.FloatRepr(t)
	case string:
		return "s:" + t
	}
	return "x:" + pyfmt.Repr(k)
}

// pyTuple is a Python tuple produced by gsalt's filters and methods
// (items(), dictsort, regex groups): a list for everything but printing.
type pyTuple []any

// pyStr renders a template value the way Jinja2 prints it in Salt: str()
// of the value, dicts in the PrintableDict form Salt's finalizer applies
// (the same as repr), tuples in parentheses.
func pyStr(v any) string {
	if tv, ok := v.(*exec.Value); ok {
		if tv == nil || tv.IsNil() {
			return "None"
		}
		v = tv.Interface()
	}
	switch t := v.(type) {
	case string:
		return t
	case *module:
		return t.output
	case *exec.Dict, *[]any, []any, exec.ValuesList, pyTuple, exec.Dict:
		var b strings.Builder
		writeTplRepr(&b, t, 0)
		return b.String()
	case intKey, floatKey, noneKey, boolKey:
		return reflect.ValueOf(t).String()
	}
	return pyfmt.Str(fromJinja(v))
}

// pyRepr renders a template value like Python's repr().
func pyRepr(v any) string {
	var b strings.Builder
	writeTplRepr(&b, v, 0)
	return b.String()
}

func writeTplRepr(b *strings.Builder, v any, depth int) {
	if depth > maxConvertDepth || b.Len() > pyfmt.MaxLen {
		b.WriteString("...")
		return
	}
	if tv, ok := v.(*exec.Value); ok {
		if tv == nil || tv.IsNil() {
			b.WriteString("None")
			return
		}
		v = tv.Interface()
	}
	seq := func(open, close string, items []any, tuple bool) {
		b.WriteString(open)
		for i, e := range items {
			if i > 0 {
				b.WriteString(", ")
			}
			writeTplRepr(b, e, depth+1)
		}
		if tuple && len(items) == 1 {
			b.WriteString(",")
		}
		b.WriteString(close)
	}
	switch t := v.(type) {
	case *exec.Dict:
		b.WriteString("{")
		for i, p := range t.Pairs {
			if i > 0 {
				b.WriteString(", ")
			}
			writeTplRepr(b, p.Key, depth+1)
			b.WriteString(": ")
			writeTplRepr(b, p.Value, depth+1)
		}
		b.WriteString("}")
	case exec.Dict:
		writeTplRepr(b, &t, depth)
	case *[]any:
		seq("[", "]", *t, false)
	case []any:
		seq("[", "]", t, false)
	case exec.ValuesList:
		items := make([]any, len(t))
		for i, e := range t {
			items[i] = e
		}
		seq("[", "]", items, false)
	case pyTuple:
		seq("(", ")", t, true)
	case intKey, floatKey, noneKey, boolKey:
		b.WriteString(reflect.ValueOf(t).String())
	case *module:
		b.WriteString("<Module '" + t.name + "'>")
	default:
		b.WriteString(pyfmt.Repr(fromJinja(v)))
	}
}
