// Package jinja is gsalt's Jinja2 engine: a lexer, parser and interpreter
// for the template language of Python's Jinja2 3.1 (the "Template
// Designer Documentation" grammar), evaluated with Python's value
// semantics on gsalt's data model (wire/payload): *payload.Map dicts in
// insertion order, *List lists shared by reference, Tuple tuples, int64
// and *big.Int integers, float64, string, []byte, bool and nil (None).
// It knows nothing about Salt; package render adds Salt's context,
// filters, loader and tags on top of it.
package jinja

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/gsalt/gsalt/wire/payload"
)

// ErrTemplateNotFound is returned (wrapped) by loaders for a missing
// template; include ... ignore missing skips such templates.
var ErrTemplateNotFound = errors.New("template not found")

// Error is a template error: a syntax error at parse time, or a Python
// exception (UndefinedError, TypeError, ZeroDivisionError, ...) raised
// while rendering. Name and Line locate it.
type Error struct {
	Kind string // Python exception class: TemplateSyntaxError, UndefinedError, TypeError, ...
	Msg  string
	Name string // template name ("" for a string template)
	Line int
	// Source is the template source of Name, for excerpts.
	Source string
	// Err is a wrapped Go error (from a Go function or loader), if any.
	Err error
}

// Error is the message (Python's str(exc)).
func (e *Error) Error() string { return e.Msg }

// Unwrap returns the wrapped Go error.
func (e *Error) Unwrap() error { return e.Err }

// IsSyntax reports whether e is a template syntax error.
func (e *Error) IsSyntax() bool { return e.Kind == "TemplateSyntaxError" }

// Options configure an Environment like jinja2.Environment's arguments.
type Options struct {
	BlockStart, BlockEnd       string // "{%", "%}"
	VariableStart, VariableEnd string // "{{", "}}"
	CommentStart, CommentEnd   string // "{#", "#}"
	TrimBlocks, LstripBlocks   bool
	KeepTrailingNewline        bool
	// LineStatementPrefix and LineCommentPrefix enable Jinja2's line
	// statements ("# for x in y") and line comments ("## note").
	LineStatementPrefix, LineCommentPrefix string
	// NewlineSequence replaces the newlines of template data ("" keeps
	// them, as "\n" does).
	NewlineSequence string
	// Lenient makes undefined values the default Undefined (printing as
	// "", falsy, iterable as empty) instead of StrictUndefined.
	Lenient bool
	// MaxOutput bounds the rendered text (bytes); 0 means 64 MiB.
	MaxOutput int
	// MaxSteps bounds the statements and calls one render executes; 0
	// means 10,000,000.
	MaxSteps int
	// MaxRange bounds range(): 0 means 1<<22 items. Jinja2's sandbox
	// (which Salt uses) allows 100,000.
	MaxRange int
	// Sandboxed gives range() Jinja2's SandboxedEnvironment error text.
	Sandboxed bool
	// MaxCallDepth bounds nested macro and function calls (0: 256), and
	// MaxTemplateDepth nested include/import/extends (0: 32).
	MaxCallDepth, MaxTemplateDepth int
	// Finalize, when set, turns the value of every {{ expression }} into
	// its text instead of str() (Jinja2's finalize followed by str()).
	Finalize func(v any) (string, error)
	// Filters and Tests, when not nil, are the environment's filter and
	// test tables, used as they are: an embedder rendering many templates
	// builds its tables once (see BuiltinFilters) and shares them, and
	// nothing may write to a shared table. nil gives the environment its
	// own copy of the builtin ones.
	Filters map[string]FilterFunc
	Tests   map[string]TestFunc
}

// FilterFunc is a filter: v|name(args, kwargs). Filters and Funcs get
// and return engine values (see Import: lists are *List, dicts
// *payload.Map holding engine values); a returned dict is used as is, so
// convert payload data with Import first.
type FilterFunc func(r *Runtime, v any, args []any, kwargs *payload.Map) (any, error)

// TestFunc is a test: v is name(args).
type TestFunc func(r *Runtime, v any, args []any, kwargs *payload.Map) (bool, error)

// TagFunc parses an extension statement (its name already consumed) and
// returns its node, made with NewExtNode. The statement's block end is
// consumed by the caller.
type TagFunc func(p *Parser, line int) (Node, error)

// ExtExec runs an extension node.
type ExtExec func(r *Runtime, data any, body []Node) error

