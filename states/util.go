package states

import (
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// requisiteKeywords are Salt's STATE_REQUISITE_KEYWORDS: low-chunk keys
// the state system consumes and never passes to a state function.
var requisiteKeywords = []string{
	"onchanges", "onchanges_any", "onfail", "onfail_any", "onfail_all", "onfail_stop",
	"prereq", "prerequired", "watch", "watch_any", "require", "require_any", "listen",
}

// requisiteInKeywords are Salt's STATE_REQUISITE_IN_KEYWORDS.
var requisiteInKeywords = []string{"onchanges_in", "onfail_in", "prereq_in", "watch_in", "require_in", "listen_in"}

// runtimeKeywords are Salt's STATE_RUNTIME_KEYWORDS.
var runtimeKeywords = []string{
	"fun", "state", "check_cmd", "cmd_opts_exclude", "failhard", "onlyif", "unless", "creates",
	"retry", "order", "parallel", "prereq", "prereq_in", "prerequired", "reload_modules",
	"reload_grains", "reload_pillar", "runas", "runas_password", "fire_event", "saltenv", "umask",
	"use", "use_in", "__env__", "__sls__", "__id__", "__orchestration_jid__", "__pub_user",
	"__pub_arg", "__pub_jid", "__pub_fun", "__pub_tgt", "__pub_ret", "__pub_pid",
	"__pub_tgt_type", "__prereq__", "__prerequired__", "__umask__",
}

// internalKeywords is STATE_INTERNAL_KEYWORDS (the union of the three).
var internalKeywords = func() map[string]bool {
	m := map[string]bool{}
	for _, l := range [][]string{requisiteKeywords, requisiteInKeywords, runtimeKeywords} {
		for _, k := range l {
			m[k] = true
		}
	}
	return m
}()

// isRequisiteKeyword reports membership in STATE_REQUISITE_KEYWORDS.
func isRequisiteKeyword(k string) bool {
	for _, r := range requisiteKeywords {
		if r == k {
			return true
		}
	}
	return false
}

// pyStr is Python's str() of a decoded value.
func pyStr(v any) string { return pyfmt.Str(v) }

// pyRepr is Python's repr() of a decoded value.
func pyRepr(v any) string { return pyfmt.Repr(v) }

// pyType is type(v).__name__ for the payload data model; Salt's state
// compiler holds dicts as OrderedDict.
func pyType(v any) string {
	if _, ok := v.(*payload.Map); ok {
		return "OrderedDict"
	}
	return pyfmt.TypeName(v)
}

// asMap returns v as an ordered dict.
func asMap(v any) (*payload.Map, bool) {
	m, ok := v.(*payload.Map)
	return m, ok && m != nil
}

// firstItem is next(iter(d)) with its value; ok is false for an empty dict.
func firstItem(m *payload.Map) (key any, val any, ok bool) {
	if m.Len() == 0 {
		return nil, nil, false
	}
	it := m.Items()[0]
	return it.Key, it.Value, true
}

// firstKey returns the first key of m as text ("" when empty).
func firstKey(m *payload.Map) string {
	k, _, ok := firstItem(m)
	if !ok {
		return ""
	}
	return keyText(k)
}

// keyText renders a dict key as str() does.
func keyText(k any) string { return pyStr(k) }

// isDunder reports whether k is a string starting with "__".
func isDunder(k any) bool {
	s, ok := k.(string)
	return ok && strings.HasPrefix(s, "__")
}

// hashable reports whether Python could use v as a dict key.
func hashable(v any) bool {
	switch v.(type) {
	case []any, *payload.Map:
		return false
	}
	return true
}

// hkey turns a hashable value into a comparable Go map key with Python's
// equality for the common cases (1 == 1.0 == True collide as in Python).
func hkey(v any) any {
	switch x := v.(type) {
	case bool:
		if x {
			return int64(1)
		}
		return int64(0)
	case int:
		return int64(x)
	case float64:
		if n, ok := payload.AsInt(x); ok {
			return n
		}
	case []byte:
		return string(x)
	}
	return v
}

// fnmatch is Python's fnmatch.fnmatch on POSIX.
func fnmatch(name, pattern string) bool { return py.Fnmatch(name, pattern) }

// getStr returns m[key] as str() text ("None" when missing, as
// "{0[key]}".format would fail in Python, callers only use present keys).
func getStr(m *payload.Map, key string) string {
	v, _ := m.Get(key)
	return pyStr(v)
}

// genTag is _gen_tag: "<state>_|-<__id__>_|-<name>_|-<fun>".
func genTag(low *payload.Map) string {
	return getStr(low, "state") + "_|-" + getStr(low, "__id__") + "_|-" + getStr(low, "name") + "_|-" + getStr(low, "fun")
}

// GenTag returns the running-dict key of a low chunk, Salt's
// "<state>_|-<__id__>_|-<name>_|-<fun>".
func GenTag(low *payload.Map) string { return genTag(low) }

// reqPair normalises one requisite entry: a string is {"id": s}, a dict
// has its first key trimmed of a function ("test.nop" → "test").
func reqPair(req any) (key string, val any, ok bool) {
	if s, isStr := req.(string); isStr {
		return "id", s, true
	}
	m, isMap := asMap(req)
	if !isMap || m.Len() == 0 {
		return "", nil, false
	}
	k, v, _ := firstItem(m)
	key = keyText(k)
	if i := strings.IndexByte(key, '.'); i >= 0 {
		key = key[:i]
	}
	return key, v, true
}

// listOf returns v as a list ([]any), nil when it is not one.
func listOf(v any) []any {
	l, _ := v.([]any)
	return l
}

// splitInput is salt.utils.args.split_input: a list as is, anything else
// split on commas and stripped.
func splitInput(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	var s string
	if str, ok := v.(string); ok {
		s = str
	} else {
		s = pyStr(v)
	}
	parts := strings.Split(s, ",")
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = strings.TrimSpace(p)
	}
	return out
}

