// Package stringutils holds the helpers of Salt's salt.utils.stringutils
// that several gsalt packages need, each written once: expr_match (used by
// key auto-accept files, eauth ACLs, event tag filters, grains matching and
// the check_whitelist_blacklist Jinja filter) and human_to_bytes.
//
// Regular expressions run on internal/pyre, so they have Python's re
// semantics (look-around, backreferences, Unicode classes, `$` before a
// final newline), as Salt's do.
package stringutils

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyre"
)

// ExprMatch is salt.utils.stringutils.expr_match: true when expr matches
// line as an fnmatch glob, or else as the Python regular expression
// `\A<expr>\Z` applied with re.match. Like Salt, the expression is not
// wrapped in a group, so "a|b" means `\Aa` or `b\Z` (matched at the
// start); an invalid expression is no match.
func ExprMatch(line, expr string) bool {
	if py.Fnmatch(line, expr) {
		return true
	}
	re, err := pyre.Compile(`\A`+expr+`\Z`, 0)
	if err != nil {
		return false
	}
	m, err := re.MatchStart(line)
	return err == nil && m != nil
}

// ErrOverflow is returned by HumanToBytes for a size too large for a
// float (Python's OverflowError converting infinity to int).
var ErrOverflow = errors.New("cannot convert float infinity to integer")

// HumanToBytes is salt.utils.stringutils.human_to_bytes on str(size):
// "2G", "30MB", "64KiB" and plain numbers become a byte count; a size
// of unexpected form is 0. Units ending in "b" other than "b" itself
// (kb, mb, …) are decimal only when handleMetric is true. The result is
// an int64, or a *big.Int when it does not fit.
func HumanToBytes(size, defaultUnit string, handleMetric bool) (any, error) {
	s := strings.TrimSpace(size)
	// (?P<value>[0-9.]*)\s*(?P<unit>.*)$ with re.match
	i := 0
	for i < len(s) && (s[i] == '.' || (s[i] >= '0' && s[i] <= '9')) {
		i++
	}
	value := s[:i]
	rest := strings.TrimLeft(s[i:], " \t\n\r\f\v")
	if strings.Contains(rest, "\n") {
		// `.` stops at a newline and `$` then fails: Salt's match is None
		// and it raises AttributeError on m.group.
		return nil, fmt.Errorf("'NoneType' object has no attribute 'group'")
	}
	unit := strings.ToLower(rest)
	if unit == "" {
		unit = strings.ToLower(defaultUnit)
	}
	var iv *big.Int
	var fv float64
	isFloat := false
	if n, ok := new(big.Int).SetString(value, 10); ok && value != "" {
		iv = n
	} else {
		f, err := strconv.ParseFloat(value, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) || value == "" || value == "." {
			return int64(0), nil
		}
		fv, isFloat = f, true
	}
	dec := false
	switch {
	case len(unit) == 2 && strings.ContainsRune("kmgtpezy", rune(unit[0])) && unit[1] == 'b':
		dec = handleMetric
	case unit == "b", len(unit) == 1 && strings.ContainsRune("kmgtpezy", rune(unit[0])),
		len(unit) == 3 && strings.ContainsRune("kmgtpezy", rune(unit[0])) && unit[1:] == "ib":
	default:
		return int64(0), nil
	}
	p := strings.IndexByte("bkmgtpezy", unit[0])
	mul := new(big.Int).Lsh(big.NewInt(1), uint(p*10))
	if dec {
		mul = new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(p*3)), nil)
	}
	if !isFloat {
		return normInt(iv.Mul(iv, mul)), nil
	}
	mf, _ := new(big.Float).SetInt(mul).Float64()
	r := fv * mf
	if math.IsInf(r, 0) {
		return nil, ErrOverflow
	}
	bi, _ := big.NewFloat(math.Trunc(r)).Int(nil)
	return normInt(bi), nil
}

func normInt(b *big.Int) any {
	if b.IsInt64() {
		return b.Int64()
	}
	return b
}
