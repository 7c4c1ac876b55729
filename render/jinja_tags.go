package render

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nikolalohinski/gonja/v2/builtins"
	controlStructures "github.com/nikolalohinski/gonja/v2/builtins/control_structures"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/nodes"
	"github.com/nikolalohinski/gonja/v2/parser"
	"github.com/nikolalohinski/gonja/v2/tokens"
)

// parserFunc is gonja's control structure parser signature.
type parserFunc = parser.ControlStructureParser

// controlStructures returns the tags gsalt adds or replaces: Jinja2's
// import/from/include with Salt's loader and template modules (top-level
// variables exported, not only macros), Salt's import_yaml/json/text and
// load_yaml/json/text, and set/macro wrappers giving lists Python's
// aliasing and bounding macro recursion.
func (st *renderState) controlStructures() map[string]parserFunc {
	return map[string]parserFunc{
		"import":      st.importParser,
		"from":        st.fromParser,
		"include":     st.includeParser,
		"import_yaml": st.importDataParser("yaml"),
		"import_json": st.importDataParser("json"),
		"import_text": st.importDataParser("text"),
		"load_yaml":   st.loadParser("yaml"),
		"load_json":   st.loadParser("json"),
		"load_text":   st.loadParser("text"),
		"set":         st.setParser,
		"macro":       st.macroParser,
		"profile":     st.profileParser,
		"for":         st.budgeted("for"),
		"if":          st.budgeted("if"),
		"do":          st.budgeted("do"),
	}
}

// budgeted wraps one of gonja's tags so that each execution counts
// against the render's step budget and notices cancellation: loops
// without output cannot spin for ever.
func (st *renderState) budgeted(name string) parserFunc {
	inner, _ := builtins.ControlStructures.Get(name)
	return func(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
		node, err := inner(p, args)
		if err != nil {
			return nil, err
		}
		ecs, ok := node.(exec.ControlStructure)
		if !ok {
			return node, nil
		}
		return &cs{pos: node.Position(), name: name, inner: ecs, run: func(c *cs, r *exec.Renderer) error {
			if err := st.step(); err != nil {
				return err
			}
			return c.inner.Execute(r, nil)
		}}, nil
	}
}

// step counts one tag execution.
func (st *renderState) step() error {
	st.steps++
	if st.steps > MaxSteps {
		return fmt.Errorf("%w: more than %d tag executions", ErrTemplate, MaxSteps)
	}
	if st.steps%1024 == 0 {
		if err := st.ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// cs is a control structure implemented by a function. The nodes it
// evaluates live in its fields, not only in the closure, so that
// rewriteTemplate reaches them (finalize, Python operators); run reads
// them from c.
type cs struct {
	pos   *tokens.Token
	name  string
	inner exec.ControlStructure
	exprs []nodes.Expression
	body  *nodes.Wrapper
	run   func(c *cs, r *exec.Renderer) error
}

func (c *cs) Position() *tokens.Token { return c.pos }
func (c *cs) String() string {
	return fmt.Sprintf("%s(Line=%d Col=%d)", c.name, c.pos.Line, c.pos.Col)
}

// Execute runs the tag.
func (c *cs) Execute(r *exec.Renderer, _ *nodes.ControlStructureBlock) error { return c.run(c, r) }

// module is an imported template (Jinja2's TemplateModule): its exported
// top-level variables and macros as attributes, its output as str().
type module struct {
	name   string
	ctx    *exec.Context
	output string
}

// GetAttribute returns a variable or macro the module defines.
func (m *module) GetAttribute(name string) (*exec.Value, bool) {
	v, ok := m.ctx.Get(name)
	if !ok {
		return exec.AsValue(nil), false
	}
	return exec.ToValue(v), true
}

// String is the rendered text of the module.
func (m *module) String() string { return m.output }

// parseWithContext reads an optional "with context" / "without context".
func parseWithContext(args *parser.Parser, def bool) bool {
	if tok := args.MatchName("with", "without"); tok != nil {
		if args.MatchName("context") != nil {
			return tok.Val == "with"
		}
		args.Stream().Backup()
	}
	return def
}

// renderModule loads, parses and renders a template as a module.
func (st *renderState) renderModule(r *exec.Renderer, nameValue *exec.Value, withContext bool) (*module, error) {
	if nameValue.IsError() {
		return nil, nameValue
	}
	name := nameValue.String()
	st.depth++
	defer func() { st.depth-- }()
	if st.depth > MaxIncludeDepth {
		return nil, fmt.Errorf("%w: imports nested deeper than %d", ErrTemplate, MaxIncludeDepth)
	}
	id, text, err := st.load(name)
	if err != nil {
		return nil, err
	}
	tpl, err := st.parse(id, text)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, name)
	}
	base := st.globals
	if withContext {
		base = r.Environment.Context
	}
	mctx := base.Inherit()
	var b strings.Builder
	sub := exec.NewRenderer(st.subEnv(mctx), &boundedWriter{st: st, w: &b}, st.cfg, st.loader, tpl)
	if err := st.execute(sub); err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, name)
	}
	return &module{name: name, ctx: mctx, output: b.String()}, nil
}