// NewExtNode makes a node for an extension tag; exec runs it.
func NewExtNode(line int, tag string, data any, body []Node) Node {
	return &extNode{pos{line}, tag, data, body}
}

// Loader finds templates by name for include, import, from and extends.
// parent is the name of the template doing the loading ("" for the
// top). It returns the source and the name errors and later relative
// loads use; ErrTemplateNotFound (wrapped) when it does not exist.
type Loader interface {
	Load(r *Runtime, name, parent string) (source, resolved string, err error)
}

// Environment holds the configuration, globals, filters and tests shared
// by templates. Configure it before rendering; it is then safe for
// concurrent use.
type Environment struct {
	opts    Options
	Globals map[string]any
	Filters map[string]FilterFunc
	Tests   map[string]TestFunc
	Loader  Loader
	tags    map[string]TagFunc
	exts    map[string]ExtExec

	mu    sync.Mutex
	cache map[string]*Template
}

// NewEnvironment returns an environment with Jinja2's default delimiters
// (for empty ones), builtin filters, tests and globals.
func NewEnvironment(o Options) *Environment {
	def := func(s *string, d string) {
		if *s == "" {
			*s = d
		}
	}
	def(&o.BlockStart, "{%")
	def(&o.BlockEnd, "%}")
	def(&o.VariableStart, "{{")
	def(&o.VariableEnd, "}}")
	def(&o.CommentStart, "{#")
	def(&o.CommentEnd, "#}")
	if o.MaxOutput <= 0 {
		o.MaxOutput = 64 << 20
	}
	if o.MaxSteps <= 0 {
		o.MaxSteps = 10_000_000
	}
	if o.MaxRange <= 0 {
		o.MaxRange = 1 << 22
	}
	if o.MaxCallDepth <= 0 {
		o.MaxCallDepth = 256
	}
	if o.MaxTemplateDepth <= 0 {
		o.MaxTemplateDepth = 32
	}
	e := &Environment{opts: o, Globals: builtinGlobals(), Filters: o.Filters, Tests: o.Tests,
		tags: map[string]TagFunc{}, exts: map[string]ExtExec{}, cache: map[string]*Template{}}
	if e.Filters == nil {
		e.Filters = builtinFilters()
	}
	if e.Tests == nil {
		e.Tests = builtinTests()
	}
	e.opts.Filters, e.opts.Tests = nil, nil
	return e
}

// BuiltinFilters returns a new table of Jinja2's builtin filters.
func BuiltinFilters() map[string]FilterFunc { return builtinFilters() }

// BuiltinTests returns a new table of Jinja2's builtin tests.
func BuiltinTests() map[string]TestFunc { return builtinTests() }

// Options returns the environment's options.
func (e *Environment) Options() Options { return e.opts }

// AddTag registers an extension statement: parse parses it, exec runs it.
func (e *Environment) AddTag(name string, parse TagFunc, exec ExtExec) {
	e.tags[name] = parse
	e.exts[name] = exec
}

// Template is a parsed template.
type Template struct {
	env    *Environment
	Name   string
	source string
	body   []Node
	blocks map[string]*blockNode
	// FromString marks a template made from a string (Jinja2's
	// from_string: its name is None), not loaded by name.
	FromString bool
	// Globals are this template's own globals (jinja2's template.globals).
	Globals map[string]any
	// compileAE is the autoescape setting the compiler folds constants
	// with: 0 off, 1 on, -1 known only at run time (no folding)
	compileAE int8
}

// Parse parses source as the template called name.
func (e *Environment) Parse(name, source string) (t *Template, err error) {
	defer func() {
		if p := recover(); p != nil {
			t, err = nil, &Error{Kind: "InternalError", Msg: fmt.Sprintf("template parser failure: %v", p), Name: name}
		}
	}()
	return e.parse(name, source)
}

