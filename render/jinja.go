package render

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path"
	"reflect"
	"regexp"
	"strings"
	"unsafe"

	"github.com/nikolalohinski/gonja/v2/builtins"
	gconfig "github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/nodes"
	"github.com/nikolalohinski/gonja/v2/tokens"

	"github.com/gsalt/gsalt/wire/payload"
)

// Limits of one Jinja render (the template, everything it imports, and
// what it prints).
const (
	// MaxTemplateSize is the largest template or imported file, in bytes.
	MaxTemplateSize = 16 << 20
	// MaxOutputSize is the largest rendered output, in bytes.
	MaxOutputSize = 64 << 20
	// MaxIncludeDepth bounds nested import/include/extends chains.
	MaxIncludeDepth = 32
	// MaxLoads bounds the number of files one render may load.
	MaxLoads = 1024
	// MaxMacroDepth bounds nested (recursive) macro calls.
	MaxMacroDepth = 256
	// MaxSteps bounds the tag executions (for, if, set, do) of a render.
	MaxSteps = 10_000_000
	// MaxNesting bounds bracket nesting in a template (parser recursion).
	MaxNesting = 256
	// maxListLen bounds lists built by range() and similar helpers.
	maxListLen = 1 << 20
)

// finalizeFilter is the name of the hidden filter applied to every {{ }}
// (Jinja2's "finalize"): Python's str() of the value, None as "None".
const finalizeFilter = "__gsalt_finalize__"

// Jinja is Salt's jinja renderer on github.com/nikolalohinski/gonja/v2:
// Salt's context variables, salt[...] calls, Salt's filters, tests and
// tags (import_yaml, load_yaml, ...), salt:// imports through
// Context.Files, StrictUndefined like Salt 3006 (opts allow_undefined
// lifts it for printing), trim_blocks/lstrip_blocks from opts, and the
// trailing newline kept as Salt does. See JINJA-FEATURES.md.
type Jinja struct {
	// MaxOutputSize bounds the rendered text in bytes; 0 means
	// MaxOutputSize.
	MaxOutputSize int
}

