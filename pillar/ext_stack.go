package pillar

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/render/jinja"
	"github.com/gsalt/gsalt/target"
	"github.com/gsalt/gsalt/wire/payload"
)

// maxStackFile bounds one stack config or YAML template read.
const maxStackFile = 16 << 20

// maxStackDepth bounds the nesting the stack merge descends.
const maxStackDepth = 256

// stackStrategies are the merge strategies a "__" key may name, in
// Salt's order (its error text prints the tuple).
var stackStrategies = []string{"overwrite", "merge-first", "merge-last", "remove"}

const stackStrategiesText = "('overwrite', 'merge-first', 'merge-last', 'remove')"

// extStack is salt/pillar/stack.py (PillarStack): every stack config file
// (the positional arguments, plus the files that the keyword arguments
// select by a pillar, grains or opts value) is a Jinja template listing
// YAML file globs relative to its directory; each YAML file, itself a
// Jinja template seeing the stack built so far, is merged into the stack
// with the strategy its "__" keys name (merge-last by default,
// merge-first, overwrite, remove).
func extStack() ExtModule {
	return ExtModule{Name: "stack", Variadic: true, Fn: stackPillar}
}

func stackPillar(ctx context.Context, c *ExtCall) (any, error) {
	opts := c.Opts()
	pillarenv := "base"
	for _, k := range []string{"pillarenv", "saltenv"} {
		if v, _ := opts.Get(k); payload.Truthy(v) {
			pillarenv = pyfmt.Str(v)
			break
		}
	}
	cfgs, _ := c.Args["*args"].([]any)
	cfgs = append([]any(nil), cfgs...)
	kwargs, _ := c.Args["**kwargs"].(*payload.Map)
	grains := c.r.grains
	sources := map[string]any{"pillar": c.Pillar, "grains": grains, "opts": opts}
	for _, it := range kwargs.Items() {
		key := payload.KeyString(it.Key)
		kind, matcher, ok := strings.Cut(key, ":")
		if !ok {
			return nil, fmt.Errorf("%w: not enough values to unpack (expected 2, got 1)", ErrExtPillar)
		}
		matchs := it.Value
		m, isMap := matchs.(*payload.Map)
		if isMap && m.Has("__env__") {
			n := payload.NewMap()
			for _, e := range m.Items() {
				k := e.Key
				if k == "__env__" {
					k = pillarenv
				}
				n.SetKey(k, e.Value)
			}
			m = n
		}
		data, known := sources[kind]
		if !known {
			return nil, fmt.Errorf("%w: Unknown traverse option \"%s\", should be one of dict_keys(['pillar', 'grains', 'opts'])", ErrExtPillar, kind)
		}
		if !isMap {
			return nil, fmt.Errorf("%w: '%s' object has no attribute 'get'", ErrExtPillar, py.TypeName(matchs))
		}
		val, _ := target.Traverse(data, matcher, ":")
		switch val.(type) {
		case *payload.Map, []any:
			return nil, fmt.Errorf("%w: unhashable type: '%s'", ErrExtPillar, py.TypeName(val))
		}
		sel, found := m.GetKey(val)
		if !found {
			continue // matchs.get(value, []) adds nothing
		}
		list, isList := sel.([]any)
		if !isList {
			list = []any{sel}
		}
		for _, f := range list {
			s, ok := f.(string)
			if !ok {
				return nil, fmt.Errorf("%w: '%s' object has no attribute 'replace'", ErrExtPillar, py.TypeName(f))
			}
			cfgs = append(cfgs, strings.ReplaceAll(s, "__env__", pillarenv))
		}
	}
	st := &stackRun{c: c, ctx: ctx, stack: payload.NewMap()}
	for _, f := range cfgs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cfg, ok := f.(string)
		if !ok {
			return nil, fmt.Errorf("%w: stat: path should be string, bytes, os.PathLike or integer, not %s", ErrExtPillar, py.TypeName(f))
		}
		if fi, err := os.Stat(cfg); err != nil || !fi.Mode().IsRegular() {
			c.Log.Info(fmt.Sprintf("Ignoring pillar stack cfg \"%s\": file does not exist", cfg))
			continue
		}
		if err := st.processCfg(cfg); err != nil {
			return nil, err
		}
	}
	return st.stack, nil
}

// stackRun is one call: the stack built so far.
type stackRun struct {
	c     *ExtCall
	ctx   context.Context
	stack *payload.Map
}

