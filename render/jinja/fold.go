package jinja

import (
	"errors"
	"fmt"
	"math"
	"math/big"

	"github.com/gsalt/gsalt/wire/payload"
)

// Jinja2 evaluates constant expressions while compiling (nodes.*.as_const,
// optimizer.py). gsalt mirrors the places where that shows:
//
//   - An {{ output }} that is constant as a whole (top down: an inline if
//     evaluates only the branch its constant test picks, and/or only what
//     they need) becomes text at compile time, and nothing else of it is
//     compiled (Template.check stores the text in the print node).
//   - Otherwise the optimizer folds bottom up: the bool() of every constant
//     inline-if test and and/or left operand, and the str() of the leading
//     constant parts of ~, are taken outside its error handling, so a
//     strict undefined value there fails the compile wherever it is
//     (compileExpr); unknown filters and tests fail the compile unless
//     folded away or in a soft frame (if statements, inline ifs), where
//     they fail when called.
//   - Folding and running agree except for slices: compiled code slices
//     with Python's obj[a:b] (a TypeError for a bad operand), while the
//     optimizer goes through environment.getitem, where the TypeError
//     becomes an undefined value. So `none[:2] is defined` folds to False
//     while `{{ none[:2]|string }}` fails at run time. The foldable
//     expressions holding a slice are wrapped in a foldExpr; evalFold
//     evaluates its operand in constant mode (names, calls and context
//     filters are errImpossible there) and keeps the result when it is a
//     safe constant, else evaluates it again the ordinary way.
//   - A folded constant is written into the generated code as its repr,
//     where a float inf or nan is the bare name inf or nan: a NameError
//     where that code runs. Expressions that may make one (arithmetic,
//     unary minus, filters, an inf literal) are wrapped in a foldExpr
//     too, and evalFold raises it.

// foldExpr is an expression Jinja2's optimizer would try to fold.
type foldExpr struct {
	pos
	X Expr
}

// contextFilters are Jinja2's filters taking the template context, which
// the optimizer never folds.
var contextFilters = map[string]bool{"map": true, "select": true, "reject": true, "selectattr": true, "rejectattr": true, "random": true}

// errImpossible is Jinja2's nodes.Impossible: the expression is not a
// compile-time constant (a variable, a call, a context filter, an
// inline if without else that is false, ...).
var errImpossible = errors.New("jinja: not a constant expression")

// foldRewrite wraps the foldable parts of x that hold a slice.
func foldRewrite(x Expr) Expr {
	out, _, _ := foldWalk(x, 0)
	return out
}

// constEval is Jinja2's as_const: x's value at compile time, or an error
// (errImpossible, or the error that made the optimizer give up).
func constEval(t *Template, x Expr) (any, error) {
	if t.compileAE < 0 {
		// an autoescape block with a value known only at run time: the
		// optimizer does not run in it
		return nil, errImpossible
	}
	r := newRuntime(t.env)
	r.constMode = true
	r.autoescape = t.compileAE > 0
	return r.evalExpr(x, &frame{vars: map[string]any{}, rt: r})
}

// compileTruth is Jinja2's optimizer taking bool() or str() of a constant
// operand outside its error handling (CondExpr, And/Or, Concat): a strict
// undefined value raises UndefinedError when the template is compiled,
// wherever the expression is. It reports whether x is a constant, and
// that error.
func compileTruth(t *Template, x Expr) (bool, error) {
	v, err := constEval(t, x)
	if err != nil {
		return false, nil // the optimizer gives up on it (Impossible)
	}
	if u, ok := v.(*Undefined); ok && u.Strict {
		// not Jinja's UndefinedError report: Salt sees it escape from
		// compiling the template
		return true, &Error{Kind: "UndefinedError(compile)", Msg: u.Message(), Line: x.exprLine()}
	}
	return true, nil
}

// foldPrint is Jinja2's compiler turning an {{ expression }} into text at
// compile time: the expression's as_const, finalized, when that raises
// nothing (top down: an inline if evaluates only the branch its constant
// test picks, and/or only what they need).
func foldPrint(t *Template, x Expr) (s string, safe, ok bool) {
	v, err := constEval(t, x)
	if err != nil {
		return "", false, false
	}
	r := newRuntime(t.env)
	s, err = r.finalize(v)
	if err != nil {
		return "", false, false
	}
	_, safe = v.(Markup)
	return s, safe, true
}