// Render executes input as a Jinja template and returns the text.
func (j Jinja) Render(ctx context.Context, input any, rc *Context) (any, error) {
	text, err := inputText("jinja", input)
	if err != nil {
		return nil, err
	}
	if rc == nil {
		rc = &Context{}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if len(text) > MaxTemplateSize {
		return nil, fmt.Errorf("%w: template is larger than %d bytes", ErrTemplate, MaxTemplateSize)
	}
	st := newRenderState(ctx, rc)
	if j.MaxOutputSize > 0 {
		st.maxOut = j.MaxOutputSize
	}
	out, err := st.renderRoot(text)
	if err != nil {
		return nil, err
	}
	if strings.HasSuffix(text, "\n") {
		out += "\n"
	}
	return out, nil
}

// renderState is everything one render shares: the environment, Salt's
// mutable "globals" (tpldir changes as Salt's loader loads files), bounds
// and the first typed error raised by Salt-specific code.
type renderState struct {
	ctx      context.Context
	rc       *Context
	log      *slog.Logger
	cfg      *gconfig.Config
	env      *exec.Environment
	globals  *exec.Context
	loader   *saltLoader
	strict   bool
	tpldir   string
	depth    int
	macros   int
	steps    int
	maxOut   int
	loads    int
	out      int
	firstErr error
	files    map[string]string
}

func newRenderState(ctx context.Context, rc *Context) *renderState {
	st := &renderState{ctx: ctx, rc: rc, log: rc.Log, files: map[string]string{}, maxOut: MaxOutputSize}
	if st.log == nil {
		st.log = slog.Default()
	}
	cfg := gconfig.New()
	cfg.StrictUndefined = true // Salt 3006 uses jinja2.StrictUndefined
	cfg.TrimBlocks = optBool(rc.Opts, "jinja_trim_blocks")
	cfg.LeftStripBlocks = optBool(rc.Opts, "jinja_lstrip_blocks")
	envKey := "jinja_env"
	if rc.SLS != "" {
		envKey = "jinja_sls_env"
	}
	if m := rc.Opts.Map(envKey); m != nil {
		applyJinjaEnvOpts(cfg, m)
	}
	st.cfg = cfg
	st.strict = !optBool(rc.Opts, "allow_undefined")
	st.loader = &saltLoader{st: st}
	st.env = st.newEnvironment()
	st.globals = st.env.Context
	return st
}

func optBool(m *payload.Map, key string) bool {
	v, ok := m.Get(key)
	return ok && payload.Truthy(v)
}

// applyJinjaEnvOpts applies Salt's jinja_env / jinja_sls_env options that
// gonja supports.
func applyJinjaEnvOpts(cfg *gconfig.Config, m *payload.Map) {
	for _, it := range m.Items() {
		k := strings.ToLower(payload.KeyString(it.Key))
		s, isStr := it.Value.(string)
		switch k {
		case "trim_blocks":
			cfg.TrimBlocks = payload.Truthy(it.Value)
		case "lstrip_blocks":
			cfg.LeftStripBlocks = payload.Truthy(it.Value)
		case "keep_trailing_newline":
			cfg.KeepTrailingNewline = payload.Truthy(it.Value)
		case "block_start_string":
			if isStr {
				cfg.BlockStartString = s
			}
		case "block_end_string":
			if isStr {
				cfg.BlockEndString = s
			}
		case "variable_start_string":
			if isStr {
				cfg.VariableStartString = s
			}
		case "variable_end_string":
			if isStr {
				cfg.VariableEndString = s
			}
		case "comment_start_string":
			if isStr {
				cfg.CommentStartString = s
			}
		case "comment_end_string":
			if isStr {
				cfg.CommentEndString = s
			}
		case "line_statement_prefix":
			if isStr {
				cfg.LineStatementPrefix = s
			}
		case "line_comment_prefix":
			if isStr {
				cfg.LineCommentPrefix = s
			}
		case "newline_sequence":
			if isStr {
				cfg.NewlineSequence = s
			}
		}
	}
}

// newEnvironment builds this render's gonja environment: copies of
// gonja's builtin sets with Salt's filters, tests, tags and methods added
// or replacing gonja's (gonja's package-level sets are only read).
func (st *renderState) newEnvironment() *exec.Environment {
	filters := exec.NewFilterSet(map[string]exec.FilterFunction{}).Update(builtins.Filters)
	for name, fn := range st.filters() {
		if filters.Exists(name) {
			_ = filters.Replace(name, fn)
		} else {
			_ = filters.Register(name, fn)
		}
	}
	tests := exec.NewTestSet(map[string]exec.TestFunction{}).Update(builtins.Tests)
	for name, fn := range st.tests() {
		if tests.Exists(name) {
			_ = tests.Replace(name, fn)
		} else {
			_ = tests.Register(name, fn)
		}
	}
	cs := exec.NewControlStructureSet(map[string]parserFunc{}).Update(builtins.ControlStructures)
	for name, fn := range st.controlStructures() {
		if cs.Exists(name) {
			_ = cs.Replace(name, fn)
		} else {
			_ = cs.Register(name, fn)
		}
	}
	globals := exec.EmptyContext().Update(builtins.GlobalFunctions).Update(builtins.GlobalVariables)
	st.setGlobals(globals)
	return &exec.Environment{
		Filters:           filters,
		Tests:             tests,
		ControlStructures: cs,
		Context:           globals,
		Methods: exec.Methods{
			Bool:  builtins.Methods.Bool,
			Int:   builtins.Methods.Int,
			Float: builtins.Methods.Float,
			Str:   strMethods(),
			Dict:  dictMethods(),
			List:  listMethods(),
		},
	}
}

// SLSVars computes Salt's SLS/template context variables (tplpath,
// tplfile, tpldir, tpldot, slspath, sls_path, slsdotpath, slscolonpath)
// from the template path and the SLS name, like Salt's
// generate_sls_context. tmplpath is the file's path (the local cached
// path in Salt; gsalt passes Context.Path, or the salt:// path without its
// scheme); "" leaves out the tpl* variables.
func SLSVars(tmplpath, sls string) *payload.Map {
	out := payload.NewMap()
	slspath := strings.TrimRight(strings.ReplaceAll(sls, ".", "/"), "/")
	if tmplpath != "" {
		template := strings.ReplaceAll(tmplpath, "\\", "/")
		switch {
		case sls == "":
			template = template[strings.LastIndex(template, "/")+1:]
		case strings.HasSuffix(template, slspath+".sls"):
			template = template[len(template)-(4+len(slspath)):]
		case strings.HasSuffix(template, slspath+"/init.sls"):
			template = template[len(template)-(9+len(slspath)):]
		}
		slspath = ""
		if i := strings.LastIndex(template, "/"); i >= 0 {
			slspath = template[:i]
		}
		tpldir := slspath
		if tpldir == "" {
			tpldir = "."
		}
		out.Set("tplpath", tmplpath)
		out.Set("tplfile", template)
		out.Set("tpldir", tpldir)
		out.Set("tpldot", strings.ReplaceAll(slspath, "/", "."))
	}
	out.Set("slspath", slspath)
	out.Set("slsdotpath", strings.ReplaceAll(slspath, "/", "."))
	out.Set("slscolonpath", strings.ReplaceAll(slspath, "/", ":"))
	out.Set("sls_path", strings.ReplaceAll(slspath, "/", "_"))
	return out
}

// sourcePath is the salt:// path of the rendered file without scheme and
// saltenv query ("apache/init.sls"), or "".
func (st *renderState) sourcePath() string {
	return saltPath(st.rc.Source)
}

// saltPath strips "salt://" and a "?saltenv=" query.
func saltPath(src string) string {
	p, ok := strings.CutPrefix(src, "salt://")
	if !ok {
		return ""
	}
	p, _, _ = strings.Cut(p, "?")
	return strings.TrimLeft(p, "/")
}

// contextVars returns Salt's render context as payload data: grains,
// pillar, opts, saltenv, sls and the SLS variables, then Vars.
func (st *renderState) contextVars() *payload.Map {
	rc := st.rc
	m := payload.NewMap()
	orEmpty := func(x *payload.Map) *payload.Map {
		if x == nil {
			return payload.NewMap()
		}
		return x
	}
	m.Set("grains", orEmpty(rc.Grains))
	m.Set("pillar", orEmpty(rc.Pillar))
	m.Set("opts", orEmpty(rc.Opts))
	saltenv := rc.Saltenv
	if saltenv == "" {
		saltenv = "base"
	}
	m.Set("saltenv", saltenv)
	m.Set("sls", rc.SLS)
	tmplpath := rc.Path
	if tmplpath == "" {
		tmplpath = st.sourcePath()
	}
	for _, it := range SLSVars(tmplpath, rc.SLS).Items() {
		m.SetKey(it.Key, it.Value)
	}
	if rc.Vars != nil {
		for _, it := range rc.Vars.Items() {
			m.Set(payload.KeyString(it.Key), it.Value)
		}
	}
	return m
}

// setGlobals fills the globals context: Salt's functions and variables.
func (st *renderState) setGlobals(g *exec.Context) {
	vars := st.contextVars()
	for _, it := range vars.Items() {
		g.Set(payload.KeyString(it.Key), toJinja(it.Value))
	}
	if td, ok := vars.Get("tpldir"); ok {
		st.tpldir, _ = td.(string)
	}
	g.Set("salt", &saltFuncs{st: st})
	for name, fn := range st.globalFunctions() {
		g.Set(name, fn)
	}
}

// renderRoot renders the top template.
func (st *renderState) renderRoot(text string) (string, error) {
	tpl, err := st.parse(rootIdentifier, text)
	if err != nil {
		return "", st.wrapErr(err)
	}
	var b strings.Builder
	w := &boundedWriter{st: st, w: &b}
	// Salt passes its context both as globals and as render variables;
	// the render variables keep the top template's tpl* values when
	// imports change the globals.
	rootCtx := st.globals.Inherit()
	for _, name := range []string{"tplfile", "tpldir", "tpldot"} {
		if v, ok := st.globals.Get(name); ok {
			rootCtx.Set(name, v)
		}
	}
	r := exec.NewRenderer(st.subEnv(rootCtx), w, st.cfg, st.loader, tpl)
	if err := st.execute(r); err != nil {
		return "", st.wrapErr(err)
	}
	return b.String(), nil
}

// execute runs a renderer, turning panics inside gonja into errors.
func (st *renderState) execute(r *exec.Renderer) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("template engine failure: %v", p)
		}
	}()
	return r.Execute()
}

