package render

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"strings"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/render/jinja"
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
	// MaxSteps bounds the statements and calls of a render.
	MaxSteps = 10_000_000
	// MaxNesting bounds bracket nesting in a template (parser recursion).
	MaxNesting = 256
	// maxRange is Jinja2's sandbox MAX_RANGE (Salt renders in a
	// SandboxedEnvironment).
	maxRange = 100000
)

// rootName names the top template in errors and for the loader.
const rootName = "<template>"

// Jinja is Salt's jinja renderer on gsalt's own Jinja2 engine
// (render/jinja): Salt's context variables, salt[...] calls, Salt's
// filters, tests and tags (import_yaml, load_yaml, ...), salt:// imports
// through Context.Files, StrictUndefined like Salt 3006 (opts
// allow_undefined gives the lenient Undefined), trim_blocks,
// lstrip_blocks and the other jinja_env options, and the trailing
// newline kept as Salt does. See JINJA-FEATURES.md.
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
	maxOut := MaxOutputSize
	if j.MaxOutputSize > 0 {
		maxOut = j.MaxOutputSize
	}
	st := newRenderState(ctx, rc, maxOut)
	out, err := st.renderRoot(text)
	if err != nil {
		return nil, err
	}
	if strings.HasSuffix(text, "\n") {
		out += "\n"
	}
	return out, nil
}

// renderState is everything one render shares: the environment (its
// globals change as Salt's loader loads files), the files loaded and the
// first typed error raised by Salt-specific code.
type renderState struct {
	ctx      context.Context
	rc       *Context
	log      *slog.Logger
	env      *jinja.Environment
	strict   bool
	tpldir   string
	loads    int
	maxOut   int
	firstErr error
	files    map[string]string
	// sources maps template names to their text (error excerpts)
	sources map[string]string
	// paths maps template names to the local file they came from
	paths map[string]string
	// vars is contextVars as setGlobals computed it, also the top
	// template's render variables (computing them twice was a tenth of
	// a small reactor render)
	vars *payload.Map
}

func newRenderState(ctx context.Context, rc *Context, maxOut int) *renderState {
	st := &renderState{ctx: ctx, rc: rc, log: rc.Log, files: map[string]string{}, maxOut: maxOut,
		sources: map[string]string{}, paths: map[string]string{}}
	if st.log == nil {
		st.log = slog.Default()
	}
	o := jinja.Options{
		TrimBlocks:       optBool(rc.Opts, "jinja_trim_blocks"),
		LstripBlocks:     optBool(rc.Opts, "jinja_lstrip_blocks"),
		Lenient:          optBool(rc.Opts, "allow_undefined"),
		MaxOutput:        maxOut,
		MaxSteps:         MaxSteps,
		MaxRange:         maxRange,
		Sandboxed:        true,
		MaxCallDepth:     MaxMacroDepth,
		MaxTemplateDepth: MaxIncludeDepth,
		Finalize:         saltFinalize,
		// Salt's filters and tests hold no render state: one table each
		// serves every render (see sharedFilterTable).
		Filters: sharedFilterTable(),
		Tests:   sharedTestTable(),
	}
	envKey := "jinja_env"
	if rc.SLS != "" {
		envKey = "jinja_sls_env"
	}
	if m := rc.Opts.Map(envKey); m != nil {
		applyJinjaEnvOpts(&o, m)
	}
	st.strict = !o.Lenient
	st.env = jinja.NewEnvironment(o)
	st.env.Loader = &saltLoader{st: st}
	st.installTags()
	st.setGlobals()
	return st
}

func optBool(m *payload.Map, key string) bool {
	v, ok := m.Get(key)
	return ok && payload.Truthy(v)
}

