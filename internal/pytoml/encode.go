// Package pytoml is the TOML writer of the Python toml library (0.10.2,
// Debian's python3-toml), which Salt 3006's toml serializer
// (salt/serializers/tomlmod.py) wraps: toml.dumps with its default encoder,
// its quirks included (a list written "[ 1, 2,]", None values left out,
// Python repr based string escaping, "\x" escapes turned into "x").
//
// Values follow gsalt's data model: dicts are ordered mappings
// (*payload.Map or another py.Ranger), lists []any, strings, bools, Go
// integers and *big.Int, float64 and nil.
package pytoml

import (
	"fmt"
	"math/big"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
)

// maxDepth bounds the nesting of tables and lists Dumps follows.
const maxDepth = 512

// entry is one key and value of an ordered table.
type entry struct {
	key string
	val any
}

// table is an insertion-ordered dict of sections (a Python dict keyed by
// the section's written name).
type table struct {
	entries []entry
	index   map[string]int
}

func (t *table) set(k string, v any) {
	if t.index == nil {
		t.index = map[string]int{}
	}
	if i, ok := t.index[k]; ok {
		t.entries[i].val = v
		return
	}
	t.index[k] = len(t.entries)
	t.entries = append(t.entries, entry{k, v})
}

// Dumps is toml.dumps(o): o's keys with plain values first, then each
// table as a [section], tables inside tables as [a.b], lists of dicts as
// [[arrays of tables]]. Errors are the Python exceptions toml raises
// (*py.Exception: TypeError for a value that is not a dict, IndexError
// for a string starting with a control character).
func Dumps(o any) (string, error) {
	retval, sections, err := dumpSections(o, "", 0)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(retval)
	for depth := 1; len(sections.entries) > 0; depth++ {
		if depth > maxDepth {
			return "", &py.Exception{Type: "ValueError", Msg: "Circular reference detected"}
		}
		var next table
		for _, sec := range sections.entries {
			add, sub, err := dumpSections(sec.val, sec.key, depth)
			if err != nil {
				return "", err
			}
			if add != "" || len(sub.entries) == 0 {
				if s := b.String(); s != "" && !strings.HasSuffix(s, "\n\n") {
					b.WriteByte('\n')
				}
				b.WriteString("[" + sec.key + "]\n")
				b.WriteString(add)
			}
			for _, s := range sub.entries {
				next.set(sec.key+"."+s.key, s.val)
			}
		}
		sections = next
	}
	return b.String(), nil
}

// bareKey is the pattern of a key written without quotes; Python's "$"
// also matches before a final newline.
var bareKey = regexp.MustCompile(`^[A-Za-z0-9_-]+\n?$`)

// isDict reports whether v is a Python dict.
func isDict(v any) bool {
	_, ok := v.(py.Ranger)
	return ok
}

// isList reports whether v is exactly a Python list (a tuple or another
// iterable is not).
func isList(v any) ([]any, bool) {
	switch l := v.(type) {
	case []any:
		return l, true
	case []string:
		return py.List(l)
	}
	return nil, false
}

// lookup is o[key] for "for section in o: o[str(section)]": the keys of
// o as Python iterates them, each paired with the value found under its
// str(); an error where Python's o[...] raises.
func lookup(o any) ([]entry, error) {
	if r, ok := o.(py.Ranger); ok {
		var keys []string
		vals := map[string]any{}
		found := map[string]bool{}
		r.Range(func(k, v any) bool {
			keys = append(keys, keyStr(k))
			if s, ok := k.(string); ok {
				vals[s], found[s] = v, true
			}
			return true
		})
		out := make([]entry, 0, len(keys))
		for _, k := range keys {
			if !found[k] {
				return nil, &py.Exception{Type: "KeyError", Msg: pyfmt.Repr(k)}
			}
			out = append(out, entry{k, vals[k]})
		}
		return out, nil
	}
	items, ok := py.Iter(o)
	if !ok {
		return nil, &py.Exception{Type: "TypeError", Msg: fmt.Sprintf("'%s' object is not iterable", py.TypeName(o))}
	}
	if len(items) == 0 {
		return nil, nil
	}
	switch o.(type) {
	case string:
		return nil, &py.Exception{Type: "TypeError", Msg: "string indices must be integers, not 'str'"}
	case []byte:
		return nil, &py.Exception{Type: "TypeError", Msg: "byte indices must be integers or slices, not str"}
	}
	if _, ok := isList(o); ok {
		return nil, &py.Exception{Type: "TypeError", Msg: "list indices must be integers or slices, not str"}
	}
	return nil, &py.Exception{Type: "TypeError", Msg: "tuple indices must be integers or slices, not str"}
}

