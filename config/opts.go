package config

//go:generate /usr/bin/python3 gen_defaults.py defaults_gen.go

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/gsalt/gsalt/internal/pyfmt"
)

// ErrInvalidValue is matched (errors.Is) by every *ValueError: an option
// holds a value of the wrong type.
var ErrInvalidValue = errors.New("config: invalid option value")

// ErrNotSet is returned by the Opts accessors that return an error when the
// option is absent from the map.
var ErrNotSet = errors.New("config: option not set")

// Role names used in error messages and by Opts.Role.
const (
	RoleMaster = "master"
	RoleMinion = "minion"
	RoleProxy  = "proxy"
)

// ValueError reports an option whose value does not have the expected type.
// Its message reads like
// `config: master: publish_port: want an integer, got "abc"`.
type ValueError struct {
	Role string // "master", "minion" or "proxy"
	Key  string // option name
	Want string // e.g. "an integer", "a string or a list"
	Got  any    // the offending value
}

// Error implements error.
func (e *ValueError) Error() string {
	return fmt.Sprintf("config: %s: %s: want %s, got %s", e.Role, e.Key, e.Want, pyRepr(e.Got))
}

// Is makes errors.Is(err, ErrInvalidValue) true.
func (e *ValueError) Is(target error) bool { return target == ErrInvalidValue }

// optType is a bit set of the Python value types an option accepts.
type optType uint8

const (
	tNone optType = 1 << iota
	tBool
	tInt
	tFloat
	tStr
	tList
	tDict
)

func (t optType) String() string {
	var names []string
	for _, p := range []struct {
		bit  optType
		name string
	}{
		{tStr, "a string"}, {tInt, "an integer"}, {tFloat, "a number"}, {tBool, "a boolean"},
		{tList, "a list"}, {tDict, "a mapping"}, {tNone, "null"},
	} {
		if t&p.bit != 0 {
			names = append(names, p.name)
		}
	}
	switch len(names) {
	case 0:
		return "nothing"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// accepts reports whether v is acceptable for t. The rules follow Salt's
// _validate_opts: a bool is only a bool; an int also satisfies float and str;
// a float also satisfies str; a string satisfies int or float when it parses
// as one (Salt runs int()/float() on it); lists and mappings only match
// themselves; nil needs tNone.
func (t optType) accepts(v any) bool {
	switch x := v.(type) {
	case nil:
		return t&tNone != 0
	case bool:
		return t&tBool != 0
	case int, *big.Int:
		return t&(tInt|tFloat|tStr) != 0
	case float64:
		return t&(tFloat|tStr) != 0
	case string:
		if t&tStr != 0 {
			return true
		}
		if t&tInt != 0 {
			if _, err := parsePyInt(x); err == nil {
				return true
			}
		}
		if t&tFloat != 0 {
			if _, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil {
				return true
			}
		}
		return false
	case []byte:
		return t&tStr != 0
	case []any:
		return t&tList != 0
	case map[string]any:
		return t&tDict != 0
	}
	return false
}

// parsePyInt parses a decimal integer string the way Python's int() does
// (surrounding blanks and single underscores between digits allowed).
func parsePyInt(s string) (int, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "__") || strings.HasPrefix(s, "_") || strings.HasSuffix(s, "_") {
		return 0, strconv.ErrSyntax
	}
	return strconv.Atoi(strings.ReplaceAll(s, "_", ""))
}

// Opts is a merged Salt option map (defaults, config file, included files),
// as Salt's __opts__ holds it, plus typed accessors. Values are what
// DecodeYAML produces: nil, bool, int, *big.Int, float64, string, []byte,
// []any and map[string]any.
//
// Opts is safe for concurrent use; values returned by Get/Map/... are shared
// with the map and must be treated as read-only (use Set to change an option).
type Opts struct {
	role string
	mu   sync.RWMutex
	m    map[string]any
	// base, when set (OptsShare.Share), holds the entries these options
	// have in common with others of the process: m then holds only the
	// entries that differ, gone the base's keys these options lack. base
	// is never written.
	base map[string]any
	gone map[string]struct{}
	// unknown are the options of the files that Salt does not know.
	unknown []UnknownOption
	// sources are the files read, in order.
	sources []Source
}

// NewOpts wraps m (taken over, not copied) as the options of role
// (RoleMaster, RoleMinion or RoleProxy).
func NewOpts(role string, m map[string]any) *Opts {
	if m == nil {
		m = map[string]any{}
	}
	return &Opts{role: role, m: m}
}

// Role returns "master", "minion" or "proxy".
func (o *Opts) Role() string { return o.role }

// Get returns the raw value of key and whether it is present.
func (o *Opts) Get(key string) (any, bool) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return o.get(key)
}

// get looks key up in m, then in base; o.mu is held.
func (o *Opts) get(key string) (any, bool) {
	if v, ok := o.m[key]; ok {
		return v, true
	}
	if o.base == nil {
		return nil, false
	}
	if _, ok := o.gone[key]; ok {
		return nil, false
	}
	v, ok := o.base[key]
	return v, ok
}

// each calls fn for every option, in no order; o.mu is held.
func (o *Opts) each(fn func(k string, v any)) {
	for k, v := range o.m {
		fn(k, v)
	}
	for k, v := range o.base {
		if _, own := o.m[k]; own {
			continue
		}
		if _, ok := o.gone[k]; !ok {
			fn(k, v)
		}
	}
}

// Set stores v under key. Typed fields of Master/Minion are not updated.
func (o *Opts) Set(key string, v any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.m[key] = v
	delete(o.gone, key)
}

