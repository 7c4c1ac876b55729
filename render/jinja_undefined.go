package render

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gsalt/gsalt/render/jinja"
	"github.com/gsalt/gsalt/wire/payload"
)

// Salt's filters are Python functions: an undefined input reaches them as
// Jinja2's Undefined object (StrictUndefined by default, Undefined with
// allow_undefined), and what happens depends on what each function does
// with it first. Python checks the call's arity before the body runs;
// isinstance checks and repr() accept the object; str(), iteration,
// comparisons and arithmetic raise UndefinedError on a strict value, and
// on a lenient one only arithmetic, int()/float() and attribute access do.
// undefinedFilters records, per filter, what Salt 3006 does with an
// undefined input (measured against Salt; see the g_undefined_salt corpus
// family); filters not listed keep the engine's default: a strict value
// fails with UndefinedError, a lenient one is passed on.

// undefHow is what a filter does with an undefined input of one kind.
type undefHow struct {
	kind  undefKind
	value any    // undefValue: the result
	msg   string // undefError: the message; %s is the Undefined class name, %q its class path
	exc   string // undefError: the Python exception class
}

type undefKind int

const (
	undefDefault undefKind = iota // the engine's default
	undefRaise                    // UndefinedError
	undefValue                    // a fixed result
	undefError                    // a Python error naming the Undefined class
	undefSelf                     // the undefined value itself
	undefSeq                      // [Undefined]
)

// undefPolicy is one filter's behaviour on strict and on lenient input,
// and the parameters Python requires before the body runs.
type undefPolicy struct {
	strict, lenient undefHow
	pyName          string   // the Python function's name in arity errors
	required        []string // required parameters after the value
	// bare, when set, replaces strict and lenient for a call without
	// arguments (a default parameter of None then fails first)
	bare *undefHow
}

var (
	uRaise = undefHow{kind: undefRaise}
	uSelf  = undefHow{kind: undefSelf}
	uSeq   = undefHow{kind: undefSeq}
)

func uValue(v any) undefHow { return undefHow{kind: undefValue, value: v} }

func uErr(exc, msg string) undefHow { return undefHow{kind: undefError, exc: exc, msg: msg} }

var (
	uBytesErr = uErr("TypeError", "expected str, bytes, or bytearray not <class %q>")
	uReErr    = uErr("TypeError", "expected string or bytes-like object, got '%s'")
	uPathErr  = uErr("TypeError", "expected str, bytes or os.PathLike object, not %s")
	uJSONErr  = uErr("TypeError", "Object of type %s is not JSON serializable")
	uYAMLErr  = uErr("RepresenterError", "('cannot represent an object', Undefined)")
	uDateErr  = uErr("RuntimeError", "Unable to parse . Consider installing timelib")
	uStatErr  = uErr("TypeError", "stat: path should be string, bytes, os.PathLike or integer, not %s")
	uNoneIter = uErr("TypeError", "'NoneType' object is not iterable")
)