// applyJinjaEnvOpts applies Salt's jinja_env / jinja_sls_env options.
func applyJinjaEnvOpts(o *jinja.Options, m *payload.Map) {
	for _, it := range m.Items() {
		k := strings.ToLower(payload.KeyString(it.Key))
		s, isStr := it.Value.(string)
		str := func(dst *string) {
			if isStr {
				*dst = s
			}
		}
		switch k {
		case "trim_blocks":
			o.TrimBlocks = payload.Truthy(it.Value)
		case "lstrip_blocks":
			o.LstripBlocks = payload.Truthy(it.Value)
		case "keep_trailing_newline":
			o.KeepTrailingNewline = payload.Truthy(it.Value)
		case "block_start_string":
			str(&o.BlockStart)
		case "block_end_string":
			str(&o.BlockEnd)
		case "variable_start_string":
			str(&o.VariableStart)
		case "variable_end_string":
			str(&o.VariableEnd)
		case "comment_start_string":
			str(&o.CommentStart)
		case "comment_end_string":
			str(&o.CommentEnd)
		case "line_statement_prefix":
			str(&o.LineStatementPrefix)
		case "line_comment_prefix":
			str(&o.LineCommentPrefix)
		case "newline_sequence":
			str(&o.NewlineSequence)
		}
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

// setGlobals fills the environment's globals: Salt's context (Salt puts
// it both in the globals and in the render variables), functions and the
// salt object.
func (st *renderState) setGlobals() {
	g := st.env.Globals
	vars := st.contextVars()
	st.vars = vars
	for _, it := range vars.Items() {
		g[payload.KeyString(it.Key)] = it.Value
	}
	if td, ok := vars.Get("tpldir"); ok {
		st.tpldir, _ = td.(string)
	}
	g["salt"] = &saltFuncs{st: st}
	for name, fn := range st.globalFunctions() {
		g[name] = fn
	}
}

// renderRoot renders the top template.
func (st *renderState) renderRoot(text string) (string, error) {
	if d := nestingDepth(text, st.env.Options()); d > MaxNesting {
		return "", fmt.Errorf("%w: brackets nested deeper than %d", ErrTemplate, MaxNesting)
	}
	st.sources[rootName] = text
	tpl, err := st.env.Parse(rootName, text)
	if err == nil {
		tpl.FromString = true
	}
	if err != nil {
		return "", st.wrapErr(err)
	}
	vars := st.vars
	if vars == nil {
		vars = st.contextVars()
	}
	out, err := tpl.RenderContext(st.ctx, vars, st)
	if err != nil {
		return "", st.wrapErr(err)
	}
	return out, nil
}

// wrapErr turns an engine error into an error wrapping ErrTemplate (and
// the typed error raised by Salt code, such as ErrNotFound), with Salt's
// message: "Jinja variable 'x' is undefined; line 3" and the excerpt with
// its "<======================" marker.
func (st *renderState) wrapErr(err error) error {
	if err == nil {
		return nil
	}
	if cerr := st.ctx.Err(); cerr != nil && errors.Is(err, cerr) {
		return fmt.Errorf("%w: %w", ErrTemplate, cerr)
	}
	var je *jinja.Error
	if !errors.As(err, &je) {
		if errors.Is(err, ErrTemplate) {
			return err
		}
		return fmt.Errorf("%w: %w", ErrTemplate, err)
	}
	loc := st.location(je)
	var msg string
	switch je.Kind {
	case "UndefinedError":
		msg = "Jinja variable " + je.Msg
	case "TemplateSyntaxError", "TemplateAssertionError", "TemplateRuntimeError", "SecurityError", "FilterArgumentError":
		// Salt reports TemplateRuntimeError and its subclasses as syntax errors
		msg = "Jinja syntax error: " + je.Msg
	default:
		if errors.Is(je.Err, ErrRaised) {
			return &raisedError{msg: "Jinja error: " + je.Msg + loc}
		}
		if je.Kind == "TemplateNotFound" && errors.Is(je.Err, ErrNotFound) {
			// Salt: "Jinja error: <template name>", the location
			// Salt follows the excerpt with its traceback; gsalt with the
			// loader's reason
			return &notFoundError{msg: "Jinja error: " + je.Msg + loc + "\n" + je.Err.Error(), err: je.Err}
		}
		if je.Err != nil && (errors.Is(je.Err, ErrTemplate) || errors.Is(je.Err, ErrNotFound)) {
			inner := je.Err
			if !errors.Is(inner, ErrTemplate) {
				inner = fmt.Errorf("%w: %w", ErrTemplate, inner)
			}
			return fmt.Errorf("%w%s", inner, loc)
		}
		if je.Kind == "MemoryError" {
			return &limitError{msg: "Jinja error: " + je.Msg + loc}
		}
		msg = "Jinja error: " + je.Msg
		if je.Kind == "SaltInvocationError" || je.Kind == "CommandExecutionError" {
			// render_jinja_tmpl's own clause for Salt's exceptions
			msg = "Problem running salt function in Jinja template: " + je.Msg
		}
	}
	if je.Err != nil {
		return fmt.Errorf("%w: %s%s: %w", ErrTemplate, msg, loc, je.Err)
	}
	return fmt.Errorf("%w: %s%s", ErrTemplate, msg, loc)
}

// raisedError is a template's raise('msg'): Salt's "Jinja error: msg"
// with the location; it is ErrRaised (and so ErrTemplate).
type raisedError struct{ msg string }

func (e *raisedError) Error() string { return ErrTemplate.Error() + ": " + e.msg }

// Unwrap returns ErrRaised.
func (e *raisedError) Unwrap() error { return ErrRaised }

// limitError is a template stopped by one of gsalt's resource bounds
// (Jinja error Kind MemoryError); it is ErrTemplate and ErrLimit.
type limitError struct{ msg string }

func (e *limitError) Error() string { return ErrTemplate.Error() + ": " + e.msg }

// Unwrap returns ErrTemplate and ErrLimit.
func (e *limitError) Unwrap() []error { return []error{ErrTemplate, ErrLimit} }

// notFoundError is a missing template in Salt's words; it is ErrTemplate
// and the loader's error (ErrNotFound).
type notFoundError struct {
	msg string
	err error
}

func (e *notFoundError) Error() string { return ErrTemplate.Error() + ": " + e.msg }

// Unwrap returns ErrTemplate and the loader's error.
func (e *notFoundError) Unwrap() []error { return []error{ErrTemplate, e.err} }

// location is Salt's text locating an error: "; line N" and an excerpt
// for the top template, or the file and an excerpt for another one.
func (st *renderState) location(je *jinja.Error) string {
	if je.Line <= 0 {
		return ""
	}
	src := je.Source
	if src == "" {
		src = st.sources[je.Name]
	}
	if je.Name == rootName || je.Name == "" {
		return fmt.Sprintf("; line %d\n\n%s", je.Line, errorContext(src, je.Line))
	}
	name := je.Name
	if p := st.paths[je.Name]; p != "" {
		name = p
	}
	code := ""
	if lines := strings.Split(src, "\n"); je.Line <= len(lines) {
		code = strings.TrimSpace(lines[je.Line-1])
	}
	_ = code
	return fmt.Sprintf("\n%s(%d):\n%s", name, je.Line, errorContext(src, je.Line))
}

// errorContext is Salt's get_context: five lines either side of line,
// the line marked.
func errorContext(template string, line int) string {
	lines := py.SplitLines(template, false)
	if line > len(lines) {
		return template
	}
	start := max(0, line-5-1)
	end := min(len(lines), line+5)
	at := line - start - 1
	var buf []string
	if start > 0 {
		buf = append(buf, "[...]")
		at++
	}
	buf = append(buf, lines[start:end]...)
	if end < len(lines) {
		buf = append(buf, "[...]")
	}
	buf[at] += "    <======================"
	return "---\n" + strings.Join(buf, "\n") + "\n---"
}

// fail records a typed error (the first one wins) and returns it.
func (st *renderState) fail(err error) error {
	if st.firstErr == nil {
		st.firstErr = err
	}
	return err
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

// nestingDepth is the deepest nesting of (), [] and {} inside the
// expression and statement tags of text, a bound on the parser's
// recursion.
func nestingDepth(text string, o jinja.Options) int {
	starts := []string{o.VariableStart, o.BlockStart}
	ends := []string{o.VariableEnd, o.BlockEnd}
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
