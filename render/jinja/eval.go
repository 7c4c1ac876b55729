package jinja

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gsalt/gsalt/wire/payload"
)

var (
	errBreak    = errors.New("break")
	errContinue = errors.New("continue")
)

// limitWriter bounds the output.
type limitWriter struct {
	b   *strings.Builder
	max int
	// n counts the writes, the items of Jinja2's output sequence so far
	// (approximately: Jinja2 yields each text and output node apart)
	n int
	// joinErr is the TypeError joining the output will raise: an item
	// that is not a str (a filter or call block's result). Python joins
	// only once the whole sequence is made, so an error raised while
	// making it comes first.
	joinErr error
}

// skip records an output item that is not a str: the join fails with err
// (the first such item's).
func (w *limitWriter) skip(err error) {
	if w.joinErr == nil {
		w.joinErr = err
	}
	w.n++
}

// joined is the outcome of joining the output after making it ended with
// err.
func (w *limitWriter) joined(err error) error {
	if err != nil {
		return err
	}
	return w.joinErr
}

func (w *limitWriter) write(s string) error {
	if w.b.Len()+len(s) > w.max {
		return &Error{Kind: "MemoryError", Msg: fmt.Sprintf("template output larger than %d bytes", w.max)}
	}
	w.b.WriteString(s)
	w.n++
	return nil
}

// frame is a variable scope.
type frame struct {
	vars   map[string]any
	parent *frame
	tmpl   *Template
	// root frames of a template hold its exported names
	root     bool
	exported []string
	ctx      *tmplCtx
	// lazy holds globals not imported yet: lookup imports a name (with
	// rt.importGlobal) into vars on its first use, so a render pays only
	// for the globals it reads.
	lazy map[string]any
	rt   *Runtime
}

// tmplCtx is the state of one template render: its blocks (for
// inheritance) and source name.
type tmplCtx struct {
	tmpl   *Template
	blocks map[string][]*blockNode
	// blockTmpl maps a block node to the template it belongs to
	blockTmpl map[*blockNode]*Template
	globals   *frame // the frame imports without context see
}

func (f *frame) lookup(name string) (any, bool) {
	for c := f; c != nil; c = c.parent {
		if v, ok := c.vars[name]; ok {
			return v, true
		}
		if raw, ok := c.lazy[name]; ok {
			v := c.rt.importGlobal(raw)
			c.vars[name] = v
			delete(c.lazy, name)
			return v, true
		}
	}
	return nil, false
}

func (f *frame) set(name string, v any) {
	f.vars[name] = v
	if f.root {
		for _, e := range f.exported {
			if e == name {
				return
			}
		}
		f.exported = append(f.exported, name)
	}
}

// Runtime is the state of one render; filters, tests and functions get
// it to evaluate callbacks and reach the environment.
type Runtime struct {
	env *Environment
	out *limitWriter
	// stream is the output of the running Python render function (the
	// template's root, a block called as self.x() or super(), an
	// imported module): Jinja2 compiles an include without context to
	// "yield from", which reaches it directly, past set and filter
	// block buffers
	stream *limitWriter
	steps  int
	depth  int
	// Data is free for the embedding application (package render keeps
	// its per-render state here).
	Data any
	// cur is the template being executed (for error locations)
	cur *Template
	// autoescape is set inside {% autoescape true %} blocks
	autoescape bool
	ctx        context.Context
	tdepth     int
	// imported caches Import of the global dicts (one copy per render)
	imported map[*payload.Map]any
	// constMode evaluates as Jinja2's optimizer does (see fold.go)
	constMode bool
	// ext is the extends state of the template whose top level runs
	// (nil inside macros and blocks)
	ext *extState
}

// extState is Jinja2's parent_template of one template's root render:
// once set, the rest of the top level runs without output.
type extState struct{ parent *Template }

// extended reports that the running top level has extended a parent:
// its output statements are skipped.
func (r *Runtime) extended() bool { return r.ext != nil && r.ext.parent != nil }