func undefinedFilters() map[string]undefPolicy {
	set := func(py string, req ...string) undefPolicy {
		return undefPolicy{pyName: py, required: req, lenient: uRaise}
	}
	return map[string]undefPolicy{
		// set helpers: arity first, then the lists are iterated
		"difference":           {pyName: "difference", required: []string{"lst2"}, lenient: uValue(jinja.NewList())},
		"intersect":            {pyName: "intersect", required: []string{"lst2"}, lenient: uValue(jinja.NewList())},
		"union":                set("union", "lst2"),
		"symmetric_difference": set("symmetric_difference", "lst2"),
		"compare_lists":        {bare: &uNoneIter},
		"regex_match":          {pyName: "regex_match", required: []string{"rgx"}, strict: uReErr},
		"regex_search":         {pyName: "regex_search", required: []string{"rgx"}, strict: uReErr},
		"regex_replace":        {pyName: "regex_replace", required: []string{"rgx", "val"}, strict: uReErr},
		"substring_in_list":    {pyName: "substr_in_list", required: []string{"list_to_search"}, strict: uErr("TypeError", "'in <string>' requires string as left operand, not %s")},
		"traverse":             {pyName: "traverse_dict_and_list", required: []string{"key"}, lenient: uRaise},
		// jmespath looks into the object only as the expression says
		// (render/jmespath raises where Python's does)
		"json_query":    {pyName: "json_query", required: []string{"expr"}},
		"mysql_to_dict": {pyName: "mysql_to_dict", required: []string{"key"}},
		// isinstance checks and the like accept the object
		"to_bool":       {strict: uValue(false)},
		"is_list":       {strict: uValue(false)},
		"is_hex":        {strict: uValue(false)},
		"is_iter":       {lenient: uValue(true)},
		"skip":          {strict: uValue("")},
		"sequence":      {strict: uSeq},
		"ip_host":       {strict: uValue(nil)},
		"ipaddr":        {strict: uValue(nil)},
		"ipv4":          {strict: uValue(nil)},
		"ipv6":          {strict: uValue(nil)},
		"network_hosts": {strict: uValue(nil)},
		"network_size":  {strict: uValue(nil)},
		"ipwrap":        {strict: uRaise},
		"load_text":     {strict: uSelf, lenient: uSelf},
		"yaml":          {strict: uValue("NULL"), lenient: uValue("NULL")},
		// serializers and hashes refuse the object by its type
		"yaml_encode": {strict: uYAMLErr, lenient: uYAMLErr},
		"json":        {strict: uJSONErr, lenient: uJSONErr},
		"md5":         {strict: uBytesErr},
		"sha1":        {strict: uBytesErr},
		"sha256":      {strict: uBytesErr},
		"sha512":      {strict: uBytesErr},
		"uuid":        {strict: uBytesErr, lenient: uBytesErr},
		// a lenient value iterates as empty, stringifies as ""
		"exactly_n_true":    {lenient: uValue(false)},
		"exactly_one_true":  {lenient: uValue(false)},
		"flatten":           {lenient: uValue(jinja.NewList())},
		"sorted_ignorecase": {lenient: uValue(jinja.NewList())},
		"date_format":       {lenient: uDateErr},
		"strftime":          {lenient: uDateErr},
		"file_hashsum":      {strict: uRaise, lenient: uPathErr},
		"list_files":        {strict: uRaise, lenient: uErr("TypeError", "listdir: path should be string, bytes, os.PathLike, integer or None, not %s")},
		"get_uid":           {strict: uErr("TypeError", "getpwnam() argument must be str, not %s"), lenient: uErr("TypeError", "getpwnam() argument must be str, not %s")},
		"which":             {strict: uRaise, lenient: uValue(nil)},
		// arithmetic, int(), attribute access or `in` fail on both kinds
		"avg":                   {strict: uRaise, lenient: uRaise},
		"append_dict_key_value": {strict: uRaise, pyName: "append_dict_key_value", required: []string{"keys", "value"}},
		"extend_dict_key_value": {strict: uRaise, pyName: "extend_dict_key_value", required: []string{"keys", "value"}},
		"update_dict_key_value": {strict: uRaise, pyName: "update_dict_key_value", required: []string{"keys", "value"}},
		"set_dict_key_value":    {strict: uErr("TypeError", "'%s' object does not support item assignment"), pyName: "set_dict_key_value", required: []string{"keys", "value"}},
		"is_text_file":          {strict: uRaise, lenient: uRaise},
		"is_bin_file":           {strict: uStatErr, lenient: uStatErr},
		"json_decode_dict":      {strict: uRaise, lenient: uRaise},
		"json_encode_dict":      {strict: uRaise, lenient: uRaise},
		"rand_str":              {strict: uRaise, lenient: uRaise},
		"random_hash":           {strict: uRaise, lenient: uRaise},
		"to_snake_case":         {strict: uRaise, lenient: uRaise},
		"to_num":                {strict: uRaise, lenient: uRaise},
		"str_to_num":            {strict: uRaise, lenient: uRaise},
		"load_yaml":             {strict: uRaise, lenient: uRaise},
		"gen_mac":               {strict: uRaise},
	}
}

// undefinedAware wraps one of Salt's filters so an undefined input behaves
// as in Salt (see undefinedFilters).
func undefinedAware(pol undefPolicy, fn jinja.FilterFunc) jinja.FilterFunc {
	return func(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
		u, ok := v.(*jinja.Undefined)
		if !ok {
			return fn(r, v, args, kw)
		}
		if err := missingArgs(pol.pyName, pol.required, args, kw); err != nil {
			return nil, err
		}
		how := pol.lenient
		if u.Strict {
			how = pol.strict
		}
		if pol.bare != nil && len(args) == 0 && (kw == nil || kw.Len() == 0) {
			how = *pol.bare
		}
		cls := jinja.TypeName(u)
		switch how.kind {
		case undefRaise:
			return nil, &jinja.Error{Kind: "UndefinedError", Msg: u.Message()}
		case undefValue:
			return how.value, nil
		case undefSelf:
			return u, nil
		case undefSeq:
			return jinja.NewList(u), nil
		case undefError:
			msg := how.msg
			msg = strings.ReplaceAll(msg, "%q", "jinja2.runtime."+cls)
			msg = strings.ReplaceAll(msg, "%s", cls)
			return nil, &jinja.Error{Kind: how.exc, Msg: msg}
		}
		return fn(r, v, args, kw)
	}
}

