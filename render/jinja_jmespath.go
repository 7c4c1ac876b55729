package render

import (
	"github.com/gsalt/gsalt/render/jinja"
	"github.com/gsalt/gsalt/render/jmespath"
	"github.com/gsalt/gsalt/wire/payload"
)

// filterJSONQuery is Salt's json_query (salt.utils.data.json_query):
// jmespath.search(expr, data) on the template's own values, so dicts keep
// their order and what the query selects is the same object (render/jmespath).
func filterJSONQuery(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
	if err := missingArgs("json_query", []string{"expr"}, args, kw); err != nil {
		return nil, err
	}
	a, err := jinja.Bind("json_query", args, kw, []string{"expr"})
	if err != nil {
		return nil, err
	}
	var expr string
	switch x := a[0].(type) {
	case string:
		expr = x
	case jinja.Markup:
		expr = string(x)
	default:
		return nil, pyErr("TypeError", "expected string or bytes-like object, got '%s'", jinja.TypeName(a[0]))
	}
	return jmespath.Search(expr, v)
}
