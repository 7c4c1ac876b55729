package builtin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/wire/payload"
)

// beaconsServiceName is the Env.Services key of the BeaconManager.
const beaconsServiceName = "beacons"

// BeaconManager is the "beacons" service: the minion's beacon manager
// (beacons.Manager implements it). ManageBeacons takes the data Salt's
// beacons module fires with the manage_beacons tag ({"func", "name",
// "beacon_data", "include_pillar", "include_opts"}) and returns the data of
// the completion event the minion answers with; an error stands for no
// answer.
type BeaconManager interface {
	ManageBeacons(ctx context.Context, req *payload.Map) (*payload.Map, error)
}

// beaconsDefaultWait is the module's default_event_wait (seconds), shown
// in the "did not receive" messages.
const beaconsDefaultWait = int64(60)

// beaconsFunctions is Salt's beacons execution module.
func beaconsFunctions() []modules.Function {
	kw := func(ps ...modules.Param) modules.Spec { return modules.Spec{Params: ps, Kwargs: true} }
	return []modules.Function{
		{Name: "beacons.list", Doc: "List the beacons configured on the minion (YAML text unless return_yaml\nis False).\n\nCLI Example:\n\n    salt '*' beacons.list",
			Spec: kw(opt("return_yaml", true), opt("include_pillar", true), opt("include_opts", true)), Fn: beaconsList},
		{Name: "beacons.list_available", Doc: "List the beacon modules available on the minion.\n\nCLI Example:\n\n    salt '*' beacons.list_available",
			Spec: kw(opt("return_yaml", true)), Fn: beaconsListAvailable},
		{Name: "beacons.add", Doc: "Add a beacon to the minion configuration.\n\nCLI Example:\n\n    salt '*' beacons.add load \"[{'averages': {'1m': [0, 2], '5m': [0, 2], '15m': [0, 2]}}]\"",
			Spec: kw(req("name"), req("beacon_data")), Fn: beaconsAdd},
		{Name: "beacons.modify", Doc: "Change the configuration of a beacon.\n\nCLI Example:\n\n    salt '*' beacons.modify load \"[{'averages': {'1m': [0, 4], '5m': [0, 2], '15m': [0, 2]}}]\"",
			Spec: kw(req("name"), req("beacon_data")), Fn: beaconsModify},
		{Name: "beacons.delete", Doc: "Delete a beacon from the minion configuration.\n\nCLI Example:\n\n    salt '*' beacons.delete load",
			Spec: kw(req("name")), Fn: beaconsDelete},
		{Name: "beacons.save", Doc: "Save the minion's beacons to <config dir>/minion.d/beacons.conf.\n\nCLI Example:\n\n    salt '*' beacons.save",
			Spec: kw(), Fn: beaconsSave},
		{Name: "beacons.enable", Doc: "Enable all beacons on the minion.\n\nCLI Example:\n\n    salt '*' beacons.enable",
			Spec: kw(), Fn: func(ctx context.Context, c *modules.Call) (any, error) { return beaconsSwitchAll(ctx, c, true) }},
		{Name: "beacons.disable", Doc: "Disable all beacons on the minion.\n\nCLI Example:\n\n    salt '*' beacons.disable",
			Spec: kw(), Fn: func(ctx context.Context, c *modules.Call) (any, error) { return beaconsSwitchAll(ctx, c, false) }},
		{Name: "beacons.enable_beacon", Doc: "Enable one beacon on the minion.\n\nCLI Example:\n\n    salt '*' beacons.enable_beacon load",
			Spec: kw(req("name")), Fn: func(ctx context.Context, c *modules.Call) (any, error) { return beaconsSwitchOne(ctx, c, true) }},
		{Name: "beacons.disable_beacon", Doc: "Disable one beacon on the minion.\n\nCLI Example:\n\n    salt '*' beacons.disable_beacon load",
			Spec: kw(req("name")), Fn: func(ctx context.Context, c *modules.Call) (any, error) { return beaconsSwitchOne(ctx, c, false) }},
		{Name: "beacons.reset", Doc: "Reset the minion's beacon configuration.\n\nCLI Example:\n\n    salt '*' beacons.reset",
			Spec: kw(), Fn: beaconsReset},
	}
}

// beaconsKwarg returns a **kwargs value.
func beaconsKwarg(c *modules.Call, key string) (any, bool) {
	if c.Args.Kwargs == nil {
		return nil, false
	}
	return c.Args.Kwargs.Get(key)
}