// rootIdentifier names the top template for the loader.
const rootIdentifier = "<template>"

// parse parses text into a template and installs the finalize hook.
func (st *renderState) parse(identifier, text string) (tpl *exec.Template, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("template parser failure: %v", p)
		}
	}()
	if d := nestingDepth(text, st.cfg); d > MaxNesting {
		return nil, fmt.Errorf("%w: brackets nested deeper than %d", ErrTemplate, MaxNesting)
	}
	st.loader.pending = &pendingSource{id: identifier, text: text}
	tpl, err = exec.NewTemplate(identifier, st.cfg, st.loader, st.env)
	st.loader.pending = nil
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "failed to parse template '"+text+"': ")
		line := ""
		if l := reParseLine.FindStringSubmatch(msg); l != nil {
			line = "; line " + l[1]
		}
		return nil, fmt.Errorf("%w: Jinja syntax error: %s%s", ErrTemplate, msg, line)
	}
	rewriteTemplate(tpl.Root())
	return tpl, nil
}

// wrapErr turns an engine error into an error wrapping ErrTemplate (and
// the first typed error raised by Salt code, such as ErrNotFound), with a
// message close to Salt's ("Jinja variable 'x' is undefined; line 3").
func (st *renderState) wrapErr(err error) error {
	msg := cleanEngineError(err)
	if errors.Is(err, ErrTemplate) && st.firstErr == nil {
		// gsalt's own error deep in gonja's wrapping: report it
		inner := err
		for e := err; e != nil && e != ErrTemplate; e = errors.Unwrap(e) {
			if strings.HasPrefix(e.Error(), ErrTemplate.Error()) {
				inner = e
				break
			}
		}
		if strings.Contains(inner.Error(), "; line ") {
			return inner
		}
		return fmt.Errorf("%w%s", inner, msg.line)
	}
	if st.firstErr != nil {
		if errors.Is(st.firstErr, ErrTemplate) {
			return fmt.Errorf("%w%s", st.firstErr, msg.line)
		}
		return fmt.Errorf("%w: %w%s", ErrTemplate, st.firstErr, msg.line)
	}
	return fmt.Errorf("%w: %s%s", ErrTemplate, msg.text, msg.line)
}

