package eauth

import (
	"fmt"
	"log/slog"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/gsalt/gsalt/internal/stringutils"

	"github.com/gsalt/gsalt/wire/payload"
)

// This file holds Salt's ACL language (salt.utils.minions.CkMinions
// auth_check, spec_check, fill_auth_list and their helpers) as pure
// functions. An auth list is a []any whose entries are function patterns
// (strings: "test.*", "@runner", "@jobs") or one-key dicts mapping a
// minion target (compound expression) or "@runner"/"@wheel"/"@<module>" to
// a pattern, a list of patterns, or a dict of pattern → argument
// restrictions ({"args": [...], "kwargs": {...}} or a list of them).

// pyRegexp compiles a Python regular expression for re.match (anchored at
// the start only). Constructs RE2 lacks (look-arounds, back references) fail
// to compile, which Salt's ACL code treats as a non-match.
func pyRegexp(expr string) (*regexp.Regexp, error) {
	return regexp.Compile(`^(?:` + expr + `)`)
}

// MatchCheck is CkMinions.match_check: regex must match the start of every
// function in funs (all or nothing); an invalid regex matches nothing.
func MatchCheck(regex string, funs ...string) bool {
	re, err := pyRegexp(regex)
	if err != nil {
		slog.Default().Error("Invalid regular expression: " + regex)
		return false
	}
	if len(funs) == 0 {
		return false
	}
	for _, f := range funs {
		if !re.MatchString(f) {
			return false
		}
	}
	return true
}

// dictItems returns the keys and values of a dict-like value (a Go map or
// a *payload.Map) in a stable order; ok is false for anything else.
func dictItems(v any) (keys []string, vals []any, ok bool) {
	switch d := v.(type) {
	case map[string]any:
		keys = make([]string, 0, len(d))
		for k := range d {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			vals = append(vals, d[k])
		}
		return keys, vals, true
	case *payload.Map:
		if d == nil {
			return nil, nil, true
		}
		for _, it := range d.Items() {
			keys = append(keys, payload.KeyString(it.Key))
			vals = append(vals, it.Value)
		}
		return keys, vals, true
	}
	return nil, nil, false
}

// dictGet looks k up in a dict-like value.
func dictGet(v any, k string) (any, bool) {
	switch d := v.(type) {
	case map[string]any:
		x, ok := d[k]
		return x, ok
	case *payload.Map:
		if d == nil {
			return nil, false
		}
		return d.Get(k)
	}
	return nil, false
}

// isDict reports whether v is dict-like.
func isDict(v any) bool {
	_, _, ok := dictItems(v)
	return ok
}

// single returns the only key and value of a one-key dict.
func single(v any) (string, any, bool) {
	keys, vals, ok := dictItems(v)
	if !ok || len(keys) != 1 {
		return "", nil, false
	}
	return keys[0], vals[0], true
}

// asList wraps a non-list value in a list (Salt's "if not isinstance(x,
// list): x = [x]").
func asList(v any) []any {
	switch l := v.(type) {
	case []any:
		return l
	case []string:
		out := make([]any, len(l))
		for i, s := range l {
			out[i] = s
		}
		return out
	}
	return []any{v}
}

// PyStr renders a value like Python's str() for argument matching.
func PyStr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case string:
		return x
	case bool:
		if x {
			return "True"
		}
		return "False"
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return strings.ToLower(fmt.Sprint(x))
		}
		if x == math.Trunc(x) && math.Abs(x) < 1e16 {
			return strconv.FormatFloat(x, 'f', 1, 64)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case []byte:
		return "b'" + string(x) + "'"
	}
	return payload.Text(v)
}

// FunCheck is CkMinions.__fun_check: fun matches one of the conditions in
// valid (a pattern, or a one-key dict pattern → argument restrictions).
func FunCheck(valid any, fun string, args []any, kwargs any) bool {
	for _, cond := range asList(valid) {
		switch c := cond.(type) {
		case string:
			if MatchCheck(c, fun) {
				return true
			}
		default:
			name, rest, ok := single(c)
			if !ok {
				continue
			}
			if MatchCheck(name, fun) && ArgsCheck(rest, args, kwargs) {
				return true
			}
		}
	}
	return false
}

// ArgsCheck is CkMinions.__args_check: one of the {"args": [...],
// "kwargs": {...}} conditions holds (None/null in a position allows
// anything there; listed kwargs must be present).
func ArgsCheck(valid any, args []any, kwargs any) bool {
	for _, cond := range asList(valid) {
		if !isDict(cond) {
			continue
		}
		good := true
		if ca, ok := dictGet(cond, "args"); ok {
			for i, want := range asList(ca) {
				if ca == nil {
					break
				}
				if i >= len(args) {
					good = false
					break
				}
				if want == nil {
					continue
				}
				ws, isStr := want.(string)
				if !isStr || !MatchCheck(ws, PyStr(args[i])) {
					good = false
					break
				}
			}
		}
		if !good {
			continue
		}
		if ck, ok := dictGet(cond, "kwargs"); ok {
			keys, vals, _ := dictItems(ck)
			for i, k := range keys {
				got, present := dictGet(kwargs, k)
				if !present {
					good = false
					break
				}
				if vals[i] == nil {
					continue
				}
				ws, isStr := vals[i].(string)
				if !isStr || !MatchCheck(ws, PyStr(got)) {
					good = false
					break
				}
			}
		}
		if good {
			return true
		}
	}
	return false
}