// processCfg is _process_stack_cfg: render the config, then render,
// load and merge every YAML file it names.
func (st *stackRun) processCfg(cfg string) error {
	c := st.c
	basedir, filename := pySplitPath(cfg)
	env := jinja.NewEnvironment(jinja.Options{Lenient: true, Sandboxed: true})
	render.InstallSerializerFilters(env)
	env.Loader = stackLoader{base: basedir}
	g := env.Globals
	g["__opts__"] = c.Opts()
	g["__grains__"] = c.r.grains
	if c.r.caller != nil {
		g["__salt__"] = &stackSalt{ctx: st.ctx, caller: c.r.caller}
	}
	g["__stack__"] = payload.NewMap("traverse", jinja.Func(stackTraverse), "cfg_path", cfg)
	g["minion_id"] = c.MinionID
	g["pillar"] = c.Pillar
	g["pillarenv"], _ = c.Opts().Get("pillarenv")

	text, err := st.render(env, filename, nil)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrExtPillar, err)
	}
	for _, item := range stackCfgItems(text) {
		s, ok := item.(string)
		if !ok {
			return fmt.Errorf("%w: '%s' object has no attribute 'strip'", ErrExtPillar, py.TypeName(item))
		}
		if strings.TrimSpace(s) == "" {
			continue
		}
		paths := pyGlob(pyJoin(basedir, s))
		if len(paths) == 0 {
			c.Log.Info(fmt.Sprintf("Ignoring pillar stack template \"%s\": can't find from root dir \"%s\"", s, basedir))
			continue
		}
		sort.Strings(paths)
		for _, p := range paths {
			if err := st.ctx.Err(); err != nil {
				return err
			}
			name := stackRelPath(p, basedir)
			out, err := st.render(env, name, payload.NewMap("ymlpath", p))
			if err != nil {
				return fmt.Errorf("%w: Stack pillar template render error in %s:\n\"%s\"", ErrExtPillar, p, err.Error())
			}
			obj, err := config.DecodeYAMLPayload([]byte(out))
			if err != nil {
				return fmt.Errorf("%w: Stack pillar yaml parsing error in %s:\n%s\n%s", ErrExtPillar, p, err.Error(), out)
			}
			if m, ok := obj.(*payload.Map); ok {
				merged, err := stackMergeDict(st.stack, m, 0)
				if err != nil {
					return fmt.Errorf("%w: %w", ErrExtPillar, err)
				}
				st.stack = merged
			}
		}
	}
	return nil
}

// render loads name through the environment's loader and renders it
// with stack (shared: what the template changes in it stays) and vars.
func (st *stackRun) render(env *jinja.Environment, name string, vars *payload.Map) (string, error) {
	src, _, err := env.Loader.Load(nil, name, "")
	if err != nil {
		return "", err
	}
	tpl, err := env.Parse(name, src)
	if err != nil {
		return "", err
	}
	live := jinja.Import(st.stack)
	all := payload.NewMap("stack", jinja.Live{V: live})
	for _, it := range vars.Items() {
		all.SetKey(it.Key, it.Value)
	}
	out, err := tpl.RenderContext(st.ctx, all, nil)
	if m, ok := jinja.Export(live).(*payload.Map); ok {
		st.stack = m
	}
	return out, err
}

// stackCfgItems is _parse_stack_cfg: a YAML list, else the lines.
func stackCfgItems(text string) []any {
	if v, err := config.DecodeYAMLPayload([]byte(text)); err == nil {
		if l, ok := v.([]any); ok {
			return l
		}
	}
	var out []any
	for _, l := range pySplitLines(text) {
		out = append(out, l)
	}
	return out
}

