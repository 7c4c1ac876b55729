// Package jid is salt.utils.jid: making job ids (gen_jid), recognising
// them (is_jid) and reading the time out of them (jid_to_time). A jid is
// the UTC time "%Y%m%d%H%M%S%f" (20 digits), optionally followed by "_"
// and a process id when unique_jid is set.
package jid

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/gsalt/gsalt/internal/py"
)

// ErrNotJID is returned for text that is not a job id.
var ErrNotJID = errors.New("not a jid")

const layout = "20060102150405.000000"

// Format renders t as a jid: "{:%Y%m%d%H%M%S%f}" of t in UTC.
func Format(t time.Time) string {
	s := t.UTC().Format(layout)
	return s[:14] + s[15:]
}

// New is gen_jid without unique_jid: the jid of the current time.
func New() string { return Format(time.Now()) }

// Is is is_jid: s is 20 characters, or longer with "_" as the 21st and
// something after it, and Python's int() accepts its first 20 characters
// (so surrounding whitespace, a sign, "_" between digits and non-ASCII
// decimal digits pass, as they do in Salt).
func Is(s string) bool { return plainJID(s) || isJID(s) }

// isJID is Is for any text.
func isJID(s string) bool {
	r := []rune(s)
	if !shapeOK(r) {
		return false
	}
	_, ok := pyInt(string(r[:20]))
	return ok
}

// plainJID reports the common case without converting s: 20 ASCII
// digits, alone or followed by "_" and more (what gen_jid makes).
func plainJID(s string) bool {
	if len(s) != 20 && (len(s) <= 21 || s[20] != '_') {
		return false
	}
	for i := range 20 {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func shapeOK(r []rune) bool {
	return len(r) == 20 || (len(r) > 21 && r[20] == '_')
}

// monthAbbr is calendar.month_abbr in the C locale: index 0 is "".
var monthAbbr = [...]string{"", "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

// ToTime is jid_to_time: "2026, Nov 22 03:02:47.987634" for
// "20261122030247987634", "" for text that is not jid-shaped. Like Salt it
// slices the parts without checking them, so only the month must be an
// int (month 0 has the empty name and -1..-13 count from the end, as
// calendar.month_abbr does); a month Python cannot convert or index gives
// an error wrapping ErrNotJID (Salt raises ValueError or IndexError).
func ToTime(s string) (string, error) {
	r := []rune(s)
	if !shapeOK(r) {
		return "", nil
	}
	mon, ok := pyInt(string(r[4:6]))
	if !ok {
		return "", fmt.Errorf("%w: invalid literal for int() with base 10: %q", ErrNotJID, string(r[4:6]))
	}
	if mon < 0 {
		mon += int64(len(monthAbbr))
	}
	if mon < 0 || mon >= int64(len(monthAbbr)) {
		return "", fmt.Errorf("%w: list index out of range", ErrNotJID)
	}
	return fmt.Sprintf("%s, %s %s %s:%s:%s.%s", string(r[:4]), monthAbbr[mon], string(r[6:8]), string(r[8:10]), string(r[10:12]), string(r[12:14]), string(r[14:20])), nil
}

// Parse returns the time a plain jid (20 ASCII digits, optionally "_pid")
// encodes, in UTC. Errors wrap ErrNotJID.
func Parse(s string) (time.Time, error) {
	if len(s) < 20 || !shapeOK([]rune(s)) {
		return time.Time{}, fmt.Errorf("%w: %q", ErrNotJID, s)
	}
	for i := 0; i < 20; i++ {
		if s[i] < '0' || s[i] > '9' {
			return time.Time{}, fmt.Errorf("%w: %q", ErrNotJID, s)
		}
	}
	t, err := time.ParseInLocation(layout, s[:14]+"."+s[14:20], time.UTC)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: %q: %v", ErrNotJID, s, err)
	}
	return t, nil
}

// pyInt is Python's int(s) for a str, as far as a jid needs it: the value
// when it fits an int64 (ok false when Python raises ValueError; a value
// too large for int64 but valid in Python reports ok with a zero value).
func pyInt(s string) (int64, bool) {
	s = strings.TrimFunc(s, intSpace)
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" {
		return 0, false
	}
	var n int64
	overflow := false
	prevDigit := false
	for _, r := range s {
		if r == '_' {
			if !prevDigit {
				return 0, false
			}
			prevDigit = false
			continue
		}
		d, ok := decimalValue(r)
		if !ok {
			return 0, false
		}
		prevDigit = true
		if n > (1<<63-1-int64(d))/10 {
			overflow = true
		}
		n = n*10 + int64(d)
	}
	if !prevDigit {
		return 0, false // trailing "_"
	}
	if overflow {
		return 0, true
	}
	if neg {
		n = -n
	}
	return n, true
}

// decimalValue is the value of a Unicode decimal digit (category Nd).
func decimalValue(r rune) (int, bool) {
	if r >= '0' && r <= '9' {
		return int(r - '0'), true
	}
	// Every run of Nd digits is whole 0-9 sets, so a digit's value is its
	// distance from the start of its range, modulo 10.
	for _, rg := range unicode.Nd.R16 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) && rg.Stride == 1 {
			return int(r-rune(rg.Lo)) % 10, true
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) && rg.Stride == 1 {
			return int(r-rune(rg.Lo)) % 10, true
		}
	}
	return 0, false
}

// intSpace is what int() strips: ASCII " \t\n\v\f\r", and any non-ASCII
// character str.isspace accepts (\x1c-\x1f are spaces to isspace, not to
// int()).
func intSpace(r rune) bool {
	if r < 0x80 {
		return strings.ContainsRune(" \t\n\v\f\r", r)
	}
	return py.IsSpace(r)
}