// keyStr is str(key) for a dict key. A tuple key arrives as a named
// slice type that knows its own repr (a template's Tuple, "(1, 2)"), which
// pyfmt, seeing only a slice, would write as a list.
func keyStr(k any) string {
	if s, ok := k.(fmt.Stringer); ok && reflect.ValueOf(k).Kind() == reflect.Slice {
		return s.String()
	}
	return pyfmt.Str(k)
}

// dumpSections is TomlEncoder.dump_sections(o, sup): the "key = value"
// lines and [[arrays of tables]] of o, and the tables of o to write as
// sections of their own.
func dumpSections(o any, sup string, depth int) (string, table, error) {
	if depth > maxDepth {
		return "", table{}, &py.Exception{Type: "RecursionError", Msg: "maximum recursion depth exceeded"}
	}
	if sup != "" && !strings.HasSuffix(sup, ".") {
		sup += "."
	}
	var retstr, arraystr strings.Builder
	var retdict table
	entries, err := lookup(o)
	if err != nil {
		return "", table{}, err
	}
	for _, e := range entries {
		section, val := e.key, e.val
		qsection := section
		if !bareKey.MatchString(section) {
			q, err := dumpStr(section)
			if err != nil {
				return "", table{}, err
			}
			qsection = q
		}
		if isDict(val) {
			retdict.set(qsection, val)
			continue
		}
		l, list := isList(val)
		arrayOfTables := false
		for _, a := range l {
			if isDict(a) {
				arrayOfTables = true
			}
		}
		if !list || !arrayOfTables {
			if val != nil {
				s, err := dumpValue(val, depth)
				if err != nil {
					return "", table{}, err
				}
				retstr.WriteString(qsection + " = " + s + "\n")
			}
			continue
		}
		for _, a := range l {
			arraytab := "\n"
			arraystr.WriteString("[[" + sup + qsection + "]]\n")
			s, d, err := dumpSections(a, sup+qsection, depth+1)
			if err != nil {
				return "", table{}, err
			}
			if s != "" {
				if s[0] == '[' {
					arraytab += s
				} else {
					arraystr.WriteString(s)
				}
			}
			for level := depth + 2; len(d.entries) > 0; level++ {
				var next table
				for _, ds := range d.entries {
					s1, d1, err := dumpSections(ds.val, sup+qsection+"."+ds.key, level)
					if err != nil {
						return "", table{}, err
					}
					if s1 != "" {
						arraytab += "[" + sup + qsection + "." + ds.key + "]\n" + s1
					}
					for _, x := range d1.entries {
						next.set(ds.key+"."+x.key, x.val)
					}
				}
				d = next
			}
			arraystr.WriteString(arraytab)
		}
	}
	retstr.WriteString(arraystr.String())
	return retstr.String(), retdict, nil
}

// dumpValue is TomlEncoder.dump_value: by the value's exact type, a list
// for anything else Python can iterate (a dict gives its keys), else the
// quoted repr of the value (None is written "None").
func dumpValue(v any, depth int) (string, error) {
	if depth > maxDepth {
		return "", &py.Exception{Type: "RecursionError", Msg: "maximum recursion depth exceeded"}
	}
	switch x := v.(type) {
	case string:
		return dumpStr(x)
	case bool:
		if x {
			return "true", nil
		}
		return "false", nil
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, *big.Int:
		return pyfmt.Repr(x), nil
	case float32:
		return dumpFloat(float64(x)), nil
	case float64:
		return dumpFloat(x), nil
	case time.Time:
		return isoformat(x)
	case Date:
		return x.String(), nil
	case TimeOfDay:
		return x.String(), nil
	}
	items, ok := py.Iter(v)
	if !ok {
		return dumpStr(pyfmt.Repr(v))
	}
	var b strings.Builder
	b.WriteByte('[')
	for _, u := range items {
		s, err := dumpValue(u, depth+1)
		if err != nil {
			return "", err
		}
		b.WriteString(" " + s + ",")
	}
	b.WriteByte(']')
	return b.String(), nil
}