func (e *Environment) parse(name, source string) (*Template, error) {
	src := source
	if !e.opts.KeepTrailingNewline {
		if strings.HasSuffix(src, "\r\n") {
			src = src[:len(src)-2]
		} else if strings.HasSuffix(src, "\n") || strings.HasSuffix(src, "\r") {
			src = src[:len(src)-1]
		}
	}
	src = strings.ReplaceAll(strings.ReplaceAll(src, "\r\n", "\n"), "\r", "\n")
	if e.opts.LineStatementPrefix != "" || e.opts.LineCommentPrefix != "" {
		src = e.lineSyntax(src)
	}
	lx := &lexer{src: src, name: name, opts: &e.opts}
	toks, err := lx.tokenize()
	if err != nil {
		return nil, withSource(err, source)
	}
	if nl := e.opts.NewlineSequence; nl != "" && nl != "\n" {
		for i := range toks {
			if toks[i].kind == tData {
				toks[i].val = strings.ReplaceAll(toks[i].val, "\n", nl)
			}
		}
	}
	p := &Parser{toks: toks, name: name, env: e}
	body, err := p.parseTemplate()
	if err != nil {
		return nil, withSource(err, source)
	}
	t := &Template{env: e, Name: name, source: source, body: body, blocks: map[string]*blockNode{}, Globals: map[string]any{}}
	if err := t.check(body); err != nil {
		return nil, withSource(err, source)
	}
	return t, nil
}

func withSource(err error, src string) error {
	var je *Error
	if errors.As(err, &je) && je.Source == "" {
		je.Source = src
	}
	return err
}

// lineSyntax rewrites line statements into statement tags and drops line
// comments (Jinja2's line_statement_prefix and line_comment_prefix).
func (e *Environment) lineSyntax(src string) string {
	lines := strings.SplitAfter(src, "\n")
	var b strings.Builder
	for _, l := range lines {
		body := strings.TrimSuffix(l, "\n")
		trimmed := strings.TrimLeft(body, " \t\v")
		if p := e.opts.LineStatementPrefix; p != "" && strings.HasPrefix(trimmed, p) {
			stmt := strings.TrimSpace(strings.TrimPrefix(trimmed, p))
			if c := e.opts.LineCommentPrefix; c != "" {
				if i := strings.Index(stmt, c); i >= 0 {
					stmt = strings.TrimSpace(stmt[:i])
				}
			}
			b.WriteString(e.opts.BlockStart + " " + stmt + " " + e.opts.BlockEnd)
			continue
		}
		if c := e.opts.LineCommentPrefix; c != "" {
			if i := strings.Index(body, c); i >= 0 {
				rest := strings.TrimRight(body[:i], " \t\v")
				if i == 0 || rest != body[:i] || strings.TrimSpace(body[:i]) == "" || true {
					b.WriteString(rest)
					if strings.HasSuffix(l, "\n") {
						b.WriteString("\n")
					}
					continue
				}
			}
		}
		b.WriteString(l)
	}
	return b.String()
}

// check collects blocks and verifies filter and test names, as Jinja2's
// compiler does.
func (t *Template) check(nodes []Node) error {
	err := t.checkNodes(nodes, false)
	if err == nil {
		err = checkExtends(nodes, true, false)
	}
	var je *Error
	if errors.As(err, &je) && je.Name == "" {
		je.Name = t.Name
	}
	return err
}