// missingArgs is Python's TypeError for a call lacking required
// positional parameters.
func missingArgs(pyName string, required []string, args []any, kw *payload.Map) error {
	var missing []string
	for i, p := range required {
		if i < len(args) {
			continue
		}
		if kw != nil {
			if _, ok := kw.Get(p); ok {
				continue
			}
		}
		missing = append(missing, "'"+p+"'")
	}
	if len(missing) == 0 {
		return nil
	}
	var list string
	switch len(missing) {
	case 1:
		list = missing[0]
	case 2:
		list = missing[0] + " and " + missing[1]
	default:
		list = strings.Join(missing[:len(missing)-1], ", ") + ", and " + missing[len(missing)-1]
	}
	noun := "argument"
	if len(missing) > 1 {
		noun = "arguments"
	}
	return &jinja.Error{Kind: "TypeError", Msg: fmt.Sprintf("%s() missing %d required positional %s: %s", pyName, len(missing), noun, list)}
}

// An undefined value can also reach one of Salt's filters inside its
// input: [nope], (nope,), {'a': nope}, or a generator yielding one. The
// Python function then meets Jinja2's Undefined object only when it uses
// the item: comparing, hashing, str(), bool() or iterating it raises on a
// StrictUndefined, while isinstance checks, repr() and len() of the
// container do not. nestedFilters records, per filter, which items its
// Python code uses before anything else can fail (measured against Salt:
// the g_undefined_nested corpus family, every filter × an undefined value
// in a list, a tuple, a dict, a nested list and through sequence, list,
// select, reject, map, reverse, unique, sort and dictsort). Filters not
// listed either never use the items (is_list, sequence, repr-based
// serializers) or do it through the engine's own operations, which raise
// as Python does.

// nestedUse is how a filter's Python code uses the items of its input.
type nestedUse struct {
	lists, tuples bool // the items of a list / tuple input are used in order
	first         bool // only the first item is used before a different error can come first
	deep          bool // nested lists and tuples are walked too (recursive functions)
	levelsArg     bool // ... at most as deep as the levels argument (flatten's) says
	values        bool // the values of a dict input are used (strict only)
	lenientValues bool // ... and a lenient undefined value raises too (its attributes are used)
	lenient       bool // a lenient undefined item raises too (ordering, attribute access)
	// iterators: an iterator input (generator, reversed list, dict view) is
	// consumed first and its items used; generators only: just Python's
	// generator objects (isinstance(x, types.GeneratorType))
	iterators, generators bool
	// hashed: the items are hashed (set(), dict keys), so the elements of
	// a tuple item are used too, nested tuples included
	hashed bool
	// pairs: the items are unpacked as (key, value) and both str()-ed, so
	// the elements of a tuple or list item are used
	pairs bool
	// streams: the filter reads the items one at a time, so its error on
	// an item comes before an input iterator's error on a later one
	streams  bool
	maxDepth int // with levelsArg: the deepest level walked (-1: no limit)
}

// levelsDepth is the nesting flatten(levels=N) walks: the items of N+1
// levels are compared with None; without levels every level is.
func levelsDepth(args []any, kw *payload.Map) int {
	var v any
	if len(args) > 0 {
		v = args[0]
	} else if kw != nil {
		v, _ = kw.Get("levels")
	}
	if n, ok := v.(int64); ok {
		return int(n)
	}
	return -1
}

func nestedFilters() map[string]nestedUse {
	items := nestedUse{lists: true, tuples: true}
	ip := nestedUse{lists: true, tuples: true, generators: true}
	dictKV := nestedUse{lists: true, tuples: true, values: true, lenientValues: true, iterators: true}
	firstAttr := nestedUse{lists: true, tuples: true, first: true, lenient: true, iterators: true}
	tupleOnly := nestedUse{tuples: true}
	return map[string]nestedUse{
		"ip_host":               ip,
		"ipaddr":                ip,
		"ipv4":                  ip,
		"ipv6":                  ip,
		"network_hosts":         ip,
		"network_size":          ip,
		"ipwrap":                items,
		"filter_by_networks":    items,
		"sorted_ignorecase":     firstAttr,
		"to_snake_case":         {lists: true, tuples: true, first: true, lenient: true},
		"urlencode":             {lists: true, tuples: true, first: true, values: true, iterators: true, pairs: true, streams: true},
		"union":                 {lists: true},
		"symmetric_difference":  {lists: true},
		"difference":            items,
		"intersect":             items,
		"append_dict_key_value": dictKV,
		"extend_dict_key_value": dictKV,
		"update_dict_key_value": dictKV,
		"compare_dicts":         {lists: true, tuples: true, values: true, iterators: true, hashed: true},
		"flatten":               {lists: true, tuples: true, deep: true, levelsArg: true, iterators: true},
		"load_text":             {values: true},
		"is_ip":                 tupleOnly,
		"is_ipv4":               tupleOnly,
		"is_ipv6":               tupleOnly,
		"list_files":            tupleOnly,
	}
}

