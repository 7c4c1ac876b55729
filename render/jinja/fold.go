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

// foldRewrite wraps the foldable parts of x that hold a slice.
func foldRewrite(x Expr) Expr {
	out, _, _ := foldWalk(x, 0)
	return out
}

// foldWalk returns x with its foldable slice-holding parts wrapped,
// whether x itself is foldable, and whether it holds a slice.
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
			kc, ks = all(parts)
			sl.Start, sl.Stop, sl.Step = parts[0], parts[1], parts[2]
			ks = true
		} else {
			e.Key, kc, ks = foldWalk(e.Key, d)
		}
		c, s = c && kc, s || ks
	case *binExpr:
		var rc, rs bool
		e.L, c, s = foldWalk(e.L, d)
		e.R, rc, rs = foldWalk(e.R, d)
		c, s = c && rc, s || rs
	case *unaryExpr:
		e.X, c, s = foldWalk(e.X, d)
	case *compareExpr:
		e.First, c, s = foldWalk(e.First, d)
		rc, rs := all(e.Rest)
		c, s = c && rc, s || rs
	case *condExpr:
		var tc, ts, ec, es bool
		e.Test, c, s = foldWalk(e.Test, d)
		e.Then, tc, ts = foldWalk(e.Then, d)
		e.Else, ec, es = foldWalk(e.Else, d)
		c, s = c && tc && ec && e.Else != nil, s || ts || es
	case *concatExpr:
		c, s = all(e.Items)
	case *filterExpr:
		if e.X == nil {
			return e, false, false
		}
		e.X, c, s = foldWalk(e.X, d)
		ac, as := foldArgs(&e.callArgs, d)
		c, s = c && ac && !contextFilters[e.Name], s || as
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
