package builtin

import (
	"context"
	"errors"
	"fmt"
	"github.com/gsalt/gsalt/config"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/target"
	"github.com/gsalt/gsalt/wire/payload"
)

// PillarStore is the minion's pillar facility, registered in
// modules.Env.Services under "pillar".
type PillarStore interface {
	// CompilePillar asks the master for a fresh pillar (a _pillar request)
	// without changing the minion's in-memory pillar. pillarenv is nil
	// for the minion's default; override is the pillar= argument or nil.
	CompilePillar(ctx context.Context, pillarenv any, override *payload.Map) (*payload.Map, error)
	// RefreshPillar replaces the in-memory pillar with a fresh one. With
	// wait false it may return before the new pillar is in place.
	RefreshPillar(ctx context.Context, wait bool) error
}

// PillarExtStore is the optional part of the PillarStore that compiles
// with an on-demand ext_pillar (pillar.ext).
type PillarExtStore interface {
	// CompilePillarExt compiles a fresh pillar whose ext_pillar list has
	// ext appended (the master allows it only for on_demand_ext_pillar
	// modules), with override as pillar_override.
	CompilePillarExt(ctx context.Context, ext any, override *payload.Map) (*payload.Map, error)
}

// pillarServiceName is the Env.Services key of the PillarStore.
const pillarServiceName = "pillar"

// pillarNotSet marks pillar.get's default argument as not given.
type pillarNotSet struct{}

