package builtin

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gsalt/gsalt/internal/grainsfile"
	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/target"
	"github.com/gsalt/gsalt/wire/payload"
)

// GrainsStore is the minion facility the grains module writes through,
// registered in modules.Env.Services under "grains".
type GrainsStore interface {
	// GrainsFile returns the path of the minion's grains file
	// (<config dir>/grains, or proxy.d/<id>/grains for a proxy).
	GrainsFile() string
	// RefreshGrains recomputes the minion's grains (then its pillar when
	// refreshPillar) so that later jobs see a change to the grains file.
	RefreshGrains(ctx context.Context, refreshPillar bool) error
}

// grainsServiceName is the Env.Services key of the GrainsStore.
const grainsServiceName = "grains"

// grainsFunctions is Salt's grains module. The functions read
// c.Env.Grains; the setters write the grains file through the GrainsStore
// (or next to opts conf_file when there is none) and ask the store for a
// refresh, since Env.Grains may be shared by concurrent jobs and is never
// changed in place.
func grainsFunctions() []modules.Function {
	delim := ":"
	return []modules.Function{
		{Name: "grains.items", Outputter: "nested", Spec: modules.Spec{Params: []modules.Param{opt("sanitize", false)}},
			Doc: "Return all of the minion's grains\n\nCLI Example:\n\n    salt '*' grains.items\n\nSanitized CLI Example:\n\n    salt '*' grains.items sanitize=True",
			Fn:  grainsItems},
		{Name: "grains.item", Outputter: "nested", Spec: modules.Spec{Varargs: true, Kwargs: true},
			Doc: "Return one or more grains\n\nCLI Example:\n\n    salt '*' grains.item os\n    salt '*' grains.item os osrelease oscodename\n\nSanitized CLI Example:\n\n    salt '*' grains.item host sanitize=True",
			Fn:  grainsItem},
		{Name: "grains.get", Spec: modules.Spec{Params: []modules.Param{req("key"), opt("default", ""), opt("delimiter", delim), opt("ordered", true)}},
			Doc: grainsGetDoc, Fn: grainsGet},
		{Name: "grains.fetch", Spec: modules.Spec{Params: []modules.Param{req("key"), opt("default", ""), opt("delimiter", delim), opt("ordered", true)}},
			Doc: grainsGetDoc, Fn: grainsGet},
		{Name: "grains.has_value", Spec: modules.Spec{Params: []modules.Param{req("key")}},
			Doc: "Determine whether a key exists in the grains dictionary.\n\nGiven a grains dictionary that contains the following structure::\n\n    {'pkg': {'apache': 'httpd'}}\n\nOne would determine if the apache key in the pkg dict exists by::\n\n    pkg:apache\n\nCLI Example:\n\n    salt '*' grains.has_value pkg:apache",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				_, found, err := grainsTraverse(grainsData(c), c.Args.Str("key"), delim)
				return found, err
			}},
		{Name: "grains.ls", Doc: "Return a list of all available grains\n\nCLI Example:\n\n    salt '*' grains.ls",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				keys := grainsData(c).Keys()
				sort.Strings(keys)
				return grainsStrList(keys), nil
			}},
		{Name: "grains.equals", Spec: modules.Spec{Params: []modules.Param{req("key"), req("value")}},
			Doc: "Used to make sure the minion's grain key/value matches.\n\nReturns ``True`` if matches otherwise ``False``.\n\nCLI Example:\n\n    salt '*' grains.equals fqdn <expected_fqdn>\n    salt '*' grains.equals systemd:version 219",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				v, err := grainsGetValue(c, c.Args.Str("key"), "", delim)
				if err != nil {
					return nil, err
				}
				return pyfmt.Str(c.Args.Get("value")) == pyfmt.Str(v), nil
			}},
		{Name: "grains.setvals", Spec: modules.Spec{Params: []modules.Param{req("grains"), opt("destructive", false), opt("refresh_pillar", true)}},
			Doc: "Set new grains values in the grains config file\n\ndestructive\n    If an operation results in a key being removed, delete the key, too.\n    Defaults to False.\n\nrefresh_pillar\n    Whether pillar will be refreshed.\n    Defaults to True.\n\nCLI Example:\n\n    salt '*' grains.setvals \"{'key1': 'val1', 'key2': 'val2'}\"",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return grainsSetvals(ctx, c, c.Args.Get("grains"), c.Args.Get("destructive"), c.Args.Get("refresh_pillar"))
			}},
		{Name: "grains.setval", Outputter: "nested", Spec: modules.Spec{Params: []modules.Param{req("key"), req("val"), opt("destructive", false), opt("refresh_pillar", true)}},
			Doc: "Set a grains value in the grains config file\n\nkey\n    The grain key to be set.\n\nval\n    The value to set the grain key to.\n\ndestructive\n    If an operation results in a key being removed, delete the key, too.\n    Defaults to False.\n\nrefresh_pillar\n    Whether pillar will be refreshed.\n    Defaults to True.\n\nCLI Example:\n\n    salt '*' grains.setval key val\n    salt '*' grains.setval key \"{'sub-key': 'val', 'sub-key2': 'val2'}\"",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return grainsSetvals(ctx, c, payload.NewMap().SetKey(c.Args.Get("key"), c.Args.Get("val")), c.Args.Get("destructive"), c.Args.Get("refresh_pillar"))
			}},
		{Name: "grains.append", Spec: modules.Spec{Params: []modules.Param{req("key"), req("val"), opt("convert", false), opt("delimiter", delim)}},
			Doc: "Append a value to a list in the grains config file. If the grain doesn't\nexist, the grain key is added and the value is appended to the new grain\nas a list item.\n\nkey\n    The grain key to be appended to\n\nval\n    The value to append to the grain key\n\nconvert\n    If convert is True, convert non-list contents into a list.\n    If convert is False and the grain contains non-list contents, an error\n    is given. Defaults to False.\n\ndelimiter\n    The key can be a nested dict key. Use this parameter to\n    specify the delimiter you use, instead of the default ``:``.\n\nCLI Example:\n\n    salt '*' grains.append key val",
			Fn:  grainsAppend},
		{Name: "grains.remove", Spec: modules.Spec{Params: []modules.Param{req("key"), req("val"), opt("delimiter", delim)}},
			Doc: "Remove a value from a list in the grains config file\n\nkey\n    The grain key to remove.\n\nval\n    The value to remove.\n\ndelimiter\n    The key can be a nested dict key. Use this parameter to\n    specify the delimiter you use, instead of the default ``:``.\n\nCLI Example:\n\n    salt '*' grains.remove key val",
			Fn:  grainsRemove},
		{Name: "grains.delkey", Spec: modules.Spec{Params: []modules.Param{req("key"), opt("force", false)}},
			Doc: "Remove a grain completely from the grain system, this will remove the\ngrain key and value\n\nkey\n    The grain key from which to delete the value.\n\nforce\n    Force remove the grain even when it is a mapped value.\n    Defaults to False\n\nCLI Example:\n\n    salt '*' grains.delkey key",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return grainsSet(ctx, c, c.Args.Str("key"), nil, c.Args.Get("force"), true, delim)
			}},
		{Name: "grains.delval", Spec: modules.Spec{Params: []modules.Param{req("key"), opt("destructive", false), opt("force", false)}},
			Doc: "Delete a grain value from the grains config file. This will just set the\ngrain value to ``None``. To completely remove the grain, run ``grains.delkey``\nor pass ``destructive=True`` to ``grains.delval``.\n\nkey\n    The grain key from which to delete the value.\n\ndestructive\n    Delete the key, too. Defaults to False.\n\nforce\n    Force remove the grain even when it is a mapped value.\n    Defaults to False\n\nCLI Example:\n\n    salt '*' grains.delval key",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return grainsSet(ctx, c, c.Args.Str("key"), nil, c.Args.Get("force"), c.Args.Get("destructive"), delim)
			}},
		{Name: "grains.set", Spec: modules.Spec{Params: []modules.Param{req("key"), opt("val", ""), opt("force", false), opt("destructive", false), opt("delimiter", delim)}},
			Doc: "Set a key to an arbitrary value. It is used like setval but works\nwith nested keys.\n\nThis function is conservative. It will only overwrite an entry if\nits value and the given one are not a list or a dict. The ``force``\nparameter is used to allow overwriting in all cases.\n\n:param force: Force writing over existing entry if given or existing\n              values are list or dict. Defaults to False.\n:param destructive: If an operation results in a key being removed,\n              delete the key, too. Defaults to False.\n:param delimiter:\n    Specify an alternate delimiter to use when traversing a nested dict,\n    the default being ``:``\n\nCLI Example:\n\n    salt '*' grains.set 'apps:myApp:port' 2209\n    salt '*' grains.set 'apps:myApp' '{port: 2209}'",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return grainsSet(ctx, c, c.Args.Str("key"), c.Args.Get("val"), c.Args.Get("force"), c.Args.Get("destructive"), c.Args.Str("delimiter"))
			}},
		{Name: "grains.filter_by", Spec: modules.Spec{Params: []modules.Param{req("lookup_dict"), opt("grain", "os_family"), opt("merge", nil), opt("default", "default"), opt("base", nil)}},
			Doc: "Look up the given grain in a given dictionary for the current OS and return\nthe result\n\n:param lookup_dict: A dictionary, keyed by a grain, containing a value or\n    values relevant to systems matching that grain.\n:param grain: The name of a grain to match with the current system's\n    grains.\n:param merge: A dictionary to merge with the results of the grain selection\n    from ``lookup_dict``.\n:param default: default lookup_dict's key used if the grain does not exists\n    or if the grain value has no match on lookup_dict.\n:param base: A lookup_dict key to use for a base dictionary.\n\nCLI Example:\n\n    salt '*' grains.filter_by '{Debian: Debheads rule, RedHat: I love my hat}'",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return grainsFilterBy(grainsData(c), c.Args.Get("lookup_dict"), c.Args.Str("grain"), c.Args.Get("merge"), c.Args.Get("default"), c.Args.Get("base"))
			}},
	}
}

