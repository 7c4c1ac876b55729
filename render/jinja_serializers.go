package render

import (
	"github.com/gsalt/gsalt/render/jinja"
)

// InstallSerializerFilters adds the filters of Salt's
// salt.utils.jinja.SerializerExtension (yaml, json, python, load_yaml,
// load_json, load_text) to a plain environment, for modules that build
// their own Jinja environment with that extension (the stack ext_pillar).
func InstallSerializerFilters(env *jinja.Environment) {
	all := saltFilters()
	for _, name := range []string{"yaml", "json", "load_yaml", "load_json", "load_text"} {
		if fn, ok := all[name]; ok {
			env.Filters[name] = adapt(fn)
		}
	}
	if fn, ok := exactFilters()["python"]; ok {
		env.Filters["python"] = fn
	} else if fn, ok := all["python"]; ok {
		env.Filters["python"] = adapt(fn)
	}
}
