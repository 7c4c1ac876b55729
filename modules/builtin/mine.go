package builtin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/target"
	"github.com/gsalt/gsalt/wire/payload"
)

// Keys of Salt's minion-side mine ACL wrapper (salt/utils/mine.py).
const (
	mineACLID      = "__saltmine_acl__"
	mineACLVersion = 1
	mineACLData    = "__data__"
)

// mineFunctions is Salt's mine module (salt/modules/mine.py). On a minion
// with a master the data goes to the master's mine (_mine, _mine_get,
// _mine_delete, _mine_flush requests through the MasterChannel); with
// file_client local it is kept in the minion's datastore
// (cachedir/datastore, key mine_cache) like Salt's data module does.
func mineFunctions() []modules.Function {
	return []modules.Function{
		{Name: "mine.update", Spec: modules.Spec{Params: []modules.Param{opt("clear", false), opt("mine_functions", nil)}},
			Doc: "Call the configured functions and send the data back up to the master.\nThe functions to be called are merged from the master config, pillar and\nminion config under the option `mine_functions`:\n\n    mine_functions:\n      network.ip_addrs:\n        - eth0\n      disk.usage: []\n\n:param bool clear: Default: ``False``\n    Specifies whether updating will clear the existing values (``True``), or\n    whether it will update them (``False``).\n:param dict mine_functions:\n    Update (or clear, see ``clear``) the mine data on these functions only.\n\nCLI Example:\n\n    salt '*' mine.update",
			Fn:  mineUpdate},
		{Name: "mine.send", Spec: modules.Spec{Params: []modules.Param{req("name")}, Varargs: true, Kwargs: true},
			Doc: "Send a specific function and its result to the salt mine.\nThis gets stored in either the local cache, or the salt master's cache.\n\n:param str name: Name of the function to add to the mine.\n\nThe following pameters are extracted from kwargs if present:\n\n:param str mine_function: The name of the execution_module.function to run\n    and whose value will be stored in the salt mine. Defaults to ``name``.\n:param str allow_tgt: Targeting specification for ACL.\n:param str allow_tgt_type: Type of the targeting specification.\n\nRemaining args and kwargs will be passed on to the function to run.\n\nCLI Example:\n\n    salt '*' mine.send network.ip_addrs interface=eth0\n    salt '*' mine.send eth0_ip_addrs mine_function=network.ip_addrs interface=eth0",
			Fn:  mineSend},
		{Name: "mine.get", Spec: modules.Spec{Params: []modules.Param{req("tgt"), req("fun"), opt("tgt_type", "glob"), opt("exclude_minion", false)}},
			Doc: "Get data from the mine.\n\n:param str tgt: Target whose mine data to get.\n:param fun: Function to get the mine data of. You can specify multiple functions\n    to retrieve using either a list or a comma-separated string of functions.\n:param str tgt_type: Default ``glob``. Target type to use with ``tgt``.\n:param bool exclude_minion: Excludes the current minion from the result set.\n\nCLI Example:\n\n    salt '*' mine.get '*' network.interfaces\n    salt '*' mine.get 'os:Fedora' network.interfaces grain",
			Fn:  mineGet},
		{Name: "mine.delete", Spec: modules.Spec{Params: []modules.Param{req("fun")}},
			Doc: "Remove specific function contents of minion.\n\n:param str fun: The name of the function.\n:rtype: bool\n:return: True on success.\n\nCLI Example:\n\n    salt '*' mine.delete 'network.interfaces'",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				fun := c.Args.Get("fun")
				if isLocalMode(c, false) {
					data := mineLocalData(c)
					data.Delete(payload.Text(fun))
					return mineLocalWrite(c, data), nil
				}
				return mineSendMaster(ctx, c, payload.NewMap("cmd", "_mine_delete", "id", c.Env.ID, "fun", fun, "tok", nil)), nil
			}},
		{Name: "mine.valid", Doc: "List valid entries in mine configuration.\n\nCLI Example:\n\n    salt '*' mine.valid",
			Fn: mineValid},
		{Name: "mine.flush", Doc: "Remove all mine contents of minion.\n\n:rtype: bool\n:return: True on success\n\nCLI Example:\n\n    salt '*' mine.flush",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				if isLocalMode(c, false) {
					return mineLocalWrite(c, &payload.Map{}), nil
				}
				return mineSendMaster(ctx, c, payload.NewMap("cmd", "_mine_flush", "id", c.Env.ID, "tok", nil)), nil
			}},
	}
}