// Delete removes key.
func (o *Opts) Delete(key string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.m, key)
	if _, ok := o.base[key]; ok {
		if o.gone == nil {
			o.gone = map[string]struct{}{}
		}
		o.gone[key] = struct{}{}
	}
}

// Keys returns the option names, sorted.
func (o *Opts) Keys() []string {
	o.mu.RLock()
	defer o.mu.RUnlock()
	out := make([]string, 0, len(o.m)+len(o.base))
	o.each(func(k string, _ any) { out = append(out, k) })
	slices.Sort(out)
	return out
}

// Snapshot returns a shallow copy of the option map (e.g. to hand __opts__ to
// a template renderer). Nested values are shared.
func (o *Opts) Snapshot() map[string]any {
	o.mu.RLock()
	defer o.mu.RUnlock()
	out := make(map[string]any, len(o.m)+len(o.base))
	o.each(func(k string, v any) { out[k] = v })
	return out
}

func (o *Opts) bad(key, want string, got any) error {
	return &ValueError{Role: o.role, Key: key, Want: want, Got: got}
}

// Str returns key as a string. Strings are returned as they are; ints,
// floats and bools are printed like Python's str() (Salt accepts them for
// string options); missing, nil, lists and mappings give "".
func (o *Opts) Str(key string) string {
	v, _ := o.Get(key)
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case bool, int, *big.Int, float64:
		return pyfmt.Str(x)
	}
	return ""
}

// Int returns key as an int. Ints and strings holding a decimal integer
// (Salt accepts both) are converted; anything else is a *ValueError naming
// the key, and a missing key is ErrNotSet.
func (o *Opts) Int(key string) (int, error) {
	v, ok := o.Get(key)
	if !ok {
		return 0, fmt.Errorf("config: %s: %s: %w", o.role, key, ErrNotSet)
	}
	switch x := v.(type) {
	case int:
		return x, nil
	case *big.Int:
		return 0, o.bad(key, "an integer that fits in 64 bits", v)
	case string:
		if n, err := parsePyInt(x); err == nil {
			return n, nil
		}
	}
	return 0, o.bad(key, "an integer", v)
}

// Float returns key as a float64: ints, floats and numeric strings are
// converted; anything else is a *ValueError, a missing key ErrNotSet.
func (o *Opts) Float(key string) (float64, error) {
	v, ok := o.Get(key)
	if !ok {
		return 0, fmt.Errorf("config: %s: %s: %w", o.role, key, ErrNotSet)
	}
	switch x := v.(type) {
	case int:
		return float64(x), nil
	case float64:
		return x, nil
	case *big.Int:
		f, _ := new(big.Float).SetInt(x).Float64()
		return f, nil
	case string:
		if f, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil && !strings.ContainsAny(x, "xXpP") {
			return f, nil
		}
	}
	return 0, o.bad(key, "a number", v)
}

// Bool returns the Python truth value of key, which is how Salt tests
// options: false for missing, nil, false, 0, 0.0, "", empty list or mapping;
// true otherwise. Note that the string "no" is true, as in Salt; the YAML
// words yes/no/on/off are already booleans after decoding.
func (o *Opts) Bool(key string) bool {
	v, _ := o.Get(key)
	return truthy(v)
}

func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case int:
		return x != 0
	case *big.Int:
		return x.Sign() != 0
	case float64:
		return x != 0
	case string:
		return x != ""
	case []byte:
		return len(x) != 0
	case []any:
		return len(x) != 0
	case map[string]any:
		return len(x) != 0
	}
	return true
}

// StrList returns key as a list of strings: a list's scalar items are
// converted as Str does (nested lists and mappings are skipped), a single
// string gives a one-item list, missing or nil gives nil.
func (o *Opts) StrList(key string) []string {
	v, _ := o.Get(key)
	return toStrList(v)
}

func toStrList(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			switch e := e.(type) {
			case string, bool, int, *big.Int, float64:
				out = append(out, pyfmt.Str(e))
			case []byte:
				out = append(out, string(e))
			}
		}
		return out
	}
	return nil
}

// Map returns key as a mapping, or nil when it is missing or not a mapping.
func (o *Opts) Map(key string) map[string]any {
	v, _ := o.Get(key)
	m, _ := v.(map[string]any)
	return m
}

// Validate checks the option types. Options that gsalt reads into typed
// fields of Master/Minion (see the role's typed-key table) must match or
// Validate returns their *ValueError's joined; options Salt type-checks but
// gsalt does not use only get a warning logged, as Salt does.
func (o *Opts) Validate() error {
	strict := strictTypes(o.role)
	o.mu.RLock()
	defer o.mu.RUnlock()
	var errs []error
	var keys []string
	o.each(func(k string, _ any) { keys = append(keys, k) })
	slices.Sort(keys)
	for _, k := range keys {
		v, _ := o.get(k)
		if t, ok := strict[k]; ok {
			if !t.accepts(v) {
				errs = append(errs, &ValueError{Role: o.role, Key: k, Want: t.String(), Got: v})
			}
			continue
		}
		t, ok := saltOptType(k)
		if !ok || t.accepts(v) {
			continue
		}
		if s, isStr := v.(string); isStr && strings.HasPrefix(s, "sdb://") {
			continue
		}
		slog.Warn("config: option has an invalid type", "role", o.role, "key", k, "want", t.String(), "got", pyRepr(v))
	}
	return errors.Join(errs...)
}

// asInt converts an already validated value; ok is false for non-integers.
func asInt(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int(x), true
		}
	}
	return 0, false
}