// TargetCheck answers validate_tgt for one ACL minion expression: whether
// every targeted minion is among those the compound expression valid
// matches.
type TargetCheck func(valid string) bool

// AuthCheck is CkMinions.auth_check (without expanded matching): whether
// the functions funs (one per entry of args, each args[i] the function's
// argument list with an optional trailing {"__kwarg__": True, ...}) are
// allowed by authList for the targeted minions; whitelisted functions are
// always allowed.
func AuthCheck(authList []any, funs []string, args [][]any, tgtOK TargetCheck, whitelist []string) bool {
	for num, fun := range funs {
		for _, w := range whitelist {
			if fun == w {
				return true
			}
		}
		for _, ind := range authList {
			if s, ok := ind.(string); ok {
				if MatchCheck(s, fun) {
					return true
				}
				continue
			}
			valid, allowed, ok := single(ind)
			if !ok {
				continue
			}
			if tgtOK == nil || !tgtOK(valid) {
				continue
			}
			var funArgs []any
			if num < len(args) {
				funArgs = args[num]
			}
			var funKwargs any
			if n := len(funArgs); n > 0 {
				if last := funArgs[n-1]; isDict(last) {
					if _, kw := dictGet(last, "__kwarg__"); kw {
						funKwargs = last
						funArgs = funArgs[:n-1]
					}
				}
			}
			if FunCheck(allowed, fun, funArgs, funKwargs) {
				return true
			}
		}
	}
	return false
}

// ErrCheckSyntax is the spec_check answer for a runner or wheel function
// name that is not "module.function".
var ErrCheckSyntax = fmt.Errorf("A command invocation error occurred: Check syntax.")

// SpecCheck is CkMinions.spec_check for form "runner" or "wheel": whether
// authList allows fun (module.function) with the low data's arg and kwarg.
// A malformed function name gives ErrCheckSyntax.
func SpecCheck(authList []any, fun string, low any, form string) (bool, error) {
	if len(authList) == 0 {
		return false, nil
	}
	comps := strings.Split(fun, ".")
	if len(comps) != 2 {
		return false, ErrCheckSyntax
	}
	mod, name := comps[0], comps[1]
	var args []any
	if a, ok := dictGet(low, "arg"); ok {
		if l, ok := a.([]any); ok {
			args = l
		}
	}
	kwargs, _ := dictGet(low, "kwarg")
	for _, ind := range authList {
		if s, ok := ind.(string); ok {
			if strings.HasPrefix(s, "@") && (s[1:] == mod || s[1:] == form || s == "@"+form+"s") {
				return true, nil
			}
			continue
		}
		valid, allowed, ok := single(ind)
		if !ok || !strings.HasPrefix(valid, "@") {
			continue
		}
		if valid[1:] == mod && FunCheck(allowed, name, args, kwargs) {
			return true, nil
		}
		if (valid[1:] == form || valid == "@"+form+"s") && FunCheck(allowed, fun, args, kwargs) {
			return true, nil
		}
	}
	return false, nil
}

// FillAuthList is CkMinions.fill_auth_list: the ACL entries of provider
// (one external_auth backend's config: user pattern or "group%" → list)
// that apply to user name with groups. "*" applies only when no other user
// entry matched and permissive_acl is off.
func FillAuthList(provider any, name string, groups []string, permissive bool) []any {
	var out []any
	keys, vals, _ := dictItems(provider)
	matched := false
	var star any
	hasStar := false
	for i, k := range keys {
		if k == "*" {
			star, hasStar = vals[i], true
			if !permissive {
				continue
			}
		}
		if strings.HasSuffix(k, "%") {
			g := strings.TrimRight(k, "%")
			for _, have := range groups {
				if have == g {
					out = append(out, asList(vals[i])...)
					break
				}
			}
			continue
		}
		// Salt passes the pattern as the line and the user name as the
		// expression, so only exact names (and "*" never) match here.
		if stringutils.ExprMatch(k, name) {
			matched = true
			out = append(out, asList(vals[i])...)
		}
	}
	if !permissive && !matched && hasStar {
		out = append(out, asList(star)...)
	}
	return out
}

// ValuesOfMatchingKeys is salt.utils.master.get_values_of_matching_keys:
// publisher_acl entries whose user pattern matches name.
func ValuesOfMatchingKeys(patterns any, name string) []any {
	var out []any
	keys, vals, _ := dictItems(patterns)
	for i, k := range keys {
		if stringutils.ExprMatch(name, k) {
			out = append(out, asList(vals[i])...)
		}
	}
	return out
}

// checkBlacklist is check_whitelist_blacklist with a blacklist only: true
// when value is NOT blacklisted.
func checkBlacklist(value string, blacklist any) bool {
	for _, b := range asList(blacklist) {
		s, ok := b.(string)
		if !ok {
			s = PyStr(b)
		}
		if stringutils.ExprMatch(value, s) {
			return false
		}
	}
	return true
}

// Blacklisted is salt.acl.PublisherACL: whether publisher_acl_blacklist
// ({"users": [...], "modules": [...]}) refuses user or any of funs.
func Blacklisted(blacklist any, user string, funs []string) bool {
	users, _ := dictGet(blacklist, "users")
	if users != nil && !checkBlacklist(user, users) {
		return true
	}
	mods, _ := dictGet(blacklist, "modules")
	if mods == nil {
		return false
	}
	for _, f := range funs {
		if !checkBlacklist(f, mods) {
			return true
		}
	}
	return false
}