const grainsGetDoc = "Attempt to retrieve the named value from grains, if the named value is not\navailable return the passed default. The default return is an empty string.\nThe value can also represent a value in a nested dict using a \":\" delimiter\nfor the dict. This means that if a dict in grains looks like this::\n\n    {'pkg': {'apache': 'httpd'}}\n\nTo retrieve the value associated with the apache key in the pkg dict this\nkey can be passed::\n\n    pkg:apache\n\n:param delimiter:\n    Specify an alternate delimiter to use when traversing a nested dict.\n    This is useful for when the desired key contains a colon.\n\n:param ordered:\n    Outputs an ordered dict if applicable (default: True)\n\nCLI Example:\n\n    salt '*' grains.get pkg:apache\n    salt '*' grains.get abc::def|ghi delimiter='|'"

// grainsData returns the minion's grains (never nil).
func grainsData(c *modules.Call) *payload.Map {
	if c.Env != nil && c.Env.Grains != nil {
		return c.Env.Grains
	}
	return &payload.Map{}
}

// grainsSanitizers replaces identifying grains for sanitize=True.
var grainsSanitizers = map[string]func(any) any{
	"serialnumber": func(v any) any {
		r := []rune(payload.Text(v))
		idx := int(math.Floor(float64(len(r)) * 0.75))
		return string(r[:idx]) + strings.Repeat("X", len(r)-idx)
	},
	"domain":    func(any) any { return "DOMAINNAME" },
	"fqdn":      func(any) any { return "MINION.DOMAINNAME" },
	"id":        func(any) any { return "MINION.DOMAINNAME" },
	"host":      func(any) any { return "MINION" },
	"localhost": func(any) any { return "MINION" },
	"nodename":  func(any) any { return "MINION" },
}