var (
	reLine      = regexp.MustCompile(`at line (\d+)`)
	reParseLine = regexp.MustCompile(`Line: (\d+)`)
	reUndefName = regexp.MustCompile(`Unable to evaluate name "([^"]*)"`)
	reUndefAttr = regexp.MustCompile(`(?:attribute|item) '([^']*)' not found`)
	reTokenDump = regexp.MustCompile(`&\{<Token[^>]*> [^ ]* \[[^\]]*\] map\[[^\]]*\]\}`)
)

type engineMsg struct{ text, line string }

// cleanEngineError extracts the cause and line of a gonja error chain
// (which repeats the failing expression at each level).
func cleanEngineError(err error) engineMsg {
	full := err.Error()
	var m engineMsg
	if l := reLine.FindStringSubmatch(full); l != nil {
		m.line = "; line " + l[1]
	}
	switch {
	case reUndefName.MatchString(full):
		m.text = fmt.Sprintf("Jinja variable '%s' is undefined", reUndefName.FindStringSubmatch(full)[1])
		return m
	case reUndefAttr.MatchString(full) && strings.Contains(full, "Unable to evaluate"):
		m.text = fmt.Sprintf("Jinja variable 'dict object' has no attribute '%s'", reUndefAttr.FindStringSubmatch(full)[1])
		return m
	}
	msg := strings.TrimPrefix(full, "unable to execute template: ")
	if i := strings.LastIndex(msg, "'"+finalizeFilter+"': "); i >= 0 {
		msg = msg[i+len(finalizeFilter)+4:]
	}
	msg = reTokenDump.ReplaceAllString(msg, "")
	const limit = 2000
	if len(msg) > limit {
		msg = msg[:limit] + "..."
	}
	m.text = "Jinja error: " + msg
	return m
}

