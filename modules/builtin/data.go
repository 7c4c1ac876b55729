package builtin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/wire/payload"
)

// maxDatastore bounds the datastore file read.
const maxDatastore = 64 << 20

// dataFunctions is Salt's data module (salt/modules/data.py): a small
// key/value store in cachedir/datastore (msgpack).
func dataFunctions() []modules.Function {
	key := modules.Spec{Params: []modules.Param{req("key")}}
	return []modules.Function{
		{Name: "data.clear", Doc: "Clear out all of the data in the minion datastore, this function is\ndestructive!\n\nCLI Example:\n\n    salt '*' data.clear",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				_ = os.Remove(dataPath(c))
				return true, nil
			}},
		{Name: "data.load", Doc: "Return all of the data in the minion datastore\n\nCLI Example:\n\n    salt '*' data.load",
			Fn: func(_ context.Context, c *modules.Call) (any, error) { return dataLoad(c), nil }},
		{Name: "data.dump", Spec: modules.Spec{Params: []modules.Param{req("new_data")}},
			Doc: "Replace the entire datastore with a passed data structure\n\nCLI Example:\n\n    salt '*' data.dump '{'eggs': 'spam'}'",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				v := c.Args.Get("new_data")
				m, ok := v.(*payload.Map)
				if !ok {
					s, isStr := v.(string)
					if !isStr {
						// ast.literal_eval of a non-string.
						return nil, fmt.Errorf("ValueError: malformed node or string: %s", pyfmt.Repr(v))
					}
					// A Python literal: its dict/list/scalar subset is YAML
					// flow syntax.
					parsed, err := render.YAML{}.Render(ctx, s, nil)
					if err != nil {
						return nil, fmt.Errorf("SyntaxError: invalid syntax")
					}
					if m, ok = parsed.(*payload.Map); !ok {
						return false, nil
					}
				}
				return dataDump(c, m), nil
			}},
		{Name: "data.update", Spec: modules.Spec{Params: []modules.Param{req("key"), req("value")}},
			Doc: "Update a key with a value in the minion datastore\n\nCLI Example:\n\n    salt '*' data.update <key> <value>",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				st := dataLoad(c)
				st.SetKey(c.Args.Get("key"), c.Args.Get("value"))
				dataDump(c, st)
				return true, nil
			}},
		{Name: "data.cas", Spec: modules.Spec{Params: []modules.Param{req("key"), req("value"), req("old_value")}},
			Doc: "Check and set a value in the minion datastore\n\nCLI Example:\n\n    salt '*' data.cas <key> <value> <old_value>",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				st := dataLoad(c)
				cur, ok := st.GetKey(c.Args.Get("key"))
				if !ok || !pyfmt.Equal(cur, c.Args.Get("old_value")) {
					return false, nil
				}
				st.SetKey(c.Args.Get("key"), c.Args.Get("value"))
				dataDump(c, st)
				return true, nil
			}},
		{Name: "data.pop", Spec: modules.Spec{Params: []modules.Param{req("key"), opt("default", nil)}},
			Doc: "Pop (return & delete) a value from the minion datastore\n\nCLI Example:\n\n    salt '*' data.pop <key> \"there was no val\"",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				st := dataLoad(c)
				v, ok := st.GetKey(c.Args.Get("key"))
				if !ok {
					v = c.Args.Get("default")
				} else {
					st.Delete(payload.KeyString(c.Args.Get("key")))
				}
				dataDump(c, st)
				return v, nil
			}},
		{Name: "data.get", Spec: modules.Spec{Params: []modules.Param{req("key"), opt("default", nil)}},
			Doc: "Get a (list of) value(s) from the minion datastore\n\nCLI Example:\n\n    salt '*' data.get key\n    salt '*' data.get '[\"key1\", \"key2\"]'",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				st := dataLoad(c)
				k, def := c.Args.Get("key"), c.Args.Get("default")
				if s, ok := k.(string); ok {
					if v, ok := st.Get(s); ok {
						return v, nil
					}
					return def, nil
				}
				l, _ := pyfmt.List(k)
				out := []any{}
				for _, x := range l {
					v, ok := st.GetKey(x)
					switch {
					case ok:
						out = append(out, v)
					case def != nil:
						out = append(out, def)
					}
				}
				return out, nil
			}},
		{Name: "data.keys", Doc: "Get all keys from the minion datastore\n\nCLI Example:\n\n    salt '*' data.keys",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				out := []any{}
				for _, it := range dataLoad(c).Items() {
					out = append(out, it.Key)
				}
				return out, nil
			}},
		{Name: "data.values", Doc: "Get values from the minion datastore\n\nCLI Example:\n\n    salt '*' data.values",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				out := []any{}
				for _, it := range dataLoad(c).Items() {
					out = append(out, it.Value)
				}
				return out, nil
			}},
		{Name: "data.items", Doc: "Get items from the minion datastore\n\nCLI Example:\n\n    salt '*' data.items",
			Fn: func(_ context.Context, c *modules.Call) (any, error) { return dataLoad(c), nil }},
		{Name: "data.has_key", Spec: key, Doc: "Check if key is in the minion datastore\n\nCLI Example:\n\n    salt '*' data.has_key <mykey>",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				_, ok := dataLoad(c).GetKey(c.Args.Get("key"))
				return ok, nil
			}},
	}
}

func dataPath(c *modules.Call) string { return filepath.Join(optStr(c, "cachedir"), "datastore") }

// dataLoad reads the datastore ({} when missing or unreadable).
func dataLoad(c *modules.Call) *payload.Map {
	b, err := readBounded(dataPath(c), maxDatastore)
	if err != nil {
		return &payload.Map{}
	}
	m, err := payload.UnmarshalMap(b)
	if err != nil || m == nil {
		return &payload.Map{}
	}
	return m
}

// dataDump writes the datastore as salt.payload.dump does
// (use_bin_type=True).
func dataDump(c *modules.Call, m *payload.Map) bool {
	b, err := payload.MarshalBin(m)
	if err != nil {
		return false
	}
	return os.WriteFile(dataPath(c), b, 0o644) == nil
}

// RepackDictlist is salt.utils.data.repack_dictlist: a list of one-key
// dicts (and scalars, which become keys with a None value) merged into one
// dict; a string is read as YAML first. Anything else gives an empty dict.
func RepackDictlist(v any) *payload.Map {
	out := payload.NewMap()
	if s, ok := v.(string); ok {
		d, err := config.DecodeYAMLPayload([]byte(s))
		if err != nil {
			return out
		}
		v = d
	}
	list, ok := v.([]any)
	if !ok {
		return out
	}
	for _, e := range list {
		switch x := e.(type) {
		case string, int64, uint64, float64, bool:
		case *payload.Map:
			if x.Len() != 1 {
				return payload.NewMap()
			}
		default:
			return payload.NewMap()
		}
	}
	for _, e := range list {
		if m, ok := e.(*payload.Map); ok {
			it := m.Items()[0]
			out.SetKey(it.Key, it.Value)
			continue
		}
		out.SetKey(e, nil)
	}
	return out
}