func grainsSanitize(m *payload.Map) {
	for k, f := range grainsSanitizers {
		if v, ok := m.Get(k); ok {
			m.Set(k, f(v))
		}
	}
}

func grainsItems(_ context.Context, c *modules.Call) (any, error) {
	out := grainsData(c).Clone()
	if modules.IsTrue(c.Args.Get("sanitize")) {
		grainsSanitize(out)
	}
	return out, nil
}

func grainsItem(_ context.Context, c *modules.Call) (any, error) {
	ret := &payload.Map{}
	var def any = ""
	if c.Args.Kwargs.Has("default") {
		def, _ = c.Args.Kwargs.Get("default")
	}
	delimiter := ":"
	if v, ok := c.Args.Kwargs.Get("delimiter"); ok {
		delimiter = payload.Text(v)
	}
	for _, arg := range c.Args.Varargs {
		key := payload.Text(arg)
		v, found, err := grainsTraverse(grainsData(c), key, delimiter)
		if err != nil {
			return nil, err
		}
		if !found {
			v = def
		}
		ret.SetKey(arg, v)
	}
	if v, _ := c.Args.Kwargs.Get("sanitize"); modules.IsTrue(v) {
		grainsSanitize(ret)
	}
	return ret, nil
}

func grainsGet(_ context.Context, c *modules.Call) (any, error) {
	return grainsGetValue(c, c.Args.Str("key"), c.Args.Get("default"), c.Args.Str("delimiter"))
}