func (st *renderState) subEnv(ctx *exec.Context) *exec.Environment {
	return &exec.Environment{
		Filters:           st.env.Filters,
		Tests:             st.env.Tests,
		ControlStructures: st.env.ControlStructures,
		Context:           ctx,
		Methods:           st.env.Methods,
	}
}

// {% import EXPR as NAME [with context] %}
func (st *renderState) importParser(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
	pos := p.Current()
	expr, err := args.ParseExpression()
	if err != nil {
		return nil, err
	}
	if args.MatchName("as") == nil {
		return nil, args.Error(`Expected "as" keyword`, args.Current())
	}
	alias := args.Match(tokens.Name)
	if alias == nil {
		return nil, args.Error("Expected an identifier after 'as'", args.Current())
	}
	withCtx := parseWithContext(args, false)
	if !args.End() {
		return nil, args.Error("Malformed import tag", args.Current())
	}
	return &cs{pos: pos, name: "import", exprs: []nodes.Expression{expr}, run: func(c *cs, r *exec.Renderer) error {
		m, err := st.renderModule(r, r.Eval(c.exprs[0]), withCtx)
		if err != nil {
			return err
		}
		r.Environment.Context.Set(alias.Val, m)
		return nil
	}}, nil
}

// {% from EXPR import a [as b], c [with context] %}
func (st *renderState) fromParser(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
	pos := p.Current()
	expr, err := args.ParseExpression()
	if err != nil {
		return nil, err
	}
	if args.MatchName("import") == nil {
		return nil, args.Error("Expected import keyword", args.Current())
	}
	type imp struct{ name, alias string }
	var names []imp
	withCtx := false
	for !args.End() {
		if tok := args.MatchName("with", "without"); tok != nil {
			if args.MatchName("context") != nil {
				withCtx = tok.Val == "with"
				break
			}
			args.Stream().Backup()
		}
		name := args.Match(tokens.Name)
		if name == nil {
			return nil, args.Error("Expected a name to import", args.Current())
		}
		alias := name.Val
		if args.MatchName("as") != nil {
			a := args.Match(tokens.Name)
			if a == nil {
				return nil, args.Error("Expected an alias name", args.Current())
			}
			alias = a.Val
		}
		names = append(names, imp{name.Val, alias})
		if args.End() {
			break
		}
		if args.Match(tokens.Comma) == nil {
			if tok := args.MatchName("with", "without"); tok != nil && args.MatchName("context") != nil {
				withCtx = tok.Val == "with"
				break
			}
			return nil, args.Error("Expected ','", args.Current())
		}
	}
	if len(names) == 0 {
		return nil, args.Error("Expected at least one name to import", args.Current())
	}
	return &cs{pos: pos, name: "from", exprs: []nodes.Expression{expr}, run: func(c *cs, r *exec.Renderer) error {
		m, err := st.renderModule(r, r.Eval(c.exprs[0]), withCtx)
		if err != nil {
			return err
		}
		for _, n := range names {
			v, ok := m.GetAttribute(n.name)
			if !ok {
				if st.strict {
					return fmt.Errorf("the template %q (imported) does not export the requested name %q", m.name, n.name)
				}
				v = exec.AsValue(nil)
			}
			r.Environment.Context.Set(n.alias, v.Interface())
		}
		return nil
	}}, nil
}

// {% include EXPR [ignore missing] [with|without context] %}
func (st *renderState) includeParser(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
	pos := p.Current()
	expr, err := args.ParseExpression()
	if err != nil {
		return nil, err
	}
	ignoreMissing := false
	if args.MatchName("ignore") != nil {
		if args.MatchName("missing") == nil {
			return nil, args.Error("Expected 'missing' after 'ignore'", args.Current())
		}
		ignoreMissing = true
	}
	withCtx := parseWithContext(args, true)
	if !args.End() {
		return nil, args.Error("Malformed include tag", args.Current())
	}
	return &cs{pos: pos, name: "include", exprs: []nodes.Expression{expr}, run: func(c *cs, r *exec.Renderer) error {
		v := r.Eval(c.exprs[0])
		if v.IsError() {
			return v
		}
		names := []*exec.Value{v}
		if items, ok := listItems(v); ok {
			names = names[:0]
			for _, it := range items {
				names = append(names, exec.ToValue(it))
			}
		}
		var lastErr error
		for _, n := range names {
			m, err := st.renderModule(r, n, withCtx)
			if err != nil {
				if errors.Is(err, ErrNotFound) {
					lastErr = err
					continue
				}
				return err
			}
			_, err = r.Output.Write([]byte(m.output))
			return err
		}
		if ignoreMissing {
			if errors.Is(st.firstErr, ErrNotFound) {
				st.firstErr = nil
			}
			return nil
		}
		if lastErr == nil {
			lastErr = fmt.Errorf("%w: %w: include of an empty list", ErrTemplate, ErrNotFound)
		}
		return lastErr
	}}, nil
}