// extend runs an extends tag of the running top level.
func (r *Runtime) extend(ex *extendsNode, f *frame) error {
	if r.ext == nil {
		return r.errAt(&Error{Kind: "TemplateRuntimeError", Msg: "extends tag must be at the top level of the template"}, ex.Line)
	}
	if r.ext.parent != nil {
		return r.errAt(&Error{Kind: "TemplateRuntimeError", Msg: "extended multiple times"}, ex.Line)
	}
	name, err := r.eval(ex.Template, f)
	if err != nil {
		return r.errAt(err, ex.Line)
	}
	pt, err := r.loadTemplate(name, ex.Line)
	if err != nil {
		return r.errAt(err, ex.Line)
	}
	r.ext.parent = pt
	return nil
}

func newRuntime(env *Environment) *Runtime { return &Runtime{env: env} }

// NewRuntime returns a runtime for calling filters and callables outside
// a render (tests, embedding code).
func (e *Environment) NewRuntime(data any) *Runtime { return &Runtime{env: e, Data: data} }

// Env returns the runtime's environment.
func (r *Runtime) Env() *Environment { return r.env }

// Undefined returns an undefined value of the environment's kind.
func (r *Runtime) Undefined(name string) *Undefined {
	return &Undefined{Name: name, Strict: !r.env.opts.Lenient}
}

func (r *Runtime) undefinedHint(hint string) *Undefined {
	return &Undefined{Hint: hint, Strict: !r.env.opts.Lenient}
}

// step counts one statement or call against the render's budget and
// notices cancellation.
func (r *Runtime) step() error {
	r.steps++
	if r.steps > r.env.opts.MaxSteps {
		return &Error{Kind: "RuntimeError", Msg: fmt.Sprintf("more than %d template steps executed", r.env.opts.MaxSteps)}
	}
	if r.steps%1024 == 0 && r.ctx != nil {
		if err := r.ctx.Err(); err != nil {
			return &Error{Kind: "RuntimeError", Msg: err.Error(), Err: err}
		}
	}
	return nil
}

// globalsFrame is the frame holding the environment's and template's globals.
func (r *Runtime) globalsFrame(t *Template, vars *payload.Map) *frame {
	g := &frame{vars: map[string]any{}, rt: r, lazy: make(map[string]any, len(r.env.Globals)+len(t.Globals))}
	for k, v := range r.env.Globals {
		g.lazy[k] = v
	}
	for k, v := range t.Globals {
		g.lazy[k] = v
	}
	return g
}

// importGlobal imports a global value, once per render for dicts, so
// every template of the render shares (and can change) the same copy, as
// they share Python's objects.
func (r *Runtime) importGlobal(v any) any {
	m, ok := v.(*payload.Map)
	if !ok {
		return Import(v)
	}
	if r.imported == nil {
		r.imported = map[*payload.Map]any{}
	}
	if c, ok := r.imported[m]; ok {
		return c
	}
	c := Import(m)
	r.imported[m] = c
	return c
}

func (r *Runtime) newRootFrame(t *Template, vars *payload.Map) *frame {
	g := r.globalsFrame(t, vars)
	ctx := &frame{vars: map[string]any{}, parent: g, rt: r}
	if vars != nil {
		ctx.lazy = make(map[string]any, vars.Len())
		for _, it := range vars.Items() {
			ctx.lazy[payload.KeyString(it.Key)] = it.Value
		}
	}
	root := &frame{vars: map[string]any{}, parent: ctx, root: true, tmpl: t}
	root.ctx = &tmplCtx{tmpl: t, globals: g}
	return root
}