// fail records a typed error (the first one wins) and returns it as a
// template value.
func (st *renderState) fail(err error) *exec.Value {
	if st.firstErr == nil {
		st.firstErr = err
	}
	return exec.AsValue(err)
}

// boundedWriter limits the output size and stops on cancellation.
type boundedWriter struct {
	st *renderState
	w  io.Writer
}

func (b *boundedWriter) Write(p []byte) (int, error) {
	if err := b.st.ctx.Err(); err != nil {
		return 0, err
	}
	b.st.out += len(p)
	if b.st.out > b.st.maxOut {
		return 0, fmt.Errorf("%w: output larger than %d bytes", ErrTemplate, b.st.maxOut)
	}
	return b.w.Write(p)
}

var (
	outputPtrType = reflect.TypeFor[*nodes.Output]()
	tokenPtrType  = reflect.TypeFor[*tokens.Token]()
)

// rewriteTemplate adapts a parsed template to Jinja2's semantics where
// gonja has no hook:
//   - the expression of every {{ }} (in control structure bodies,
//     macros, blocks and parent templates too) is wrapped in the finalize
//     filter: Jinja2 in Salt prints str() of the value (None as "None",
//     dicts and lists as Python reprs), gonja prints None as "";
//   - the binary operators %, // and ** become filters with Python's
//     semantics (string % formatting, floored division, int powers);
//     gonja computes them on Go ints or floats (and panics on 'a' % b).
//
// The bodies of gonja's control structures sit in unexported fields, so
// the walk is reflective and the freshly parsed (not yet shared) nodes
// are updated in place through their addresses.
func rewriteTemplate(root *nodes.Template) {
	type visit struct {
		t reflect.Type
		p uintptr
	}
	seen := map[visit]bool{}
	var walk func(v reflect.Value, depth int)
	// replace stores nv into the (addressable) location v.
	replace := func(v, nv reflect.Value) {
		if v.CanSet() {
			v.Set(nv)
			return
		}
		if v.CanAddr() {
			reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem().Set(nv)
		}
	}
	walk = func(v reflect.Value, depth int) {
		if depth > 4096 || !v.IsValid() {
			return
		}
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() || v.Type() == tokenPtrType {
				return
			}
			key := visit{v.Type(), v.Pointer()}
			if seen[key] {
				return
			}
			seen[key] = true
			walk(v.Elem(), depth+1)
			if v.Type() == outputPtrType {
				o := (*nodes.Output)(unsafe.Pointer(v.Pointer()))
				o.Expression = wrapFinalize(o.Expression)
				if o.Alternative != nil {
					o.Alternative = wrapFinalize(o.Alternative)
				}
			}
		case reflect.Interface:
			if v.IsNil() {
				return
			}
			walk(v.Elem(), depth+1)
			if nv, ok := pyOperator(v.Elem()); ok && nv.Type().AssignableTo(v.Type()) {
				replace(v, nv)
			}
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				walk(v.Field(i), depth+1)
			}
		case reflect.Slice, reflect.Array:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i), depth+1)
			}
		case reflect.Map:
			writable := v
			if !v.CanSet() && v.CanAddr() {
				writable = reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
			}
			for _, k := range v.MapKeys() {
				val := v.MapIndex(k)
				walk(val, depth+1)
				if val.Kind() == reflect.Interface && !val.IsNil() {
					if nv, ok := pyOperator(val.Elem()); ok && nv.Type().AssignableTo(v.Type().Elem()) && writable.CanSet() {
						writable.SetMapIndex(k, nv)
					}
				}
			}
		}
	}
	walk(reflect.ValueOf(root), 0)
}

