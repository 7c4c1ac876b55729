package render

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyre"
	"github.com/gsalt/gsalt/internal/pytime"
	"github.com/gsalt/gsalt/render/jinja"
	"github.com/gsalt/gsalt/wire/payload"
)

// arg returns positional argument i or the keyword name, or def.
func arg(va *varArgs, i int, name string, def any) *value {
	if i >= 0 && i < len(va.Args) {
		return va.Args[i]
	}
	if v, ok := va.KwArgs[name]; ok {
		return v
	}
	return asValue(def)
}

// simple adapts a function of the payload form of the input.
func simple(fn func(in any, va *varArgs) (any, error)) filterFunc {
	return adaptFilter(fromJinja, fn)
}

// strFilter adapts a function of str(input).
func strFilter(fn func(s string, va *varArgs) (any, error)) filterFunc {
	return adaptFilter(pyStr, fn)
}

// adaptFilter adapts a function of conv(input): an error input passes
// through, an error result becomes an error value.
func adaptFilter[T any](conv func(any) T, fn func(in T, va *varArgs) (any, error)) filterFunc {
	return func(e *jinja.Runtime, in *value, va *varArgs) *value {
		if in.IsError() {
			return in
		}
		out, err := fn(conv(in), va)
		if err != nil {
			return asValue(err)
		}
		return asValue(toJinja(out))
	}
}

// sharedFilterTable is the filter table of every render's environment:
// Salt's filters (replacing the Jinja2 builtins Salt replaces: min, max,
// tojson), built once. No filter holds a render's state (each gets what
// it needs from its *jinja.Runtime), so one table serves every render;
// building it per render was about 40% of the reactor's CPU per event
// (BenchmarkEventsToLocalJobs). Nothing writes to the table after it is
// built.
var sharedFilterTable = sync.OnceValue(buildFilterTable)

// buildFilterTable returns Jinja2's builtin filters with Salt's added and
// wrapped as Salt's environment has them.
func buildFilterTable() map[string]jinja.FilterFunc {
	f := jinja.BuiltinFilters()
	salt := saltFilters()
	for name, fn := range salt {
		f[name] = adapt(fn)
	}
	// Salt's one-argument filters reject extra arguments before looking
	// at the value, as Python does when calling them.
	for name, fn := range sharedItertoolsFilters() {
		f[name] = fn
	}
	// json.dumps refuses an undefined value by its type, before str()
	tojson := f["tojson"]
	f["tojson"] = func(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
		if _, ok := v.(*jinja.Undefined); ok {
			return nil, &jinja.Error{Kind: "TypeError", Msg: fmt.Sprintf("Object of type %s is not JSON serializable", jinja.TypeName(v))}
		}
		return tojson(r, v, args, kw)
	}
	for name, fn := range sharedExactFilters() {
		f[name] = fn
	}
	for name, fn := range sharedSaltUtilsFilters() {
		f[name] = fn
	}
	for name, fn := range sharedRandomFilters() {
		f[name] = fn
	}
	for name, fn := range sharedOsFilters() {
		f[name] = fn
	}
	f["str_to_num"] = f["to_num"]
	f["unique"] = saltUnique
	for name, sig := range map[string][]string{
		"regex_replace": {"regex_replace", "rgx", "val", "ignorecase", "multiline"},
		"regex_search":  {"regex_search", "rgx", "ignorecase", "multiline"},
		"regex_match":   {"regex_match", "rgx", "ignorecase", "multiline"},
	} {
		f[name] = signatureFilter(sig[0], sig[1:], f[name])
	}
	for name, pyName := range map[string]string{"min": "lst_min", "max": "lst_max", "unique": "unique"} {
		f[name] = oneArgFilter(pyName, f[name])
	}
	for name, pol := range sharedUndefinedFilters() {
		if fn, ok := f[name]; ok {
			f[name] = undefinedAware(pol, fn)
		}
	}
	for name, use := range sharedNestedFilters() {
		if fn, ok := f[name]; ok {
			f[name] = nestedAware(use, fn)
		}
	}
	// Salt's filters read a Markup value (or argument) as the str it is;
	// its serializers return Markup
	for _, names := range []map[string]bool{
		keysOf(salt), keysOf(sharedItertoolsFilters()), keysOf(sharedExactFilters()),
		keysOf(sharedSaltUtilsFilters()), keysOf(sharedRandomFilters()), keysOf(sharedOsFilters()),
		{"tojson": true, "str_to_num": true, "unique": true, "min": true, "max": true},
	} {
		for name := range names {
			if name == "python" || name == "yaml" || name == "sequence" || name == "yaml_encode" || name == "load_yaml" {
				// pformat, Salt's dumper and [data] keep the Markup type;
				// yaml_encode's SafeRepresenter has no representer for it;
				// load_yaml's CParser takes only an exact str
				continue
			}
			if fn, ok := f[name]; ok {
				f[name] = jinja.DemoteMarkup(fn)
			}
		}
	}
	for _, name := range []string{"json", "yaml", "python", "xml"} {
		if fn, ok := f[name]; ok {
			f[name] = jinja.MarkupResult(fn)
		}
	}
	return f
}

// yamlUnknown stands for a value Salt's YAML dumper cannot represent.
type yamlUnknown struct{ n int }

// markupUnknown replaces the Markup values (and keys), undefined values,
// generators and dict views of an engine value with yamlUnknown: Salt's
// dumper writes them as NULL.
func markupUnknown(v any, depth int) any {
	if depth > maxConvertDepth {
		return v
	}
	switch x := v.(type) {
	case jinja.Markup, *jinja.Undefined, *jinja.Generator, *jinja.DictView:
		// Markup, Jinja2's Undefined (represent_undefined), generators and
		// dict views
		return yamlUnknown{depth}
	case jinja.Iterable:
		if jinja.TypeName(x) == "range" {
			return yamlUnknown{depth}
		}
	case *jinja.List:
		out := make([]any, len(x.Items))
		for i, e := range x.Items {
			out[i] = markupUnknown(e, depth+1)
		}
		return jinja.NewList(out...)
	case jinja.Tuple:
		out := make(jinja.Tuple, len(x))
		for i, e := range x {
			out[i] = markupUnknown(e, depth+1)
		}
		return out
	case *payload.Map:
		out := payload.NewMap()
		for i, it := range x.Items() {
			k := it.Key
			if _, ok := k.(jinja.Markup); ok {
				k = yamlUnknown{-1 - i}
			}
			out.SetKey(k, markupUnknown(it.Value, depth+1))
		}
		return out
	}
	return v
}

// keysOf is the set of a filter table's names.
func keysOf[F any](m map[string]F) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

// The filter tables that do not depend on a render are built once and
// only read afterwards (installFilters copies them into each render's
// environment): building them per render was a tenth of the reactor's
// CPU per event.
var (
	sharedItertoolsFilters = sync.OnceValue(itertoolsFilters)
	sharedExactFilters     = sync.OnceValue(exactFilters)
	sharedSaltUtilsFilters = sync.OnceValue(saltUtilsFilters)
	sharedRandomFilters    = sync.OnceValue(randomFilters)
	sharedOsFilters        = sync.OnceValue(osFilters)
	sharedUndefinedFilters = sync.OnceValue(undefinedFilters)
	sharedNestedFilters    = sync.OnceValue(nestedFilters)
)

// saltUnique is Salt's unique (salt.utils.jinja.unique replaces
// Jinja2's): set(values) for a hashable value (a string, tuple,
// generator, range), else the first occurrences in order.
func saltUnique(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
	items, err := jinja.Iterate(v)
	if err != nil {
		return nil, err
	}
	hashable := true
	switch x := v.(type) {
	case *jinja.List, []any, *payload.Map, *jinja.Set:
		hashable = false
	case *jinja.DictView:
		// dict_keys and dict_items are set-like (no hash); dict_values
		// keeps object's hash
		hashable = x.Kind == "values"
	}
	if !hashable {
		out := jinja.NewList()
		for _, x := range items {
			in, err := jinja.Contains(out, x)
			if err != nil {
				return nil, err
			}
			if !in {
				out.Items = append(out.Items, x)
			}
		}
		return out, nil
	}
	return jinja.NewSet(items)
}