// renderTemplate runs t's body in root, following extends.
func (r *Runtime) renderTemplate(t *Template, root *frame) error {
	if r.tdepth >= r.env.opts.MaxTemplateDepth {
		return &Error{Kind: "RuntimeError", Msg: fmt.Sprintf("templates nested deeper than %d (include/import/extends recursion)", r.env.opts.MaxTemplateDepth)}
	}
	r.tdepth++
	defer func() { r.tdepth-- }()
	ctx := root.ctx
	if ctx.blocks == nil {
		ctx.blocks = map[string][]*blockNode{}
		ctx.blockTmpl = map[*blockNode]*Template{}
	}
	for name, b := range t.blocks {
		ctx.blocks[name] = append(ctx.blocks[name], b)
		ctx.blockTmpl[b] = t
	}
	prev := r.cur
	r.cur = t
	defer func() { r.cur = prev }()
	root.vars["self"] = &selfRef{r: r, f: root}
	parent, err := r.execTop(t, root)
	if err != nil {
		return err
	}
	for parent != nil {
		for name, b := range parent.blocks {
			ctx.blocks[name] = append(ctx.blocks[name], b)
			ctx.blockTmpl[b] = parent
		}
		r.cur = parent
		ctx.tmpl = parent
		pf := &frame{vars: map[string]any{}, parent: root.parent, root: true, tmpl: parent, ctx: ctx}
		// the child's top-level assignments are visible to the parent
		for k, v := range root.vars {
			pf.vars[k] = v
		}
		if parent, err = r.execTop(parent, pf); err != nil {
			return err
		}
	}
	return nil
}

// execTop runs a template's top-level nodes; after an extends tag the
// output is discarded and the parent template returned.
func (r *Runtime) execTop(t *Template, f *frame) (*Template, error) {
	saved := r.ext
	r.ext = &extState{}
	defer func() { r.ext = saved }()
	for _, n := range t.body {
		if ex, ok := n.(*extendsNode); ok {
			if err := r.extend(ex, f); err != nil {
				return nil, err
			}
			continue
		}
		if r.ext.parent != nil {
			// after extends Jinja2 guards every output statement with
			// "if parent_template is None" (see extended); includes and
			// call blocks still write
			switch n.(type) {
			case *dataNode, *printNode, *blockNode:
				continue
			}
		}
		if err := r.exec(n, f); err != nil {
			return nil, err
		}
	}
	return r.ext.parent, nil
}

func (r *Runtime) errAt(err error, line int) error {
	if err == nil || err == errBreak || err == errContinue {
		return err
	}
	var je *Error
	if errors.As(err, &je) {
		if je.Line == 0 {
			je.Line = line
			if r.cur != nil {
				je.Name = r.cur.Name
				je.Source = r.cur.source
			}
		}
		return err
	}
	e := &Error{Kind: "Exception", Msg: err.Error(), Line: line, Err: err}
	if r.cur != nil {
		e.Name, e.Source = r.cur.Name, r.cur.source
	}
	return e
}

func (r *Runtime) execBody(body []Node, f *frame) error {
	for _, n := range body {
		if err := r.exec(n, f); err != nil {
			return err
		}
	}
	return nil
}

// capture renders body into a string.
func (r *Runtime) capture(body []Node, f *frame) (string, error) {
	saved := r.out
	var b strings.Builder
	w := &limitWriter{b: &b, max: saved.max}
	r.out = w
	err := r.execBody(body, f)
	r.out = saved
	return b.String(), w.joined(err)
}

// captureFunc is capture for the body of a Python render function of
// its own (a block called as self.name() or super()): what it yields
// directly stays in its output.
func (r *Runtime) captureFunc(body []Node, f *frame) (string, error) {
	saved := r.stream
	var b strings.Builder
	w := &limitWriter{b: &b, max: r.out.max}
	r.stream = w
	savedOut := r.out
	r.out = r.stream
	err := r.execBody(body, f)
	r.out, r.stream = savedOut, saved
	return b.String(), w.joined(err)
}

func (r *Runtime) exec(n Node, f *frame) error {
	if err := r.step(); err != nil {
		return r.errAt(err, n.nodeLine())
	}
	err := r.execNode(n, f)
	if err != nil {
		return r.errAt(err, n.nodeLine())
	}
	return nil
}