// dumpFloat is "{}".format(v) with the exponent's leading zero dropped.
func dumpFloat(f float64) string {
	s := pyfmt.FloatRepr(f)
	s = strings.ReplaceAll(s, "e+0", "e+")
	return strings.ReplaceAll(s, "e-0", "e-")
}

// isoformat is toml's datetime writer: datetime.isoformat(), "+00:00"
// written "Z". gsalt's datetimes are naive but for those Loads read with
// an offset (a fixed zone named "UTC+hh:mm", TomlTz's tzname).
func isoformat(t time.Time) (string, error) {
	s := t.Format("2006-01-02T15:04:05")
	if us := t.Nanosecond() / 1000; us != 0 {
		s += fmt.Sprintf(".%06d", us)
	}
	name, off := t.Zone()
	if !strings.HasPrefix(name, "UTC") || name == "UTC" {
		return s, nil
	}
	if off <= -86400 || off >= 86400 {
		return "", &py.Exception{Type: "ValueError", Msg: "offset must be a timedelta strictly between -timedelta(hours=24) and timedelta(hours=24)."}
	}
	sign := "+"
	if off < 0 {
		sign, off = "-", -off
	}
	s += fmt.Sprintf("%s%02d:%02d", sign, off/3600, off%3600/60)
	if off%60 != 0 {
		s += fmt.Sprintf(":%02d", off%60)
	}
	return strings.ReplaceAll(s, "+00:00", "Z"), nil
}

// dumpStr is toml's _dump_str: Python's repr of s inside double quotes,
// a single-quoted repr's \' unescaped and " escaped, and every \xNN escape
// rewritten as toml 0.10.2 does (to "xNN" after a plain character, to
// \u00NN after an escaped backslash, the backslashes before it halved).
func dumpStr(s string) (string, error) {
	v := pyfmt.Repr(s)
	single := strings.HasPrefix(v, "'")
	if single || strings.HasPrefix(v, `"`) {
		v = v[1 : len(v)-1]
	}
	if single {
		v = strings.ReplaceAll(v, `\'`, `'`)
		v = strings.ReplaceAll(v, `"`, `\"`)
	}
	parts := strings.Split(v, `\x`)
	for len(parts) > 1 {
		if parts[0] == "" {
			parts = parts[1:]
		}
		parts[0] = strings.ReplaceAll(parts[0], `\\`, `\`)
		p := parts[0]
		if p == "" {
			return "", &py.Exception{Type: "IndexError", Msg: "string index out of range"}
		}
		i := len(p) - 1
		joinx := p[i] != '\\'
		for i > 0 && p[i] == '\\' {
			joinx = !joinx
			i--
		}
		if len(parts) < 2 {
			return "", &py.Exception{Type: "IndexError", Msg: "list index out of range"}
		}
		joiner := "u00"
		if joinx {
			joiner = "x"
		}
		parts = append([]string{p + joiner + parts[1]}, parts[2:]...)
	}
	return `"` + parts[0] + `"`, nil
}

// ParamError is the TypeError toml.dumps (fn "dumps") or toml.dump
// raises for a keyword argument it does not take (Salt passes the
// serializer's options through).
func ParamError(fn, name string) error {
	return &py.Exception{Type: "TypeError", Msg: fmt.Sprintf("%s() got an unexpected keyword argument '%s'", fn, name)}
}

// AttributeError is the error of toml.dumps given an encoder that is not
// a TomlEncoder (v has no attribute attr).
func AttributeError(v any, attr string) error {
	return &py.Exception{Type: "AttributeError", Msg: fmt.Sprintf("'%s' object has no attribute '%s'", py.TypeName(v), attr)}
}