// signatureFilter fails like Python calling pyName(value, *params) with
// an unknown keyword or too many positional arguments.
func signatureFilter(pyName string, params []string, fn jinja.FilterFunc) jinja.FilterFunc {
	return func(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
		if kw != nil {
			for _, it := range kw.Items() {
				k := payload.KeyString(it.Key)
				known := false
				for _, p := range params {
					known = known || p == k
				}
				if !known {
					return nil, &jinja.Error{Kind: "TypeError", Msg: fmt.Sprintf("%s() got an unexpected keyword argument %s", pyName, jinja.Repr(k))}
				}
			}
		}
		if len(args) > len(params) {
			return nil, &jinja.Error{Kind: "TypeError", Msg: fmt.Sprintf("%s() takes from 3 to %d positional arguments but %d were given", pyName, len(params)+1, len(args)+1)}
		}
		return fn(r, v, args, kw)
	}
}

// oneArgFilter fails like Python calling the one-parameter function
// pyName with more arguments.
func oneArgFilter(pyName string, fn jinja.FilterFunc) jinja.FilterFunc {
	return func(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
		if kw != nil && kw.Len() > 0 {
			k := kw.Items()[0].Key
			return nil, &jinja.Error{Kind: "TypeError", Msg: fmt.Sprintf("%s() got an unexpected keyword argument %s", pyName, jinja.Repr(k))}
		}
		if len(args) > 0 {
			return nil, &jinja.Error{Kind: "TypeError", Msg: fmt.Sprintf("%s() takes 1 positional argument but %d were given", pyName, len(args)+1)}
		}
		return fn(r, v, args, kw)
	}
}