func (r *Runtime) execNode(n Node, f *frame) error {
	switch x := n.(type) {
	case *dataNode:
		if r.extended() {
			return nil
		}
		return r.out.write(x.Text)
	case *printNode:
		if r.extended() {
			// Jinja2 guards output with "if parent_template is None"
			return nil
		}
		var s string
		safe := false
		if x.Text != nil {
			s, safe = *x.Text, x.Safe
		} else {
			v, err := r.eval(x.X, f)
			if err != nil {
				return err
			}
			_, safe = v.(Markup)
			if s, err = r.finalize(v); err != nil {
				return err
			}
		}
		if r.autoescape && !safe {
			s = htmlEscape(s)
		}
		return r.out.write(s)
	case *outputNode:
		return r.execBody(x.Items, f)
	case *ifNode:
		ok, err := r.test(x.Test, f)
		if err != nil {
			return err
		}
		if ok {
			return r.execBody(x.Body, f)
		}
		for i := range x.Elifs {
			el := &x.Elifs[i]
			ok, err := r.test(el.Test, f)
			if err != nil {
				return r.errAt(err, el.Line)
			}
			if ok {
				return r.execBody(el.Body, f)
			}
		}
		return r.execBody(x.Else, f)
	case *forNode:
		if !x.Recursive {
			return r.execFor(x, f, nil, 0)
		}
		// a recursive loop is a render function of its own: its output
		// is joined (and written) when it ends
		saved := r.out
		var b strings.Builder
		w := &limitWriter{b: &b, max: saved.max}
		r.out = w
		err := w.joined(r.execFor(x, f, nil, 0))
		r.out = saved
		if err != nil {
			return err
		}
		return r.out.write(b.String())
	case *setNode:
		v, err := r.eval(x.X, f)
		if err != nil {
			return err
		}
		return r.assign(x.Target, v, f)
	case *setBlockNode:
		// a set block's body is not guarded by an extends
		savedExt := r.ext
		r.ext = nil
		s, err := r.capture(x.Body, &frame{vars: map[string]any{}, parent: f, ctx: f.ctx})
		r.ext = savedExt
		if err != nil {
			return err
		}
		var v any = s
		if r.autoescape {
			v = Markup(s)
		}
		if x.Filter != nil {
			if v, err = r.applyFilterChain(x.Filter, v, f); err != nil {
				return err
			}
		}
		return r.assign(x.Target, v, f)
	case *macroNode:
		m := r.newMacro(x.Name, x.Args, x.Defaults, x.Body, f)
		f.set(x.Name, m)
		return nil
	case *callBlockNode:
		caller := r.newMacro("caller", x.Args, x.Defaults, x.Body, f)
		caller.anonymous = true
		v, err := r.evalCall(x.Call, f, caller)
		if err != nil {
			return err
		}
		// Jinja2 yields (or appends) the call's result as it is: what is
		// not a str fails when the output is joined (the item's index is
		// not tracked here)
		switch v.(type) {
		case string, Markup:
		default:
			r.out.skip(typeErr("sequence item 0: expected str instance, %s found", TypeName(v)))
			return nil
		}
		s, err := Str(v)
		if err != nil {
			return err
		}
		return r.out.write(s)
	case *filterBlockNode:
		s, err := r.capture(x.Body, &frame{vars: map[string]any{}, parent: f, ctx: f.ctx})
		if err != nil {
			return err
		}
		var in any = s
		if r.autoescape {
			in = Markup(s)
		}
		v, err := r.applyFilterChain(x.Filter, in, f)
		if err != nil {
			return err
		}
		if r.extended() {
			return nil
		}
		// Jinja2 yields the filter's result as it is, and joining the
		// output ("".join) takes only str (Markup is one)
		out, ok := v.(string)
		if m, isMarkup := v.(Markup); isMarkup {
			out, ok = string(m), true
		}
		if !ok {
			r.out.skip(typeErr("sequence item %d: expected str instance, %s found", r.out.n, TypeName(v)))
			return nil
		}
		return r.out.write(out)
	case *withNode:
		inner := &frame{vars: map[string]any{}, parent: f, ctx: f.ctx}
		for i, t := range x.Targets {
			v, err := r.eval(x.Values[i], f)
			if err != nil {
				return err
			}
			if err := r.assign(t, v, inner); err != nil {
				return err
			}
		}
		return r.execBody(x.Body, inner)
	case *scopeNode:
		ae, err := r.test(x.Autoescape, f)
		if err != nil {
			return err
		}
		saved := r.autoescape
		r.autoescape = ae
		defer func() { r.autoescape = saved }()
		return r.execBody(x.Body, &frame{vars: map[string]any{}, parent: f, ctx: f.ctx})
	case *doNode:
		_, err := r.eval(x.X, f)
		return err
	case *loopCtlNode:
		if x.Break {
			return errBreak
		}
		return errContinue
	case *includeNode:
		return r.execInclude(x, f)
	case *importNode:
		m, err := r.importModule(x.Template, x.WithContext, f, x.Line)
		if err != nil {
			return err
		}
		f.set(x.Target, m)
		return nil
	case *fromImportNode:
		m, err := r.importModule(x.Template, x.WithContext, f, x.Line)
		if err != nil {
			return err
		}
		for i, name := range x.Names {
			v, ok := m.vars[name]
			if !ok {
				v = r.undefinedHint(fmt.Sprintf("the template %s (imported on line %d) does not export the requested name %s", pyStrRepr(m.name), x.Line, pyStrRepr(name)))
			}
			f.set(x.Aliases[i], v)
		}
		return nil
	case *extendsNode:
		return r.extend(x, f)
	case *blockNode:
		if r.extended() {
			return nil
		}
		// the call site decides: a scoped block sees the loop and local
		// variables around it, and a required block must be overridden
		base := f
		if !x.Scoped {
			base = rootOf(f)
		}
		if x.Required && f.ctx != nil && len(f.ctx.blocks[x.Name]) <= 1 {
			return &Error{Kind: "TemplateRuntimeError", Msg: fmt.Sprintf("Required block %s not found", pyStrRepr(x.Name))}
		}
		return r.renderBlock(x.Name, 0, base)
	case *blockCallNode:
		return r.renderBlock(x.name, x.level, f)
	case *extNode:
		fn := r.env.exts[x.Tag]
		if fn == nil {
			return fmt.Errorf("unknown extension tag %q", x.Tag)
		}
		return fn(r, &extCtx{data: x.Data, f: f}, x.Body)
	}
	return fmt.Errorf("unknown node %T", n)
}