// localTime renders a time as Python's datetime.time().isoformat().
func localTime(t time.Time) string {
	if t.Nanosecond()/1000 == 0 {
		return t.Format("15:04:05")
	}
	return t.Format("15:04:05.000000")
}

// durationMS is Salt's duration: milliseconds with microsecond precision.
func durationMS(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000.0
}

// exceptionClass names the Python exception Salt would have raised for
// err, for "An exception occurred in this state" comments.
func exceptionClass(err error) (class, msg string) {
	msg = err.Error()
	strip := func(s error) string {
		p := s.Error() + ": "
		m := err.Error()
		if i := strings.Index(m, p); i >= 0 {
			return m[:i] + m[i+len(p):]
		}
		return m
	}
	switch {
	case errors.Is(err, ErrExecFailed):
		return "salt.exceptions.CommandExecutionError", strip(ErrExecFailed)
	case errors.Is(err, modules.ErrExecution):
		return "salt.exceptions.CommandExecutionError", strip(modules.ErrExecution)
	case errors.Is(err, modules.ErrInvocation):
		return "salt.exceptions.SaltInvocationError", strip(modules.ErrInvocation)
	case errors.Is(err, modules.ErrArguments):
		return "TypeError", strip(modules.ErrArguments)
	case errors.Is(err, modules.ErrCommandNotFound):
		return "salt.exceptions.CommandNotFoundError", strip(modules.ErrCommandNotFound)
	case errors.Is(err, errKeyEmpty):
		return "KeyError", msg
	case errors.Is(err, errIndex):
		return "IndexError", msg
	case errors.Is(err, ErrNoState):
		return "KeyError", strip(ErrNoState)
	}
	return "Exception", msg
}

// exceptionComment is the comment of a state whose function failed: Salt's
// "An exception occurred in this state: <traceback>", with a one-frame
// traceback naming the state function.
func exceptionComment(full string, err error) string {
	class, msg := exceptionClass(err)
	return fmt.Sprintf("An exception occurred in this state: Traceback (most recent call last):\n  File \"<gsalt>\", in %s\n%s: %s\n", full, class, msg)
}

// boolOpt reads a boolean-ish option value.
func boolOpt(v any) bool { return payload.Truthy(v) }

// goToPayload converts option values (Go maps, ints) to payload data.
func goToPayload(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return payload.FromGo(convertMap(x))
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = goToPayload(e)
		}
		return out
	case int:
		return int64(x)
	case *big.Int:
		if x.IsInt64() {
			return x.Int64()
		}
		return x.String()
	}
	return v
}

func convertMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = goToPayload(v)
	}
	return out
}

// IsInternalKeyword reports membership in Salt's STATE_INTERNAL_KEYWORDS:
// low chunk keys a state function taking **kwargs does not receive.
func IsInternalKeyword(k string) bool { return internalKeywords[k] }