// compileExpr does what compiling the expression x does in Jinja2 beside
// generating code: the optimizer folds it bottom up (every constant test
// of an inline if, left operand of and/or and leading constant part of
// ~ gets its bool() or str() taken, failing on a strict undefined value),
// and the code generator refuses unknown filters and tests in the parts
// not folded away (outside soft frames, see checkNodes). anc holds x's
// enclosing expressions.
func (t *Template) compileExpr(x Expr, anc []Expr, soft bool) error {
	if x == nil || len(anc) > maxParseDepth {
		return nil
	}
	var err error
	check := func(e Expr) bool {
		if err == nil {
			var c bool
			c, err = compileTruth(t, e)
			return c
		}
		return false
	}
	// children first, as the optimizer does
	sub := append(anc, x)
	each := func(es ...Expr) {
		for _, e := range es {
			if err == nil {
				err = t.compileExpr(e, sub, soft)
			}
		}
	}
	args := func(a *callArgs) {
		each(a.Args...)
		each(a.KwVals...)
		each(a.DynArgs, a.DynKwarg)
	}
	switch e := x.(type) {
	case *foldExpr:
		return t.compileExpr(e.X, anc, soft)
	case *tupleExpr:
		each(e.Items...)
	case *listExpr:
		each(e.Items...)
	case *dictExpr:
		for i := range e.Keys {
			each(e.Keys[i], e.Vals[i])
		}
	case *getattrExpr:
		each(e.Obj)
	case *getitemExpr:
		each(e.Obj)
		if sl, ok := e.Key.(*sliceExpr); ok {
			each(sl.Start, sl.Stop, sl.Step)
		} else {
			each(e.Key)
		}
	case *binExpr:
		each(e.L, e.R)
		if e.Op == "and" || e.Op == "or" {
			check(e.L)
		}
	case *unaryExpr:
		each(e.X)
	case *compareExpr:
		each(e.First)
		each(e.Rest...)
	case *condExpr:
		soft = true // visit_CondExpr compiles its parts in a soft frame
		each(e.Test, e.Then, e.Else)
		check(e.Test)
	case *concatExpr:
		each(e.Items...)
		// Concat.as_const takes str() of each part in turn, up to the
		// first part that is not constant
		for _, it := range e.Items {
			if !check(it) {
				break
			}
		}
	case *callExpr:
		each(e.Fn)
		args(&e.callArgs)
	case *filterExpr:
		each(e.X)
		args(&e.callArgs)
		if err == nil {
			if _, ok := t.env.Filters[e.Name]; !ok && !soft && !t.foldedAway(anc, x) {
				err = &Error{Kind: "TemplateAssertionError", Msg: fmt.Sprintf("No filter named %s.", pyStrRepr(e.Name)), Line: e.Line}
			}
		}
	case *testExpr:
		each(e.X)
		args(&e.callArgs)
		if err == nil {
			if _, ok := t.env.Tests[e.Name]; !ok && !soft && !t.foldedAway(anc, x) {
				err = &Error{Kind: "TemplateAssertionError", Msg: fmt.Sprintf("No test named %s.", pyStrRepr(e.Name)), Line: e.Line}
			}
		}
	}
	return err
}

// foldedAway reports whether the optimizer replaces x, or one of its
// enclosing expressions anc, by a constant (its value has a safe repr),
// so that no code is generated for x.
func (t *Template) foldedAway(anc []Expr, x Expr) bool {
	for _, e := range append(anc, x) {
		if v, err := constEval(t, e); err == nil && hasSafeRepr(v, 0) {
			return true
		}
	}
	return false
}

// foldWalk returns x with its foldable slice-holding parts wrapped,
// whether x itself may be foldable, and whether it holds a slice. An
// inline if may fold when its test does and one of its branches does
// (as_const evaluates the branch its test picks); evalFold finds out.
func foldWalk(x Expr, depth int) (Expr, bool, bool) {
	if x == nil {
		return nil, true, false
	}
	if depth > maxParseDepth {
		return x, false, false
	}
	d := depth + 1
	all := func(es []Expr) (bool, bool) {
		c, s := true, false
		for i, e := range es {
			ne, ec, es2 := foldWalk(e, d)
			es[i] = ne
			c = c && ec
			s = s || es2
		}
		return c, s
	}
	var c, s bool
	switch e := x.(type) {
	case *foldExpr:
		return e, true, true
	case *constExpr:
		if nonFinite(e.Val) != "" {
			return &foldExpr{pos{e.Line}, e}, true, true
		}
		return e, true, false
	case *tupleExpr:
		c, s = all(e.Items)
	case *listExpr:
		c, s = all(e.Items)
	case *dictExpr:
		c1, s1 := all(e.Keys)
		c2, s2 := all(e.Vals)
		c, s = c1 && c2, s1 || s2
	case *getattrExpr:
		e.Obj, c, s = foldWalk(e.Obj, d)
	case *getitemExpr:
		var kc, ks bool
		e.Obj, c, s = foldWalk(e.Obj, d)
		if sl, ok := e.Key.(*sliceExpr); ok {
			parts := []Expr{sl.Start, sl.Stop, sl.Step}
			kc, _ = all(parts)
			sl.Start, sl.Stop, sl.Step = parts[0], parts[1], parts[2]
			ks = true // the key is a slice
		} else {
			e.Key, kc, ks = foldWalk(e.Key, d)
		}
		c, s = c && kc, s || ks
	case *binExpr:
		var rc, rs bool
		e.L, c, s = foldWalk(e.L, d)
		e.R, rc, rs = foldWalk(e.R, d)
		if e.Op != "and" && e.Op != "or" {
			// and/or: as_const needs the right side only when the left
			// one does not decide
			c = c && rc
			// arithmetic may overflow to inf or make nan
			rs = true
		}
		s = s || rs
	case *unaryExpr:
		e.X, c, s = foldWalk(e.X, d)
		s = s || e.Op == "-"
	case *compareExpr:
		e.First, c, s = foldWalk(e.First, d)
		rc, rs := all(e.Rest)
		c, s = c && rc, s || rs
	case *condExpr:
		var tc, ts, ec, es bool
		e.Test, c, s = foldWalk(e.Test, d)
		e.Then, tc, ts = foldWalk(e.Then, d)
		e.Else, ec, es = foldWalk(e.Else, d)
		c, s = c && (tc || (ec && e.Else != nil)), s || ts || es
	case *concatExpr:
		c, s = all(e.Items)
	case *filterExpr:
		if e.X == nil {
			return e, false, false
		}
		e.X, c, _ = foldWalk(e.X, d)
		ac, _ := foldArgs(&e.callArgs, d)
		// a filter may make a non-finite float ('inf'|float)
		c, s = c && ac && !contextFilters[e.Name], true
	case *testExpr:
		e.X, c, s = foldWalk(e.X, d)
		ac, as := foldArgs(&e.callArgs, d)
		c, s = c && ac, s || as
	case *callExpr:
		e.Fn, _, _ = foldWalk(e.Fn, d)
		foldArgs(&e.callArgs, d)
		return e, false, false
	default:
		return x, false, false
	}
	if c && s {
		return &foldExpr{pos{x.exprLine()}, x}, true, true
	}
	return x, c, s
}