// saltFilters returns Salt's own filters. They hold no render state.
func saltFilters() map[string]filterFunc {
	f := map[string]filterFunc{
		"yaml": func(e *jinja.Runtime, in *value, va *varArgs) *value {
			if in.IsError() {
				return in
			}
			// Salt's dumper writes what it cannot represent (a Markup
			// value) as NULL
			out, err := yamlDumpUnknownNull(plainData(markupUnknown(in.Interface(), 0)), arg(va, 0, "flow_style", true).IsTrue())
			if err != nil {
				return asValue(err)
			}
			return asValue(trimYAMLDoc(out))
		},
		"dict_to_sls_yaml_params": func(e *jinja.Runtime, in *value, va *varArgs) *value {
			d := asDict(in)
			if d == nil {
				return filterErr("dict_to_sls_yaml_params needs a dict")
			}
			var l []any
			for _, it := range d.Items() {
				l = append(l, payload.NewMap().SetKey(plainData(it.Key), plainData(it.Value)))
			}
			out, err := YAMLDump(l, arg(va, 0, "flow_style", false).IsTrue())
			if err != nil {
				return asValue(err)
			}
			return asValue(trimYAMLDoc(out))
		},
		"json": func(e *jinja.Runtime, in *value, va *varArgs) *value {
			if in.IsError() {
				return in
			}
			// json.dumps refuses what it cannot serialize (a range)
			if err := jinja.JSONSerializable(in.Interface(), 0); err != nil {
				return asValue(err)
			}
			out, err := PyJSON(plainData(in), JSONOptions{SortKeys: arg(va, 0, "sort_keys", true).IsTrue(), Indent: indentArg(arg(va, 1, "indent", nil))})
			if err != nil {
				return asValue(err)
			}
			return asValue(strings.TrimSpace(out))
		},
		"tojson": func(e *jinja.Runtime, in *value, va *varArgs) *value {
			if in.IsError() {
				return in
			}
			if err := jinja.JSONSerializable(in.Interface(), 0); err != nil {
				return asValue(err)
			}
			opts := JSONOptions{Indent: indentArg(arg(va, 0, "indent", nil)), ASCII: true}
			if v, ok := va.KwArgs["ensure_ascii"]; ok {
				opts.ASCII = v.IsTrue()
			}
			if v, ok := va.KwArgs["sort_keys"]; ok {
				opts.SortKeys = v.IsTrue()
			}
			out, err := PyJSON(plainData(in), opts)
			if err != nil {
				return asValue(err)
			}
			out = strings.NewReplacer("<", `\u003c`, ">", `\u003e`, "&", `\u0026`, "'", `\u0027`).Replace(out)
			return asValue(out)
		},
		"python": func(e *jinja.Runtime, in *value, va *varArgs) *value {
			return asValue(pyRepr(in))
		},
		"load_yaml": func(e *jinja.Runtime, in *value, va *varArgs) *value {
			switch in.Interface().(type) {
			case int64, *big.Int, float64, bool, *jinja.List, jinja.Tuple, *payload.Map, *jinja.Generator, *jinja.DictView, jinja.Markup:
				// yaml.safe_load takes a string or a stream (an iterator
				// object is neither); Salt's loader is LibYAML's CParser,
				// which takes only an exact str, not Markup (what the
				// yaml, json and python filters return)
				if !in.IsError() {
					return asValue(&jinja.Error{Kind: "TypeError", Msg: "a string or stream input is required"})
				}
			case jinja.Iterable:
				if jinja.TypeName(in.Interface()) == "range" {
					return asValue(&jinja.Error{Kind: "TypeError", Msg: "a string or stream input is required"})
				}
			}
			return loadYAMLFilter(e, in, va)
		},
		"load_json": strFilter(func(s string, va *varArgs) (any, error) {
			v, err := DecodeJSON([]byte(s))
			if err != nil || strings.TrimSpace(s) == "" {
				return nil, &jinja.Error{Kind: "TemplateRuntimeError", Msg: fmt.Sprintf("Unable to load json from %s", s)}
			}
			return v, nil
		}),
		// SerializerExtension.load_text: a template module becomes its
		// text, any other value is returned as it is
		"load_text": func(e *jinja.Runtime, in *value, va *varArgs) *value {
			if _, ok := in.Interface().(*jinja.Module); ok {
				return asValue(pyStr(in))
			}
			return in
		},
		"yaml_encode": markupUnrepresentable(simple(func(in any, va *varArgs) (any, error) {
			switch x := in.(type) {
			case string:
				return yamlDoubleQuoted(x), nil
			case *payload.Map, []any:
				return nil, fmt.Errorf("yaml_encode() only works with YAML scalar data; failed for %s", pyTypeName(in))
			case jinja.Iterable:
				// an iterator object: the dumper has no representer for it
				return nil, &jinja.Error{Kind: "RepresenterError", Msg: fmt.Sprintf("('cannot represent an object', %s)", jinja.Repr(x))}
			case nil:
				return "null", nil
			case bool:
				if x {
					return "true", nil
				}
				return "false", nil
			}
			return yamlScalarText(in), nil
		})),
		"yaml_dquote": strFilter(func(s string, va *varArgs) (any, error) { return yamlDoubleQuoted(s), nil }),
		"yaml_squote": strFilter(func(s string, va *varArgs) (any, error) { return yamlSingleQuoted(s), nil }),
		"to_bool": func(e *jinja.Runtime, in *value, va *varArgs) *value {
			switch x := in.Interface().(type) {
			case *jinja.DictView:
				// dict_keys and dict_items are set-like, not hashable:
				// len(val) > 0; dict_values is hashable
				if x.Kind != "values" {
					n, _ := jinja.Len(x)
					return asValue(n > 0)
				}
				return asValue(false)
			case jinja.Tuple, *jinja.Generator:
				// hashable containers are not sized: False
				return asValue(false)
			case jinja.Iterable:
				if jinja.TypeName(x) == "range" {
					return asValue(false)
				}
			}
			return simple(toBoolData)(e, in, va)
		},
		"sequence": func(e *jinja.Runtime, in *value, va *varArgs) *value {
			if in.IsError() {
				return in
			}
			if _, ok := listItems(in); ok || asDict(in) != nil {
				return in
			}
			return asValue(newList([]any{in.Interface()}))
		},
		"skip": func(e *jinja.Runtime, in *value, va *varArgs) *value { return asValue("") },
		"is_list": func(e *jinja.Runtime, in *value, va *varArgs) *value {
			// isinstance(value, list): a tuple is not a list
			switch in.Interface().(type) {
			case *jinja.List, []any:
				return asValue(true)
			}
			return asValue(false)
		},
		"is_iter": func(e *jinja.Runtime, in *value, va *varArgs) *value {
			if _, ok := in.Interface().(jinja.Iterable); ok {
				// generators, reversed lists and dict views are iterable
				return asValue(true)
			}
			_, ok := listItems(in)
			return asValue(ok || asDict(in) != nil)
		},
		"union": setFilter("union", func(s *pySeqOps, a, b []any) []any {
			var out []any
			for _, x := range append(append([]any{}, a...), b...) {
				out = s.appendUnique(out, x)
			}
			return out
		}),
		"intersect": setFilter("intersect", func(s *pySeqOps, a, b []any) []any {
			var out []any
			for _, x := range a {
				if s.contains(b, x) {
					out = s.appendUnique(out, x)
				}
			}
			return out
		}),
		"difference": setFilter("difference", func(s *pySeqOps, a, b []any) []any {
			var out []any
			for _, x := range a {
				if !s.contains(b, x) {
					out = s.appendUnique(out, x)
				}
			}
			return out
		}),
		"symmetric_difference": unionFirst(listSetFilter(func(s *pySeqOps, a, b []any) []any {
			var out []any
			for _, x := range append(append([]any{}, a...), b...) {
				if s.contains(a, x) != s.contains(b, x) {
					out = s.appendUnique(out, x)
				}
			}
			return out
		})),
		"min": extremeFilter(-1),
		"max": extremeFilter(1),
		"avg": simple(func(in any, va *varArgs) (any, error) {
			if m, isMap := in.(*payload.Map); isMap {
				// a dict is not hashable: sum(d) / len(d) over its keys
				keys := make([]any, 0, m.Len())
				for _, it := range m.Items() {
					keys = append(keys, it.Key)
				}
				in = keys
			}
			l, ok := in.([]any)
			if !ok {
				// a hashable value: float(value)
				if str, isStr := in.(string); isStr {
					f, err := strconv.ParseFloat(strings.TrimSpace(str), 64)
					if err != nil || strings.ContainsAny(strings.ToLower(str), "x") {
						return nil, &jinja.Error{Kind: "ValueError", Msg: fmt.Sprintf("could not convert string to float: %s", pyRepr(str))}
					}
					return f, nil
				}
				f, ok := toFloat(in)
				if !ok {
					return nil, errors.New("avg needs numbers")
				}
				return f, nil
			}
			if len(l) == 0 {
				return nil, errors.New("division by zero")
			}
			sum := 0.0
			for _, x := range l {
				f, ok := toFloat(x)
				if !ok {
					return nil, errors.New("avg needs numbers")
				}
				sum += f
			}
			return sum / float64(len(l)), nil
		}),
		"regex_search": regexFilter(false),
		"regex_match":  regexFilter(true),
		"regex_replace": reStrFilter(func(s string, va *varArgs) (any, error) {
			re, err := compilePyRegex(pyStr(arg(va, 0, "rgx", "")), arg(va, 2, "ignorecase", false).IsTrue(), arg(va, 3, "multiline", false).IsTrue())
			if err != nil {
				return nil, err
			}
			return re.Sub(pyStr(arg(va, 1, "val", "")), s, 0)
		}),
		"regex_escape": strFilter(func(s string, va *varArgs) (any, error) { return pyre.Escape(s), nil }),
		"quote": func(e *jinja.Runtime, in *value, va *varArgs) *value {
			// shlex.quote: a false value quotes as '', only strings otherwise
			if !in.IsError() && !in.IsTrue() {
				return asValue("''")
			}
			return reStrFilter(func(s string, va *varArgs) (any, error) { return shellQuote(s), nil })(e, in, va)
		},
		"md5":  hashFilter(func(b []byte) string { h := md5.Sum(b); return hex.EncodeToString(h[:]) }),
		"sha1": hashFilter(func(b []byte) string { h := sha1.Sum(b); return hex.EncodeToString(h[:]) }),
		"sha256": hashFilter(func(b []byte) string {
			h := sha256.Sum256(b)
			return hex.EncodeToString(h[:])
		}),
		"sha512": hashFilter(func(b []byte) string {
			h := sha512.Sum512(b)
			return hex.EncodeToString(h[:])
		}),
		"hmac": strFilter(func(s string, va *varArgs) (any, error) {
			key := []byte(pyStr(arg(va, 0, "shared_secret", "")))
			want := pyStr(arg(va, 1, "challenge_hmac", ""))
			m := hmac.New(sha256.New, key)
			m.Write([]byte(s))
			return base64.StdEncoding.EncodeToString(m.Sum(nil)) == want, nil
		}),
		"base64_encode": strFilter(func(s string, va *varArgs) (any, error) {
			return base64.StdEncoding.EncodeToString([]byte(s)), nil
		}),
		"base64_decode": strFilter(func(s string, va *varArgs) (any, error) {
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return nil, fmt.Errorf("base64_decode: %w", err)
			}
			if utf8.Valid(b) {
				return string(b), nil
			}
			return b, nil
		}),
		"strftime":    strftimeFilter,
		"date_format": strftimeFilter,
		"traverse": func(e *jinja.Runtime, in *value, va *varArgs) *value {
			if in.IsError() {
				return in
			}
			def := arg(va, 1, "default", nil)
			out, ok, err := traverse(fromJinja(in), fromJinja(arg(va, 0, "key", "")), pyStr(arg(va, 2, "delimiter", ":")))
			if err != nil {
				return asValue(err)
			}
			if !ok {
				return def
			}
			return asValue(toJinja(out))
		},
		"is_ip":   ipTestFilter(0),
		"is_ipv4": ipTestFilter(4),
		"is_ipv6": ipTestFilter(6),
		"ipv4":    ipFilter(4),
		"ipv6":    ipFilter(6),
		"ipaddr":  ipFilter(0),
		"network_hosts": ipInput(simple(func(in any, va *varArgs) (any, error) {
			budget := networkHostsBudget
			return networkFilter(in, va, func(p netip.Prefix) (any, error) { return networkHosts(p, &budget) })
		})),
		"network_size": ipInput(simple(func(in any, va *varArgs) (any, error) {
			return networkFilter(in, va, func(p netip.Prefix) (any, error) {
				bits := p.Addr().BitLen() - p.Bits()
				if bits >= 63 {
					return new(big.Int).Lsh(big.NewInt(1), uint(bits)), nil
				}
				return int64(1) << bits, nil
			})
		})),
		"ip_host": ipInput(simple(func(in any, va *varArgs) (any, error) {
			return networkFilter(in, va, func(p netip.Prefix) (any, error) { return p.String(), nil })
		})),
		"to_num": simple(func(in any, va *varArgs) (any, error) {
			s, ok := in.(string)
			if !ok {
				// int(value): numbers convert, containers and None fail
				switch x := in.(type) {
				case []any, *payload.Map, nil, jinja.Iterable:
					return nil, &jinja.Error{Kind: "TypeError", Msg: fmt.Sprintf("int() argument must be a string, a bytes-like object or a real number, not '%s'", jinja.TypeName(in))}
				case bool:
					if x {
						return int64(1), nil
					}
					return int64(0), nil
				case float64:
					if !math.IsInf(x, 0) && !math.IsNaN(x) && math.Abs(x) < 9e18 {
						return int64(x), nil
					}
				}
				return in, nil
			}
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return n, nil
			}
			if f, err := strconv.ParseFloat(s, 64); err == nil {
				return f, nil
			}
			return s, nil
		}),
		// salt.utils.stringutils.is_hex: int(value, 16) succeeds; a value
		// that is not a string is Python's TypeError, so False
		"is_hex": func(e *jinja.Runtime, in *value, va *varArgs) *value {
			s, ok := in.Interface().(string)
			if !ok {
				if m, isMarkup := in.Interface().(jinja.Markup); isMarkup {
					s, ok = string(m), true
				}
			}
			return asValue(ok && isPyHexInt(s))
		},
		"contains_whitespace": strFilter(func(s string, va *varArgs) (any, error) {
			return strings.ContainsAny(s, " \t\n\r\v\f"), nil
		}),
		"sorted_ignorecase": func(e *jinja.Runtime, in *value, va *varArgs) *value {
			if in.IsError() {
				return in
			}
			// the items as Python sees them (a tuple key of a dict stays
			// a tuple): each must have .lower()
			l, err := jinja.Iterate(in.Interface())
			if err != nil {
				return asValue(err)
			}
			for _, x := range l {
				switch x := x.(type) {
				case string, jinja.Markup:
				case *jinja.Undefined:
					// s.lower() on Jinja2's Undefined (strict or not)
					// raises its UndefinedError
					return asValue(&jinja.Error{Kind: "UndefinedError", Msg: x.Message()})
				default:
					return asValue(&jinja.Error{Kind: "AttributeError", Msg: fmt.Sprintf("'%s' object has no attribute 'lower'", jinja.TypeName(x))})
				}
			}
			return simple(sortedIgnorecase)(e, asValue(jinja.NewList(l...)), va)
		},
		// flatten walks the template values themselves, as Salt's
		// salt.utils.data.flatten meets them: a tuple key of a dict stays
		// a tuple (the exported form made it the string "(1, 2)")
		"flatten": func(e *jinja.Runtime, in *value, va *varArgs) *value {
			if in.IsError() {
				return in
			}
			l, err := jinja.Iterate(in.Interface())
			if err != nil {
				return asValue(err)
			}
			levels := -1
			if v := arg(va, 0, "levels", nil); !v.IsNil() {
				levels = v.Integer()
			}
			preserveNulls := arg(va, 1, "preserve_nulls", false).IsTrue()
			ids := map[any]bool{}
			pyIdentity(in.Interface(), ids)
			out, err := flatten(l, levels, preserveNulls, ids)
			if err != nil {
				return asValue(err)
			}
			return asValue(toJinja(orEmptyList(out)))
		},
		"exactly_n_true": simple(func(in any, va *varArgs) (any, error) {
			return exactlyNTrue(in, arg(va, 0, "n", 1).Integer())
		}),
		"exactly_one_true": simple(func(in any, va *varArgs) (any, error) { return exactlyNTrue(in, 1) }),
		// salt.utils.data.substr_in_list: any(x in s for s in list_), with
		// Python's "in" (a str left operand needs a str right one)
		"substring_in_list": func(e *jinja.Runtime, in *value, va *varArgs) *value {
			if in.IsError() {
				return in
			}
			items, err := jinja.Iterate(arg(va, 0, "list_to_search", nil).Interface())
			if err != nil {
				return asValue(err)
			}
			for _, s := range items {
				ok, err := jinja.Contains(s, in.Interface())
				if err != nil {
					return asValue(err)
				}
				if ok {
					return asValue(true)
				}
			}
			return asValue(false)
		},
		"path_join": func(e *jinja.Runtime, in *value, va *varArgs) *value {
			parts := []string{pyStr(in)}
			for _, a := range va.Args {
				parts = append(parts, pyStr(a))
			}
			out := ""
			for _, p := range parts {
				if strings.HasPrefix(p, "/") || out == "" {
					out = p
				} else if strings.HasSuffix(out, "/") {
					out += p
				} else {
					out += "/" + p
				}
			}
			return asValue(out)
		},
		"to_snake_case": strFilter(func(s string, va *varArgs) (any, error) { return toSnake(s), nil }),
		"to_camelcase": strFilter(func(s string, va *varArgs) (any, error) {
			parts := strings.Split(s, "_")
			upperFirst := arg(va, 0, "uppercamel", false).IsTrue()
			for i, p := range parts {
				if (i > 0 || upperFirst) && p != "" {
					parts[i] = strings.ToUpper(p[:1]) + p[1:]
				}
			}
			return strings.Join(parts, ""), nil
		}),
		// salt.utils.data.compare_lists with Python's "in" and iteration
		"compare_lists": func(e *jinja.Runtime, in *value, va *varArgs) *value {
			if in.IsError() {
				return in
			}
			old, nw := in.Interface(), arg(va, 0, "new", nil).Interface()
			diff := func(from, other any) ([]any, error) {
				items, err := jinja.Iterate(from)
				if err != nil {
					return nil, err
				}
				var out []any
				for _, x := range items {
					ok, err := jinja.Contains(other, x)
					if err != nil {
						return nil, err
					}
					if !ok {
						out = append(out, x)
					}
				}
				return out, nil
			}
			ret := payload.NewMap()
			added, err := diff(nw, old)
			if err != nil {
				return asValue(err)
			}
			removed, err := diff(old, nw)
			if err != nil {
				return asValue(err)
			}
			if added != nil {
				ret.Set("new", newList(added))
			}
			if removed != nil {
				ret.Set("old", newList(removed))
			}
			return asValue(ret)
		},
		"method_call": func(e *jinja.Runtime, in *value, va *varArgs) *value {
			return filterErr("method_call is not supported by gsalt")
		},
		// salt.utils.stringutils.to_str refuses anything but str and bytes
		"uuid": func(e *jinja.Runtime, in *value, va *varArgs) *value {
			if in.IsError() {
				return in
			}
			switch v := in.Interface().(type) {
			case string, jinja.Markup:
				return asValue(uuid5URL(pyStr(v)))
			case []byte:
				return asValue(uuid5URL(string(v)))
			}
			return asValue(&jinja.Error{Kind: "TypeError", Msg: fmt.Sprintf("expected str, bytes, or bytearray not <class '%s'>", jinja.TypeName(in.Interface()))})
		},
		"zip": func(e *jinja.Runtime, in *value, va *varArgs) *value {
			lists := [][]any{}
			a, _ := listItems(in)
			lists = append(lists, a)
			for _, x := range va.Args {
				l, _ := listItems(x)
				lists = append(lists, l)
			}
			n := math.MaxInt
			for _, l := range lists {
				n = min(n, len(l))
			}
			var out []any
			for i := 0; i < n; i++ {
				row := make(pyTuple, len(lists))
				for j, l := range lists {
					row[j] = l[i]
				}
				out = append(out, row)
			}
			return asValue(newList(out))
		},
	}
	return f
}