// extCtx passes an extension node's data and frame to its ExtExec.
type extCtx struct {
	data any
	f    *frame
}

// ExtData returns the data an extension node was made with.
func ExtData(v any) any {
	if c, ok := v.(*extCtx); ok {
		return c.data
	}
	return v
}

// ExtEval evaluates an expression inside an extension node.
func (r *Runtime) ExtEval(ctx any, x Expr) (any, error) {
	return r.eval(x, ctx.(*extCtx).f)
}

// ExtCapture renders an extension node's body to a string.
func (r *Runtime) ExtCapture(ctx any, body []Node) (string, error) {
	return r.capture(body, ctx.(*extCtx).f)
}

// ExtSet assigns a variable in the extension node's scope.
func (r *Runtime) ExtSet(ctx any, name string, v any) { ctx.(*extCtx).f.set(name, v) }

// ExtWrite writes text to the output.
func (r *Runtime) ExtWrite(s string) error { return r.out.write(s) }

// Lookup returns the value of a variable as a template sees it in ctx
// (an extension context) or, with a nil ctx, nothing.
func (r *Runtime) Lookup(ctx any, name string) (any, bool) {
	if c, ok := ctx.(*extCtx); ok {
		return c.f.lookup(name)
	}
	return nil, false
}

// renderBlock renders level of the block chain name in the context of
// frame f (the call site's frame for a scoped block, else the template's
// root frame); super() renders the next level in the same context.
func (r *Runtime) renderBlock(name string, level int, f *frame) error {
	// a block function has no extends state of its own
	savedExt := r.ext
	r.ext = nil
	defer func() { r.ext = savedExt }()
	ctx := f.ctx
	if ctx == nil {
		return nil
	}
	chain := ctx.blocks[name]
	if level >= len(chain) {
		return nil
	}
	b := chain[level]
	inner := &frame{vars: map[string]any{}, parent: f, ctx: ctx}
	inner.vars["super"] = Func(func(rr *Runtime, args []any, kw *payload.Map) (any, error) {
		if level+1 >= len(chain) {
			// Context.super gives an undefined value; calling it raises
			return nil, r.undefinedHint(fmt.Sprintf("there is no parent block called %s.", pyStrRepr(name))).err()
		}
		return r.captureFunc([]Node{&blockCallNode{name: name, level: level + 1}}, f)
	})
	prev := r.cur
	if t := ctx.blockTmpl[b]; t != nil {
		r.cur = t
	}
	defer func() { r.cur = prev }()
	return r.execBody(b.Body, inner)
}

