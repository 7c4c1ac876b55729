package render

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/gsalt/gsalt/internal/stringutils"
	"github.com/gsalt/gsalt/render/jinja"
	"github.com/gsalt/gsalt/wire/payload"
)

// saltUtilsFilters are the Jinja filters Salt registers from its
// salt.utils.{stringutils,files,data,dictupdate,network} modules with
// @jinja_filter, written against the engine's values so that Python's
// types and errors (bytes, TypeError texts) come through as in Salt.
func saltUtilsFilters() map[string]jinja.FilterFunc {
	return map[string]jinja.FilterFunc{
		"human_to_bytes":            filterHumanToBytes,
		"json_query":                filterJSONQuery,
		"check_whitelist_blacklist": filterCheckWhitelistBlacklist,
		"is_empty":                  filterIsEmpty,
		"compare_dicts":             filterCompareDicts,
		"ipwrap":                    filterIPWrap,
		"to_bytes":                  filterToBytes,
		"mac_str_to_bytes":          filterMacStrToBytes,
		"json_encode_list":          filterEncodeList,
		"json_decode_list":          filterEncodeList, // Salt registers encode_list under both names
		"json_encode_dict":          filterEncodeDict,
		"json_decode_dict":          filterEncodeDict,
		"set_dict_key_value":        dictKeyFilter("set_dict_key_value", dictSet),
		"update_dict_key_value":     dictKeyFilter("update_dict_key_value", dictUpdate),
		"append_dict_key_value":     dictKeyFilter("append_dict_key_value", dictAppend),
		"extend_dict_key_value":     dictKeyFilter("extend_dict_key_value", dictExtend),
	}
}

func pyErr(kind, format string, a ...any) error {
	return &jinja.Error{Kind: kind, Msg: fmt.Sprintf(format, a...)}
}

// pyClass is repr(type(v)): "<class 'dict'>".
func pyClass(v any) string { return "<class '" + jinja.TypeName(v) + "'>" }

func filterHumanToBytes(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
	a, err := jinja.Bind("human_to_bytes", args, kw, []string{"default_unit", "handle_metric"}, "B", false)
	if err != nil {
		return nil, err
	}
	size, err := jinja.Str(v)
	if err != nil {
		return nil, err
	}
	unit, ok := a[0].(string)
	if !ok {
		return nil, pyErr("AttributeError", "'%s' object has no attribute 'lower'", jinja.TypeName(a[0]))
	}
	metric, err := jinja.Truthy(a[1])
	if err != nil {
		return nil, err
	}
	out, err := stringutils.HumanToBytes(size, unit, metric)
	if errors.Is(err, stringutils.ErrOverflow) {
		return nil, pyErr("OverflowError", "%s", err.Error())
	}
	if err != nil {
		return nil, pyErr("AttributeError", "%s", err.Error())
	}
	return out, nil
}

// listArg normalises a whitelist/blacklist argument as Salt does: falsy
// is empty, a str is a one-item list, anything else must be iterable.
func listArg(v any, name string) ([]any, error) {
	t, err := jinja.Truthy(v)
	if err != nil {
		return nil, err
	}
	if !t {
		return nil, nil
	}
	if s, ok := v.(string); ok {
		return []any{s}, nil
	}
	items, err := jinja.Iterate(v)
	if err != nil {
		s, _ := jinja.Str(v)
		return nil, pyErr("TypeError", "Expecting iterable %s, but got %s (%s)", name, jinja.TypeName(v), s)
	}
	return items, nil
}

// exprMatchAny is expr_match over a list; values that are not strings
// never match (Salt logs the TypeError and answers False).
func exprMatchAny(value any, exprs []any) bool {
	line, ok := value.(string)
	if !ok {
		return false
	}
	for _, e := range exprs {
		if s, ok := e.(string); ok && stringutils.ExprMatch(line, s) {
			return true
		}
	}
	return false
}