// callFunction runs another execution function of the call's registry as
// Python code calls __salt__['name'](*args, **kwargs): a "name=value"
// string stays a positional string (only jobs and the command line parse
// those); errors come back as Go errors instead of job returns.
func callFunction(ctx context.Context, c *modules.Call, name string, args []any, kwargs *payload.Map) (ret any, err error) {
	if c.Env == nil || c.Env.Registry == nil {
		return nil, fmt.Errorf("%w: '%s' is not available.", modules.ErrNotAvailable, name)
	}
	fn, ok := c.Env.Registry.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("%w: '%s' is not available.", modules.ErrNotAvailable, name)
	}
	list := append([]any{}, args...)
	if kwargs != nil && kwargs.Len() > 0 {
		kw := payload.NewMap("__kwarg__", true)
		for _, it := range kwargs.Items() {
			kw.SetKey(it.Key, it.Value)
		}
		list = append(list, kw)
	}
	bound, err := modules.Binder{Direct: true}.Bind(fn, list, nil)
	if err != nil {
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			ret, err = nil, fmt.Errorf("%s panicked: %v", name, p)
		}
	}()
	return fn.Fn(ctx, &modules.Call{Fun: name, Env: c.Env, Args: bound, Pub: c.Pub})
}

// mineCall is salt.utils.functools.call_function, which mine.update and
// mine.send call their function through: every parameter with a default
// is passed as a keyword with that default unless a keyword gives it; a
// dict among args gives keywords (its keys naming a required parameter
// become positional, after the plain args); the plain args stay
// positional, "name=value" strings included. A required parameter given
// by nothing is Salt's "Missing arguments" error; a default also given
// positionally fails as Python's "got multiple values".
func mineCall(ctx context.Context, c *modules.Call, name string, args []any, kwargs *payload.Map) (any, error) {
	if c.Env == nil || c.Env.Registry == nil {
		return nil, fmt.Errorf("%w: '%s' is not available.", modules.ErrNotAvailable, name)
	}
	fn, ok := c.Env.Registry.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("%w: '%s' is not available.", modules.ErrNotAvailable, name)
	}
	var expected, all []string
	fkw := &payload.Map{}
	for _, p := range fn.Spec.Params {
		all = append(all, p.Name)
		if p.Required {
			expected = append(expected, p.Name)
		} else {
			fkw.Set(p.Name, p.Default)
		}
	}
	isExpected := func(k string) bool { return slices.Contains(expected, k) }
	var fargs []any
	toArg := &payload.Map{}
	for i := len(args) - 1; i >= 0; i-- {
		set, ok := args[i].(*payload.Map)
		if !ok {
			fargs = append(fargs, args[i])
			continue
		}
		for _, it := range set.Items() {
			if k := payload.KeyString(it.Key); isExpected(k) {
				toArg.Set(k, it.Value)
			} else {
				for _, kv := range set.Items() {
					fkw.SetKey(kv.Key, kv.Value)
				}
			}
		}
	}
	slices.Reverse(fargs)
	if kwargs != nil {
		for _, it := range kwargs.Items() {
			fkw.SetKey(it.Key, it.Value)
		}
	}
	for _, k := range expected {
		if v, ok := toArg.Get(k); ok {
			fargs = append(fargs, v)
		}
	}
	passed := len(fargs)
	var missing []string
	if len(expected) > passed {
		for _, k := range all[min(passed, len(all)):] {
			if fkw.Has(k) {
				passed++
			} else {
				missing = append(missing, k)
			}
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: Missing arguments: %s", modules.ErrInvocation, strings.Join(missing, ", "))
	}
	if len(expected) > passed {
		return nil, fmt.Errorf("%w: Function expects %d positional parameters, got only %d", modules.ErrInvocation, len(expected), passed)
	}
	return callFunction(ctx, c, name, fargs, fkw)
}

// mineParseDefinition is salt.utils.mine.parse_function_definition.
func mineParseDefinition(def any) (name string, args []any, kwargs *payload.Map, acl *payload.Map) {
	kwargs = &payload.Map{}
	switch d := def.(type) {
	case *payload.Map:
		for _, it := range d.Items() {
			kwargs.SetKey(it.Key, it.Value)
		}
	case []any:
		for _, item := range d {
			if m, ok := item.(*payload.Map); ok {
				for _, it := range m.Items() {
					kwargs.SetKey(it.Key, it.Value)
				}
			} else {
				args = append(args, item)
			}
		}
	}
	if v, ok := kwargs.Delete("mine_function"); ok {
		name = payload.Text(v)
	}
	acl = &payload.Map{}
	for _, k := range []string{"allow_tgt", "allow_tgt_type"} {
		if v, ok := kwargs.Delete(k); ok && payload.Truthy(v) {
			acl.Set(k, v)
		}
	}
	return name, args, kwargs, acl
}

// mineWrapACL is salt.utils.mine.wrap_acl_structure.
func mineWrapACL(data any, acl *payload.Map) *payload.Map {
	res := payload.NewMap(mineACLData, data, mineACLID, int64(mineACLVersion))
	for _, it := range acl.Items() {
		res.SetKey(it.Key, it.Value)
	}
	return res
}