func indentArg(v *value) int {
	if v == nil || v.IsNil() {
		return -1
	}
	return v.Integer()
}

func orEmptyList(l []any) []any {
	if l == nil {
		return []any{}
	}
	return l
}

// listSetFilter adapts the set filters (union, intersect, ...).
func listSetFilter(fn func(s *pySeqOps, a, b []any) []any) filterFunc {
	return simple(func(in any, va *varArgs) (any, error) {
		a, ok := in.([]any)
		b, ok2 := fromJinja(arg(va, 0, "lst2", nil)).([]any)
		if !ok || !ok2 {
			return nil, errors.New("set filters need two lists")
		}
		s := &pySeqOps{}
		out := fn(s, a, b)
		if s.err != nil {
			return nil, s.err
		}
		return orEmptyList(out), nil
	})
}

// pyHashableType says whether Salt's isinstance(v, Hashable) holds: not
// for lists and dicts.
func pyHashableType(v any) bool {
	switch v.(type) {
	case *jinja.List, *payload.Map, []any:
		return false
	}
	return true
}

// setOperands are a set filter's two values, and whether the list
// behaviour applies (two lists, or two hashable values).
func setOperands(in *value, va *varArgs) (a, b any, asList bool) {
	a, b = in.Interface(), arg(va, 0, "lst2", nil).Interface()
	_, aList := a.(*jinja.List)
	_, bList := b.(*jinja.List)
	return a, b, (aList && bList) || (pyHashableType(a) && pyHashableType(b))
}