// grainsGetValue is grains.get on a private copy of the grains.
func grainsGetValue(c *modules.Call, key string, def any, delimiter string) (any, error) {
	v, found, err := grainsTraverse(grainsData(c), key, delimiter)
	if err != nil {
		return nil, err
	}
	if !found {
		return def, nil
	}
	return payload.DeepClone(v), nil
}

// grainsTraverse is salt.utils.data.traverse_dict_and_list
// (target.Traverse), reporting whether the path exists. An empty delimiter
// is the ValueError of Python's str.split.
func grainsTraverse(data any, key, delimiter string) (any, bool, error) {
	if delimiter == "" {
		return nil, false, errors.New("ValueError: empty separator")
	}
	v, ok := target.Traverse(data, key, delimiter)
	return v, ok, nil
}

// grainsFilePath finds the grains file: the store's, else next to opts
// conf_file like Salt.
func grainsFilePath(c *modules.Call) (string, GrainsStore, error) {
	if st, ok := modules.Service[GrainsStore](c.Env, grainsServiceName); ok {
		return st.GrainsFile(), st, nil
	}
	if c.Env != nil && c.Env.Opts != nil {
		if v, ok := c.Env.Opts.Get("conf_file"); ok {
			if p := payload.Text(v); p != "" {
				if st, err := os.Stat(p); err == nil && st.IsDir() {
					return filepath.Join(p, grainsfile.FileName), nil, nil
				}
				return filepath.Join(filepath.Dir(p), grainsfile.FileName), nil, nil
			}
		}
	}
	return "", nil, fmt.Errorf("%w: the location of the grains file is unknown", modules.ErrExecution)
}

// grainsSetvals is grains.setvals: it merges new into the grains file and
// returns new.
func grainsSetvals(ctx context.Context, c *modules.Call, newGrains, destructive, refreshPillar any) (any, error) {
	nm, ok := newGrains.(*payload.Map)
	if !ok {
		return nil, errors.New("salt.exceptions.SaltException: setvals grains must be a dictionary.")
	}
	path, store, err := grainsFilePath(c)
	if err != nil {
		return nil, err
	}
	file, err := grainsfile.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("Unable to read existing grains file: %v", errors.Unwrap(err)), nil
	}
	for _, it := range nm.Items() {
		if it.Value == nil && destructive == true {
			file.Delete(payload.KeyString(it.Key))
			continue
		}
		file.SetKey(it.Key, it.Value)
	}
	if err := grainsfile.WriteFile(path, file); err != nil {
		c.Log().Error("Unable to write to grains file. Check permissions.", "path", path, "err", err)
	}
	local := false
	if c.Env != nil && c.Env.Opts != nil {
		if v, ok := c.Env.Opts.Get("local"); ok {
			local = payload.Truthy(v)
		}
	}
	if store != nil && !local {
		if err := store.RefreshGrains(ctx, payload.Truthy(refreshPillar)); err != nil {
			c.Log().Warn("grains refresh failed", "err", err)
		}
	}
	return nm, nil
}

func grainsSetval(ctx context.Context, c *modules.Call, key any, val any, destructive any) (any, error) {
	return grainsSetvals(ctx, c, payload.NewMap().SetKey(key, val), destructive, true)
}