func filterCheckWhitelistBlacklist(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
	a, err := jinja.Bind("check_whitelist_blacklist", args, kw, []string{"whitelist", "blacklist"}, nil, nil)
	if err != nil {
		return nil, err
	}
	black, err := listArg(a[1], "blacklist")
	if err != nil {
		return nil, err
	}
	white, err := listArg(a[0], "whitelist")
	if err != nil {
		return nil, err
	}
	bm, wm := exprMatchAny(v, black), exprMatchAny(v, white)
	switch {
	case len(black) > 0 && len(white) == 0:
		return !bm, nil
	case len(white) > 0 && len(black) == 0:
		return wm, nil
	case len(white) > 0 && len(black) > 0:
		return !bm && wm, nil
	}
	return true, nil
}

func filterIsEmpty(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
	if _, err := jinja.Bind("is_empty", args, kw, nil); err != nil {
		return nil, err
	}
	var path string
	switch x := v.(type) {
	case string:
		path = x
	case []byte:
		path = string(x)
	case bool, int64, *big.Int:
		// os.stat(int) is fstat of that file descriptor of the process
		// (0 is the daemon's stdin)
		return fstatEmpty(x)
	default:
		return nil, pyErr("TypeError", "stat: path should be string, bytes, os.PathLike or integer, not %s", jinja.TypeName(v))
	}
	if strings.Contains(path, "\x00") {
		return nil, pyErr("ValueError", "stat: embedded null character in path")
	}
	fi, err := os.Stat(path)
	if err != nil {
		return false, nil
	}
	return fi.Size() == 0, nil
}

// pyItemAt is Python's seq[i] for an int i (negative counts from the end).
func pyItemAt(seq any, i int64) (any, error) {
	items, err := jinja.Iterate(seq)
	if err != nil {
		return nil, err
	}
	n := int64(len(items))
	if i < 0 {
		i += n
	}
	if i < 0 || i >= n {
		return nil, pyErr("IndexError", "%s index out of range", jinja.TypeName(seq))
	}
	return items[i], nil
}

// pyGetItem is Python's obj[key] (a KeyError or TypeError, never Jinja's
// undefined).
func pyGetItem(obj, key any) (any, error) {
	switch o := obj.(type) {
	case *payload.Map:
		if v, ok := o.GetKey(key); ok {
			return v, nil
		}
		return nil, pyErr("KeyError", "%s", jinja.Repr(key))
	case string, []byte, *jinja.List, jinja.Tuple:
		if _, ok := key.(string); ok {
			return nil, pyErr("TypeError", "%s indices must be integers or slices, not str", jinja.TypeName(obj))
		}
		if i, ok := key.(int64); ok {
			return pyItemAt(obj, i)
		}
	case nil:
		return nil, pyErr("TypeError", "'NoneType' object is not subscriptable")
	}
	return nil, pyErr("TypeError", "'%s' object is not subscriptable", jinja.TypeName(obj))
}

