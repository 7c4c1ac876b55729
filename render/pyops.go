package render

import (
	"fmt"
	"sync"

	"github.com/gsalt/gsalt/render/jinja"
	"github.com/gsalt/gsalt/wire/payload"
)

// sharedTestTable is the test table of every render's environment,
// built once like sharedFilterTable.
var sharedTestTable = sync.OnceValue(buildTestTable)

// buildTestTable returns Jinja2's builtin tests with Salt's: match (regex
// at the start), equalto (Salt's ==) and list (salt.utils.data.is_list).
func buildTestTable() map[string]jinja.TestFunc {
	t := jinja.BuiltinTests()
	t["list"] = func(r *jinja.Runtime, v any, args []any, kw *payload.Map) (bool, error) {
		_, ok := v.(*jinja.List)
		return ok, nil
	}
	t["equalto"] = func(r *jinja.Runtime, v any, args []any, kw *payload.Map) (bool, error) {
		o := jinja.Arg(args, kw, 0, "other", nil)
		// value == other: a strict undefined value on either side raises
		for _, x := range []any{v, o} {
			if u, ok := x.(*jinja.Undefined); ok && u.Strict {
				return false, &jinja.Error{Kind: "UndefinedError", Msg: u.Message()}
			}
		}
		return jinja.Equal(v, o), nil
	}
	t["match"] = func(r *jinja.Runtime, v any, args []any, kw *payload.Map) (bool, error) {
		va := newVarArgs(args, kw)
		re, err := compilePyRegex(pyStr(arg(va, 0, "regex", "")), arg(va, 1, "ignorecase", false).IsTrue(), arg(va, 2, "multiline", false).IsTrue())
		if err != nil {
			return false, err
		}
		// re.match takes only str (and bytes)
		text, ok := v.(string)
		if !ok {
			if b, isBytes := v.([]byte); isBytes {
				text = string(b)
			} else {
				if _, undef := v.(*jinja.Undefined); !undef {
					return false, &jinja.Error{Kind: "TypeError", Msg: fmt.Sprintf("expected string or bytes-like object, got '%s'", jinja.TypeName(v))}
				}
				text = pyStr(v)
			}
		}
		m, err := re.MatchStart(text)
		return m != nil, err
	}
	return t
}