// nestedAware wraps a filter so an undefined item of its input raises
// where Salt's Python function would (see nestedFilters).
func nestedAware(use nestedUse, fn jinja.FilterFunc) jinja.FilterFunc {
	return func(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
		if use.levelsArg {
			use.maxDepth = levelsDepth(args, kw)
		}
		v, err := use.check(v)
		var late *iterRaised
		if errors.As(err, &late) {
			// the iterator raised after some items: the filter reads
			// those first, and its own error on one of them comes first
			// when it reads them one at a time (with no item before it,
			// the first read raises; sorted() and set() read all first)
			if n, _ := jinja.Len(v); n == 0 || !use.streams {
				return nil, late.err
			}
			if _, ferr := fn(r, v, args, kw); ferr != nil {
				return nil, ferr
			}
			return nil, late.err
		}
		if err != nil {
			return nil, err
		}
		return fn(r, v, args, kw)
	}
}

// iterRaised is an error an input iterator raised after the items check
// passed on.
type iterRaised struct{ err error }

func (e *iterRaised) Error() string { return e.err.Error() }

func (e *iterRaised) Unwrap() error { return e.err }

// check returns the error using the input's items raises, and the input
// to pass on (an iterator it consumed becomes a list of its items).
func (use nestedUse) check(v any) (any, error) {
	switch x := v.(type) {
	case *jinja.List:
		if use.lists {
			return v, use.items(x.Items, 0)
		}
	case jinja.Tuple:
		if use.tuples {
			return v, use.items(x, 0)
		}
	case *payload.Map:
		if use.values {
			for _, it := range x.Items() {
				if err := use.item(it.Value, use.lenientValues, 0); err != nil {
					return v, err
				}
			}
		}
	case jinja.Iterable:
		g, isGen := v.(*jinja.Generator)
		if use.iterators || use.generators && isGen && g.Module == "" && g.Type == "generator" {
			items, ierr := x.Iter()
			var err error
			if ierr != nil {
				// the items before the error are used first
				if err := use.items(items, 0); err != nil {
					return v, err
				}
				err = &iterRaised{ierr}
			}
			if !use.iterators {
				// the filter goes by the generator type: pass one on
				if err != nil {
					return jinja.NewGenerator(g.Func, items, nil), err
				}
				return jinja.NewGenerator(g.Func, items, nil), use.items(items, 0)
			}
			if err != nil {
				return jinja.NewList(items...), err
			}
			return jinja.NewList(items...), use.items(items, 0)
		}
	}
	return v, nil
}

func (use nestedUse) items(items []any, depth int) error {
	if use.first && len(items) > 1 {
		items = items[:1]
	}
	for _, it := range items {
		if err := use.item(it, use.lenient, depth); err != nil {
			return err
		}
		if err := use.elements(it); err != nil {
			return err
		}
	}
	return nil
}

// elements checks the elements of an item that is hashed or unpacked.
func (use nestedUse) elements(it any) error {
	var elems []any
	switch x := it.(type) {
	case jinja.Tuple:
		if !use.hashed && !use.pairs {
			return nil
		}
		elems = x
	case *jinja.List:
		if !use.pairs {
			return nil
		}
		elems = x.Items
	default:
		return nil
	}
	if use.pairs && len(elems) != 2 {
		// unpacking fails first
		return nil
	}
	for _, e := range elems {
		if err := use.item(e, use.lenient, maxConvertDepth); err != nil {
			return err
		}
		if _, isTuple := e.(jinja.Tuple); isTuple && use.hashed {
			if err := use.elements(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// walks reports whether the items at this nesting depth are used.
func (use nestedUse) walks(depth int) bool {
	if !use.deep || depth >= maxConvertDepth {
		return false
	}
	return !use.levelsArg || use.maxDepth < 0 || depth <= use.maxDepth
}

func (use nestedUse) item(v any, lenient bool, depth int) error {
	switch x := v.(type) {
	case *jinja.Undefined:
		if x.Strict || lenient {
			return &jinja.Error{Kind: "UndefinedError", Msg: x.Message()}
		}
	case *jinja.List:
		if use.walks(depth + 1) {
			return use.items(x.Items, depth+1)
		}
	case jinja.Tuple:
		if use.walks(depth + 1) {
			return use.items(x, depth+1)
		}
	case *payload.Map:
		if use.deep && use.values && depth < maxConvertDepth {
			for _, it := range x.Items() {
				if err := use.item(it.Value, use.lenientValues, depth+1); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