// pillarFunctions is Salt's pillar module (salt/modules/pillar.py) for
// the in-memory and freshly compiled pillar.
func pillarFunctions() []modules.Function {
	itemsDoc := "Calls the master for a fresh pillar and generates the pillar data on the\nfly\n\nContrast with :py:func:`raw` which returns the pillar data that is\ncurrently loaded into the minion.\n\npillar\n    If specified, allows for a dictionary of pillar data to be made\n    available to pillar and ext_pillar rendering.\n\npillarenv\n    Pass a specific pillar environment from which to compile pillar data.\n\nCLI Example:\n\n    salt '*' pillar.items"
	return []modules.Function{
		{Name: "pillar.items", Spec: modules.Spec{Varargs: true, Kwargs: true}, Doc: itemsDoc, Fn: pillarItems},
		{Name: "pillar.data", Spec: modules.Spec{Varargs: true, Kwargs: true}, Doc: itemsDoc, Fn: pillarItems},
		{Name: "pillar.get", Spec: modules.Spec{Params: []modules.Param{req("key"), opt("default", pillarNotSet{}), opt("merge", false),
			opt("merge_nested_lists", nil), opt("delimiter", target.DefaultDelimiter), opt("pillarenv", nil), opt("saltenv", nil)}},
			Doc: "Attempt to retrieve the named value from the in-memory pillar data. If the\npillar key is not present, then the value specified in the ``default``\noption will be returned.\n\nThe value can also represent a value in a nested dict using a \":\" delimiter\nfor the dict.\n\nCLI Example:\n\n    salt '*' pillar.get pkg:apache\n    salt '*' pillar.get abc::def|ghi delimiter='|'",
			Fn:  pillarGet},
		{Name: "pillar.item", Spec: modules.Spec{Varargs: true, Kwargs: true},
			Doc: "Return one or more pillar entries from the in-memory pillar data.\n\ndelimiter\n    Delimiter used to traverse nested dictionaries.\n\nCLI Examples:\n\n    salt '*' pillar.item foo\n    salt '*' pillar.item foo:bar\n    salt '*' pillar.item foo bar baz",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return pillarItem(ctx, c, c.Args.Varargs, c.Args.Kwargs)
			}},
		{Name: "pillar.ext", Spec: modules.Spec{Params: []modules.Param{req("external"), opt("pillar", nil)}},
			Doc: "Generate the pillar and apply an explicit external pillar\n\n\nexternal\n    A dictionary (or a YAML string) naming one or more ext_pillar modules\n    and their configuration; the master only runs the modules listed in\n    its ``on_demand_ext_pillar`` option (libvirt and virtkey by default).\n\npillar\n    If specified, allows for a dictionary of pillar data to be made\n    available to pillar and ext_pillar rendering.\n\nCLI Examples:\n\n    salt '*' pillar.ext '{libvirt: _}'",
			Fn:  pillarExt},
		{Name: "pillar.raw", Spec: modules.Spec{Params: []modules.Param{opt("key", nil)}},
			Doc: "Return the raw pillar data that is currently loaded into the minion.\n\nContrast with :py:func:`items` which calls the master to fetch the most\nup-to-date Pillar.\n\nCLI Example:\n\n    salt '*' pillar.raw\n\nWith the optional key argument, you can select a subtree of the\npillar raw data.::\n\n    salt '*' pillar.raw key='roles'",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				p := pillarInMemory(c)
				if key := c.Args.Get("key"); payload.Truthy(key) {
					if v, ok := p.GetKey(key); ok {
						return v, nil
					}
					return &payload.Map{}, nil
				}
				return p, nil
			}},
		{Name: "pillar.filter_by", Spec: modules.Spec{Params: []modules.Param{req("lookup_dict"), req("pillar"), opt("merge", nil), opt("default", "default"), opt("base", nil)}},
			Doc: "Look up the given pillar in a given dictionary and return the result\n\n:param lookup_dict: A dictionary, keyed by a pillar, containing a value or\n    values relevant to systems matching that pillar.\n:param pillar: The name of a pillar to match with the system's pillar.\n:param merge: A dictionary to merge with the results of the pillar\n    selection from ``lookup_dict``.\n:param default: default lookup_dict's key used if the pillar does not exist\n    or if the pillar value has no match on lookup_dict.\n:param base: A lookup_dict key to use for a base dictionary.\n\nCLI Example:\n\n    salt '*' pillar.filter_by '{web: Serve it up, db: I query, default: x_x}' role",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return grainsFilterBy(pillarInMemory(c), c.Args.Get("lookup_dict"), c.Args.Str("pillar"), c.Args.Get("merge"), c.Args.Get("default"), c.Args.Get("base"))
			}},
		{Name: "pillar.ls", Spec: modules.Spec{Varargs: true},
			Doc: "Calls the master for a fresh pillar, generates the pillar data on the\nfly (same as :py:func:`items`), but only shows the available main keys.\n\nCLI Examples:\n\n    salt '*' pillar.ls",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				v, err := pillarItemsOf(ctx, c, c.Args.Varargs, &payload.Map{})
				if err != nil {
					return nil, err
				}
				out := []any{}
				if m, ok := v.(*payload.Map); ok {
					for _, it := range m.Items() {
						out = append(out, it.Key)
					}
				}
				return out, nil
			}},
		{Name: "pillar.obfuscate", Spec: modules.Spec{Varargs: true, Kwargs: true},
			Doc: "Same as :py:func:`items`, but replace pillar values with a simple type indication.\n\nCLI Examples:\n\n    salt '*' pillar.obfuscate",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				v, err := pillarItemsOf(ctx, c, c.Args.Varargs, c.Args.Kwargs)
				if err != nil {
					return nil, err
				}
				return pillarObfuscate(v), nil
			}},
	}
}

// pillarInMemory is __pillar__.
func pillarInMemory(c *modules.Call) *payload.Map {
	if c.Env == nil || c.Env.Pillar == nil {
		return &payload.Map{}
	}
	return c.Env.Pillar
}

func pillarItems(ctx context.Context, c *modules.Call) (any, error) {
	return pillarItemsOf(ctx, c, c.Args.Varargs, c.Args.Kwargs)
}

