package pillar

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"syscall"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/payload"
)

// ErrExtPillar is the error class of an ext_pillar module failure; Salt
// reports it in _errors as "Failed to load ext_pillar NAME: TEXT".
var ErrExtPillar = errors.New("ext_pillar failed")

// ExtParam is one parameter of an ext_pillar function after Salt's
// (minion_id, pillar) pair, in Python signature order.
type ExtParam struct {
	// Name is the Python parameter name.
	Name string
	// Required marks a parameter without a default.
	Required bool
	// Default is the value of an omitted optional parameter.
	Default any
}

// ExtModule is one ext_pillar module (Salt's salt/pillar/NAME.py).
type ExtModule struct {
	// Name is the ext_pillar key (the module's virtual name).
	Name string
	// Params is the signature after (minion_id, pillar).
	Params []ExtParam
	// Variadic marks a module taking (*args, **kwargs) after
	// (minion_id, pillar) instead of Params: its ExtCall.Args hold
	// "*args" ([]any) and "**kwargs" (*payload.Map, never nil).
	Variadic bool
	// Available is the module's __virtual__ (nil: always loaded).
	Available func() bool
	// Fn computes the module's data. An error is a Python exception
	// escaping ext_pillar(): its text lands in _errors.
	Fn func(ctx context.Context, c *ExtCall) (any, error)
}

// ExtCall is one call of an ext_pillar module.
type ExtCall struct {
	// MinionID is the minion whose pillar is compiled.
	MinionID string
	// Pillar is the pillar compiled so far; modules may change it, as
	// Salt passes its dict.
	Pillar *payload.Map
	// Args holds every parameter by name (bound from the configuration).
	Args map[string]any
	// Log receives the module's records.
	Log *slog.Logger

	r *run
}

// Opts returns the compile's options (Salt's __opts__ of ext_pillar
// modules: the master options with pillarenv/saltenv of the compile).
func (c *ExtCall) Opts() *payload.Map { return c.r.opts }

// Str returns a parameter as text ("" for None).
func (c *ExtCall) Str(name string) string {
	v := c.Args[name]
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	return pyfmt.Str(v)
}

// ExtRegistry holds ext_pillar modules by name. It is read-only after
// construction and safe for concurrent use.
type ExtRegistry struct {
	m map[string]ExtModule
}

// NewExtRegistry returns a registry of mods.
func NewExtRegistry(mods ...ExtModule) *ExtRegistry {
	r := &ExtRegistry{m: map[string]ExtModule{}}
	for _, m := range mods {
		r.m[m.Name] = m
	}
	return r
}

// DefaultExt returns gsalt's ext_pillar modules: cmd_json, cmd_yaml,
// cmd_yamlex, file_tree, csv, nodegroups, libvirt, virtkey, stack,
// sqlite3, postgres and git.
func DefaultExt() *ExtRegistry {
	return NewExtRegistry(
		extCmdJSON(), extCmdYAML(), extCmdYAMLEx(), extFileTree(), extCSV(),
		extNodegroups(), extLibvirt(), extVirtkey(), extStack(), extSQLite3(), extPostgres(), extGit(),
	)
}

// Lookup returns the module named name when it is loaded (its
// __virtual__ passes).
func (r *ExtRegistry) Lookup(name string) (ExtModule, bool) {
	if r == nil {
		return ExtModule{}, false
	}
	m, ok := r.m[name]
	if !ok || (m.Available != nil && !m.Available()) {
		return ExtModule{}, false
	}
	return m, true
}