var (
	binExprPtrType = reflect.TypeFor[*nodes.BinaryExpression]()
	tuplePtrType   = reflect.TypeFor[*nodes.Tuple]()
	namePtrType    = reflect.TypeFor[*nodes.Name]()
)

// pyOperator returns the filter expression replacing a %, // or **
// binary expression, or a tuple literal (so that it prints as a tuple).
func pyOperator(v reflect.Value) (reflect.Value, bool) {
	if v.Type() == tuplePtrType && !v.IsNil() {
		t := (*nodes.Tuple)(unsafe.Pointer(v.Pointer()))
		var e nodes.Expression = &nodes.FilteredExpression{
			Expression: t,
			Filters:    []*nodes.FilterCall{{Token: t.Location, Name: opTuple}},
		}
		return reflect.ValueOf(&e).Elem(), true
	}
	if v.Type() != binExprPtrType || v.IsNil() {
		return reflect.Value{}, false
	}
	be := (*nodes.BinaryExpression)(unsafe.Pointer(v.Pointer()))
	if be.Operator == nil || be.Operator.Token == nil {
		return reflect.Value{}, false
	}
	if chained, ok := chainComparison(be); ok {
		return reflect.ValueOf(&chained).Elem(), true
	}
	var name string
	switch be.Operator.Token.Type {
	case tokens.Modulo:
		name = opModulo
	case tokens.FloorDivision:
		name = opFloorDiv
	case tokens.Power:
		name = opPower
	default:
		return reflect.Value{}, false
	}
	var e nodes.Expression = &nodes.FilteredExpression{
		Expression: be.Left,
		Filters:    []*nodes.FilterCall{{Token: be.Operator.Token, Name: name, Args: []nodes.Expression{be.Right}}},
	}
	return reflect.ValueOf(&e).Elem(), true
}

// Names of the hidden filters implementing Python's operators.
const (
	opModulo   = "__gsalt_mod__"
	opFloorDiv = "__gsalt_floordiv__"
	opPower    = "__gsalt_pow__"
	opTuple    = "__gsalt_tuple__"
)

func isComparison(be *nodes.BinaryExpression) bool {
	if be == nil || be.Operator == nil || be.Operator.Token == nil {
		return false
	}
	switch be.Operator.Token.Type {
	case tokens.LowerThan, tokens.LowerThanOrEqual, tokens.GreaterThan, tokens.GreaterThanOrEqual, tokens.Equals, tokens.Ne:
		return true
	}
	return false
}

// chainMarker marks the "and" tokens of rewritten chained comparisons.
const chainMarker = -7

// chainComparison rewrites Python's chained comparison a < b < c (parsed
// by gonja as (a < b) < c) into a < b and b < c.
func chainComparison(be *nodes.BinaryExpression) (nodes.Expression, bool) {
	if !isComparison(be) {
		return nil, false
	}
	left, ok := be.Left.(*nodes.BinaryExpression)
	if !ok {
		return nil, false
	}
	var middle nodes.Expression
	switch {
	case isComparison(left):
		middle = left.Right
	case left.Operator != nil && left.Operator.Token != nil && left.Operator.Token.Line == chainMarker:
		last, ok := left.Right.(*nodes.BinaryExpression)
		if !ok {
			return nil, false
		}
		middle = last.Right
	default:
		return nil, false
	}
	and := &tokens.Token{Type: tokens.And, Val: "and", Line: chainMarker}
	return &nodes.BinaryExpression{
		Left:     left,
		Right:    &nodes.BinaryExpression{Left: middle, Right: be.Right, Operator: be.Operator},
		Operator: &nodes.BinOperator{Token: and},
	}, true
}

