package jinja

import (
	"math/big"

	"github.com/gsalt/gsalt/wire/payload"
)

// Jinja2's optimizer folds every expression it can evaluate at compile
// time (literals, operators, attribute and item lookups, filters and
// tests over constants) into a constant, when the value has a safe repr.
// Folding and running agree except for slices: compiled code slices with
// Python's obj[a:b] (a TypeError for a bad operand), while the optimizer
// goes through environment.getitem, where the TypeError becomes an
// undefined value. So `none[:2] is defined` folds to False and
// `not [(-1)[::-1]]` to False, while `{{ none[:2] }}` (an undefined value
// is not a safe constant) fails at run time.
//
// gsalt marks the foldable expressions holding a slice with foldExpr; one
// evaluates its operand in constant mode (failing slices give undefined)
// and keeps the result when it is a safe constant, else evaluates it again
// the ordinary way.

// foldExpr is an expression Jinja2's optimizer would try to fold.
type foldExpr struct {
	pos
	X Expr
}

// contextFilters are Jinja2's filters taking the template context, which
// the optimizer never folds.
var contextFilters = map[string]bool{"map": true, "select": true, "reject": true, "selectattr": true, "rejectattr": true, "random": true}

// foldRewrite wraps the foldable parts of x that hold a slice. check is
// called with the constant operands the optimizer takes the truth of
// (a conditional expression's test, the left side of and/or).
func foldRewrite(x Expr, check func(Expr)) Expr {
	out, _, _ := foldWalk(x, 0, check)
	return out
}

// compileTruth is Jinja2's optimizer taking bool() or str() of a constant
// operand outside its error handling (CondExpr, And/Or, Concat): a strict undefined
// value raises UndefinedError when the template is compiled, wherever
// the expression is. It returns that error, or nil.
func compileTruth(env *Environment, x Expr) error {
	if env == nil {
		return nil
	}
	r := newRuntime(env)
	r.constMode = true
	v, err := r.evalExpr(x, &frame{vars: map[string]any{}, rt: r})
	if err != nil {
		return nil // the optimizer gives up on it (Impossible)
	}
	if u, ok := v.(*Undefined); ok && u.Strict {
		// not Jinja's UndefinedError report: Salt sees it escape from
		// compiling the template
		return &Error{Kind: "UndefinedError(compile)", Msg: u.Message(), Line: x.exprLine()}
	}
	return nil
}

// foldWalk returns x with its foldable slice-holding parts wrapped,
// whether x itself is foldable, and whether it holds a slice.
func foldWalk(x Expr, depth int, check func(Expr)) (Expr, bool, bool) {
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
			ne, ec, es2 := foldWalk(e, d, check)
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
		e.Obj, c, s = foldWalk(e.Obj, d, check)
	case *getitemExpr:
		var kc, ks bool
		e.Obj, c, s = foldWalk(e.Obj, d, check)
		if sl, ok := e.Key.(*sliceExpr); ok {
			parts := []Expr{sl.Start, sl.Stop, sl.Step}
			kc, _ = all(parts)
			sl.Start, sl.Stop, sl.Step = parts[0], parts[1], parts[2]
			ks = true // the key is a slice
		} else {
			e.Key, kc, ks = foldWalk(e.Key, d, check)
		}
		c, s = c && kc, s || ks
	case *binExpr:
		var rc, rs bool
		e.L, c, s = foldWalk(e.L, d, check)
		e.R, rc, rs = foldWalk(e.R, d, check)
		if c && (e.Op == "and" || e.Op == "or") && check != nil {
			check(e.L)
		}
		c, s = c && rc, s || rs
	case *unaryExpr:
		e.X, c, s = foldWalk(e.X, d, check)
	case *compareExpr:
		e.First, c, s = foldWalk(e.First, d, check)
		rc, rs := all(e.Rest)
		c, s = c && rc, s || rs
	case *condExpr:
		var tc, ts, ec, es bool
		e.Test, c, s = foldWalk(e.Test, d, check)
		if c && check != nil {
			check(e.Test)
		}
		e.Then, tc, ts = foldWalk(e.Then, d, check)
		e.Else, ec, es = foldWalk(e.Else, d, check)
		c, s = c && tc && ec && e.Else != nil, s || ts || es
	case *concatExpr:
		c, s = all(e.Items)
		if c && check != nil {
			// Concat.as_const takes str() of every part outside any
			// error handling
			for _, it := range e.Items {
				check(it)
			}
		}
	case *filterExpr:
		if e.X == nil {
			return e, false, false
		}
		e.X, c, s = foldWalk(e.X, d, check)
		ac, as := foldArgs(&e.callArgs, d, check)
		c, s = c && ac && !contextFilters[e.Name], s || as
	case *testExpr:
		e.X, c, s = foldWalk(e.X, d, check)
		ac, as := foldArgs(&e.callArgs, d, check)
		c, s = c && ac, s || as
	case *callExpr:
		e.Fn, _, _ = foldWalk(e.Fn, d, check)
		foldArgs(&e.callArgs, d, check)
		return e, false, false
	default:
		return x, false, false
	}
	if c && s {
		return &foldExpr{pos{x.exprLine()}, x}, true, true
	}
	return x, c, s
}

func foldArgs(a *callArgs, depth int, check func(Expr)) (bool, bool) {
	c, s := true, false
	for i, e := range a.Args {
		ne, ec, es := foldWalk(e, depth, check)
		a.Args[i], c, s = ne, c && ec, s || es
	}
	for i, e := range a.KwVals {
		ne, ec, es := foldWalk(e, depth, check)
		a.KwVals[i], c, s = ne, c && ec, s || es
	}
	if a.DynArgs != nil || a.DynKwarg != nil {
		var ec, es bool
		a.DynArgs, ec, es = foldWalk(a.DynArgs, depth, check)
		c, s = c && ec, s || es
		a.DynKwarg, ec, es = foldWalk(a.DynKwarg, depth, check)
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
		// the generated code rebuilds the constant from its repr
		return freshCopy(v, 0), nil
	}
	return r.evalExpr(e.X, f)
}

// safeRepr is Jinja2's has_safe_repr: what a folded constant may be.
func hasSafeRepr(v any, depth int) bool {
	if depth > 100 {
		return false
	}
	switch x := v.(type) {
	case nil, bool, int64, float64, *big.Int, string:
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
