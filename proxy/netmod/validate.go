package netmod

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/gsalt/gsalt/proxy/driver"
	"github.com/gsalt/gsalt/proxy/proxymod"
	"github.com/gsalt/gsalt/wire/payload"
)

// NAPALM's validate (napalm.base.validate): a validation source is a list
// of {getter: expected} checks; each getter's actual result is compared
// with the expected one (dicts key by key, "_mode: strict" reporting extra
// keys, "list" for unordered lists, strings as regular expressions or
// "<N", ">N", "A<->B", "P%N" numeric tests), giving complies / present /
// missing / extra as NAPALM computes them.

// errValidation is NAPALM's ValidationException.
var errValidation = errors.New("validation")

var (
	numericCompareRe   = regexp.MustCompile(`^(<|>|<=|>=|==|!=)(\d+(\.\d+){0,1})$`)
	numericToleranceRe = regexp.MustCompile(`^(\d+)%(\d+)$`)
)

// complianceReport is NAPALM's compliance_report over a rendered
// validation source.
func complianceReport(ctx context.Context, n *proxymod.Napalm, d driver.Driver, source any) (*payload.Map, error) {
	return validateSource(source, func(getter string, kw *payload.Map) (any, error) {
		return callMethod(ctx, n, d, getter, callArgs{kw: kw})
	})
}

// validateSource computes the report of source, calling get for each
// getter's actual result.
func validateSource(source any, get func(getter string, kwargs *payload.Map) (any, error)) (*payload.Map, error) {
	checks, ok := source.([]any)
	if !ok {
		return nil, fmt.Errorf("%w: the validation source must be a list of checks, not %s", errValidation, pyTypeName(source))
	}
	report := &payload.Map{}
	for _, chk := range checks {
		cm, ok := chk.(*payload.Map)
		if !ok {
			return nil, fmt.Errorf("%w: a check must be a dict, not %s", errValidation, pyTypeName(chk))
		}
		for _, it := range cm.Items() {
			getter := payload.KeyString(it.Key)
			if getter == "get_config" {
				continue
			}
			exp, ok := it.Value.(*payload.Map)
			if !ok {
				return nil, fmt.Errorf("%w: the expected result of %s must be a dict", errValidation, getter)
			}
			exp = exp.Clone()
			key := getter
			if v, ok := exp.Delete("_name"); ok && payload.Truthy(v) {
				key = payload.Text(v)
			}
			kwargs, _ := exp.Delete("_kwargs")
			kw, _ := kwargs.(*payload.Map)
			if kw == nil {
				kw = &payload.Map{}
			}
			actual, err := get(getter, kw)
			if errors.Is(err, driver.ErrNotSupported) {
				report.Set(key, payload.NewMap("skipped", true, "reason", "NotImplemented"))
				continue
			}
			if err != nil {
				return nil, err
			}
			res, err := validateCompare(exp, toPlain(actual))
			if err != nil {
				return nil, err
			}
			report.Set(key, res)
		}
	}
	complies := true
	skipped := []any{}
	for _, it := range report.Items() {
		if m, ok := it.Value.(*payload.Map); ok {
			if v, ok := m.Get("complies"); ok && !payload.Truthy(v) {
				complies = false
			}
			if m.Bool("skipped") {
				skipped = append(skipped, it.Key)
			}
		}
	}
	report.Set("skipped", skipped)
	report.Set("complies", complies)
	return report, nil
}

// toPlain turns a driver result into payload values.
func toPlain(v any) any {
	switch v.(type) {
	case nil, *payload.Map, []any, string, bool, int64, float64:
		return v
	}
	return driver.ToPayload(v)
}