// {% import_yaml EXPR as NAME [with context] %} and json/text
func (st *renderState) importDataParser(kind string) parserFunc {
	return func(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
		pos := p.Current()
		expr, err := args.ParseExpression()
		if err != nil {
			return nil, err
		}
		if args.MatchName("as") == nil {
			return nil, args.Error(`Expected "as" keyword`, args.Current())
		}
		alias := args.Match(tokens.Name)
		if alias == nil {
			return nil, args.Error("Expected an identifier after 'as'", args.Current())
		}
		withCtx := parseWithContext(args, false)
		if !args.End() {
			return nil, args.Error("Malformed import_"+kind+" tag", args.Current())
		}
		return &cs{pos: pos, name: "import_" + kind, exprs: []nodes.Expression{expr}, run: func(c *cs, r *exec.Renderer) error {
			m, err := st.renderModule(r, r.Eval(c.exprs[0]), withCtx)
			if err != nil {
				return err
			}
			v, err := st.loadData(kind, m.output)
			if err != nil {
				return err
			}
			r.Environment.Context.Set(alias.Val, v)
			return nil
		}}, nil
	}
}

// {% load_yaml as NAME %}...{% endload %} and json/text
func (st *renderState) loadParser(kind string) parserFunc {
	return func(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
		pos := p.Current()
		if args.MatchName("as") == nil {
			return nil, args.Error(`Expected "as" keyword`, args.Current())
		}
		alias := args.Match(tokens.Name)
		if alias == nil {
			return nil, args.Error("Expected an identifier after 'as'", args.Current())
		}
		if !args.End() {
			return nil, args.Error("Malformed load_"+kind+" tag", args.Current())
		}
		body, endArgs, err := p.WrapUntil("endload")
		if err != nil {
			return nil, err
		}
		if !endArgs.End() {
			return nil, endArgs.Error("Arguments not allowed here", endArgs.Current())
		}
		return &cs{pos: pos, name: "load_" + kind, body: body, run: func(c *cs, r *exec.Renderer) error {
			var b strings.Builder
			sub := r.Inherit()
			sub.Output = &boundedWriter{st: st, w: &b}
			if err := sub.ExecuteWrapper(c.body); err != nil {
				return err
			}
			v, err := st.loadData(kind, b.String())
			if err != nil {
				return err
			}
			r.Environment.Context.Set(alias.Val, v)
			return nil
		}}, nil
	}
}

// {% profile as 'label' %}...{% endprofile %}: renders the body (timing
// goes to the debug log).
func (st *renderState) profileParser(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
	pos := p.Current()
	if args.MatchName("as") == nil {
		return nil, args.Error(`Expected "as" keyword`, args.Current())
	}
	label, err := args.ParseExpression()
	if err != nil {
		return nil, err
	}
	body, _, err := p.WrapUntil("endprofile")
	if err != nil {
		return nil, err
	}
	return &cs{pos: pos, name: "profile", exprs: []nodes.Expression{label}, body: body, run: func(c *cs, r *exec.Renderer) error {
		st.log.Debug("jinja profile block", "label", r.Eval(c.exprs[0]).String())
		return r.ExecuteIfWrapper(c.body)
	}}, nil
}

// loadData decodes rendered text as Salt's load_yaml/load_json/load_text.
func (st *renderState) loadData(kind, text string) (any, error) {
	switch kind {
	case "yaml":
		v, err := decodeYAMLText(text)
		if err != nil {
			return nil, fmt.Errorf("Encountered error loading yaml: %w", err)
		}
		return toJinja(v), nil
	case "json":
		v, err := DecodeJSON([]byte(text))
		if err != nil || strings.TrimSpace(text) == "" {
			return nil, fmt.Errorf("Unable to load json from %s", text)
		}
		return toJinja(v), nil
	}
	return text, nil
}