// grainsRsplit is Python's key.rsplit(delimiter, 1).
func grainsRsplit(key, delimiter string) (string, string) {
	i := strings.LastIndex(key, delimiter)
	return key[:i], key[i+len(delimiter):]
}

func grainsAppend(ctx context.Context, c *modules.Call) (any, error) {
	key, val, delimiter := c.Args.Str("key"), c.Args.Get("val"), c.Args.Str("delimiter")
	cur, err := grainsGetValue(c, key, []any{}, delimiter)
	if err != nil {
		return nil, err
	}
	if payload.Truthy(c.Args.Get("convert")) {
		if _, isList := cur.([]any); !isList {
			if cur == nil {
				cur = []any{}
			} else {
				cur = []any{cur}
			}
		}
	}
	list, isList := cur.([]any)
	if !isList {
		return fmt.Sprintf("The key %s is not a valid list", key), nil
	}
	for _, e := range list {
		if py.Equal(e, val) {
			return fmt.Sprintf("The val %s was already in the list %s", pyfmt.Str(val), key), nil
		}
	}
	if vl, ok := val.([]any); ok {
		list = append(list, vl...)
	} else {
		list = append(list, val)
	}
	return grainsSetNested(ctx, c, key, list, delimiter, func() any { return &payload.Map{} })
}

func grainsRemove(ctx context.Context, c *modules.Call) (any, error) {
	key, val, delimiter := c.Args.Str("key"), c.Args.Get("val"), c.Args.Str("delimiter")
	cur, err := grainsGetValue(c, key, []any{}, delimiter)
	if err != nil {
		return nil, err
	}
	list, isList := cur.([]any)
	if !isList {
		return fmt.Sprintf("The key %s is not a valid list", key), nil
	}
	at := -1
	for i, e := range list {
		if py.Equal(e, val) {
			at = i
			break
		}
	}
	if at < 0 {
		return fmt.Sprintf("The val %s was not in the list %s", pyfmt.Str(val), key), nil
	}
	list = append(list[:at:at], list[at+1:]...)
	return grainsSetNested(ctx, c, key, list, delimiter, func() any { return nil })
}

// grainsSetNested stores value under a delimited key the way grains.append
// and grains.remove do: each parent dict is read (def() when missing), the
// child set in it, up to the top-level grain, which grains.setval writes.
func grainsSetNested(ctx context.Context, c *modules.Call, key string, value any, delimiter string, def func() any) (any, error) {
	for delimiter != "" && strings.Contains(key, delimiter) {
		var rest string
		key, rest = grainsRsplit(key, delimiter)
		parent, err := grainsGetValue(c, key, def(), delimiter)
		if err != nil {
			return nil, err
		}
		if m, ok := parent.(*payload.Map); ok {
			m.Set(rest, value)
		}
		value = parent
	}
	return grainsSetval(ctx, c, key, value, false)
}

func grainsIsComplex(v any) bool {
	switch v.(type) {
	case *payload.Map, []any:
		return true
	}
	return false
}