func filterCompareDicts(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
	a, err := jinja.Bind("compare_dicts", args, kw, []string{"new"}, nil)
	if err != nil {
		return nil, err
	}
	old, nw := v, a[0]
	orEmpty := func(x any) (any, error) {
		t, err := jinja.Truthy(x)
		if err != nil || t {
			return x, err
		}
		return &payload.Map{}, nil
	}
	n2, err := orEmpty(nw)
	if err != nil {
		return nil, err
	}
	o2, err := orEmpty(old)
	if err != nil {
		return nil, err
	}
	nk, err := jinja.Iterate(n2)
	if err != nil {
		return nil, err
	}
	ok2, err := jinja.Iterate(o2)
	if err != nil {
		return nil, err
	}
	// set(new).union(old): CPython's table order (PYTHONHASHSEED=0, as the
	// corpus runs Salt; Salt's own order of string keys changes with its
	// random seed); first-seen order where a hash is not reproducible
	keys, exact, err := jinja.SetUnionOrder(n2, o2)
	if err != nil {
		return nil, err
	}
	if !exact {
		keys = nil
		seen := &payload.Map{}
		for _, k := range append(nk, ok2...) {
			if _, dup := seen.GetKey(k); !dup {
				seen.SetKey(k, true)
				keys = append(keys, k)
			}
		}
	}
	ret := &payload.Map{}
	for _, k := range keys {
		inOld, err := jinja.Contains(old, k)
		if err != nil {
			return nil, err
		}
		if !inOld {
			nv, err := pyGetItem(nw, k)
			if err != nil {
				return nil, err
			}
			ret.SetKey(k, (&payload.Map{}).Set("old", "").Set("new", nv))
			continue
		}
		inNew, err := jinja.Contains(nw, k)
		if err != nil {
			return nil, err
		}
		if !inNew {
			ov, err := pyGetItem(old, k)
			if err != nil {
				return nil, err
			}
			ret.SetKey(k, (&payload.Map{}).Set("new", "").Set("old", ov))
			continue
		}
		nv, err := pyGetItem(nw, k)
		if err != nil {
			return nil, err
		}
		ov, err := pyGetItem(old, k)
		if err != nil {
			return nil, err
		}
		if !jinja.Equal(nv, ov) {
			ret.SetKey(k, (&payload.Map{}).Set("old", ov).Set("new", nv))
		}
	}
	return ret, nil
}

// ipv6Text is Salt's _is_ipv(x, 6) followed by ip_bracket: the bracketed
// address for an IPv6 address, ok false for anything else; an IPv6
// interface ("::1/64") makes ip_bracket raise ValueError.
func ipv6Bracket(x any) (any, bool, error) {
	s, ok := x.(string)
	if !ok {
		return nil, false, nil
	}
	if _, ok := isIPv(s, 6, ""); !ok {
		return nil, false, nil
	}
	p, iface, ok := parseIP(s)
	if !ok {
		return nil, false, nil
	}
	if iface {
		return nil, false, pyErr("ValueError", "%s does not appear to be an IPv4 or IPv6 address", jinja.Repr(strings.Trim(s, "[]")))
	}
	return "[" + p.Addr().String() + "]", true, nil
}

func filterIPWrap(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
	if _, err := jinja.Bind("ipwrap", args, kw, nil); err != nil {
		return nil, err
	}
	var items []any
	switch x := v.(type) {
	case *jinja.List:
		items = x.Items
	case jinja.Tuple:
		items = x
	default:
		b, ok, err := ipv6Bracket(v)
		if err != nil || ok {
			return b, err
		}
		return v, nil
	}
	out := make([]any, 0, len(items))
	for _, e := range items {
		b, ok, err := ipv6Bracket(e)
		if err != nil {
			return nil, err
		}
		if ok {
			e = b
		}
		out = append(out, e)
	}
	return jinja.NewList(out...), nil
}

// toBytes is salt.utils.stringutils.to_bytes: str is encoded as UTF-8,
// bytes pass, anything else is a TypeError.
func toBytes(v any) ([]byte, error) {
	switch x := v.(type) {
	case []byte:
		return x, nil
	case string:
		return []byte(x), nil
	}
	return nil, pyErr("TypeError", "expected str, bytes, or bytearray not %s", pyClass(v))
}

func filterToBytes(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
	a, err := jinja.Bind("to_bytes", args, kw, []string{"encoding", "errors"}, nil, "strict")
	if err != nil {
		return nil, err
	}
	if enc, ok := a[0].(string); ok {
		switch strings.ToLower(strings.ReplaceAll(enc, "_", "-")) {
		case "utf-8", "utf8", "ascii", "latin-1", "latin1":
		default:
			return nil, pyErr("LookupError", "unknown encoding: %s", enc)
		}
	}
	return toBytes(v)
}