// validateCompare is NAPALM's compare(src, dst): a bool, or a result dict
// for dicts and "list" checks.
func validateCompare(src, dst any) (any, error) {
	switch s := src.(type) {
	case *payload.Map:
		s = s.Clone()
		mv, _ := s.Delete("_mode")
		mode, err := validateMode(mv)
		if err != nil {
			return nil, err
		}
		if s.Has("list") {
			dl, ok := dst.([]any)
			if !ok {
				return false, nil
			}
			sl, _ := s.Get("list")
			l, _ := sl.([]any)
			return compareList(l, dl, mode)
		}
		return compareDict(s, dst, mode)
	case string:
		switch {
		case strings.HasPrefix(s, "<") || strings.HasPrefix(s, ">"):
			return compareNumeric(s, dst)
		case strings.Contains(s, "<->") && len(strings.Split(s, "<->")) == 2:
			return compareRange(s, dst)
		case regexp.MustCompile(`^\d+%\d+$`).MatchString(s):
			return compareTolerance(s, dst)
		}
		if re, err := regexp.Compile(s); err == nil && re.MatchString(pyStr(dst)) {
			return true, nil
		}
		return pyEqual(s, dst), nil
	case []any:
		if dl, ok := dst.([]any); ok {
			for i := range min(len(s), len(dl)) {
				x, xok := s[i].(*payload.Map)
				y, yok := dl[i].(*payload.Map)
				if pyEqual(s[i], dl[i]) {
					continue
				}
				if !xok || !yok {
					return false, nil
				}
				for _, it := range x.Items() {
					yv, _ := y.GetKey(it.Key)
					re, err := regexp.Compile(pyStr(it.Value))
					if err != nil || !re.MatchString(pyStr(yv)) {
						return false, nil
					}
				}
			}
			return true, nil
		}
	}
	return pyEqual(src, dst), nil
}

func validateMode(v any) (bool, error) {
	strict := false
	for m := range strings.FieldsSeq(str(v)) {
		if m != "strict" {
			return false, fmt.Errorf("%w: mode '%s' not recognized", errValidation, m)
		}
		strict = true
	}
	return strict, nil
}

func complies(r any) bool {
	if m, ok := r.(*payload.Map); ok {
		return m.Bool("complies")
	}
	return payload.Truthy(r)
}

// compareList is NAPALM's _compare_getter_list: every expected element
// must match a distinct actual one; strict mode reports the rest as extra.
func compareList(src, dst []any, strict bool) (*payload.Map, error) {
	rest := append([]any(nil), dst...)
	ok := true
	present, missing := []any{}, []any{}
	for _, se := range src {
		found := false
		for i := 0; i < len(rest); i++ {
			r, err := validateCompare(se, rest[i])
			if err != nil {
				return nil, err
			}
			if complies(r) {
				found = true
				present = append(present, se)
				rest = append(rest[:i], rest[i+1:]...)
				break
			}
		}
		if !found {
			ok = false
			missing = append(missing, se)
		}
	}
	extra := []any{}
	if strict && len(rest) > 0 {
		extra = rest
		ok = false
	}
	return payload.NewMap("complies", ok, "present", present, "missing", missing, "extra", extra), nil
}

// compareDict is NAPALM's _compare_getter_dict.
func compareDict(src *payload.Map, dst any, strict bool) (*payload.Map, error) {
	dm, _ := dst.(*payload.Map)
	rest := &payload.Map{}
	if dm != nil {
		rest = dm.Clone()
	}
	ok := true
	present := &payload.Map{}
	missing := []any{}
	used := map[any]bool{}
	for _, it := range src.Items() {
		dv, found := lookupKey(rest, it.Key)
		if found && used[dv.key] {
			found = false
		}
		if !found {
			missing = append(missing, it.Key)
			ok = false
			continue
		}
		used[dv.key] = true
		entry := &payload.Map{}
		r, err := validateCompare(it.Value, dv.val)
		if err != nil {
			return nil, err
		}
		var c, nested bool
		if rm, isMap := r.(*payload.Map); isMap {
			nested, c = true, rm.Bool("complies")
			if !c {
				entry.Set("diff", rm)
			}
		} else {
			c = payload.Truthy(r)
			if !c {
				entry.Set("expected_value", it.Value)
				entry.Set("actual_value", dv.val)
			}
		}
		if !c {
			ok = false
		}
		entry.Set("complies", c)
		entry.Set("nested", nested)
		present.SetKey(it.Key, entry)
	}
	extra := []any{}
	for _, it := range rest.Items() {
		if strict && !used[it.Key] {
			extra = append(extra, it.Key)
			ok = false
		}
	}
	return payload.NewMap("complies", ok, "present", present, "missing", missing, "extra", extra), nil
}