// unionFirst is symmetric_difference's first step when the two values
// are not both hashable: union(lst1, lst2) adds them with Python's +,
// which fails unless both are lists (a tuple and a list, a dict, ...).
func unionFirst(fn filterFunc) filterFunc {
	return func(e *jinja.Runtime, in *value, va *varArgs) *value {
		if in.IsError() {
			return in
		}
		a, b, asList := setOperands(in, va)
		if !asList {
			if _, err := jinja.BinOp("+", a, b); err != nil {
				return asValue(err)
			}
		}
		return fn(e, in, va)
	}
}

// setFilter is Salt's union/intersect/difference: when either side is a
// list or dict, unique() of the Python expression over both (op); two
// hashable values (Python sets, unordered) keep the list behaviour.
func setFilter(name string, listFn func(s *pySeqOps, a, b []any) []any) filterFunc {
	fallback := listSetFilter(listFn)
	return func(e *jinja.Runtime, in *value, va *varArgs) *value {
		if in.IsError() {
			return in
		}
		a, b, asList := setOperands(in, va)
		if asList {
			return fallback(e, in, va)
		}
		var items []any
		var err error
		switch name {
		case "union":
			var sum any
			if sum, err = jinja.BinOp("+", a, b); err == nil {
				items, err = jinja.Iterate(sum)
			}
		default:
			var all []any
			if all, err = jinja.Iterate(a); err == nil {
				for _, x := range all {
					in, cerr := jinja.Contains(b, x)
					if cerr != nil {
						return asValue(cerr)
					}
					if in == (name == "intersect") {
						items = append(items, x)
					}
				}
			}
		}
		if err != nil {
			return asValue(err)
		}
		ops := &pySeqOps{}
		var out []any
		for _, x := range items {
			out = ops.appendUnique(out, x)
		}
		if ops.err != nil {
			return asValue(ops.err)
		}
		return asValue(newList(out))
	}
}

// pySeqOps is Python's `x in list` over items of Salt's set filters
// (salt.utils.data.unique's `value not in ret` included): == on each
// item, where a strict undefined value met (a dict's value, say) raises;
// the first error is kept and ends the work.
type pySeqOps struct{ err error }

func (s *pySeqOps) appendUnique(out []any, x any) []any {
	if s.contains(out, x) || s.err != nil {
		return out
	}
	return append(out, x)
}

func (s *pySeqOps) contains(l []any, x any) bool {
	if s.err != nil {
		return false
	}
	in, err := jinja.Contains(jinja.Import(l), jinja.Import(x))
	if err != nil {
		s.err = err
		return false
	}
	return in
}

// extremeFilter is Salt's min (sign -1) or max (1): Python's min(obj) /
// max(obj) over the template values themselves, so the item returned is
// the object (an undefined value, a tuple, a dict holding one) and
// ordering an undefined value raises as Jinja2's Undefined does.
func extremeFilter(sign int) filterFunc {
	return func(e *jinja.Runtime, in *value, va *varArgs) *value {
		if in.IsError() {
			return in
		}
		v := in.Interface()
		switch v.(type) {
		case *jinja.List, jinja.Tuple, *payload.Map, string, jinja.Markup, jinja.Iterable:
		default:
			return asValue(fmt.Errorf("'%s' object is not iterable", jinja.TypeName(v)))
		}
		items, err := jinja.Iterate(v)
		if err != nil {
			return asValue(err)
		}
		if len(items) == 0 {
			return asValue(errors.New("arg is an empty sequence"))
		}
		op := "<"
		if sign > 0 {
			op = ">"
		}
		best := items[0]
		for _, x := range items[1:] {
			c, err := jinja.Compare(x, best, op)
			if err != nil {
				return asValue(err)
			}
			if c == sign {
				best = x
			}
		}
		return asValue(best)
	}
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

func regexFilter(match bool) filterFunc {
	return reStrFilter(func(s string, va *varArgs) (any, error) {
		re, err := compilePyRegex(pyStr(arg(va, 0, "rgx", "")), arg(va, 1, "ignorecase", false).IsTrue(), arg(va, 2, "multiline", false).IsTrue())
		if err != nil {
			return nil, err
		}
		var m *pyre.Match
		if match {
			m, err = re.MatchStart(s)
		} else {
			m, err = re.Search(s)
		}
		if err != nil || m == nil {
			return nil, err
		}
		return pyTuple(m.Groups()), nil
	})
}

// compilePyRegex compiles a Python regular expression (Salt's filters
// call Python's re with re.I and re.M).
func compilePyRegex(rgx string, ignoreCase, multiline bool) (*pyre.Regexp, error) {
	var flags pyre.Flags
	if ignoreCase {
		flags |= pyre.IgnoreCase
	}
	if multiline {
		flags |= pyre.Multiline
	}
	return pyre.Compile(rgx, flags)
}

// shellQuote is Python's shlex.quote.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./-_", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

func hashFilter(fn func([]byte) string) filterFunc {
	return func(e *jinja.Runtime, in *value, va *varArgs) *value {
		if in.IsError() {
			return in
		}
		switch x := in.Interface().(type) {
		case []byte:
			return asValue(fn(x))
		case string:
			return asValue(fn([]byte(x)))
		}
		// Salt encodes the value with to_bytes, which takes only strings
		return asValue(&jinja.Error{Kind: "TypeError", Msg: fmt.Sprintf("expected str, bytes, or bytearray not <class '%s'>", jinja.TypeName(in.Interface()))})
	}
}

// strftimeFilter formats a date (a datetime, a timestamp, or a string in
// a common layout; "now"/"today") with a Python strftime format.
func strftimeFilter(e *jinja.Runtime, in *value, va *varArgs) *value {
	if in.IsError() {
		return in
	}
	format := pyStr(arg(va, 0, "format", "%Y-%m-%d"))
	var t time.Time
	switch x := fromJinja(in).(type) {
	case time.Time:
		t = x
	case int64:
		t = time.Unix(x, 0)
	case bool:
		// datetime.fromtimestamp(True): a bool is the int 0 or 1
		t = time.Unix(0, 0)
		if x {
			t = time.Unix(1, 0)
		}
	case float64:
		t = time.Unix(int64(x), int64((x-math.Floor(x))*1e9))
	case nil:
		t = time.Now()
	case string:
		parsed, err := parseDate(x)
		if err != nil {
			return asValue(err)
		}
		t = parsed
	default:
		return filterErr("Unable to parse %s", pyRepr(in))
	}
	return asValue(pytime.Strftime(t, format))
}

func parseDate(s string) (time.Time, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "now", "today":
		return time.Now(), nil
	}
	layouts := []string{
		"2006-01-02T15:04:05.999999999Z07:00", "2006-01-02T15:04:05", "2006-01-02 15:04:05.999999",
		"2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02", "2006/01/02", "2006/01/02 15:04:05",
		"01/02/2006", "02 Jan 2006", "Jan 02 2006", "January 2, 2006", "Mon, 02 Jan 2006 15:04:05 -0700",
	}
	for _, l := range layouts {
		if t, err := time.ParseInLocation(l, strings.TrimSpace(s), time.Local); err == nil {
			return t, nil
		}
	}
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		return time.Unix(int64(n), 0), nil
	}
	return time.Time{}, fmt.Errorf("Unable to parse %s", s)
}