func filterMacStrToBytes(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
	if _, err := jinja.Bind("mac_str_to_bytes", args, kw, nil); err != nil {
		return nil, err
	}
	s, ok := v.(string)
	if !ok {
		n, err := jinja.Len(v)
		if err != nil {
			return nil, err
		}
		if n != 12 && n != 17 {
			return nil, pyErr("ValueError", "Invalid MAC address")
		}
		return nil, pyErr("TypeError", "int() can't convert non-string with explicit base")
	}
	rs := []rune(s)
	switch len(rs) {
	case 12:
	case 17:
		s = strings.ReplaceAll(s, string(rs[2]), "")
	default:
		return nil, pyErr("ValueError", "Invalid MAC address")
	}
	rs = []rune(s)
	out := make([]byte, 0, 6)
	for i := 0; i < 12; i += 2 {
		if i+2 > len(rs) {
			return nil, pyErr("ValueError", "invalid literal for int() with base 16: ''")
		}
		part := string(rs[i : i+2])
		n, err := strconv.ParseUint(strings.TrimSpace(part), 16, 8)
		if err != nil {
			return nil, pyErr("ValueError", "invalid literal for int() with base 16: %s", jinja.Repr(part))
		}
		out = append(out, byte(n))
	}
	return out, nil
}

// encodeOpts are encode_list/encode_dict's keyword options that change
// the result.
type encodeOpts struct{ preserveTuples bool }

func bindEncode(fname string, args []any, kw *payload.Map) (encodeOpts, error) {
	a, err := jinja.Bind(fname, args, kw, []string{"encoding", "errors", "keep", "preserve_dict_class", "preserve_tuples"}, nil, "strict", false, false, false)
	if err != nil {
		return encodeOpts{}, err
	}
	pt, err := jinja.Truthy(a[4])
	return encodeOpts{preserveTuples: pt}, err
}

// encodeValue encodes one item as encode_list and encode_dict do.
func encodeValue(v any, o encodeOpts) (any, error) {
	switch x := v.(type) {
	case *jinja.List:
		return encodeList(x.Items, o)
	case jinja.Tuple:
		l, err := encodeList(x, o)
		if err != nil || !o.preserveTuples {
			return l, err
		}
		return jinja.Tuple(l.Items), nil
	case *payload.Map:
		return encodeDict(x, o)
	case string:
		return []byte(x), nil
	}
	return v, nil
}

