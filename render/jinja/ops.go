package jinja

import (
	"math"
	"math/big"
	"strings"

	"github.com/gsalt/gsalt/wire/payload"
)

// maxIntBits bounds integer results (** and *), so a template cannot
// exhaust memory.
const maxIntBits = 1 << 16

// maxSeqLen bounds strings and lists made by * and +.
const maxSeqLen = 1 << 26

func zeroDiv(msg string) error { return &Error{Kind: "ZeroDivisionError", Msg: msg} }

func strictCheck(vs ...any) error {
	for _, v := range vs {
		if u, ok := v.(*Undefined); ok && u.Strict {
			return u.err()
		}
	}
	return nil
}

// undefCheck fails for any undefined value (lenient ones too): Jinja2's
// Undefined raises on arithmetic and ordering.
func undefCheck(vs ...any) error {
	for _, v := range vs {
		if u, ok := v.(*Undefined); ok {
			return u.err()
		}
	}
	return nil
}

func unsupported(op string, a, b any) error {
	if op == "**" {
		op = "** or pow()"
	}
	return typeErr("unsupported operand type(s) for %s: '%s' and '%s'", op, TypeName(a), TypeName(b))
}

// BinOp applies a Python binary arithmetic operator.
func BinOp(op string, a, b any) (any, error) {
	if s, ok := a.(string); ok && op == "%" {
		return PercentFormat(s, b)
	}
	if m, ok := a.(Markup); ok && op == "%" {
		if err := strictCheck(b); err != nil {
			return nil, err
		}
		s, err := percentFormat(string(m), b, true)
		return Markup(s), err
	}
	if v, err, done := markupOp(op, a, b); done {
		return v, err
	}
	if err := undefCheck(a, b); err != nil {
		return nil, err
	}
	ka, ia, ba, fa := numOf(a)
	kb, ib, bb, fb := numOf(b)
	if ka != nkNone && kb != nkNone {
		if ka == nkFloat || kb == nkFloat || op == "/" {
			return floatOp(op, toFloat(ka, ia, ba, fa), toFloat(kb, ib, bb, fb), ka, kb, a, b)
		}
		if ka == nkInt && kb == nkInt {
			if r, ok := smallIntOp(op, ia, ib); ok {
				return r, nil
			}
		}
		return bigOp(op, toBig(ka, ia, ba), toBig(kb, ib, bb))
	}
	switch op {
	case "+":
		switch x := a.(type) {
		case string:
			if y, ok := b.(string); ok {
				if len(x)+len(y) > maxSeqLen {
					return nil, &Error{Kind: "MemoryError", Msg: "string too long"}
				}
				return x + y, nil
			}
			return nil, typeErr("can only concatenate str (not \"%s\") to str", TypeName(b))
		case *List:
			if y, ok := b.(*List); ok {
				return &List{Items: append(append(make([]any, 0, len(x.Items)+len(y.Items)), x.Items...), y.Items...)}, nil
			}
			return nil, typeErr("can only concatenate list (not \"%s\") to list", TypeName(b))
		case Tuple:
			if y, ok := b.(Tuple); ok {
				return append(append(Tuple{}, x...), y...), nil
			}
			return nil, typeErr("can only concatenate tuple (not \"%s\") to tuple", TypeName(b))
		case []byte:
			if y, ok := b.([]byte); ok {
				return append(append([]byte{}, x...), y...), nil
			}
		}
	case "*":
		seq, n := a, b
		if ka != nkNone {
			seq, n = b, a
		}
		if i, ok := asInt(n); ok {
			return repeat(seq, i)
		}
		if _, ok := n.(*big.Int); ok {
			return nil, &Error{Kind: "OverflowError", Msg: "cannot fit 'int' into an index-sized integer"}
		}
		switch seq.(type) {
		case string, *List, Tuple:
			return nil, typeErr("can't multiply sequence by non-int of type '%s'", TypeName(n))
		}
	case "%":
		if s, ok := a.(string); ok {
			return PercentFormat(s, b)
		}
	}
	return nil, unsupported(op, a, b)
}