// usesName reports whether a parsed node tree refers to the variable
// name (Jinja2 gives a macro varargs/kwargs only when its body does).
func usesName(root any, name string) bool {
	seen := map[uintptr]bool{}
	found := false
	var walk func(v reflect.Value, depth int)
	walk = func(v reflect.Value, depth int) {
		if found || depth > 4096 || !v.IsValid() {
			return
		}
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() || v.Type() == tokenPtrType || seen[v.Pointer()] {
				return
			}
			seen[v.Pointer()] = true
			if v.Type() == namePtrType {
				n := (*nodes.Name)(unsafe.Pointer(v.Pointer()))
				if n.Name != nil && n.Name.Val == name {
					found = true
				}
				return
			}
			walk(v.Elem(), depth+1)
		case reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem(), depth+1)
			}
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				walk(v.Field(i), depth+1)
			}
		case reflect.Slice, reflect.Array:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i), depth+1)
			}
		case reflect.Map:
			it := v.MapRange()
			for it.Next() {
				walk(it.Value(), depth+1)
			}
		}
	}
	walk(reflect.ValueOf(root), 0)
	return found
}

func wrapFinalize(e nodes.Expression) nodes.Expression {
	if e == nil {
		return nil
	}
	return &nodes.FilteredExpression{Expression: e, Filters: []*nodes.FilterCall{{Token: e.Position(), Name: finalizeFilter}}}
}

// isUndefined reports whether v is gonja's (strict) undefined error for a
// missing name, attribute or item, as opposed to another failure.
func isUndefined(v *exec.Value) bool {
	if v == nil || !v.IsError() {
		return false
	}
	msg := v.Error()
	if strings.HasPrefix(msg, "Unable to evaluate name \"") && !strings.Contains(msg, ": ") {
		return true
	}
	if strings.HasPrefix(strings.ToLower(msg), "unable to evaluate target") {
		return false
	}
	return strings.HasPrefix(strings.ToLower(msg), "unable to evaluate ") &&
		(strings.HasSuffix(msg, "not found")) && (strings.Contains(msg, ": attribute '") || strings.Contains(msg, ": item "))
}

// joinSaltPath joins a relative template name to a directory the way
// Salt's loader does (os.path.normpath), reporting escapes above the root.
func joinSaltPath(dir, name string) (string, bool) {
	p := path.Clean(dir + "/" + name)
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", false
	}
	return strings.TrimPrefix(p, "./"), true
}

// nestingDepth is the deepest nesting of (), [] and {} inside the {{ }}
// and {% %} tags of text, a bound on the parser's recursion.
func nestingDepth(text string, cfg *gconfig.Config) int {
	starts := []string{cfg.VariableStartString, cfg.BlockStartString}
	ends := []string{cfg.VariableEndString, cfg.BlockEndString}
	deepest := 0
	for i := 0; i < len(text); {
		tag := -1
		for k, s := range starts {
			if s != "" && strings.HasPrefix(text[i:], s) {
				tag = k
				break
			}
		}
		if tag < 0 {
			i++
			continue
		}
		i += len(starts[tag])
		depth := 0
		for i < len(text) {
			if depth == 0 && ends[tag] != "" && strings.HasPrefix(text[i:], ends[tag]) {
				i += len(ends[tag])
				break
			}
			switch text[i] {
			case '(', '[', '{':
				depth++
				deepest = max(deepest, depth)
			case ')', ']', '}':
				if depth > 0 {
					depth--
				}
			}
			i++
		}
	}
	return deepest
}