// checkNodes compiles the statements n: soft is Jinja2's soft frame (the
// test and bodies of an if statement, an inline if), where an unknown
// filter or test fails only when it is called. A loop, macro, call
// block, filter block, with, set block, scope and block have frames of
// their own.
func (t *Template) checkNodes(n any, soft bool) error {
	var err error
	sub := func(n any, soft bool) {
		if err == nil {
			err = t.checkNodes(n, soft)
		}
	}
	walkNodes(n, func(n any) bool {
		if err != nil {
			return false
		}
		switch x := n.(type) {
		case *blockNode:
			if _, dup := t.blocks[x.Name]; dup {
				err = &Error{Kind: "TemplateSyntaxError", Msg: fmt.Sprintf("block %s defined twice", pyStrRepr(x.Name)), Name: t.Name, Line: x.Line}
				return false
			}
			t.blocks[x.Name] = x
			sub(x.Body, false)
			return false
		case *ifNode:
			sub(x.Test, true)
			sub(x.Body, true)
			for i := range x.Elifs {
				sub(&x.Elifs[i], true)
			}
			sub(x.Else, true)
			return false
		case *forNode:
			sub(x.Target, soft)
			sub(x.Iter, soft)
			sub(x.Test, false)
			sub(x.Body, false)
			sub(x.Else, false)
			return false
		case *macroNode:
			sub(x.Defaults, false)
			sub(x.Body, false)
			return false
		case *callBlockNode:
			sub(x.Call, soft)
			sub(x.Defaults, false)
			sub(x.Body, false)
			return false
		case *filterBlockNode:
			sub(x.Filter, false)
			sub(x.Body, false)
			return false
		case *withNode:
			sub(x.Values, soft)
			sub(x.Body, false)
			return false
		case *setBlockNode:
			if x.Filter != nil {
				sub(x.Filter, false)
			}
			sub(x.Body, false)
			return false
		case *scopeNode:
			sub(x.Autoescape, soft)
			saved := t.compileAE
			if t.compileAE >= 0 {
				if v, cerr := constEval(t, x.Autoescape); cerr == nil {
					t.compileAE = 0
					if truthy(v) {
						t.compileAE = 1
					}
				} else {
					t.compileAE = -1
				}
			}
			sub(x.Body, false)
			t.compileAE = saved
			return false
		case *extNode:
			if ex, ok := x.Data.(Expr); ok {
				sub(ex, soft)
			}
			sub(x.Body, false)
			return false
		case *printNode:
			// an output expression that is constant as a whole becomes
			// text at compile time: nothing else of it is compiled
			if s, safe, ok := foldPrint(t, x.X); ok {
				x.Text = &s
				x.Safe = safe
				return false
			}
		case *constExpr, *nameExpr, *tupleExpr, *listExpr, *dictExpr, *getattrExpr, *getitemExpr,
			*sliceExpr, *binExpr, *unaryExpr, *compareExpr, *condExpr, *concatExpr, *callExpr,
			*filterExpr, *testExpr, *nsRefExpr, *foldExpr:
			err = t.compileExpr(x.(Expr), nil, soft)
			return false
		}
		return true
	})
	return err
}

// Render renders the template with vars (converted with Import).
func (t *Template) Render(vars map[string]any) (string, error) {
	m := &payload.Map{}
	for k, v := range vars {
		m.Set(k, v)
	}
	return t.RenderMap(m)
}

// RenderMap renders the template with the variables of vars, in order.
func (t *Template) RenderMap(vars *payload.Map) (string, error) {
	return t.RenderContext(context.Background(), vars, nil)
}

// RenderContext renders the template with vars, stopping when ctx is
// done; data is stored in the runtime's Data for filters and functions.
func (t *Template) RenderContext(ctx context.Context, vars *payload.Map, data any) (out string, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = "", &Error{Kind: "InternalError", Msg: fmt.Sprintf("template engine failure: %v", p), Name: t.Name}
		}
	}()
	r := newRuntime(t.env)
	r.ctx = ctx
	r.Data = data
	root := r.newRootFrame(t, vars)
	var b strings.Builder
	w := &limitWriter{b: &b, max: t.env.opts.MaxOutput}
	r.out = w
	r.stream = r.out
	if err := w.joined(r.renderTemplate(t, root)); err != nil {
		return "", err
	}
	return b.String(), nil
}

// getTemplate loads and parses a template through the loader, caching it
// by resolved name and source.
func (e *Environment) getTemplate(r *Runtime, name, parent string) (*Template, error) {
	if e.Loader == nil {
		return nil, &Error{Kind: "TemplateNotFound", Msg: name, Err: ErrTemplateNotFound}
	}
	src, resolved, err := e.Loader.Load(r, name, parent)
	if err != nil {
		var je *Error
		if errors.As(err, &je) {
			return nil, err
		}
		if errors.Is(err, ErrTemplateNotFound) {
			return nil, &Error{Kind: "TemplateNotFound", Msg: name, Err: err}
		}
		return nil, &Error{Kind: "TemplateError", Msg: err.Error(), Err: err}
	}
	key := resolved + "\x00" + src
	e.mu.Lock()
	t := e.cache[key]
	e.mu.Unlock()
	if t != nil {
		return t, nil
	}
	t, err = e.Parse(resolved, src)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	if len(e.cache) > 256 {
		e.cache = map[string]*Template{}
	}
	e.cache[key] = t
	e.mu.Unlock()
	return t, nil
}