// markupOp is + and * with a Markup operand (markupsafe's __add__,
// __radd__, __mul__, __rmul__); done is false for other operands.
func markupOp(op string, a, b any) (any, error, bool) {
	_, am := a.(Markup)
	_, bm := b.(Markup)
	if !am && !bm {
		return nil, nil, false
	}
	switch op {
	case "+":
		if v, ok := markupAdd(a, b); ok {
			if len(v.(Markup)) > maxSeqLen {
				return nil, &Error{Kind: "MemoryError", Msg: "string too long"}, true
			}
			return v, nil, true
		}
		if err := undefCheck(a, b); err != nil {
			return nil, err, true
		}
		return nil, unsupported(op, a, b), true
	case "*":
		seq, n := a, b
		if bm {
			seq, n = b, a
		}
		if _, nm := n.(Markup); nm {
			break
		}
		if i, ok := asInt(n); ok {
			v, err := repeat(string(seq.(Markup)), i)
			if s, ok := v.(string); ok {
				return Markup(s), err, true
			}
			return v, err, true
		}
		v, err := BinOp(op, demote(a), demote(b))
		return v, err, true
	}
	// other operators: the str behaviour, with Markup named in errors
	v, err := BinOp(op, demote(a), demote(b))
	if err != nil {
		if je, ok := err.(*Error); ok && je.Kind == "TypeError" {
			return nil, unsupported(op, a, b), true
		}
	}
	return v, err, true
}

func repeat(seq any, n int64) (any, error) {
	if n < 0 {
		n = 0
	}
	l := 0
	switch x := seq.(type) {
	case string:
		l = len(x)
	case *List:
		l = len(x.Items)
	case Tuple:
		l = len(x)
	default:
		return nil, typeErr("can't multiply sequence by non-int of type '%s'", TypeName(seq))
	}
	if int64(l)*n > maxSeqLen {
		return nil, &Error{Kind: "MemoryError", Msg: "result too long"}
	}
	switch x := seq.(type) {
	case string:
		return strings.Repeat(x, int(n)), nil
	case *List:
		out := make([]any, 0, len(x.Items)*int(n))
		for i := int64(0); i < n; i++ {
			out = append(out, x.Items...)
		}
		return &List{Items: out}, nil
	case Tuple:
		out := make(Tuple, 0, len(x)*int(n))
		for i := int64(0); i < n; i++ {
			out = append(out, x...)
		}
		return out, nil
	}
	return nil, nil
}

func smallIntOp(op string, a, b int64) (any, bool) {
	switch op {
	case "+":
		r := a + b
		if (r > a) == (b > 0) {
			return r, true
		}
	case "-":
		r := a - b
		if (r < a) == (b > 0) {
			return r, true
		}
	case "*":
		if a == 0 || b == 0 {
			return int64(0), true
		}
		r := a * b
		if r/b == a && !(a == -1 && b == math.MinInt64) && !(b == -1 && a == math.MinInt64) {
			return r, true
		}
	}
	return nil, false
}

func bigOp(op string, a, b *big.Int) (any, error) {
	r := new(big.Int)
	switch op {
	case "+":
		r.Add(a, b)
	case "-":
		r.Sub(a, b)
	case "*":
		if a.BitLen()+b.BitLen() > maxIntBits {
			return nil, &Error{Kind: "OverflowError", Msg: "integer too large"}
		}
		r.Mul(a, b)
	case "//", "%":
		if b.Sign() == 0 {
			if op == "%" {
				return nil, zeroDiv("integer modulo by zero")
			}
			return nil, zeroDiv("integer division or modulo by zero")
		}
		q, m := new(big.Int).QuoRem(a, b, new(big.Int))
		if m.Sign() != 0 && (m.Sign() < 0) != (b.Sign() < 0) {
			q.Sub(q, big.NewInt(1))
			m.Add(m, b)
		}
		if op == "%" {
			return normBig(m), nil
		}
		return normBig(q), nil
	case "**":
		if b.Sign() < 0 {
			fa, _ := new(big.Float).SetInt(a).Float64()
			fb, _ := new(big.Float).SetInt(b).Float64()
			if fa == 0 {
				return nil, zeroDiv("0.0 cannot be raised to a negative power")
			}
			return math.Pow(fa, fb), nil
		}
		if a.BitLen() > 1 || (a.BitLen() == 1 && a.Sign() > 0 && false) {
			if !b.IsInt64() || int64(a.BitLen())*b.Int64() > maxIntBits {
				return nil, &Error{Kind: "OverflowError", Msg: "integer too large"}
			}
		}
		if a.CmpAbs(big.NewInt(1)) <= 0 {
			// 0, 1, -1 to any power
			if a.Sign() == 0 {
				if b.Sign() == 0 {
					return int64(1), nil
				}
				return int64(0), nil
			}
			if a.Sign() < 0 && b.Bit(0) == 1 {
				return int64(-1), nil
			}
			return int64(1), nil
		}
		r.Exp(a, b, nil)
	default:
		return nil, unsupported(op, a, b)
	}
	return normBig(r), nil
}