func foldArgs(a *callArgs, depth int) (bool, bool) {
	c, s := true, false
	for i, e := range a.Args {
		ne, ec, es := foldWalk(e, depth)
		a.Args[i], c, s = ne, c && ec, s || es
	}
	for i, e := range a.KwVals {
		ne, ec, es := foldWalk(e, depth)
		a.KwVals[i], c, s = ne, c && ec, s || es
	}
	if a.DynArgs != nil || a.DynKwarg != nil {
		var ec, es bool
		a.DynArgs, ec, es = foldWalk(a.DynArgs, depth)
		c, s = c && ec, s || es
		a.DynKwarg, ec, es = foldWalk(a.DynKwarg, depth)
		c, s = c && ec, s || es
	}
	return c, s
}

// evalFold evaluates a foldExpr: its constant value when Jinja2's
// optimizer would fold it, else its value at run time.
func (r *Runtime) evalFold(e *foldExpr, f *frame) (any, error) {
	if r.constMode {
		return r.evalExpr(e.X, f)
	}
	r.constMode = true
	v, err := r.evalExpr(e.X, f)
	r.constMode = false
	if err == nil && hasSafeRepr(v, 0) {
		// the generated code rebuilds the constant from its repr, where
		// a float inf or nan is written as a bare name Python does not
		// know
		if name := nonFinite(v); name != "" {
			return nil, &Error{Kind: "NameError", Msg: "name '" + name + "' is not defined", Line: e.Line}
		}
		return freshCopy(v, 0), nil
	}
	return r.evalExpr(e.X, f)
}

// nonFinite names the first float inf or nan in the repr of a constant
// ("inf" for -inf too), or "".
func nonFinite(v any) string {
	return nonFiniteDepth(v, 0)
}

func nonFiniteDepth(v any, depth int) string {
	if depth > 100 {
		return ""
	}
	seq := func(items []any) string {
		for _, it := range items {
			if n := nonFiniteDepth(it, depth+1); n != "" {
				return n
			}
		}
		return ""
	}
	switch x := v.(type) {
	case float64:
		switch {
		case math.IsNaN(x):
			return "nan"
		case math.IsInf(x, 0):
			return "inf"
		}
	case *List:
		return seq(x.Items)
	case Tuple:
		return seq(x)
	case *Set:
		return seq(x.items)
	case *payload.Map:
		for _, it := range x.Items() {
			if n := nonFiniteDepth(it.Key, depth+1); n != "" {
				return n
			}
			if n := nonFiniteDepth(it.Value, depth+1); n != "" {
				return n
			}
		}
	}
	return ""
}

// safeRepr is Jinja2's has_safe_repr: what a folded constant may be.
func hasSafeRepr(v any, depth int) bool {
	if depth > 100 {
		return false
	}
	switch x := v.(type) {
	case nil, bool, int64, float64, *big.Int, string, Markup, *rangeVal:
		return true
	case *Set:
		for _, e := range x.items {
			if !hasSafeRepr(e, depth+1) {
				return false
			}
		}
		return true
	case *List:
		for _, e := range x.Items {
			if !hasSafeRepr(e, depth+1) {
				return false
			}
		}
		return true
	case Tuple:
		for _, e := range x {
			if !hasSafeRepr(e, depth+1) {
				return false
			}
		}
		return true
	case *payload.Map:
		for _, it := range x.Items() {
			if !hasSafeRepr(it.Key, depth+1) || !hasSafeRepr(it.Value, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}