// beaconsTest is kwargs.get("test").
func beaconsTest(c *modules.Call) bool {
	v, _ := beaconsKwarg(c, "test")
	return payload.Truthy(v)
}

// beaconsTimeout is kwargs.get("timeout", default_event_wait) as text.
func beaconsTimeout(c *modules.Call) string {
	if v, ok := beaconsKwarg(c, "timeout"); ok {
		return pyfmt.Str(v)
	}
	return fmt.Sprint(beaconsDefaultWait)
}

// beaconsManage sends one manage_beacons request. ok is false when the
// minion has no beacon manager (Salt's KeyError on event.fire); reply is
// nil when the manager gave no answer.
func beaconsManage(ctx context.Context, c *modules.Call, req *payload.Map) (reply *payload.Map, ok bool) {
	mgr, ok := modules.Service[BeaconManager](c.Env, beaconsServiceName)
	if !ok || mgr == nil {
		return nil, false
	}
	reply, err := mgr.ManageBeacons(ctx, req)
	if err != nil {
		c.Log().Warn("beacon manager gave no answer", "func", req.Str("func"), "err", err)
		return nil, true
	}
	return reply, true
}

func beaconsFail(comment string) *payload.Map {
	return payload.NewMap("result", false, "comment", comment)
}

// beaconsOrderedKwarg is the keyword argument gsalt's beacon states give
// beacons.add and beacons.modify: the beacon data comes from an SLS,
// whose mappings Salt holds as OrderedDicts, so modify's diff prints the
// new data's mappings as OrderedDict([(k, v), ...]) (the current data
// comes back from the minion's event bus as plain dicts).
const beaconsOrderedKwarg = "__ordered__"

// beaconsListRaw is list_(return_yaml=False): the beacons (nil when the
// manager gave no answer), or fail when there is no manager.
func beaconsListRaw(ctx context.Context, c *modules.Call, includePillar, includeOpts any) (v any, fail *payload.Map) {
	reply, ok := beaconsManage(ctx, c, payload.NewMap("func", "list", "include_pillar", includePillar, "include_opts", includeOpts))
	if !ok {
		return nil, beaconsFail("Event module not available. Beacon list failed.")
	}
	if reply != nil && reply.Bool("complete") {
		v, _ = reply.Get("beacons")
	}
	return v, nil
}

// beaconsListed is what Salt's functions test names against: the
// beacons, or the failure dict.
func beaconsListed(ctx context.Context, c *modules.Call) any {
	v, fail := beaconsListRaw(ctx, c, true, true)
	if fail != nil {
		return fail
	}
	return v
}

func beaconsYAML(v any) (any, error) {
	s, err := render.YAMLDump(payload.NewMap("beacons", v), false)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	return s, nil
}

func beaconsList(ctx context.Context, c *modules.Call) (any, error) {
	v, fail := beaconsListRaw(ctx, c, c.Args.Get("include_pillar"), c.Args.Get("include_opts"))
	if fail != nil {
		return fail, nil
	}
	if payload.Truthy(c.Args.Get("return_yaml")) {
		return beaconsYAML(v)
	}
	return v, nil
}

// beaconsAvailableRaw is list_available(return_yaml=False).
func beaconsAvailableRaw(ctx context.Context, c *modules.Call) (any, *payload.Map) {
	reply, ok := beaconsManage(ctx, c, payload.NewMap("func", "list_available"))
	if !ok {
		return nil, beaconsFail("Event module not available. Beacon list_available failed.")
	}
	var v any
	if reply != nil && reply.Bool("complete") {
		v, _ = reply.Get("beacons")
	}
	if !payload.Truthy(v) {
		return payload.NewMap("beacons", &payload.Map{}), nil
	}
	return v, nil
}

func beaconsListAvailable(ctx context.Context, c *modules.Call) (any, error) {
	v, fail := beaconsAvailableRaw(ctx, c)
	if fail != nil {
		return fail, nil
	}
	if m, ok := v.(*payload.Map); ok && m.Len() == 1 && m.Has("beacons") {
		return m, nil
	}
	if payload.Truthy(c.Args.Get("return_yaml")) {
		return beaconsYAML(v)
	}
	return v, nil
}