// selfRef is the `self` variable: self.blockname() renders a block.
type selfRef struct {
	r *Runtime
	f *frame
}

// GetAttr returns a callable rendering the named block.
func (s *selfRef) GetAttr(name string) (any, bool) {
	if s.f.ctx == nil || len(s.f.ctx.blocks[name]) == 0 {
		return nil, false
	}
	return Func(func(r *Runtime, args []any, kw *payload.Map) (any, error) {
		return r.captureFunc([]Node{&blockCallNode{name: name}}, rootOf(s.f))
	}), true
}

// String is what printing self shows.
func (s *selfRef) String() string {
	name := "None"
	if t := s.f.tmpl; t != nil && !t.FromString {
		name = pyStrRepr(t.Name)
	}
	return "<TemplateReference " + name + ">"
}

// blockCallNode renders a block at a level of its chain (super()).
type blockCallNode struct {
	pos
	name  string
	level int
}

func rootOf(f *frame) *frame {
	for c := f; c != nil; c = c.parent {
		if c.root {
			return c
		}
	}
	return f
}

func (r *Runtime) loadTemplate(name any, line int) (*Template, error) {
	switch n := name.(type) {
	case *Template:
		return n, nil
	case string:
		parent := ""
		if r.cur != nil {
			parent = r.cur.Name
		}
		return r.env.getTemplate(r, n, parent)
	}
	if err := strictCheck(name); err != nil {
		return nil, err
	}
	return nil, typeErr("template name must be a string, got %s", TypeName(name))
}

func (r *Runtime) execInclude(x *includeNode, f *frame) error {
	v, err := r.eval(x.Template, f)
	if err != nil {
		return err
	}
	names := []any{v}
	if l, ok := v.(*List); ok {
		names = l.Items
	} else if t, ok := v.(Tuple); ok {
		names = t
	}
	var t *Template
	var lastErr error
	for _, n := range names {
		t, lastErr = r.loadTemplate(n, x.Line)
		if lastErr == nil {
			break
		}
		if !errors.Is(lastErr, ErrTemplateNotFound) {
			return lastErr
		}
	}
	if len(names) == 0 {
		if x.IgnoreMissing {
			return nil
		}
		return &Error{Kind: "TemplatesNotFound", Msg: "Tried to select from an empty list of templates."}
	}
	if t == nil {
		if x.IgnoreMissing {
			return nil
		}
		if len(names) > 1 {
			var ns []string
			for _, n := range names {
				s, _ := Str(n)
				ns = append(ns, s)
			}
			return &Error{Kind: "TemplatesNotFound", Msg: "none of the templates given were found: " + strings.Join(ns, ", "), Err: lastErr}
		}
		return lastErr
	}
	if !x.WithContext && r.stream != nil {
		// yield from template._get_default_module()._body_stream
		saved := r.out
		r.out = r.stream
		defer func() { r.out = saved }()
	} else {
		// the included root function's events are written where the
		// include stands; inside it, its own yields go there too
		savedStream := r.stream
		r.stream = r.out
		defer func() { r.stream = savedStream }()
	}
	var root *frame
	if x.WithContext {
		// Jinja2 passes the context and the local variables, not loop
		root = &frame{vars: map[string]any{"loop": r.Undefined("loop")}, parent: f, root: true, tmpl: t}
	} else {
		g := r.globalsFrame(t, nil)
		root = &frame{vars: map[string]any{}, parent: g, root: true, tmpl: t}
		root.ctx = &tmplCtx{tmpl: t, globals: g}
	}
	root.ctx = &tmplCtx{tmpl: t}
	if f.ctx != nil {
		root.ctx.globals = f.ctx.globals
	}
	return r.renderTemplate(t, root)
}

// Module is an imported template: its exported variables and macros,
// and its output as its str().
type Module struct {
	name   string
	vars   map[string]any
	order  []string
	output string
}