// setParser wraps gonja's set tag so that a list assigned to a name
// becomes a shared *[]any (Python's list aliasing for append/extend).
func (st *renderState) setParser(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
	if args.Current(tokens.Name) != nil && args.Peek(tokens.Comma) != nil {
		return st.unpackSetParser(p, args)
	}
	inner, _ := builtins.ControlStructures.Get("set")
	name := ""
	if t := args.Current(tokens.Name); t != nil && args.Peek(tokens.Dot) == nil && args.Peek(tokens.Comma) == nil {
		name = t.Val
	}
	node, err := inner(p, args)
	if err != nil {
		return nil, err
	}
	ecs, ok := node.(exec.ControlStructure)
	if !ok || name == "" {
		return node, nil
	}
	return &cs{pos: node.Position(), name: "set", inner: ecs, run: func(c *cs, r *exec.Renderer) error {
		if err := st.step(); err != nil {
			return err
		}
		if err := c.inner.Execute(r, nil); err != nil {
			return err
		}
		v, ok := r.Environment.Context.Get(name)
		if !ok {
			return nil
		}
		normDict(v, 0)
		switch t := v.(type) {
		case exec.ValuesList:
			items := make([]any, len(t))
			for i, e := range t {
				items[i] = e.Interface()
			}
			r.Environment.Context.Set(name, newList(items))
		case []any:
			r.Environment.Context.Set(name, newList(t))
		}
		return nil
	}}, nil
}

// callerKey is where gonja's {% call %} stashes caller().
const callerKey = "__gonja_caller__"

// macroParser wraps gonja's macro tag to bound recursion and to make
// caller() reach macros defined in other templates.
func (st *renderState) macroParser(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
	inner, _ := builtins.ControlStructures.Get("macro")
	node, err := inner(p, args)
	if err != nil {
		return nil, err
	}
	m, ok := node.(*controlStructures.MacroControlStructure)
	if !ok {
		return node, nil
	}
	// Jinja2's implicit varargs/kwargs: gonja only knows *args/**kwargs
	if m.VarArgsName == "" && usesName(m.Wrapper, "varargs") {
		m.VarArgsName = "varargs"
	}
	if m.KwArgsName == "" && usesName(m.Wrapper, "kwargs") {
		m.KwArgsName = "kwargs"
	}
	return &cs{pos: m.Position(), name: "macro", inner: m, run: func(c *cs, r *exec.Renderer) error {
		fn, err := exec.MacroNodeToFunc(m.Macro, r)
		if err != nil {
			return err
		}
		defCtx := r.Environment.Context
		r.Environment.Context.Set(m.Name, func(e *exec.Evaluator, va *exec.VarArgs) *exec.Value {
			st.macros++
			defer func() { st.macros-- }()
			if st.macros > MaxMacroDepth {
				return exec.AsValue(fmt.Errorf("macro calls nested deeper than %d", MaxMacroDepth))
			}
			if err := st.ctx.Err(); err != nil {
				return exec.AsValue(err)
			}
			// a {% call %} block stashes caller() in the calling context;
			// gonja looks for it in the defining one
			if c, ok := e.Environment.Context.Get(callerKey); ok && c != nil && e.Environment.Context != defCtx {
				defCtx.Set(callerKey, c)
				e.Environment.Context.Set(callerKey, nil)
			}
			return fn(va)
		})
		return nil
	}}, nil
}

// unpackSetParser parses {% set a, b = expr %} and {% set a, b = x, y %}
// (tuple unpacking, which gonja's set lacks).
func (st *renderState) unpackSetParser(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
	pos := p.Current()
	var names []string
	for {
		t := args.Match(tokens.Name)
		if t == nil {
			return nil, args.Error("Expected a name to assign to", args.Current())
		}
		names = append(names, t.Val)
		if args.Match(tokens.Comma) == nil || args.Current(tokens.Assign) != nil {
			break
		}
	}
	if args.Match(tokens.Assign) == nil {
		return nil, args.Error("Expected '='", args.Current())
	}
	var exprs []nodes.Expression
	for {
		e, err := args.ParseExpression()
		if err != nil {
			return nil, err
		}
		exprs = append(exprs, e)
		if args.Match(tokens.Comma) == nil || args.End() {
			break
		}
	}
	if !args.End() {
		return nil, args.Error("Malformed set tag", args.Current())
	}
	return &cs{pos: pos, name: "set", exprs: exprs, run: func(c *cs, r *exec.Renderer) error {
		if err := st.step(); err != nil {
			return err
		}
		var vals []any
		if len(c.exprs) == 1 {
			v := r.Eval(c.exprs[0])
			if v.IsError() {
				return v
			}
			items, err := iterItems(v)
			if err != nil {
				return err
			}
			vals = items
		} else {
			for _, e := range c.exprs {
				v := r.Eval(e)
				if v.IsError() {
					return v
				}
				vals = append(vals, raw(v))
			}
		}
		switch {
		case len(vals) > len(names):
			return fmt.Errorf("too many values to unpack (expected %d)", len(names))
		case len(vals) < len(names):
			return fmt.Errorf("not enough values to unpack (expected %d, got %d)", len(names), len(vals))
		}
		for i, n := range names {
			r.Environment.Context.Set(n, raw(vals[i]))
		}
		return nil
	}}, nil
}
