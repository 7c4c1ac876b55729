package builtin

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/target"
	"github.com/gsalt/gsalt/wire/payload"
)

// defaultsFunctions is Salt's defaults module (salt/modules/defaults.py):
// deep merges and copies for formulas, and defaults.get reading a
// formula's defaults.yaml or defaults.json from the file server.
func defaultsFunctions() []modules.Function {
	return []modules.Function{
		{Name: "defaults.get", Spec: modules.Spec{Params: []modules.Param{req("key"), opt("default", "")}},
			Doc: "defaults.get is used much like pillar.get except that it will read\na default value for a pillar from defaults.json or defaults.yaml\nfiles that are stored in the root of a salt formula.\n\nCLI Example:\n\n    salt '*' defaults.get core:users:root\n\nThe defaults is computed from pillar key. The first entry is considered as\nthe formula namespace.\n\nFor example, querying ``core:users:root`` will try to load\n``salt://core/defaults.yaml`` and ``salt://core/defaults.json``.",
			Fn:  defaultsGet},
		{Name: "defaults.merge", Spec: modules.Spec{Params: []modules.Param{req("dest"), req("src"), opt("merge_lists", false), opt("in_place", true), opt("convert_none", true)}},
			Doc: "defaults.merge\n    Allows deep merging of dicts in formulas.\n\nmerge_lists : False\n    If True, it will also merge lists instead of replace their items.\n\nin_place : True\n    If True, it will merge into dest dict,\n    if not it will make a new copy from that dict and return it.\n\nconvert_none : True\n    If True, it will convert src and dest to empty dicts if they are None.\n    If True and dest is None but in_place is True, raises TypeError.\n    If False it will make a new copy from that dict and return it.\n\nCLI Example:\n\n    salt '*' defaults.merge '{a: b}' '{d: e}'",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return defaultsMerge(c.Args.Get("dest"), c.Args.Get("src"), argsBool(c, "merge_lists"), argsBool(c, "in_place"), argsBool(c, "convert_none"))
			}},
		{Name: "defaults.deepcopy", Spec: modules.Spec{Params: []modules.Param{req("source")}},
			Doc: "defaults.deepcopy\n    Allows deep copy of objects in formulas.\n\n    By default, Python does not copy objects,\n    it creates bindings between a target and an object.\n\nIt is more typical to use this in a templating language in formulas,\ninstead of directly on the command-line.",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return payload.DeepClone(c.Args.Get("source")), nil
			}},
		{Name: "defaults.update", Spec: modules.Spec{Params: []modules.Param{req("dest"), req("defaults"), opt("merge_lists", true), opt("in_place", true), opt("convert_none", true)}},
			Doc: "defaults.update\n    Allows setting defaults for group of data set e.g. group for nodes.\n\n    This function is a combination of defaults.merge\n    and defaults.deepcopy to avoid redundant in jinja.\n\n    {% do salt['defaults.update'](group01.nodes, group01.defaults) %}\n\nmerge_lists : True\n    If True, it will also merge lists instead of replace their items.\n\nin_place : True\n    If True, it will merge into dest dict.\n    if not it will make a new copy from that dict and return it.\n\nconvert_none : True\n    If True, it will convert src and dest to empty dicts if they are None.",
			Fn:  defaultsUpdate},
	}
}

// defaultsMerge is defaults.merge: dictupdate.update of dest (in place, or
// of a deep copy) with src.
func defaultsMerge(dest, src any, mergeLists, inPlace, convertNone bool) (any, error) {
	if src == nil && convertNone {
		src = &payload.Map{}
	}
	if dest == nil && convertNone {
		if inPlace {
			return nil, fmt.Errorf("%w: Can't perform in-place merge into NoneType", modules.ErrArguments)
		}
		dest = &payload.Map{}
	}
	if !inPlace {
		dest = payload.DeepClone(dest)
	}
	return dictUpdate(dest, src, true, mergeLists)
}

func defaultsUpdate(_ context.Context, c *modules.Call) (any, error) {
	dest, defs := c.Args.Get("dest"), c.Args.Get("defaults")
	mergeLists, convertNone := argsBool(c, "merge_lists"), argsBool(c, "convert_none")
	var nodes any
	if argsBool(c, "in_place") {
		if dest == nil {
			return nil, fmt.Errorf("%w: Can't perform in-place update into NoneType", modules.ErrArguments)
		}
		nodes = dest
	} else {
		if dest == nil && convertNone {
			dest = &payload.Map{}
		}
		nodes = payload.DeepClone(dest)
	}
	if defs == nil && convertNone {
		defs = &payload.Map{}
	}
	nm, ok := nodes.(*payload.Map)
	if !ok {
		return nil, fmt.Errorf("AttributeError: '%s' object has no attribute 'items'", payload.TypeName(nodes))
	}
	for _, it := range nm.Items() {
		merged, err := defaultsMerge(payload.DeepClone(defs), it.Value, mergeLists, true, convertNone)
		if err != nil {
			return nil, err
		}
		nm.SetKey(it.Key, merged)
	}
	return nm, nil
}

// defaultsGet reads salt://<formula>/defaults.yaml (else .json) and
// traverses it with the rest of the key.
func defaultsGet(ctx context.Context, c *modules.Call) (any, error) {
	key := c.Args.Str("key")
	namespace, rest, nested := strings.Cut(key, ":")
	fc, err := cpClient(c)
	if err != nil {
		return nil, err
	}
	var defaults any
	for _, ext := range []string{"yaml", "json"} {
		local, err := fc.CacheFile(ctx, "salt://"+namespace+"/defaults."+ext, cpSaltenv(c))
		if err != nil || local == "" {
			continue
		}
		b, err := os.ReadFile(local)
		if err != nil {
			continue
		}
		if ext == "yaml" {
			defaults, err = render.YAML{}.Render(ctx, string(b), nil)
		} else {
			defaults, err = render.DecodeJSON(b)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s/defaults.%s: %w", modules.ErrExecution, namespace, ext, err)
		}
		if !payload.Truthy(defaults) {
			defaults = &payload.Map{}
		}
		break
	}
	if !nested || rest == "" {
		return defaults, nil
	}
	v, ok := target.Traverse(defaults, rest, ":")
	if !ok {
		return c.Args.Get("default"), nil
	}
	return v, nil
}