// mineConfigured is config.merge("mine_functions", {}): the minion
// option, then the master's and the pillar's mine_functions merged in.
func mineConfigured(ctx context.Context, c *modules.Call) any {
	v, err := callFunction(ctx, c, "config.merge", []any{"mine_functions"}, payload.NewMap("default", &payload.Map{}))
	if err != nil {
		if v, ok := optGet(c, "mine_functions"); ok {
			return payload.FromGo(v)
		}
		return nil
	}
	return payload.FromGo(v)
}

func mineUpdate(ctx context.Context, c *modules.Call) (any, error) {
	fns := c.Args.Get("mine_functions")
	var table *payload.Map
	switch f := fns.(type) {
	case *payload.Map:
		if f.Len() == 0 {
			fns = nil
		} else {
			table = f
		}
	case []any:
		if len(f) == 0 {
			fns = nil
		} else {
			table = &payload.Map{}
			for _, name := range f {
				table.SetKey(name, &payload.Map{})
			}
		}
	default:
		if payload.Truthy(fns) {
			return nil, nil
		}
		fns = nil
	}
	if fns == nil {
		m, ok := mineConfigured(ctx, c).(*payload.Map)
		if !ok || m.Len() == 0 {
			return nil, nil
		}
		table = m
	}
	data := &payload.Map{}
	for _, it := range table.Items() {
		alias := payload.KeyString(it.Key)
		name, args, kwargs, acl := mineParseDefinition(payload.DeepClone(it.Value))
		if name == "" {
			name = alias
		}
		if _, ok := c.Env.Registry.Lookup(name); !ok {
			c.Log().Error("Function in mine_functions not available", "function", name)
			continue
		}
		res, err := mineCall(ctx, c, name, args, kwargs)
		if err != nil {
			c.Log().Error("Function in mine.update failed to execute", "function", name, "err", err)
			continue
		}
		if acl.Has("allow_tgt") {
			data.Set(alias, mineWrapACL(res, acl))
		} else {
			data.Set(alias, res)
		}
	}
	return mineStore(ctx, c, data, payload.Truthy(c.Args.Get("clear"))), nil
}

func mineSend(ctx context.Context, c *modules.Call) (any, error) {
	kwargs := c.Args.CleanKwargs()
	name := c.Args.Str("name")
	fun := name
	if v, ok := kwargs.Delete("mine_function"); ok && payload.Truthy(v) {
		fun = payload.Text(v)
	}
	allowTgt, _ := kwargs.Delete("allow_tgt")
	allowType, _ := kwargs.Delete("allow_tgt_type")
	res, err := mineCall(ctx, c, fun, c.Args.Varargs, kwargs)
	if err != nil {
		c.Log().Error("Function in mine.send failed to execute", "function", fun, "err", err)
		return false, nil
	}
	data := &payload.Map{}
	if payload.Truthy(allowTgt) {
		acl := payload.NewMap("allow_tgt", allowTgt)
		if payload.Truthy(allowType) {
			acl.Set("allow_tgt_type", allowType)
		}
		data.Set(name, mineWrapACL(res, acl))
	} else {
		data.Set(name, res)
	}
	return mineStore(ctx, c, data, false), nil
}

// mineStore is _mine_store: the datastore when local, else a _mine request.
func mineStore(ctx context.Context, c *modules.Call, data *payload.Map, clear bool) any {
	if isLocalMode(c, false) {
		if !clear {
			old := mineLocalData(c)
			for _, it := range data.Items() {
				old.SetKey(it.Key, it.Value)
			}
			data = old
		}
		return mineLocalWrite(c, data)
	}
	return mineSendMaster(ctx, c, payload.NewMap("cmd", "_mine", "data", data, "id", c.Env.ID, "clear", clear, "tok", nil))
}

// mineSendMaster sends a mine request; like Salt's minion (which hands it
// to its event loop) the function reports True once it is on its way.
func mineSendMaster(ctx context.Context, c *modules.Call, load *payload.Map) bool {
	ch, ok := modules.Service[MasterChannel](c.Env, masterServiceName)
	if !ok {
		c.Log().Error("Mine could not reach the master: no master connection")
		return false
	}
	if _, err := ch.SendMaster(ctx, load); err != nil {
		c.Log().Warn("Unable to send mine data to master.", "err", err)
		return false
	}
	return true
}