// grainsSet is grains.set (and delval/delkey through it).
func grainsSet(ctx context.Context, c *modules.Call, key string, val, force, destructive any, delimiter string) (any, error) {
	ret := payload.NewMap("comment", "", "changes", &payload.Map{}, "result", true)
	fail := func(msg string) (any, error) {
		ret.Set("comment", msg)
		ret.Set("result", false)
		return ret, nil
	}
	existing, found, err := grainsTraverse(grainsData(c), key, delimiter)
	if err != nil {
		return nil, err
	}
	existing = payload.DeepClone(existing)
	if found && py.Equal(existing, val) && (val != nil || destructive != true) {
		ret.Set("comment", "Grain is already set")
		return ret, nil
	}
	value := val
	if (!found || existing != nil) && !payload.Truthy(force) {
		switch {
		case found && grainsIsComplex(existing):
			return fail(fmt.Sprintf("The key '%s' exists but is a dict or a list. Use 'force=True' to overwrite.", key))
		case grainsIsComplex(val) && found:
			return fail(fmt.Sprintf("The key '%s' exists and the given value is a dict or a list. Use 'force=True' to overwrite.", key))
		}
	}
	for delimiter != "" && strings.Contains(key, delimiter) {
		var rest string
		key, rest = grainsRsplit(key, delimiter)
		parent, err := grainsGetValue(c, key, &payload.Map{}, delimiter)
		if err != nil {
			return nil, err
		}
		switch p := parent.(type) {
		case *payload.Map:
			if value == nil && payload.Truthy(destructive) {
				p.Delete(rest)
			} else {
				p.Set(rest, value)
			}
		case []any:
			updated := false
			for i, item := range p {
				if s, ok := item.(string); ok && s == rest {
					p[i] = payload.NewMap(rest, value)
					updated = true
				} else if m, ok := item.(*payload.Map); ok && m.Has(rest) {
					m.Set(rest, value)
					updated = true
				}
			}
			if !updated {
				p = append(p, payload.NewMap(rest, value))
			}
			parent = p
		default:
			if s, ok := parent.(string); (ok && s == rest) || payload.Truthy(force) {
				parent = payload.NewMap(rest, value)
			} else {
				return fail(fmt.Sprintf("The key '%s' value is '%s', which is different from the provided key '%s'. Use 'force=True' to overwrite.",
					key, pyfmt.Str(parent), rest))
			}
		}
		value = parent
	}
	res, err := grainsSetval(ctx, c, key, value, destructive)
	if err != nil {
		return nil, err
	}
	if m, ok := res.(*payload.Map); ok {
		ret.Set("changes", m)
	} else {
		ret.Set("comment", res)
		ret.Set("result", false)
	}
	return ret, nil
}

// grainsFilterBy is salt.utils.data.filter_by over the grains.
func grainsFilterBy(data *payload.Map, lookupArg any, grain string, merge, def, base any) (any, error) {
	lookup, ok := lookupArg.(*payload.Map)
	if !ok {
		return nil, fmt.Errorf("AttributeError: '%s' object has no attribute 'get'", payload.TypeName(lookupArg))
	}
	val, found, err := grainsTraverse(data, grain, ":")
	if err != nil {
		return nil, err
	}
	if !found {
		val = []any{}
	}
	values, isList := val.([]any)
	if !isList {
		values = []any{val}
	}
	var ret any
	matched := false
	for _, each := range values {
		test := pyfmt.Str(each)
		for _, it := range lookup.Items() {
			if py.Fnmatch(test, payload.KeyString(it.Key)) {
				ret, matched = it.Value, true
				break
			}
		}
		if matched && ret != nil {
			break
		}
		matched = false
	}
	if ret == nil {
		ret, _ = lookup.GetKey(def)
	}
	if payload.Truthy(base) {
		if baseValues, ok := lookup.GetKey(base); ok {
			if ret == nil {
				ret = baseValues
			} else if bm, ok := baseValues.(*payload.Map); ok {
				rm, ok := ret.(*payload.Map)
				if !ok {
					return nil, errors.New("salt.exceptions.SaltException: filter_by default and look-up values must both be dictionaries.")
				}
				ret = grainsDictUpdate(payload.DeepClone(bm).(*payload.Map), rm)
			}
		}
	}
	if payload.Truthy(merge) {
		mm, ok := merge.(*payload.Map)
		if !ok {
			return nil, errors.New("salt.exceptions.SaltException: filter_by merge argument must be a dictionary.")
		}
		if ret == nil {
			ret = mm
		} else if rm, ok := ret.(*payload.Map); ok {
			ret = grainsDictUpdate(payload.DeepClone(rm).(*payload.Map), payload.DeepClone(mm).(*payload.Map))
		} else {
			return nil, errors.New("TypeError: Cannot update using non-dict types in dictupdate.update()")
		}
	}
	return ret, nil
}

// grainsDictUpdate is salt.utils.dictupdate.update (recursive, lists
// replaced).
func grainsDictUpdate(dest, upd *payload.Map) *payload.Map {
	for _, it := range upd.Items() {
		cur, _ := dest.GetKey(it.Key)
		dm, dok := cur.(*payload.Map)
		um, uok := it.Value.(*payload.Map)
		if dok && uok {
			dest.SetKey(it.Key, grainsDictUpdate(dm, um))
			continue
		}
		dest.SetKey(it.Key, it.Value)
	}
	return dest
}

func grainsStrList(s []string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}