// traverse is salt.utils.data.traverse_dict_and_list. Only the values it
// steps into are touched: an undefined value on the path raises its
// UndefinedError (Undefined.__getitem__), one at the end is returned.
func traverse(data any, key any, delim string) (any, bool, error) {
	var parts []string
	switch k := key.(type) {
	case string:
		parts = strings.Split(k, delim)
	case int64:
		parts = []string{strconv.FormatInt(k, 10)}
	case []any:
		for _, x := range k {
			parts = append(parts, payload.Text(x))
		}
	default:
		return nil, false, nil
	}
	ptr := data
	for _, each := range parts {
		switch p := ptr.(type) {
		case []any:
			idx, err := strconv.Atoi(each)
			found := false
			for _, x := range p {
				if m, ok := x.(*payload.Map); ok {
					var v any
					var has bool
					if err == nil {
						v, has = jinja.DictGet(m, int64(idx))
					} else {
						v, has = m.Get(each)
					}
					if has {
						ptr, found = v, true
						break
					}
				}
			}
			if !found {
				if err != nil || idx >= len(p) || idx < -len(p) {
					return nil, false, nil
				}
				if idx < 0 {
					idx += len(p)
				}
				ptr = p[idx]
			}
		case *payload.Map:
			v, ok := p.Get(each)
			if !ok {
				if n, err := strconv.ParseInt(each, 10, 64); err == nil {
					v, ok = jinja.DictGet(p, n)
				}
			}
			if !ok {
				return nil, false, nil
			}
			ptr = v
		case *jinja.Undefined:
			return nil, false, &jinja.Error{Kind: "UndefinedError", Msg: p.Message()}
		default:
			return nil, false, nil
		}
	}
	return ptr, true, nil
}

// parseIP parses an address or an interface ("10.0.0.1/24") like
// ipaddress.ip_address / ip_interface, returning the prefix (a /32 or
// /128 for plain addresses) and whether it was an interface.
func parseIP(s string) (netip.Prefix, bool, bool) {
	if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
		return netip.PrefixFrom(a, a.BitLen()), false, true
	}
	if p, err := netip.ParsePrefix(s); err == nil {
		return p, true, true
	}
	if addr, mask, ok := strings.Cut(s, "/"); ok {
		// netmask form 10.0.0.1/255.255.255.0
		a, err1 := netip.ParseAddr(addr)
		m, err2 := netip.ParseAddr(mask)
		if err1 == nil && err2 == nil && a.Is4() && m.Is4() {
			b := m.As4()
			n := 0
			for _, x := range b {
				for i := 7; i >= 0; i-- {
					if x&(1<<i) != 0 {
						n++
					}
				}
			}
			return netip.PrefixFrom(a, n), true, true
		}
	}
	return netip.Prefix{}, false, false
}

// isIPv is Salt's _is_ipv: the str() of the address or interface when it
// has the version and passes the options, else "", false.
func isIPv(v any, version int, options string) (string, bool) {
	s, ok := v.(string)
	if t, isTuple := v.(jinja.Tuple); isTuple {
		// ip_address(tuple) fails; ip_interface((address, prefix)) is
		// the interface address/prefix
		s, ok = tupleInterface(t)
		if !ok {
			return "", false
		}
	} else if !ok {
		// ipaddress.ip_address(int): an IPv4 address below 2**32, else IPv6
		if s, ok = intIP(v); !ok {
			return "", false
		}
	}
	p, iface, ok := parseIP(s)
	if !ok {
		return "", false
	}
	a := p.Addr()
	if (version == 4 && !a.Is4()) || (version == 6 && !a.Is6()) {
		return "", false
	}
	if options != "" {
		for _, o := range strings.Split(options, ",") {
			o = strings.TrimSpace(o)
			pass := true
			switch o {
			case "global", "public":
				pass = !pyIsPrivate(a)
			case "link-local", "linklocal", "ll", "link_local":
				pass = a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast()
			case "loopback", "lo":
				pass = a.IsLoopback()
			case "multicast":
				pass = a.IsMulticast()
			case "private":
				pass = pyIsPrivate(a)
			case "unspecified":
				pass = a.IsUnspecified()
			case "site-local", "sl", "site_local":
				pass = a.Is6() && strings.HasPrefix(strings.ToLower(a.String()), "fec")
			}
			if !pass {
				return "", false
			}
		}
	}
	if iface {
		return p.String(), true
	}
	return a.String(), true
}

func ipTestFilter(version int) filterFunc {
	plain := ipTest(version)
	return func(e *jinja.Runtime, in *value, va *varArgs) *value {
		if t, ok := in.Interface().(jinja.Tuple); ok && !in.IsError() {
			// _is_ipv(tuple): ip_interface((address, prefix))
			if len(t) == 0 {
				return asValue(errEmptyInterface)
			}
			out, err := plain(t, va)
			if err != nil {
				return asValue(err)
			}
			return asValue(out)
		}
		return simple(plain)(e, in, va)
	}
}

// tupleInterfaceErr is the error ip_interface(t) raises past its
// ValueError: IndexError for (), str() of a strict undefined address, or
// of a strict undefined prefix after a valid address.
func tupleInterfaceErr(t jinja.Tuple) error {
	if len(t) == 0 {
		return errEmptyInterface
	}
	if len(t) > 2 {
		return nil
	}
	if _, err := jinja.Str(t[0]); err != nil {
		return err
	}
	if len(t) == 2 {
		s, isStr := t[0].(string)
		_, isInt := intIP(t[0])
		if _, perr := netip.ParseAddr(s); isInt || isStr && perr == nil {
			if _, err := jinja.Str(t[1]); err != nil {
				return err
			}
		}
	}
	return nil
}

// errEmptyInterface is ip_interface(()): the constructor indexes the
// empty tuple.
var errEmptyInterface = &jinja.Error{Kind: "IndexError", Msg: "tuple index out of range"}

func ipTest(version int) func(in any, va *varArgs) (any, error) {
	return func(in any, va *varArgs) (any, error) {
		opts := optionsArg(va)
		if version == 0 {
			_, ok4 := isIPv(in, 4, opts)
			_, ok6 := isIPv(in, 6, opts)
			return ok4 || ok6, nil
		}
		_, ok := isIPv(in, version, opts)
		return ok, nil
	}
}

func optionsArg(va *varArgs) string {
	o := arg(va, 0, "options", nil)
	if o.IsNil() {
		return ""
	}
	return pyStr(o)
}

// ipvFilter is Salt's _ipv_filter.
func ipvFilter(in any, version int, opts string) (any, bool, error) {
	if g, ok := in.(*jinja.Generator); ok && g.Module == "" && g.Type == "generator" {
		// a generator is read once: ipaddr's ipv6 pass finds it empty
		items, _ := g.Iter()
		if items == nil {
			items = []any{}
		}
		in = items
	}
	switch x := in.(type) {
	case string:
		s, ok := isIPv(x, version, opts)
		if !ok {
			return nil, true, nil
		}
		return s, true, nil
	case []any:
		out := []any{}
		for _, e := range x {
			if t, ok := e.(jinja.Tuple); ok {
				if err := tupleInterfaceErr(t); err != nil {
					return nil, true, err
				}
			}
			if s, ok := isIPv(e, version, opts); ok {
				out = append(out, s)
			}
		}
		return out, true, nil
	}
	return nil, false, nil
}

func ipFilter(version int) filterFunc {
	return ipInput(simple(func(in any, va *varArgs) (any, error) {
		opts := optionsArg(va)
		if version != 0 {
			v, _, err := ipvFilter(in, version, opts)
			return v, err
		}
		return ipaddrFilter(in, opts)
	}))
}