// walkNodes visits every statement and expression node.
func walkNodes(n any, fn func(any) bool) {
	if n == nil {
		return
	}
	switch x := n.(type) {
	case []Node:
		for _, c := range x {
			walkNodes(c, fn)
		}
		return
	case []Expr:
		for _, c := range x {
			walkNodes(c, fn)
		}
		return
	}
	if !fn(n) {
		return
	}
	args := func(a callArgs) {
		walkNodes(a.Args, fn)
		walkNodes(a.KwVals, fn)
		if a.DynArgs != nil {
			walkNodes(a.DynArgs, fn)
		}
		if a.DynKwarg != nil {
			walkNodes(a.DynKwarg, fn)
		}
	}
	e := func(x Expr) {
		if x != nil {
			walkNodes(x, fn)
		}
	}
	switch x := n.(type) {
	case *outputNode:
		walkNodes(x.Items, fn)
	case *printNode:
		e(x.X)
	case *ifNode:
		e(x.Test)
		walkNodes(x.Body, fn)
		for i := range x.Elifs {
			walkNodes(&x.Elifs[i], fn)
		}
		walkNodes(x.Else, fn)
	case *forNode:
		e(x.Target)
		e(x.Iter)
		e(x.Test)
		walkNodes(x.Body, fn)
		walkNodes(x.Else, fn)
	case *setNode:
		e(x.Target)
		e(x.X)
	case *setBlockNode:
		if x.Filter != nil {
			walkNodes(x.Filter, fn)
		}
		walkNodes(x.Body, fn)
	case *macroNode:
		walkNodes(x.Defaults, fn)
		walkNodes(x.Body, fn)
	case *callBlockNode:
		walkNodes(x.Call, fn)
		walkNodes(x.Defaults, fn)
		walkNodes(x.Body, fn)
	case *filterBlockNode:
		walkNodes(x.Filter, fn)
		walkNodes(x.Body, fn)
	case *withNode:
		walkNodes(x.Values, fn)
		walkNodes(x.Body, fn)
	case *doNode:
		e(x.X)
	case *includeNode:
		e(x.Template)
	case *importNode:
		e(x.Template)
	case *fromImportNode:
		e(x.Template)
	case *extendsNode:
		e(x.Template)
	case *blockNode:
		walkNodes(x.Body, fn)
	case *scopeNode:
		walkNodes(x.Body, fn)
	case *extNode:
		if ex, ok := x.Data.(Expr); ok {
			walkNodes(ex, fn)
		}
		walkNodes(x.Body, fn)
	case *tupleExpr:
		walkNodes(x.Items, fn)
	case *listExpr:
		walkNodes(x.Items, fn)
	case *dictExpr:
		walkNodes(x.Keys, fn)
		walkNodes(x.Vals, fn)
	case *getattrExpr:
		e(x.Obj)
	case *getitemExpr:
		e(x.Obj)
		e(x.Key)
	case *sliceExpr:
		e(x.Start)
		e(x.Stop)
		e(x.Step)
	case *binExpr:
		e(x.L)
		e(x.R)
	case *unaryExpr:
		e(x.X)
	case *compareExpr:
		e(x.First)
		walkNodes(x.Rest, fn)
	case *condExpr:
		e(x.Test)
		e(x.Then)
		e(x.Else)
	case *foldExpr:
		e(x.X)
	case *concatExpr:
		walkNodes(x.Items, fn)
	case *callExpr:
		e(x.Fn)
		args(x.callArgs)
	case *filterExpr:
		e(x.X)
		args(x.callArgs)
	case *testExpr:
		e(x.X)
		args(x.callArgs)
	}
}

// checkExtends marks the extends tags inside top-level if statements,
// which Jinja2's compiler accepts as top level (soft frames), and refuses
// one anywhere else: loops, macros, blocks, autoescape scopes and the
// like have frames of their own.
func checkExtends(n any, toplevel, nested bool) error {
	var err error
	walkNodes(n, func(n any) bool {
		if err != nil {
			return false
		}
		switch x := n.(type) {
		case *extendsNode:
			if !toplevel {
				err = &Error{Kind: "TemplateAssertionError", Msg: "cannot use extend from a non top-level scope", Line: x.Line}
				return false
			}
			x.Nested = nested
			return false
		case *ifNode:
			if !toplevel {
				return true
			}
			for _, b := range [][]Node{x.Body, x.Else} {
				if err == nil {
					err = checkExtends(b, true, true)
				}
			}
			for i := range x.Elifs {
				if err == nil {
					err = checkExtends(x.Elifs[i].Body, true, true)
				}
			}
			return false
		case *outputNode:
			return true
		}
		if toplevel {
			// any other statement opens a frame of its own
			err = checkExtends(n, false, false)
			return false
		}
		return true
	})
	return err
}