// pillarItemsOf is pillar.items(*args, **kwargs).
func pillarItemsOf(ctx context.Context, c *modules.Call, args []any, kwargs *payload.Map) (any, error) {
	if len(args) > 0 {
		return pillarItem(ctx, c, args, &payload.Map{})
	}
	if kwargs == nil {
		kwargs = &payload.Map{}
	}
	pillarenv, _ := kwargs.Get("pillarenv")
	if pillarenv == nil {
		if v, _ := optGet(c, "pillarenv_from_saltenv"); payload.Truthy(v) {
			pillarenv, _ = kwargs.Get("saltenv")
			if !payload.Truthy(pillarenv) {
				pillarenv, _ = optGet(c, "saltenv")
			}
		} else {
			pillarenv, _ = optGet(c, "pillarenv")
		}
	}
	var override *payload.Map
	if v, ok := kwargs.Get("pillar"); ok && payload.Truthy(v) {
		m, isMap := v.(*payload.Map)
		if !isMap {
			return nil, fmt.Errorf("%w: Pillar data must be formatted as a dictionary", modules.ErrInvocation)
		}
		override = m
	}
	st, ok := modules.Service[PillarStore](c.Env, pillarServiceName)
	if !ok {
		return pillarInMemory(c), nil
	}
	p, err := st.CompilePillar(ctx, pillarenv, override)
	if err != nil {
		return nil, fmt.Errorf("%w: failed to compile pillar: %w", modules.ErrExecution, err)
	}
	return p, nil
}

// pillarSource is the pillar item and get read: the in-memory one, or a
// fresh one for an explicit pillarenv/saltenv.
func pillarSource(ctx context.Context, c *modules.Call, pillarenv, saltenv any) (any, error) {
	if pillarenv == nil && saltenv == nil {
		return pillarInMemory(c), nil
	}
	kw := payload.NewMap("pillarenv", pillarenv, "saltenv", saltenv)
	return pillarItemsOf(ctx, c, nil, kw)
}

func pillarItem(ctx context.Context, c *modules.Call, args []any, kwargs *payload.Map) (any, error) {
	get := func(k, def string) any {
		if v, ok := kwargs.Get(k); ok {
			return v
		}
		if def == "" {
			return nil
		}
		return def
	}
	def, ok := kwargs.Get("default")
	if !ok {
		def = ""
	}
	delim := payload.Text(get("delimiter", target.DefaultDelimiter))
	src, err := pillarSource(ctx, c, get("pillarenv", ""), get("saltenv", ""))
	if err != nil {
		return nil, err
	}
	ret := &payload.Map{}
	for _, a := range args {
		v, found := target.Traverse(src, payload.Text(a), delim)
		if !found {
			v = def
		}
		ret.SetKey(a, v)
	}
	return ret, nil
}

// errPillarKey is Python's KeyError from pillar.get with
// pillar_raise_on_missing.
var errPillarKey = errors.New("KeyError")

func pillarGet(ctx context.Context, c *modules.Call) (any, error) {
	a := c.Args
	key := a.Str("key")
	def := a.Get("default")
	_, notSet := def.(pillarNotSet)
	if notSet {
		if v, _ := optGet(c, "pillar_raise_on_missing"); !payload.Truthy(v) {
			def = ""
			notSet = false
		}
	}
	mergeLists := a.Get("merge_nested_lists")
	if mergeLists == nil {
		mergeLists, _ = optGet(c, "pillar_merge_lists")
	}
	delim := a.Str("delimiter")
	src, err := pillarSource(ctx, c, a.Get("pillarenv"), a.Get("saltenv"))
	if err != nil {
		return nil, err
	}
	if payload.Truthy(a.Get("merge")) {
		switch d := def.(type) {
		case *payload.Map:
			v, found := target.Traverse(src, key, delim)
			if !found {
				v = &payload.Map{}
			}
			if vm, ok := v.(*payload.Map); ok {
				dest, _ := payload.DeepClone(d).(*payload.Map)
				return pillarDictUpdate(dest, vm, payload.Truthy(mergeLists)), nil
			}
			c.Log().Error("pillar.get: Default is a dict, but the returned pillar value is not. Merge will be skipped.", "key", key)
		case []any:
			v, found := target.Traverse(src, key, delim)
			if !found {
				v = []any{}
			}
			if vl, ok := v.([]any); ok {
				out := append([]any{}, d...)
				for _, x := range vl {
					if !pillarContains(out, x) {
						out = append(out, x)
					}
				}
				return out, nil
			}
			c.Log().Error("pillar.get: Default is a list, but the returned pillar value is not. Merge will be skipped.", "key", key)
		default:
			c.Log().Error("pillar.get: Default must be a dict or list to merge. Merge will be skipped.", "key", key)
		}
	}
	v, found := target.Traverse(src, key, delim)
	if !found {
		if notSet {
			return nil, fmt.Errorf("%w: 'Pillar key not found: %s'", errPillarKey, key)
		}
		return def, nil
	}
	return v, nil
}