// pySplitLines is Python's str.splitlines().
func pySplitLines(s string) []string {
	var out []string
	start := 0
	rs := []rune(s)
	b := 0 // byte offset of rs[i]
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		size := len(string(r))
		switch r {
		case '\n', '\r', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
			out = append(out, s[start:b])
			if r == '\r' && i+1 < len(rs) && rs[i+1] == '\n' {
				i++
				b++
			}
			start = b + size
		}
		b += size
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// stackRelPath is os.path.relpath(path, basedir) with forward slashes.
func stackRelPath(p, base string) string {
	ap, err1 := filepath.Abs(p)
	ab, err2 := filepath.Abs(base)
	if err1 != nil || err2 != nil {
		return p
	}
	rel, err := filepath.Rel(ab, ap)
	if err != nil {
		return p
	}
	return filepath.ToSlash(rel)
}

// stackLoader is Jinja2's FileSystemLoader over one directory: names
// are "/"-separated and may not climb out with "..".
type stackLoader struct{ base string }

// Load reads the template called name.
func (l stackLoader) Load(_ *jinja.Runtime, name, _ string) (string, string, error) {
	notFound := &jinja.Error{Kind: "TemplateNotFound", Msg: name, Err: jinja.ErrTemplateNotFound}
	parts := []string{l.base}
	for _, piece := range strings.Split(name, "/") {
		if piece == ".." {
			return "", "", notFound
		}
		if piece != "" && piece != "." {
			parts = append(parts, piece)
		}
	}
	p := filepath.Join(parts...)
	f, err := os.Open(p)
	if err != nil {
		return "", "", notFound
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "", "", notFound
	}
	b, err := io.ReadAll(io.LimitReader(f, maxStackFile+1))
	if err != nil {
		return "", "", fmt.Errorf("reading %s: %w", p, err)
	}
	if len(b) > maxStackFile {
		return "", "", fmt.Errorf("%s is larger than %d bytes", p, maxStackFile)
	}
	return string(b), name, nil
}

// stackTraverse is __stack__.traverse:
// salt.utils.data.traverse_dict_and_list(data, key, default=None,
// delimiter=":").
func stackTraverse(_ *jinja.Runtime, args []any, kw *payload.Map) (any, error) {
	params := []string{"data", "key", "default", "delimiter"}
	vals := map[string]any{"default": nil, "delimiter": ":"}
	set := map[string]bool{}
	if len(args) > len(params) {
		return nil, &jinja.Error{Kind: "TypeError", Msg: fmt.Sprintf("traverse_dict_and_list() takes from 2 to 4 positional arguments but %d were given", len(args))}
	}
	for i, a := range args {
		vals[params[i]], set[params[i]] = a, true
	}
	for _, it := range kw.Items() {
		k := payload.KeyString(it.Key)
		if !strings.Contains(" data key default delimiter ", " "+k+" ") {
			return nil, &jinja.Error{Kind: "TypeError", Msg: fmt.Sprintf("traverse_dict_and_list() got an unexpected keyword argument '%s'", k)}
		}
		vals[k], set[k] = it.Value, true
	}
	if !set["data"] || !set["key"] {
		return nil, &jinja.Error{Kind: "TypeError", Msg: "traverse_dict_and_list() missing required positional arguments: 'data' and 'key'"}
	}
	key, _ := jinja.Export(vals["key"]).(string)
	delim, _ := jinja.Export(vals["delimiter"]).(string)
	v, ok := target.Traverse(jinja.Export(vals["data"]), key, delim)
	if !ok {
		return vals["default"], nil
	}
	return jinja.Import(v), nil
}

// stackSalt is __salt__ in stack templates: __salt__['mod.fun'](...).
type stackSalt struct {
	ctx    context.Context
	caller render.Caller
}

// GetItem returns the function named key.
func (s *stackSalt) GetItem(key any) (any, bool) {
	name, ok := key.(string)
	if !ok || !strings.Contains(name, ".") {
		return nil, false
	}
	if fc, ok := s.caller.(render.FunctionChecker); ok && !fc.HasFunction(name) {
		return nil, false
	}
	return jinja.Func(func(_ *jinja.Runtime, args []any, kw *payload.Map) (any, error) {
		plain := make([]any, len(args))
		for i, a := range args {
			plain[i] = jinja.Export(a)
		}
		var kwargs *payload.Map
		if kw != nil {
			kwargs, _ = jinja.Export(kw).(*payload.Map)
		}
		out, err := s.caller.CallFunction(s.ctx, name, plain, kwargs)
		if err != nil {
			return nil, err
		}
		return jinja.Import(out), nil
	}), true
}

// String is what printing the object shows.
func (s *stackSalt) String() string { return "<salt functions>" }

// stackStrategy checks a "__" value.
func stackStrategy(v any) (string, error) {
	if s, ok := v.(string); ok {
		for _, k := range stackStrategies {
			if s == k {
				return s, nil
			}
		}
	}
	return "", fmt.Errorf("Unknown strategy \"%s\", should be one of %s", pyfmt.Str(v), stackStrategiesText)
}

// stackCleanup is _cleanup: "__" keys leave dicts (recursively through
// dict values) and a leading {"__": ...} item leaves a list.
func stackCleanup(v any, depth int) any {
	if depth > maxStackDepth || !payload.Truthy(v) {
		return v
	}
	switch x := v.(type) {
	case *payload.Map:
		x.Delete("__")
		for _, it := range x.Items() {
			x.SetKey(it.Key, stackCleanup(it.Value, depth+1))
		}
	case []any:
		if m, ok := x[0].(*payload.Map); ok && m.Has("__") {
			return x[1:]
		}
	}
	return v
}

// stackMergeDict is _merge_dict: obj's "__" (merge-last by default)
// says how obj goes into stack.
func stackMergeDict(stack, obj *payload.Map, depth int) (*payload.Map, error) {
	if depth > maxStackDepth {
		return nil, fmt.Errorf("stack data nested deeper than %d", maxStackDepth)
	}
	raw, has := obj.Delete("__")
	strategy := "merge-last"
	if has {
		var err error
		if strategy, err = stackStrategy(raw); err != nil {
			return nil, err
		}
	}
	if strategy == "overwrite" {
		return stackCleanup(obj, depth).(*payload.Map), nil
	}
	for _, it := range obj.Items() {
		k, v := it.Key, it.Value
		if strategy == "remove" {
			stack.DeleteKey(k)
			continue
		}
		cur, ok := stack.GetKey(k)
		if !ok {
			stack.SetKey(k, stackCleanup(v, depth+1))
			continue
		}
		if strategy == "merge-first" {
			stack.SetKey(k, stackCleanup(v, depth+1))
			v = cur
			cur, _ = stack.GetKey(k)
		}
		if py.TypeName(cur) != py.TypeName(v) {
			stack.SetKey(k, stackCleanup(v, depth+1))
			continue
		}
		switch x := v.(type) {
		case *payload.Map:
			merged, err := stackMergeDict(cur.(*payload.Map), x, depth+1)
			if err != nil {
				return nil, err
			}
			stack.SetKey(k, merged)
		case []any:
			merged, err := stackMergeList(cur.([]any), x)
			if err != nil {
				return nil, err
			}
			stack.SetKey(k, merged)
		default:
			stack.SetKey(k, v)
		}
	}
	return stack, nil
}

// stackMergeList is _merge_list: a leading {"__": strategy} item of obj
// says how it joins stack.
func stackMergeList(stack, obj []any) ([]any, error) {
	strategy := "merge-last"
	if len(obj) > 0 {
		if m, ok := obj[0].(*payload.Map); ok {
			if raw, has := m.Get("__"); has {
				var err error
				if strategy, err = stackStrategy(raw); err != nil {
					return nil, err
				}
				obj = obj[1:]
			}
		}
	}
	switch strategy {
	case "overwrite":
		return obj, nil
	case "remove":
		var out []any
		for _, item := range stack {
			in := false
			for _, o := range obj {
				if py.Equal(item, o) {
					in = true
					break
				}
			}
			if !in {
				out = append(out, item)
			}
		}
		if out == nil {
			out = []any{}
		}
		return out, nil
	case "merge-first":
		return append(append([]any{}, obj...), stack...), nil
	}
	return append(append([]any{}, stack...), obj...), nil
}

// pyJoin is os.path.join(a, b) on POSIX.
func pyJoin(a, b string) string {
	if strings.HasPrefix(b, "/") || a == "" {
		return b
	}
	if strings.HasSuffix(a, "/") {
		return a + b
	}
	return a + "/" + b
}

// pyHasMagic is glob.has_magic.
func pyHasMagic(s string) bool { return strings.ContainsAny(s, "*?[") }

// pyGlob is Python's glob.glob(pattern) (not recursive: "**" is "*"):
// wildcard components skip names starting with "." unless the pattern
// component does.
func pyGlob(pattern string) []string {
	dir, base := pySplitPath(pattern)
	if !pyHasMagic(pattern) {
		if base == "" {
			if fi, err := os.Stat(pattern); err == nil && fi.IsDir() {
				return []string{pattern}
			}
			return nil
		}
		if _, err := os.Lstat(pattern); err == nil {
			return []string{pattern}
		}
		return nil
	}
	if dir == "" {
		return pyGlobIn("", base)
	}
	dirs := []string{dir}
	if dir != pattern && pyHasMagic(dir) {
		dirs = pyGlob(dir)
	}
	var out []string
	for _, d := range dirs {
		for _, name := range pyGlobIn(d, base) {
			out = append(out, pyJoin(d, name))
		}
	}
	return out
}

// pyGlobIn lists the names in dir matching pattern (glob's _glob1 and
// _glob0).
func pyGlobIn(dir, pattern string) []string {
	d := dir
	if d == "" {
		d = "."
	}
	if !pyHasMagic(pattern) {
		if pattern == "" {
			if fi, err := os.Stat(d); err == nil && fi.IsDir() {
				return []string{""}
			}
			return nil
		}
		if _, err := os.Lstat(filepath.Join(d, pattern)); err == nil {
			return []string{pattern}
		}
		return nil
	}
	entries, err := os.ReadDir(d)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		n := e.Name()
		if strings.HasPrefix(n, ".") && !strings.HasPrefix(pattern, ".") {
			continue
		}
		if py.Fnmatch(n, pattern) {
			out = append(out, n)
		}
	}
	return out
}

// pySplitPath is os.path.split on POSIX.
func pySplitPath(p string) (head, tail string) {
	i := strings.LastIndex(p, "/") + 1
	head, tail = p[:i], p[i:]
	if head != "" && strings.Trim(head, "/") != "" {
		head = strings.TrimRight(head, "/")
	}
	return head, tail
}