// markupUnrepresentable makes a Markup input PyYAML's RepresenterError:
// SafeRepresenter goes by the exact type, and Markup is not str.
func markupUnrepresentable(fn filterFunc) filterFunc {
	return func(e *jinja.Runtime, in *value, va *varArgs) *value {
		if m, ok := in.Interface().(jinja.Markup); ok && !in.IsError() {
			return asValue(&jinja.Error{Kind: "RepresenterError", Msg: fmt.Sprintf("('cannot represent an object', %s)", jinja.Repr(m))})
		}
		return fn(e, in, va)
	}
}

// ipInput gives Salt's IP filters None for a range: _ipv_filter reads a
// str, list, tuple or generator only (the plain data view would make a
// range a list).
func ipInput(fn filterFunc) filterFunc {
	return func(e *jinja.Runtime, in *value, va *varArgs) *value {
		if !in.IsError() && jinja.TypeName(in.Interface()) == "range" {
			return asValue(nil)
		}
		return fn(e, in, va)
	}
}

// tupleInterface is the text of ipaddress.ip_interface((address,
// prefix)) (or of a 1-tuple (address,), a host prefix); false when
// Python's constructor fails.
func tupleInterface(t jinja.Tuple) (string, bool) {
	if len(t) == 0 || len(t) > 2 {
		return "", false
	}
	addr, ok := t[0].(string)
	if !ok {
		if addr, ok = intIP(t[0]); !ok {
			return "", false
		}
	}
	if len(t) == 1 {
		if strings.Contains(addr, ":") {
			return addr + "/128", true
		}
		return addr + "/32", true
	}
	var prefix string
	switch p := t[1].(type) {
	case string:
		prefix = p
	case int64:
		prefix = strconv.FormatInt(p, 10)
		if n, isInt := pyIntValue(t[0]); isInt && p > 32 && p <= 128 && n.BitLen() <= 32 {
			// IPv4Interface refuses the prefix, IPv6Interface takes it
			var b [16]byte
			n.FillBytes(b[:])
			addr = netip.AddrFrom16(b).String()
		}
	default:
		return "", false
	}
	return addr + "/" + prefix, true
}

func ipaddrFilter(in any, opts string) (any, error) {
	v4, ok4, err := ipvFilter(in, 4, opts)
	if err != nil {
		return nil, err
	}
	v6, ok6, err := ipvFilter(in, 6, opts)
	if err != nil {
		return nil, err
	}
	if !ok4 || !ok6 || v4 == nil || v6 == nil {
		if payload.Truthy(v4) {
			return v4, nil
		}
		return v6, nil
	}
	l4, _ := v4.([]any)
	l6, _ := v6.([]any)
	return append(append([]any{}, l4...), l6...), nil
}

// networkFilter is Salt's _filter_ipaddr then fn per network.
func networkFilter(in any, va *varArgs, fn func(netip.Prefix) (any, error)) (any, error) {
	opts := optionsArg(va)
	version := 0
	if v := arg(va, 1, "version", nil); !v.IsNil() {
		version = v.Integer()
	}
	var out any
	var err error
	switch version {
	case 4, 6:
		out, _, err = ipvFilter(in, version, opts)
	default:
		out, err = ipaddrFilter(in, opts)
	}
	if err != nil {
		return nil, err
	}
	if !payload.Truthy(out) {
		return nil, nil
	}
	list, isList := out.([]any)
	if !isList {
		list = []any{out}
	}
	one := func(s any) (any, error) {
		p, _, ok := parseIP(payload.Text(s))
		if !ok {
			return nil, fmt.Errorf("invalid network %v", s)
		}
		return fn(p)
	}
	_, inList := in.([]any)
	if g, ok := in.(*jinja.Generator); ok && g.Module == "" && g.Type == "generator" {
		inList = true
	}
	if !inList {
		return one(list[0])
	}
	res := []any{}
	for _, s := range list {
		v, err := one(s)
		if err != nil {
			return nil, err
		}
		res = append(res, v)
	}
	return res, nil
}

// networkHostsBudget bounds what one network_hosts call lists, in IPv4
// hosts (an IPv6 host costs networkHostsV6Cost): Salt's Python builds a
// list of str, ~1.3 µs of CPU and ~75 bytes per IPv4 host and ~3.1 µs per
// IPv6 host, so within saltjinja.py's 10 s / 1 GiB caps it lists a /9
// (8,388,606 hosts, ~6.5 s) or an IPv6 /107 (2,097,151 hosts) and reaches
// the caps at a /8 or a /106; gsalt lists what fits the budget and is
// render.ErrLimit beyond it, as Salt's oracle is.
const (
	networkHostsBudget = 1<<23 + 1<<20
	networkHostsV6Cost = 4
)

// networkHosts lists the usable hosts of a network like
// ipaddress.ip_network(strict=False).hosts(), taking their cost from
// budget (a MemoryError when they do not fit). The strings share one
// backing buffer.
func networkHosts(p netip.Prefix, budget *int) (any, error) {
	p = p.Masked()
	bits := p.Addr().BitLen() - p.Bits()
	cost := networkHostsBudget + 1
	if bits < 32 {
		cost = 1 << bits
		if p.Addr().Is6() {
			cost *= networkHostsV6Cost
		}
	}
	if cost > *budget {
		// Python lists them until MemoryError or the CPU bound
		return nil, &jinja.Error{Kind: "MemoryError", Msg: fmt.Sprintf("network %s has too many hosts to list", p)}
	}
	*budget -= cost
	n := 1 << bits
	out := make([]any, 0, n)
	// hosts are written into a buffer, which becomes one string per
	// 64 KiB that the host strings slice
	buf := make([]byte, 0, 1<<16)
	var ends []int
	flush := func() {
		chunk, prev := string(buf), 0
		for _, e := range ends {
			out = append(out, chunk[prev:e])
			prev = e
		}
		buf, ends = buf[:0], ends[:0]
	}
	a := p.Addr()
	for i := 0; i < n; i++ {
		skip := (p.Addr().Is4() && bits >= 2 && (i == 0 || i == n-1)) || (p.Addr().Is6() && bits >= 1 && i == 0)
		if !skip {
			if cap(buf)-len(buf) < 64 {
				flush()
			}
			buf = a.AppendTo(buf)
			ends = append(ends, len(buf))
		}
		a = a.Next()
	}
	flush()
	return out, nil
}

// pyIdentity records the identity of a container Salt's flatten meets in
// ids (id(data) in _ids): the same list, dict or tuple object, or the
// empty tuple (CPython's singleton), met a second time anywhere in the data is
// its "Reference cycle detected". It reports whether v was there before.
func pyIdentity(v any, ids map[any]bool) bool {
	var id any
	switch x := v.(type) {
	case *jinja.List, *payload.Map, *jinja.Generator, *jinja.DictView:
		id = x
	case jinja.Tuple:
		// the same tuple object is the same items array
		id = "()"
		if len(x) != 0 {
			id = &x[0]
		}
	default:
		return false
	}
	if ids[id] {
		return true
	}
	ids[id] = true
	return false
}

func flatten(l []any, levels int, preserveNulls bool, ids map[any]bool) ([]any, error) {
	var out []any
	for _, x := range l {
		if u, ok := x.(*jinja.Undefined); ok && u.Strict && !preserveNulls {
			// element in (None, "None", "null") calls
			// StrictUndefined.__eq__, at every level
			return nil, &jinja.Error{Kind: "UndefinedError", Msg: u.Message()}
		}
		if !preserveNulls && (x == nil || x == "None" || x == "null" || x == jinja.Markup("None") || x == jinja.Markup("null")) {
			// element in (None, "None", "null")
			continue
		}
		if _, ok := x.(*jinja.Undefined); ok && levels != 0 {
			// is_iter(Undefined): it iterates as empty
			continue
		}
		if levels != 0 && isIterNotStr(x) {
			// salt.utils.data.is_iter: iterable and not a str
			if pyIdentity(x, ids) {
				return nil, pyErr("RecursionError", "Reference cycle detected. Check input list.")
			}
			sub, err := jinja.Iterate(x)
			if err != nil {
				return nil, err
			}
			flat, err := flatten(sub, levels-1, preserveNulls, ids)
			if err != nil {
				return nil, err
			}
			out = append(out, flat...)
			continue
		}
		out = append(out, x)
	}
	return out, nil
}