func pillarContains(l []any, x any) bool {
	for _, y := range l {
		if py.Equal(x, y) {
			return true
		}
	}
	return false
}

// pillarDictUpdate is salt.utils.dictupdate.update with merge_lists.
func pillarDictUpdate(dest, upd *payload.Map, mergeLists bool) *payload.Map {
	common := false
	for _, it := range upd.Items() {
		if _, ok := dest.GetKey(it.Key); ok {
			common = true
			break
		}
	}
	for _, it := range upd.Items() {
		if common {
			cur, _ := dest.GetKey(it.Key)
			if cm, ok := cur.(*payload.Map); ok {
				if um, ok := it.Value.(*payload.Map); ok {
					dest.SetKey(it.Key, pillarDictUpdate(cm, um, mergeLists))
					continue
				}
			}
			if cl, ok := cur.([]any); ok && mergeLists {
				if ul, ok := it.Value.([]any); ok {
					merged := append([]any{}, cl...)
					for _, x := range ul {
						if !pillarContains(merged, x) {
							merged = append(merged, x)
						}
					}
					dest.SetKey(it.Key, merged)
					continue
				}
			}
		}
		dest.SetKey(it.Key, it.Value)
	}
	return dest
}

// pillarObfuscate replaces leaves by "<type>" like pillar.obfuscate.
func pillarObfuscate(v any) any {
	switch x := v.(type) {
	case *payload.Map:
		out := &payload.Map{}
		for _, it := range x.Items() {
			out.SetKey(it.Key, pillarObfuscate(it.Value))
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = pillarObfuscate(x[i])
		}
		return out
	case nil:
		return "<NoneType>"
	case bool:
		return "<bool>"
	case int64, uint64, int:
		return "<int>"
	case float64:
		return "<float>"
	case []byte:
		return "<bytes>"
	}
	return "<str>"
}

// pillarExt is pillar.ext(external, pillar=None): a fresh pillar compiled
// with the on-demand ext_pillar external (a YAML string is decoded first).
func pillarExt(ctx context.Context, c *modules.Call) (any, error) {
	external := c.Args.Get("external")
	if s, ok := external.(string); ok {
		v, err := config.DecodeYAMLPayload([]byte(s))
		if err != nil {
			return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
		external = v
	}
	override, _ := c.Args.Get("pillar").(*payload.Map)
	if p := c.Args.Get("pillar"); p != nil && override == nil {
		c.Log().Error("Pillar data must be a dictionary")
	}
	st, ok := modules.Service[PillarStore](c.Env, pillarServiceName)
	if !ok {
		return pillarInMemory(c), nil
	}
	xs, ok := st.(PillarExtStore)
	if !ok {
		return nil, fmt.Errorf("%w: this minion cannot compile an on-demand ext_pillar", modules.ErrExecution)
	}
	return xs.CompilePillarExt(ctx, external, override)
}