// Names lists the registered modules, sorted.
func (r *ExtRegistry) Names() []string {
	var out []string
	for n := range r.m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// bindExt binds an ext_pillar configuration value to mod's parameters as
// Salt's _external_pillar_data calls the function: a dict as keyword
// arguments, a list as positional arguments, anything else as the one
// positional argument after (minion_id, pillar). Errors carry Python's
// TypeError texts.
func bindExt(mod ExtModule, val any) (map[string]any, error) {
	args := map[string]any{}
	set := map[string]bool{}
	var pos []any
	var kw *payload.Map
	switch v := val.(type) {
	case *payload.Map:
		kw = v
	case []any:
		pos = v
	default:
		pos = []any{val}
	}
	if mod.Variadic {
		if kw == nil {
			kw = payload.NewMap()
		}
		return map[string]any{"*args": pos, "**kwargs": kw}, nil
	}
	if len(pos) > len(mod.Params) {
		req := 2
		for _, p := range mod.Params {
			if p.Required {
				req++
			}
		}
		total := len(mod.Params) + 2
		takes := fmt.Sprintf("%d", total)
		if req != total {
			takes = fmt.Sprintf("from %d to %d", req, total)
		}
		were := "were"
		if len(pos)+2 == 1 {
			were = "was"
		}
		return nil, fmt.Errorf("ext_pillar() takes %s positional arguments but %d %s given", takes, len(pos)+2, were)
	}
	for i, v := range pos {
		args[mod.Params[i].Name] = v
		set[mod.Params[i].Name] = true
	}
	if kw != nil {
		for _, it := range kw.Items() {
			name := payload.KeyString(it.Key)
			known := false
			for _, p := range mod.Params {
				if p.Name == name {
					known = true
				}
			}
			if !known {
				return nil, fmt.Errorf("ext_pillar() got an unexpected keyword argument '%s'", name)
			}
			if set[name] {
				return nil, fmt.Errorf("ext_pillar() got multiple values for argument '%s'", name)
			}
			args[name] = it.Value
			set[name] = true
		}
	}
	var missing []string
	for _, p := range mod.Params {
		if set[p.Name] {
			continue
		}
		if p.Required {
			missing = append(missing, "'"+p.Name+"'")
			continue
		}
		args[p.Name] = p.Default
	}
	if len(missing) > 0 {
		s := "s"
		if len(missing) == 1 {
			s = ""
		}
		var list string
		switch len(missing) {
		case 1:
			list = missing[0]
		case 2:
			list = missing[0] + " and " + missing[1]
		default:
			list = strings.Join(missing[:len(missing)-1], ", ") + ", and " + missing[len(missing)-1]
		}
		return nil, fmt.Errorf("ext_pillar() missing %d required positional argument%s: %s", len(missing), s, list)
	}
	return args, nil
}

// extPillarWith is Pillar.ext_pillar: the override is merged in, then
// every configured ext_pillar entry runs in order and its result is
// merged with pillar_source_merging_strategy. Unknown interfaces are
// logged and skipped; a module that fails puts Salt's "Failed to load
// ext_pillar" text in the errors.
func (r *run) extPillarWith(ctx context.Context, pillar *payload.Map, errs []string) (*payload.Map, []string, error) {
	ext := r.extConfig()
	if ext == nil {
		return pillar, errs, nil
	}
	list, ok := ext.([]any)
	if !ok {
		msg := `The "ext_pillar" option is malformed`
		r.log.Error(msg)
		return pillar, append(errs, msg), nil
	}
	if r.override.Len() > 0 {
		var err error
		if pillar, err = r.merge(pillar, r.override); err != nil {
			return nil, nil, err
		}
	}
	for _, entry := range list {
		m, ok := entry.(*payload.Map)
		if !ok {
			msg := `The "ext_pillar" option is malformed`
			r.log.Error(msg)
			return payload.NewMap(), append(errs, msg), nil
		}
		if m.Len() == 0 {
			return nil, nil, fmt.Errorf("%w: an empty ext_pillar entry", ErrMerge)
		}
		if contains(r.c.cfg.ExcludeExtPillar, payload.KeyString(m.Items()[0].Key)) {
			continue
		}
		var data any
		for _, it := range m.Items() {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			key := payload.KeyString(it.Key)
			mod, ok := r.c.ext.Lookup(key)
			if !ok {
				r.log.Error(fmt.Sprintf("Specified ext_pillar interface %s is unavailable", key))
				continue
			}
			out, err := r.callExt(ctx, mod, pillar, it.Value)
			if err != nil {
				msg := fmt.Sprintf("Failed to load ext_pillar %s: %s", key, errorText(err))
				errs = append(errs, msg)
				r.log.Error(fmt.Sprintf("Exception caught loading ext_pillar '%s':\n%s", key, errorText(err)))
				continue
			}
			data = out
		}
		if payload.Truthy(data) {
			merged, err := mergeAny(pillar, data, r.c.cfg.MergeStrategy, r.c.cfg.Renderer, r.c.cfg.MergeLists, r.log, r.marks)
			if err != nil {
				return nil, nil, err
			}
			pm, ok := merged.(*payload.Map)
			if !ok {
				return nil, nil, fmt.Errorf("%w: ext_pillar gave %s", ErrMerge, payload.TypeName(data))
			}
			pillar = pm
		}
	}
	return pillar, errs, nil
}

// errorText is the text of a module error without gsalt's sentinel
// prefix (Salt shows str(exc)).
func errorText(err error) string {
	s := err.Error()
	return strings.TrimPrefix(s, ErrExtPillar.Error()+": ")
}

// callExt binds and runs one module.
func (r *run) callExt(ctx context.Context, mod ExtModule, pillar *payload.Map, val any) (any, error) {
	args, err := bindExt(mod, val)
	if err != nil {
		return nil, err
	}
	c := &ExtCall{MinionID: r.id, Pillar: pillar, Args: args, Log: r.log, r: r}
	return mod.Fn(ctx, c)
}

// extPillar is extPillarWith for ext_pillar_first.
func (r *run) extPillar(ctx context.Context, pillar *payload.Map) (*payload.Map, []string, error) {
	return r.extPillarWith(ctx, pillar, nil)
}

// extConfig is opts["ext_pillar"] of the compile: the configured list
// plus the request's on-demand ext_pillar when on_demand_ext_pillar
// allows it (Pillar.__gen_opts).
func (r *run) extConfig() any {
	ext := r.c.cfg.ExtPillar
	if r.onDemand == nil || !r.validOnDemand() {
		return ext
	}
	if l, ok := ext.([]any); ok {
		return append(append([]any(nil), l...), r.onDemand)
	}
	if ext == nil {
		return []any{r.onDemand}
	}
	// Salt appends to a malformed non-list value and fails; keep it
	// malformed so the compile reports it.
	return ext
}

// validOnDemand is Pillar.__valid_on_demand_ext_pillar.
func (r *run) validOnDemand() bool {
	m, ok := r.onDemand.(*payload.Map)
	if !ok {
		r.log.Error(fmt.Sprintf("On-demand pillar %s is not formatted as a dictionary", pyfmt.Repr(r.onDemand)))
		return false
	}
	allowed := r.c.cfg.OnDemandExtPillar
	if allowed == nil {
		r.log.Error("The 'on_demand_ext_pillar' configuration option is malformed, it should be a list of ext_pillar module names")
		return false
	}
	var invalid []string
	for _, it := range m.Items() {
		k := payload.KeyString(it.Key)
		if !contains(allowed, k) {
			invalid = append(invalid, k)
		}
	}
	if len(invalid) > 0 {
		sort.Strings(invalid)
		r.log.Error(fmt.Sprintf("The following ext_pillar modules are not allowed for on-demand pillar data: %s. Valid on-demand ext_pillar modules are: %s. The valid modules can be adjusted by setting the 'on_demand_ext_pillar' config option.",
			strings.Join(invalid, ", "), strings.Join(allowed, ", ")))
		return false
	}
	return true
}

// emptyResult is the {} a module returns when it has nothing.
func emptyResult() *payload.Map { return payload.NewMap() }

// errnoOf is the errno of an OS error (0 when it has none).
func errnoOf(err error) int {
	var en syscall.Errno
	if errors.As(err, &en) {
		return int(en)
	}
	return 0
}

// pyStrerror is os.strerror's text of an OS error.
func pyStrerror(err error) string {
	s := err.Error()
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
