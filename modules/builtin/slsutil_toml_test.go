package builtin_test

import (
	"regexp"
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
)

// TestSlsutilTOMLTuples renders Jinja that hands Python tuples to
// slsutil.serialize('toml', ...), against Salt 3006 with python3-toml
// 0.10.2 (testdata/golden/slsutil_toml_tuples.json; regenerate with
// GSALT_SALT_SRC=/work/salt-src go test ./modules/builtin -run TestSlsutilTOMLTuples -update-golden).
// toml writes a tuple value as a list, never as an array of tables, and
// refuses a tuple (or a dict with a tuple key) at the top.
func TestSlsutilTOMLTuples(t *testing.T) {
	cases := []struct{ name, expr string }{
		{"tuple value", `{'a': (1, 2), 'b': ('x', 'y')}`},
		{"nested tuples", `{'a': ((1, 2), ('x', (3,))), 'e': ()}`},
		{"one element", `{'a': (1,)}`},
		{"tuple of dicts", `{'srv': ({'h': 1, 'p': 2}, {'h': 3})}`},
		{"tuple in table", `{'t': {'k': (true, none, 1.5)}}`},
		{"tuple in array of tables", `{'t': [{'a': (1, 'x')}, {'b': ()}]}`},
		{"items list", `{'kv': {'x': 1, 'y': 'z'}.items() | list}`},
		{"dictsort", `{'kv': {'b': 2, 'a': 1} | dictsort}`},
		{"tuple top", `(1, 2)`},
		{"empty tuple top", `()`},
		{"tuple key", `{(1, 2): 'v'}`},
		{"tuple key among others", `{'a': 1, (1, 2): 'v'}`},
		{"list of tuples of dicts", `{'l': [({'a': 1},), ({'b': 2},)]}`},
	}
	var calls []salttest.Call
	for _, c := range cases {
		calls = append(calls, salttest.Call{Name: c.name, Fun: "slsutil.renderer",
			Kwargs: []any{"string", "{{ salt['slsutil.serialize']('toml', " + c.expr + ") }}", "default_renderer", "jinja"}})
	}
	// An exception inside a function a template calls reaches the caller
	// in the render layer's words (Salt adds tracebacks): compare the
	// serializer's own error, the text after SerializationError.
	serErr := regexp.MustCompile(`salt\.serializers\.SerializationError: ([^;\n]*)`)
	normalize := func(_ string, v any) any {
		if s, ok := v.(string); ok {
			if m := serErr.FindStringSubmatch(s); m != nil {
				return "SerializationError: " + m[1]
			}
		}
		return v
	}
	runSuite(t, salttest.Suite{Name: "slsutil_toml_tuples", Calls: calls, Normalize: normalize})
}