// GetAttr returns an exported name.
func (m *Module) GetAttr(name string) (any, bool) {
	v, ok := m.vars[name]
	return v, ok
}

// String is the module's rendered output.
func (m *Module) String() string { return m.output }

// Names returns the exported names in definition order.
func (m *Module) Names() []string { return m.order }

func (r *Runtime) importModule(x Expr, withContext bool, f *frame, line int) (*Module, error) {
	v, err := r.eval(x, f)
	if err != nil {
		return nil, err
	}
	if m, ok := v.(*Module); ok {
		return m, nil
	}
	t, err := r.loadTemplate(v, line)
	if err != nil {
		return nil, err
	}
	return r.RenderModule(t, withContext, f)
}

// RenderModule runs t as a module (import): with context it sees the
// caller's variables, else only globals.
func (r *Runtime) RenderModule(t *Template, withContext bool, f *frame) (*Module, error) {
	var root *frame
	if withContext && f != nil {
		root = &frame{vars: map[string]any{}, parent: f, root: true, tmpl: t}
	} else {
		root = &frame{vars: map[string]any{}, parent: r.globalsFrame(t, nil), root: true, tmpl: t}
	}
	root.ctx = &tmplCtx{tmpl: t}
	saved := r.out
	var b strings.Builder
	max := r.env.opts.MaxOutput
	if saved != nil {
		max = saved.max
	}
	w := &limitWriter{b: &b, max: max}
	r.out = w
	savedStream := r.stream
	r.stream = r.out
	err := w.joined(r.renderTemplate(t, root))
	r.out = saved
	r.stream = savedStream
	if err != nil {
		return nil, err
	}
	m := &Module{name: t.Name, vars: map[string]any{}, output: b.String()}
	for _, name := range root.exported {
		if strings.HasPrefix(name, "_") {
			continue
		}
		m.vars[name] = root.vars[name]
		m.order = append(m.order, name)
	}
	return m, nil
}

// assign binds a target (name, tuple of names, namespace attribute).
func (r *Runtime) assign(target Expr, v any, f *frame) error {
	switch t := target.(type) {
	case *nameExpr:
		f.set(t.Name, v)
		return nil
	case *tupleExpr:
		items, err := Iterate(v)
		if err != nil {
			return typeErr("cannot unpack non-iterable %s object", TypeName(v))
		}
		if len(items) != len(t.Items) {
			if len(items) > len(t.Items) {
				return valueErr("too many values to unpack (expected %d)", len(t.Items))
			}
			return valueErr("not enough values to unpack (expected %d, got %d)", len(t.Items), len(items))
		}
		for i, sub := range t.Items {
			if err := r.assign(sub, items[i], f); err != nil {
				return err
			}
		}
		return nil
	case *nsRefExpr:
		ns, ok := f.lookup(t.Name)
		n, isNS := ns.(*Namespace)
		if !ok || !isNS {
			return &Error{Kind: "TemplateRuntimeError", Msg: "cannot assign attribute on non-namespace object"}
		}
		n.M.Set(t.Attr, v)
		return nil
	}
	return fmt.Errorf("cannot assign to %T", target)
}

// finalize is the text of an {{ expression }}'s value: the
// environment's Finalize, or str().
func (r *Runtime) finalize(v any) (string, error) {
	if fin := r.env.opts.Finalize; fin != nil {
		return fin(v)
	}
	return Str(v)
}

func (r *Runtime) test(x Expr, f *frame) (bool, error) {
	v, err := r.eval(x, f)
	if err != nil {
		return false, err
	}
	return Truthy(v)
}

// ExtImport imports a template as a module from an extension node, as
// {% import name as x [with context] %} does.
func (r *Runtime) ExtImport(ctx any, name any, withContext bool, line int) (*Module, error) {
	f := ctx.(*extCtx).f
	t, err := r.loadTemplate(name, line)
	if err != nil {
		return nil, err
	}
	return r.RenderModule(t, withContext, f)
}

// ParseWithContext reads an optional "with context" / "without context"
// (def when absent).
func (p *Parser) ParseWithContext(def bool) bool { return p.parseContext(def) }