type keyVal struct{ key, val any }

// lookupKey finds key in m as Python's dict would (1 and 1.0 are one key).
func lookupKey(m *payload.Map, key any) (keyVal, bool) {
	if v, ok := m.GetKey(key); ok {
		return keyVal{key, v}, true
	}
	for _, it := range m.Items() {
		if pyEqual(it.Key, key) {
			return keyVal{it.Key, it.Value}, true
		}
	}
	return keyVal{}, false
}

func pyFloat(v any) (float64, error) {
	switch x := v.(type) {
	case int64:
		return float64(x), nil
	case float64:
		return x, nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil {
			return 0, fmt.Errorf("could not convert string to float: '%s'", x)
		}
		return f, nil
	}
	return 0, fmt.Errorf("float() argument must be a string or a number, not '%s'", pyTypeName(v))
}

func compareNumeric(src string, dst any) (bool, error) {
	d, err := pyFloat(dst)
	if err != nil {
		return false, err
	}
	m := numericCompareRe.FindStringSubmatch(src)
	if m == nil {
		return false, fmt.Errorf("Failed numeric comparison. Collected: %s. Expected: %s", pyStr(d), src)
	}
	s, _ := strconv.ParseFloat(m[2], 64)
	switch m[1] {
	case "<":
		return d < s, nil
	case ">":
		return d > s, nil
	case "<=":
		return d <= s, nil
	case ">=":
		return d >= s, nil
	case "==":
		return d == s, nil
	}
	return d != s, nil
}

func compareRange(src string, dst any) (bool, error) {
	d, err := pyFloat(dst)
	if err != nil {
		return false, err
	}
	p := strings.Split(src, "<->")
	lo, err1 := pyFloat(p[0])
	hi, err2 := pyFloat(p[1])
	if err1 != nil {
		return false, err1
	}
	if err2 != nil {
		return false, err2
	}
	return lo <= d && d <= hi, nil
}

func compareTolerance(src string, dst any) (bool, error) {
	d, err := pyFloat(dst)
	if err != nil {
		return false, err
	}
	m := numericToleranceRe.FindStringSubmatch(src)
	if m == nil {
		return false, fmt.Errorf("Failed tolerance comparison. Collected: %s. Expected: %s", pyStr(d), src)
	}
	s, _ := strconv.ParseFloat(m[2], 64)
	pct, _ := strconv.ParseFloat(m[1], 64)
	maxDiff := s * pct / 100
	// math.isclose with only an absolute tolerance.
	return math.Abs(s-d) <= maxDiff, nil
}

// pyEqual is Python's == on payload values.
func pyEqual(a, b any) bool {
	if fa, err := numOnly(a); err == nil {
		fb, err := numOnly(b)
		return err == nil && fa == fb
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !pyEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case *payload.Map:
		y, ok := b.(*payload.Map)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for _, it := range x.Items() {
			kv, ok := lookupKey(y, it.Key)
			if !ok || !pyEqual(it.Value, kv.val) {
				return false
			}
		}
		return true
	}
	return false
}

func numOnly(v any) (float64, error) {
	switch v.(type) {
	case int64, float64, bool:
		return pyFloat(v)
	}
	return 0, errors.New("not a number")
}

// pyStr is Python's str() of a scalar payload value.
func pyStr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e16 {
			return strconv.FormatFloat(x, 'f', 1, 64)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		return x
	}
	return fmt.Sprint(v)
}

func pyTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case *payload.Map:
		return "dict"
	case []any:
		return "list"
	case string:
		return "str"
	case int64:
		return "int"
	case float64:
		return "float"
	case bool:
		return "bool"
	}
	return fmt.Sprintf("%T", v)
}