// beaconsValidate asks the manager to validate beacon_data. done is false
// when the function must return ret as it is (or fail with err).
func beaconsValidate(ctx context.Context, c *modules.Call, name, data any, ret *payload.Map, verb, failMsg string) (done bool, err error) {
	reply, ok := beaconsManage(ctx, c, payload.NewMap("name", name, "beacon_data", data, "func", "validate_beacon"))
	if !ok {
		ret.Set("result", false)
		ret.Set("comment", failMsg)
		return false, nil
	}
	if reply == nil {
		// Salt indexes the missing completion event: a TypeError.
		return false, errors.New("TypeError: 'NoneType' object is not subscriptable")
	}
	if !reply.Bool("valid") {
		ret.Set("result", false)
		ret.Set("comment", fmt.Sprintf("Beacon %s configuration invalid, not %s.\n%s", pyfmt.Str(name), verb, pyfmt.Str(configValueOf(reply, "vcomment"))))
		return false, nil
	}
	return true, nil
}

func configValueOf(m *payload.Map, key string) any {
	v, _ := m.Get(key)
	return v
}

func beaconsAdd(ctx context.Context, c *modules.Call) (any, error) {
	name, data := c.Args.Get("name"), c.Args.Get("beacon_data")
	sname := pyfmt.Str(name)
	ret := payload.NewMap("comment", fmt.Sprintf("Failed to add beacon %s.", sname), "result", false)
	if pyIn(name, beaconsListed(ctx, c)) {
		ret.Set("comment", fmt.Sprintf("Beacon %s is already configured.", sname))
		ret.Set("result", true)
		return ret, nil
	}
	module := name
	if items, ok := data.([]any); ok {
		for _, it := range items {
			if m, ok := it.(*payload.Map); ok && m.Has("beacon_module") {
				module, _ = m.Get("beacon_module")
				break
			}
		}
	}
	avail, fail := beaconsAvailableRaw(ctx, c)
	if fail != nil {
		avail = fail
	}
	if !pyIn(module, avail) {
		ret.Set("comment", fmt.Sprintf("Beacon \"%s\" is not available.", pyfmt.Str(module)))
		return ret, nil
	}
	if beaconsTest(c) {
		ret.Set("result", true)
		ret.Set("comment", fmt.Sprintf("Beacon: %s would be added.", sname))
		return ret, nil
	}
	if ok, err := beaconsValidate(ctx, c, name, data, ret, "adding", "Event module not available. Beacon validation failed."); !ok {
		if err != nil {
			return nil, err
		}
		return ret, nil
	}
	reply, ok := beaconsManage(ctx, c, payload.NewMap("name", name, "beacon_data", data, "func", "add"))
	switch {
	case !ok:
		ret.Set("result", false)
		ret.Set("comment", "Event module not available. Beacon add failed.")
	case reply != nil && reply.Bool("complete"):
		b := reply.Map("beacons")
		if cur, has := b.GetKey(name); has && pyAll(data, cur) {
			ret.Set("result", true)
			ret.Set("comment", fmt.Sprintf("Added beacon: %s.", sname))
		}
	case reply != nil:
		ret.Set("result", false)
		ret.Set("comment", configValueOf(reply, "comment"))
	default:
		ret.Set("result", false)
		ret.Set("comment", fmt.Sprintf("Did not receive the beacon add complete event before the timeout of %ss", beaconsTimeout(c)))
	}
	return ret, nil
}

// pyAll is all(item in current for item in data).
func pyAll(data, current any) bool {
	var items []any
	switch d := data.(type) {
	case []any:
		items = d
	case *payload.Map:
		for _, it := range d.Items() {
			items = append(items, it.Key)
		}
	default:
		return false
	}
	for _, it := range items {
		if !pyIn(it, current) {
			return false
		}
	}
	return true
}

// beaconsDiffLines are modify's "key:value" lines of a list of dicts.
func beaconsDiffLines(v any, ordered bool) []string {
	var out []string
	items, _ := v.([]any)
	for _, it := range items {
		m, ok := it.(*payload.Map)
		if !ok {
			continue
		}
		for _, kv := range m.Items() {
			val := pyfmt.Str(kv.Value)
			if _, isStr := kv.Value.(string); ordered && !isStr {
				val = beaconsOrderedRepr(kv.Value)
			}
			out = append(out, pyfmt.Str(kv.Key)+":"+val+"\n")
		}
	}
	return out
}

// beaconsOrdered reports whether the call carries the beacon states'
// __ordered__ keyword.
func beaconsOrdered(c *modules.Call) bool {
	v, _ := beaconsKwarg(c, beaconsOrderedKwarg)
	return payload.Truthy(v)
}