func encodeList(items []any, o encodeOpts) (*jinja.List, error) {
	out := make([]any, 0, len(items))
	for _, it := range items {
		e, err := encodeValue(it, o)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return jinja.NewList(out...), nil
}

func encodeDict(m *payload.Map, o encodeOpts) (*payload.Map, error) {
	out := &payload.Map{}
	for _, it := range m.Items() {
		k := it.Key
		switch x := k.(type) {
		case jinja.Tuple:
			l, err := encodeList(x, o)
			if err != nil {
				return nil, err
			}
			if !o.preserveTuples {
				return nil, pyErr("TypeError", "unhashable type: 'list'")
			}
			k = jinja.Tuple(l.Items)
		case string:
			k = []byte(x)
		}
		v, err := encodeValue(it.Value, o)
		if err != nil {
			return nil, err
		}
		out.SetKey(k, v)
	}
	return out, nil
}

func filterEncodeList(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
	o, err := bindEncode("encode_list", args, kw)
	if err != nil {
		return nil, err
	}
	items, err := jinja.Iterate(v)
	if err != nil {
		return nil, err
	}
	return encodeList(items, o)
}

func filterEncodeDict(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
	o, err := bindEncode("encode_dict", args, kw)
	if err != nil {
		return nil, err
	}
	m, ok := v.(*payload.Map)
	if !ok {
		return nil, pyErr("AttributeError", "'%s' object has no attribute 'items'", jinja.TypeName(v))
	}
	return encodeDict(m, o)
}

// dictKeyFilter is the shape of salt.utils.dictupdate's
// *_dict_key_value filters: walk (creating dicts) to the parent of the
// last key, then apply op there; the input dict is changed in place and
// returned.
func dictKeyFilter(fname string, op func(parent *payload.Map, last string, value any) error) jinja.FilterFunc {
	return func(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
		a, err := jinja.Bind(fname, args, kw, []string{"keys", "value", "delimiter", "ordered_dict"}, jinja.Required, jinja.Required, ":", false)
		if err != nil {
			return nil, err
		}
		in, ok := v.(*payload.Map)
		if !ok {
			return nil, pyErr("TypeError", "argument of type '%s' is not iterable", jinja.TypeName(v))
		}
		keys, ok := a[0].(string)
		delim, ok2 := a[2].(string)
		if !ok || !ok2 {
			return nil, pyErr("TypeError", "'in <string>' requires string as left operand, not %s", jinja.TypeName(a[2]))
		}
		parent, last := in, keys
		if delim != "" && strings.Contains(keys, delim) {
			i := strings.LastIndex(keys, delim)
			last = keys[i+len(delim):]
			for _, k := range strings.Split(keys[:i], delim) {
				cur, ok := parent.Get(k)
				m, isMap := cur.(*payload.Map)
				if !ok || !isMap {
					m = &payload.Map{}
					parent.Set(k, m)
				}
				parent = m
			}
		}
		if err := op(parent, last, a[1]); err != nil {
			return nil, err
		}
		return in, nil
	}
}

func dictSet(p *payload.Map, k string, v any) error { p.Set(k, v); return nil }

func dictUpdate(p *payload.Map, k string, v any) error {
	cur, ok := p.Get(k)
	if !ok || cur == nil {
		cur = &payload.Map{}
		p.Set(k, cur)
	}
	m, ok := cur.(*payload.Map)
	if !ok {
		return pyErr("SaltInvocationError", "The last key contains a %s, which cannot update.", pyClass(cur))
	}
	src, ok := v.(*payload.Map)
	if !ok {
		return pyErr("SaltInvocationError", "Cannot update %s with a %s.", pyClass(cur), pyClass(v))
	}
	for _, it := range src.Items() {
		jinja.DictSet(m, it.Key, it.Value)
	}
	return nil
}

func dictAppend(p *payload.Map, k string, v any) error { return dictAddToList(p, k, v, false) }

func dictExtend(p *payload.Map, k string, v any) error { return dictAddToList(p, k, v, true) }

// dictAddToList is append_dict_key_value (extend false) and
// extend_dict_key_value (extend true): the list at k, created when
// missing or None, gets v (or v's items).
func dictAddToList(p *payload.Map, k string, v any, extend bool) error {
	verb := "append"
	if extend {
		verb = "extend"
	}
	cur, ok := p.Get(k)
	if !ok || cur == nil {
		cur = jinja.NewList()
		p.Set(k, cur)
	}
	l, ok := cur.(*jinja.List)
	if !ok {
		return pyErr("SaltInvocationError", "The last key contains a %s, which cannot %s.", pyClass(cur), verb)
	}
	if !extend {
		l.Items = append(l.Items, v)
		return nil
	}
	items, err := jinja.Iterate(v)
	if err != nil {
		return pyErr("SaltInvocationError", "Cannot extend %s with a %s.", pyClass(cur), pyClass(v))
	}
	l.Items = append(l.Items, items...)
	return nil
}

// fstatEmpty is Salt's is_empty of an int: os.stat(fd).st_size == 0,
// False when fstat fails; a descriptor beyond a C int is an
// OverflowError.
func fstatEmpty(v any) (any, error) {
	n, ok := pyIntValue(v)
	switch {
	case !ok:
		return false, nil
	case n.Cmp(big.NewInt(math.MaxInt32)) > 0:
		return nil, pyErr("OverflowError", "fd is greater than maximum")
	case n.Cmp(big.NewInt(math.MinInt32)) < 0:
		return nil, pyErr("OverflowError", "fd is less than minimum")
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(n.Int64()), &st); err != nil {
		return false, nil
	}
	return st.Size == 0, nil
}