// isIterNotStr is salt.utils.data.is_iter of a template value: iter()
// works on it and it is not a str (Markup is a str).
func isIterNotStr(x any) bool {
	switch x.(type) {
	case string, jinja.Markup:
		return false
	case *jinja.List, jinja.Tuple, []any, []byte, *payload.Map, jinja.Iterable:
		return true
	}
	return false
}

// exactlyNTrue is salt.utils.data.exactly_n: i = iter(iterable);
// all(any(i) for _ in range(n)) and not any(i). It reads an iterator only
// up to the item that decides (the rest stays for the next reader), and
// bool() of an item it reads raises for a strict undefined one.
func exactlyNTrue(in any, n int) (any, error) {
	next, err := pyNext(in)
	if err != nil {
		return nil, err
	}
	anyTrue := func() (bool, error) {
		for {
			x, ok, err := next()
			if err != nil || !ok {
				return false, err
			}
			if t, err := jinja.Truthy(x); err != nil || t {
				return t, err
			}
		}
	}
	for range n {
		if t, err := anyTrue(); err != nil || !t {
			return false, err
		}
	}
	t, err := anyTrue()
	return !t && err == nil, err
}

// pyNext is iter(x)'s next(): a generator is read one item at a time.
func pyNext(x any) (func() (any, bool, error), error) {
	if g, ok := x.(*jinja.Generator); ok {
		return g.Next, nil
	}
	items, err := jinja.Iterate(x)
	if err != nil {
		return nil, err
	}
	return func() (any, bool, error) {
		if len(items) == 0 {
			return nil, false, nil
		}
		v := items[0]
		items = items[1:]
		return v, true, nil
	}, nil
}

func toSnake(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		isUpper := r >= 'A' && r <= 'Z'
		if isUpper && i > 0 && (rs[i-1] >= 'a' && rs[i-1] <= 'z' || rs[i-1] >= '0' && rs[i-1] <= '9' || (i+1 < len(rs) && rs[i+1] >= 'a' && rs[i+1] <= 'z' && rs[i-1] >= 'A' && rs[i-1] <= 'Z')) {
			b.WriteByte('_')
		}
		if isUpper {
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// uuid5URL is uuid.uuid5(GLOBAL_UUID, s), Salt's uuid filter
// (GLOBAL_UUID = 91633EBF-1C86-5E33-935A-28061F4B480E).
func uuid5URL(s string) string {
	ns := []byte{0x91, 0x63, 0x3e, 0xbf, 0x1c, 0x86, 0x5e, 0x33, 0x93, 0x5a, 0x28, 0x06, 0x1f, 0x4b, 0x48, 0x0e}
	h := sha1.Sum(append(ns, []byte(s)...))
	u := h[:16]
	u[6] = (u[6] & 0x0f) | 0x50
	u[8] = (u[8] & 0x3f) | 0x80
	x := hex.EncodeToString(u)
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]
}

// sortedIgnorecase is sorted(list, key=str.lower) on exported strings.
func sortedIgnorecase(in any, va *varArgs) (any, error) {
	l, err := pyIterItems(in)
	if err != nil {
		return nil, err
	}
	out := append([]any(nil), l...)
	sort.SliceStable(out, func(i, j int) bool {
		return strings.ToLower(payload.Text(out[i])) < strings.ToLower(payload.Text(out[j]))
	})
	return out, nil
}

// isPyHexInt reports whether Python's int(s, 16) accepts s: surrounding
// whitespace, a sign, an optional 0x prefix, hex digits with single
// underscores between them, any size.
func isPyHexInt(s string) bool {
	body := strings.TrimSpace(s)
	if strings.HasPrefix(body, "-") || strings.HasPrefix(body, "+") {
		body = body[1:]
	}
	if strings.HasPrefix(strings.ToLower(body), "0x") {
		body = strings.TrimPrefix(body[2:], "_")
	}
	if body == "" || strings.HasPrefix(body, "_") || strings.HasSuffix(body, "_") || strings.Contains(body, "__") {
		return false
	}
	_, ok := new(big.Int).SetString(strings.ReplaceAll(body, "_", ""), 16)
	return ok
}

// toBoolData is Salt's to_bool on exported data.
func toBoolData(in any, va *varArgs) (any, error) {
	switch x := in.(type) {
	case nil:
		return false, nil
	case bool:
		return x, nil
	case string:
		l := strings.ToLower(x)
		return l == "yes" || l == "1" || l == "true", nil
	case int64:
		return x > 0, nil
	case *payload.Map:
		return x.Len() > 0, nil
	case []any:
		return len(x) > 0, nil
	}
	return false, nil
}

// pyIterItems is list(in) (py.Iter); what Python cannot iterate fails
// with its TypeError.
func pyIterItems(in any) ([]any, error) {
	if l, ok := py.Iter(in); ok {
		return l, nil
	}
	return nil, &jinja.Error{Kind: "TypeError", Msg: fmt.Sprintf("'%s' object is not iterable", pyTypeName(in))}
}

// reStrFilter adapts a function of a string that Python's re module
// works on: any other value fails with re's TypeError.
func reStrFilter(fn func(s string, va *varArgs) (any, error)) filterFunc {
	return func(e *jinja.Runtime, in *value, va *varArgs) *value {
		if in.IsError() {
			return in
		}
		s, ok := in.Interface().(string)
		if !ok {
			return asValue(&jinja.Error{Kind: "TypeError", Msg: fmt.Sprintf("expected string or bytes-like object, got '%s'", jinja.TypeName(in.Interface()))})
		}
		out, err := fn(s, va)
		if err != nil {
			return asValue(err)
		}
		return asValue(toJinja(out))
	}
}

// loadYAMLFilter is load_yaml of str(input).
func loadYAMLFilter(e *jinja.Runtime, in *value, va *varArgs) *value {
	return strFilter(func(s string, va *varArgs) (any, error) {
		v, err := decodeYAMLText(s)
		if err != nil {
			return nil, loadYAMLError(s, err)
		}
		return v, nil
	})(e, in, va)
}

// pyIntValue is the Python int value of v (a bool, int64 or *big.Int).
func pyIntValue(v any) (*big.Int, bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return big.NewInt(1), true
		}
		return big.NewInt(0), true
	case int64:
		return big.NewInt(x), true
	case *big.Int:
		return x, true
	}
	return nil, false
}

// intIP is str(ipaddress.ip_address(n)) for an int (or bool) n.
func intIP(v any) (string, bool) {
	n, ok := pyIntValue(v)
	if !ok {
		return "", false
	}
	if n.Sign() < 0 || n.BitLen() > 128 {
		return "", false
	}
	var b [16]byte
	n.FillBytes(b[:])
	if n.BitLen() <= 32 {
		return netip.AddrFrom4([4]byte(b[12:])).String(), true
	}
	return netip.AddrFrom16(b).String(), true
}

// pyIsPrivate is ipaddress's is_private: a in one of the networks
// Python 3.11 calls private.
func pyIsPrivate(a netip.Addr) bool {
	for _, s := range [...]string{
		"0.0.0.0/8", "10.0.0.0/8", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
		"192.0.0.0/29", "192.0.0.170/31", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4", "255.255.255.255/32",
		"::1/128", "::/128", "::ffff:0:0/96", "100::/64", "2001::/23", "2001:2::/48",
		"2001:db8::/32", "2001:10::/28", "fc00::/7", "fe80::/10",
	} {
		if netip.MustParsePrefix(s).Contains(a.Unmap()) || netip.MustParsePrefix(s).Contains(a) {
			return true
		}
	}
	return false
}