// beaconsOrderedRepr is repr() of SLS data as Salt holds it: every
// mapping an OrderedDict, OrderedDict([(k, v), ...]).
func beaconsOrderedRepr(v any) string {
	switch x := v.(type) {
	case *payload.Map:
		if x.Len() == 0 {
			return "OrderedDict()"
		}
		parts := make([]string, 0, x.Len())
		for _, it := range x.Items() {
			parts = append(parts, "("+pyfmt.Repr(it.Key)+", "+beaconsOrderedRepr(it.Value)+")")
		}
		return "OrderedDict([" + strings.Join(parts, ", ") + "])"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = beaconsOrderedRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return pyfmt.Repr(v)
}

func beaconsModify(ctx context.Context, c *modules.Call) (any, error) {
	name, data := c.Args.Get("name"), c.Args.Get("beacon_data")
	sname := pyfmt.Str(name)
	ret := payload.NewMap("comment", "", "result", true)
	current := beaconsListed(ctx, c)
	if !pyIn(name, current) {
		ret.Set("comment", fmt.Sprintf("Beacon %s is not configured.", sname))
		return ret, nil
	}
	if beaconsTest(c) {
		ret.Set("result", true)
		ret.Set("comment", fmt.Sprintf("Beacon: %s would be modified.", sname))
		return ret, nil
	}
	if ok, err := beaconsValidate(ctx, c, name, data, ret, "modifying", "Event module not available. Beacon modify failed."); !ok {
		if err != nil {
			return nil, err
		}
		return ret, nil
	}
	cm, _ := current.(*payload.Map)
	cur, _ := cm.GetKey(name)
	if py.Equal(data, cur) {
		ret.Set("comment", fmt.Sprintf("Job %s in correct state", sname))
		return ret, nil
	}
	diff := strings.Join(beaconsUnifiedDiff(beaconsDiffLines(cur, false), beaconsDiffLines(data, beaconsOrdered(c))), "")
	ret.Set("changes", payload.NewMap("diff", diff))
	reply, ok := beaconsManage(ctx, c, payload.NewMap("name", name, "beacon_data", data, "func", "modify"))
	switch {
	case !ok:
		ret.Set("result", false)
		ret.Set("comment", "Event module not available. Beacon modify failed.")
	case reply != nil && reply.Bool("complete"):
		if v, has := reply.Map("beacons").GetKey(name); has && py.Equal(v, data) {
			ret.Set("result", true)
			ret.Set("comment", fmt.Sprintf("Modified beacon: %s.", sname))
		}
	case reply != nil:
		ret.Set("result", false)
		ret.Set("comment", configValueOf(reply, "comment"))
	default:
		ret.Set("result", false)
		ret.Set("comment", fmt.Sprintf("Did not receive the beacon modify complete  event before the timeout of %ss", beaconsTimeout(c)))
	}
	return ret, nil
}

func beaconsDelete(ctx context.Context, c *modules.Call) (any, error) {
	name := c.Args.Get("name")
	sname := pyfmt.Str(name)
	ret := payload.NewMap("comment", fmt.Sprintf("Failed to delete beacon %s.", sname), "result", false)
	if beaconsTest(c) {
		ret.Set("result", true)
		ret.Set("comment", fmt.Sprintf("Beacon: %s would be deleted.", sname))
		return ret, nil
	}
	reply, ok := beaconsManage(ctx, c, payload.NewMap("name", name, "func", "delete"))
	switch {
	case !ok:
		ret.Set("result", false)
		ret.Set("comment", "Event module not available. Beacon delete failed.")
	case reply != nil && reply.Bool("complete"):
		if !reply.Map("beacons").Has(sname) {
			ret.Set("result", true)
			ret.Set("comment", fmt.Sprintf("Deleted beacon: %s.", sname))
		}
	case reply != nil:
		ret.Set("result", false)
		ret.Set("comment", configValueOf(reply, "comment"))
	default:
		ret.Set("result", false)
		ret.Set("comment", fmt.Sprintf("Did not receive the beacon delete complete event before the timeout of %ss", beaconsTimeout(c)))
	}
	return ret, nil
}

// beaconsConfFile is the file save writes: dirname(conf_file) joined with
// dirname(default_include) and beacons.conf (os.path.join rules: an
// absolute part restarts the path).
func beaconsConfFile(c *modules.Call) string {
	conf, inc := "/etc/salt/minion", "minion.d/*.conf"
	if c.Env != nil && c.Env.Opts != nil {
		if v, ok := c.Env.Opts.Get("conf_file"); ok && v != nil {
			conf = payload.Text(v)
		}
		if v, ok := c.Env.Opts.Get("default_include"); ok && v != nil {
			inc = payload.Text(v)
		}
	}
	out := pyDirname(conf)
	for _, part := range []string{pyDirname(inc), "beacons.conf"} {
		switch {
		case strings.HasPrefix(part, "/"):
			out = part
		case out == "" || strings.HasSuffix(out, "/"):
			out += part
		default:
			out += "/" + part
		}
	}
	return out
}

// pyDirname is os.path.dirname.
func pyDirname(p string) string {
	i := strings.LastIndexByte(p, '/') + 1
	head := p[:i]
	if head != "" && strings.Trim(head, "/") != "" {
		head = strings.TrimRight(head, "/")
	}
	return head
}

func beaconsSave(ctx context.Context, c *modules.Call) (any, error) {
	ret := payload.NewMap("comment", []any{}, "result", true)
	b, fail := beaconsListRaw(ctx, c, false, true)
	if fail != nil {
		b = fail
	}
	sfn := beaconsConfFile(c)
	text := ""
	if payload.Truthy(b) {
		y, err := beaconsYAML(b)
		if err != nil {
			return nil, err
		}
		text = y.(string)
	}
	if err := os.WriteFile(sfn, []byte(text), 0o644); err != nil {
		c.Log().Warn("cannot write the beacons file", "path", sfn, "err", err)
		ret.Set("comment", fmt.Sprintf("Unable to write to beacons file at %s. Check permissions.", sfn))
		ret.Set("result", false)
		return ret, nil
	}
	ret.Set("comment", fmt.Sprintf("Beacons saved to %s.", sfn))
	return ret, nil
}

// beaconsSwitchAll is beacons.enable / beacons.disable.
func beaconsSwitchAll(ctx context.Context, c *modules.Call, enable bool) (any, error) {
	word, fn, noun := "enable", "enable", "enabled"
	if !enable {
		word, fn, noun = "disable", "disable", "disabled"
	}
	ret := payload.NewMap("comment", []any{}, "result", true)
	if beaconsTest(c) {
		ret.Set("comment", fmt.Sprintf("Beacons would be %s.", noun))
		return ret, nil
	}
	reply, ok := beaconsManage(ctx, c, payload.NewMap("func", fn))
	if !ok {
		ret.Set("result", false)
		ret.Set("comment", fmt.Sprintf("Event module not available. Beacons %s job failed.", word))
		return ret, nil
	}
	if reply != nil && reply.Bool("complete") {
		b := reply.Map("beacons")
		v, has := b.Get("enabled")
		if has && payload.Truthy(v) == enable {
			ret.Set("result", true)
			ret.Set("comment", fmt.Sprintf("%s beacons on minion.", capitalize(noun)))
		} else {
			ret.Set("result", false)
			ret.Set("comment", fmt.Sprintf("Failed to %s beacons on minion.", word))
		}
	}
	return ret, nil
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// beaconsSwitchOne is beacons.enable_beacon / beacons.disable_beacon.
func beaconsSwitchOne(ctx context.Context, c *modules.Call, enable bool) (any, error) {
	name := c.Args.Get("name")
	sname := pyfmt.Str(name)
	ret := payload.NewMap("comment", []any{}, "result", true)
	if !payload.Truthy(name) {
		ret.Set("comment", "Beacon name is required.")
		ret.Set("result", false)
		return ret, nil
	}
	fn, noun := "enable_beacon", "enabled"
	if !enable {
		fn, noun = "disable_beacon", "disabled"
	}
	if beaconsTest(c) {
		if enable {
			ret.Set("comment", fmt.Sprintf("Beacon %s would be enabled.", sname))
		} else {
			ret.Set("comment", "Beacons would be disabled.")
		}
		return ret, nil
	}
	if !pyIn(name, beaconsListed(ctx, c)) {
		ret.Set("comment", fmt.Sprintf("Beacon %s is not currently configured.", sname))
		ret.Set("result", false)
		return ret, nil
	}
	reply, ok := beaconsManage(ctx, c, payload.NewMap("func", fn, "name", name))
	switch {
	case !ok:
		ret.Set("result", false)
		ret.Set("comment", fmt.Sprintf("Event module not available. Beacon %s job failed.", fn))
	case reply != nil && reply.Bool("complete"):
		cur, _ := reply.Map("beacons").GetKey(name)
		cfg := beaconConfigDict(cur)
		v, has := cfg.Get("enabled")
		switch {
		case has && payload.Truthy(v) == enable:
			ret.Set("result", true)
			ret.Set("comment", fmt.Sprintf("%s beacon %s on minion.", capitalize(noun), sname))
		case enable:
			ret.Set("result", false)
			ret.Set("comment", fmt.Sprintf("Failed to enable beacon %s on minion.", sname))
		default:
			ret.Set("result", false)
			ret.Set("comment", "Failed to disable beacon on minion.")
		}
	case reply != nil:
		ret.Set("result", false)
		ret.Set("comment", configValueOf(reply, "comment"))
	default:
		ret.Set("result", false)
		ret.Set("comment", fmt.Sprintf("Did not receive the beacon %s complete event before the timeout of %ss", noun, beaconsTimeout(c)))
	}
	return ret, nil
}

// beaconConfigDict is _get_beacon_config_dict: a list configuration's
// maps merged, or the dict itself.
func beaconConfigDict(v any) *payload.Map {
	out := &payload.Map{}
	switch x := v.(type) {
	case []any:
		for _, it := range x {
			if m, ok := it.(*payload.Map); ok {
				for _, kv := range m.Items() {
					out.SetKey(kv.Key, kv.Value)
				}
			}
		}
	case *payload.Map:
		return x
	}
	return out
}

func beaconsReset(ctx context.Context, c *modules.Call) (any, error) {
	ret := payload.NewMap("comment", []any{}, "result", true)
	if beaconsTest(c) {
		ret.Set("comment", "Beacons would be reset.")
		return ret, nil
	}
	reply, ok := beaconsManage(ctx, c, payload.NewMap("func", "reset"))
	switch {
	case !ok:
		ret.Set("result", false)
		ret.Set("comment", "Event module not available. Beacon reset job failed.")
	case reply != nil && reply.Bool("complete"):
		ret.Set("result", true)
		ret.Set("comment", "Beacon configuration reset.")
	case reply != nil:
		ret.Set("result", false)
		ret.Set("comment", configValueOf(reply, "comment"))
	default:
		ret.Set("result", false)
		ret.Set("comment", fmt.Sprintf("Did not receive the beacon reset event before the timeout of %ss", beaconsTimeout(c)))
	}
	return ret, nil
}

// pyIn is Python's "item in container" for dicts (keys), lists and
// strings (substring); None and other types contain nothing.
func pyIn(item, container any) bool {
	switch c := container.(type) {
	case *payload.Map:
		for _, it := range c.Items() {
			if py.Equal(it.Key, item) {
				return true
			}
		}
	case []any:
		for _, e := range c {
			if py.Equal(e, item) {
				return true
			}
		}
	case string:
		s, ok := item.(string)
		return ok && strings.Contains(c, s)
	}
	return false
}

// beaconsUnifiedDiff is difflib.unified_diff(a, b) with Python's defaults
// (n=3, empty file names, "\n" line terminators).
func beaconsUnifiedDiff(a, b []string) []string {
	m := difflib.NewMatcher(a, b)
	var out []string
	for i, g := range m.GetGroupedOpCodes(3) {
		if i == 0 {
			out = append(out, "--- \n", "+++ \n")
		}
		first, last := g[0], g[len(g)-1]
		out = append(out, fmt.Sprintf("@@ -%s +%s @@\n", beaconsDiffRange(first.I1, last.I2), beaconsDiffRange(first.J1, last.J2)))
		for _, op := range g {
			if op.Tag == 'e' {
				for _, l := range a[op.I1:op.I2] {
					out = append(out, " "+l)
				}
				continue
			}
			if op.Tag == 'r' || op.Tag == 'd' {
				for _, l := range a[op.I1:op.I2] {
					out = append(out, "-"+l)
				}
			}
			if op.Tag == 'r' || op.Tag == 'i' {
				for _, l := range b[op.J1:op.J2] {
					out = append(out, "+"+l)
				}
			}
		}
	}
	return out
}

// beaconsDiffRange is difflib's _format_range_unified.
func beaconsDiffRange(start, stop int) string {
	beginning, length := start+1, stop-start
	if length == 1 {
		return fmt.Sprint(beginning)
	}
	if length == 0 {
		beginning--
	}
	return fmt.Sprintf("%d,%d", beginning, length)
}