func mineGet(ctx context.Context, c *modules.Call) (any, error) {
	a := c.Args
	tgt, fun, tgtType := a.Get("tgt"), a.Get("fun"), a.Str("tgt_type")
	if isLocalMode(c, false) {
		return mineGetLocal(c, tgt, fun, tgtType)
	}
	ch, ok := modules.Service[MasterChannel](c.Env, masterServiceName)
	if !ok {
		return false, nil
	}
	ret, err := ch.SendMaster(ctx, payload.NewMap("cmd", "_mine_get", "id", c.Env.ID, "tgt", tgt, "fun", fun, "tgt_type", tgtType, "tok", nil))
	if err != nil {
		return nil, fmt.Errorf("%w: mine.get: %w", modules.ErrExecution, err)
	}
	if m, ok := ret.(*payload.Map); ok && payload.Truthy(a.Get("exclude_minion")) {
		m.Delete(c.Env.ID)
	}
	return ret, nil
}

// mineGetLocal is mine.get with file_client local: this minion's own
// datastore, when it matches the target.
func mineGetLocal(c *modules.Call, tgt, fun any, tgtType string) (any, error) {
	ret := &payload.Map{}
	switch tgtType {
	case "glob", "pcre", "list", "grain", "grain_pcre", "ipcidr", "compound", "pillar", "pillar_pcre":
	default:
		return nil, fmt.Errorf("KeyError: '%s'", tgtType)
	}
	var m target.Matcher
	ok, err := m.Match(tgt, tgtType, "", target.Minion{ID: c.Env.ID, Grains: c.Env.Grains, Pillar: c.Env.Pillar})
	if err != nil || !ok {
		return ret, nil
	}
	data := mineLocalData(c)
	var funcs []string
	retDict := false
	switch f := fun.(type) {
	case string:
		seen := map[string]bool{}
		for _, s := range strings.Split(f, ",") {
			if !seen[s] {
				seen[s] = true
				funcs = append(funcs, s)
			}
		}
		sort.Strings(funcs)
		retDict = len(funcs) > 1
	case []any:
		for _, s := range f {
			funcs = append(funcs, payload.Text(s))
		}
		retDict = true
	default:
		return ret, nil
	}
	for _, f := range funcs {
		v, ok := data.Get(f)
		if !ok {
			continue
		}
		if vm, isMap := v.(*payload.Map); isMap && vm.Has(mineACLID) {
			v, _ = vm.Get(mineACLData)
		}
		if retDict {
			sub, _ := ret.Get(f)
			sm, ok := sub.(*payload.Map)
			if !ok {
				sm = &payload.Map{}
				ret.Set(f, sm)
			}
			sm.Set(c.Env.ID, v)
		} else {
			ret.Set(c.Env.ID, v)
		}
	}
	return ret, nil
}

// mineDatastore is the path of the minion datastore (Salt's data module).
func mineDatastore(c *modules.Call) string {
	return filepath.Join(optStr(c, "cachedir"), "datastore")
}

// mineLocalData reads the mine_cache key of the datastore.
func mineLocalData(c *modules.Call) *payload.Map {
	b, err := os.ReadFile(mineDatastore(c))
	if err != nil {
		return &payload.Map{}
	}
	store, err := payload.UnmarshalMap(b)
	if err != nil {
		return &payload.Map{}
	}
	if m := store.Map("mine_cache"); m != nil {
		return m
	}
	return &payload.Map{}
}

// mineLocalWrite stores data as the datastore's mine_cache key.
func mineLocalWrite(c *modules.Call, data *payload.Map) bool {
	path := mineDatastore(c)
	store := &payload.Map{}
	if b, err := os.ReadFile(path); err == nil {
		if m, err := payload.UnmarshalMap(b); err == nil {
			store = m
		}
	}
	store.Set("mine_cache", data)
	b, err := payload.MarshalBin(store)
	if err != nil {
		c.Log().Error("mine: cannot encode the datastore", "err", err)
		return false
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return false
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return false
	}
	return os.Rename(tmp, path) == nil
}

// mineValid is mine.valid: the configured mine functions whose execution
// function exists, aliases resolved to {alias: {function: [args...,
// {kwarg: value}...]}}; None when nothing is configured.
func mineValid(ctx context.Context, c *modules.Call) (any, error) {
	conf, _ := mineConfigured(ctx, c).(*payload.Map)
	if conf == nil || conf.Len() == 0 {
		return nil, nil
	}
	out := payload.NewMap()
	for _, it := range conf.Items() {
		alias := payload.KeyString(it.Key)
		name, args, kwargs, _ := mineParseDefinition(payload.DeepClone(it.Value))
		fn := name
		if fn == "" {
			fn = alias
		}
		if c.Env == nil || c.Env.Registry == nil {
			continue
		}
		if _, ok := c.Env.Registry.Lookup(fn); !ok {
			continue
		}
		if name == "" {
			out.Set(alias, it.Value)
			continue
		}
		list := append([]any{}, args...)
		for _, kv := range kwargs.Items() {
			list = append(list, payload.NewMap().SetKey(kv.Key, kv.Value))
		}
		out.Set(alias, payload.NewMap(name, list))
	}
	return out, nil
}