func floatOp(op string, a, b float64, ka, kb numKind, av, bv any) (any, error) {
	switch op {
	case "+":
		return a + b, nil
	case "-":
		return a - b, nil
	case "*":
		return a * b, nil
	case "/":
		if b == 0 {
			if ka != nkFloat && kb != nkFloat {
				return nil, zeroDiv("division by zero")
			}
			return nil, zeroDiv("float division by zero")
		}
		if ka != nkFloat && kb != nkFloat {
			// exact int/int true division, correctly rounded
			x := new(big.Rat).SetFrac(toBig(numOfK(av)), toBig(numOfK(bv)))
			f, _ := x.Float64()
			if f == 0 && x.Sign() == 0 && (b < 0) {
				// Python: 0 / -2 == -0.0
				f = math.Copysign(0, -1)
			}
			return f, nil
		}
		return a / b, nil
	case "//":
		if b == 0 {
			return nil, zeroDiv("float floor division by zero")
		}
		return math.Floor(a / b), nil
	case "%":
		if b == 0 {
			return nil, zeroDiv("float modulo")
		}
		m := math.Mod(a, b)
		if m != 0 && (m < 0) != (b < 0) {
			m += b
		} else if m == 0 {
			m = math.Copysign(0, b)
		}
		return m, nil
	case "**":
		if a == 0 && b < 0 {
			return nil, zeroDiv("0.0 cannot be raised to a negative power")
		}
		if a < 0 && b != math.Trunc(b) {
			return nil, valueErr("complex results are not supported")
		}
		r := math.Pow(a, b)
		if math.IsInf(r, 0) && !math.IsInf(a, 0) && !math.IsInf(b, 0) {
			return nil, &Error{Kind: "OverflowError", Msg: "(34, 'Numerical result out of range')"}
		}
		return r, nil
	}
	return nil, unsupported(op, av, bv)
}

func numOfK(v any) (numKind, int64, *big.Int) {
	k, i, b, _ := numOf(v)
	return k, i, b
}

// UnaryOp applies unary - or +.
func UnaryOp(op string, v any) (any, error) {
	if err := undefCheck(v); err != nil {
		return nil, err
	}
	k, i, b, f := numOf(v)
	switch k {
	case nkInt:
		if op == "-" {
			if i == math.MinInt64 {
				return new(big.Int).Neg(big.NewInt(i)), nil
			}
			return -i, nil
		}
		return i, nil
	case nkBig:
		if op == "-" {
			return normBig(new(big.Int).Neg(b)), nil
		}
		return b, nil
	case nkFloat:
		if op == "-" {
			return -f, nil
		}
		return f, nil
	}
	return nil, typeErr("bad operand type for unary %s: '%s'", op, TypeName(v))
}

// CompareOp is Python's a op b for the comparison operators (==, !=, <,
// <=, >, >=; "in" and "notin" test a in b): a NaN is unordered, an
// undefined operand raises.
func CompareOp(op string, a, b any) (bool, error) { return compareOp(op, a, b) }

// compareOp evaluates one comparison operator.
func compareOp(op string, a, b any) (bool, error) {
	switch op {
	case "==":
		if err := strictCheck(a, b); err != nil {
			return false, err
		}
		return equalStrict(a, b, 0)
	case "!=":
		if err := strictCheck(a, b); err != nil {
			return false, err
		}
		eq, err := equalStrict(a, b, 0)
		return !eq && err == nil, err
	case "in":
		return Contains(b, a)
	case "notin":
		r, err := Contains(b, a)
		return !r, err
	}
	if err := undefCheck(a, b); err != nil {
		return false, err
	}
	c, err := Compare(a, b, op)
	if err != nil {
		return false, err
	}
	if c == 2 {
		return false, nil
	}
	switch op {
	case "<":
		return c < 0, nil
	case "<=":
		return c <= 0, nil
	case ">":
		return c > 0, nil
	case ">=":
		return c >= 0, nil
	}
	return false, nil
}

var _ = payload.NewMap
