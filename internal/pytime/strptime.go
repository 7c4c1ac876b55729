package pytime

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// ErrFormat is returned when a value does not match a format or a date
// string cannot be understood.
var ErrFormat = errors.New("pytime: time data does not match")

var monthNames = []string{"january", "february", "march", "april", "may", "june", "july",
	"august", "september", "october", "november", "december"}

var dayNames = []string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"}

// Strptime parses value with a Python strptime format in loc (time.Local
// when nil), like datetime.datetime.strptime: fields the format lacks
// default to 1900-01-01 00:00:00, a space in the format matches any run of
// white space, and the whole value must be consumed.
func Strptime(value, format string, loc *time.Location) (time.Time, error) {
	if loc == nil {
		loc = time.Local
	}
	year, month, day, hour, minute, sec, nsec := 1900, 1, 1, 0, 0, 0, 0
	pm, hasPM, hour12 := false, false, false
	var zone *time.Location
	v := value
	bad := func() (time.Time, error) {
		return time.Time{}, fmt.Errorf("%w: %q does not match format %q", ErrFormat, value, format)
	}
	num := func(maxDigits int) (int, bool) {
		i := 0
		for i < len(v) && i < maxDigits && v[i] >= '0' && v[i] <= '9' {
			i++
		}
		if i == 0 {
			return 0, false
		}
		n, _ := strconv.Atoi(v[:i])
		v = v[i:]
		return n, true
	}
	name := func(names []string) (int, bool) {
		low := strings.ToLower(v)
		for i, n := range names {
			for _, cand := range []string{n, n[:3]} {
				if strings.HasPrefix(low, cand) {
					v = v[len(cand):]
					return i, true
				}
			}
		}
		return 0, false
	}
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c == ' ' || c == '\t' || c == '\n' {
			v = strings.TrimLeftFunc(v, unicode.IsSpace)
			continue
		}
		if c != '%' || i+1 >= len(format) {
			if v == "" || v[0] != c {
				return bad()
			}
			v = v[1:]
			continue
		}
		i++
		var ok bool
		switch format[i] {
		case 'Y':
			year, ok = num(4)
		case 'y':
			var y int
			if y, ok = num(2); ok {
				if y < 69 {
					year = 2000 + y
				} else {
					year = 1900 + y
				}
			}
		case 'm':
			month, ok = num(2)
		case 'd':
			day, ok = num(2)
		case 'H':
			hour, ok = num(2)
		case 'I':
			hour, ok = num(2)
			hour12 = true
		case 'M':
			minute, ok = num(2)
		case 'S':
			sec, ok = num(2)
		case 'f':
			start := len(v)
			var f int
			if f, ok = num(6); ok {
				digits := start - len(v)
				for ; digits < 9; digits++ {
					f *= 10
				}
				nsec = f
			}
		case 'p':
			low := strings.ToLower(v)
			switch {
			case strings.HasPrefix(low, "am"):
				ok, hasPM = true, true
			case strings.HasPrefix(low, "pm"):
				ok, hasPM, pm = true, true, true
			}
			if ok {
				v = v[2:]
			}
		case 'b', 'B', 'h':
			var mo int
			if mo, ok = name(monthNames); ok {
				month = mo + 1
			}
		case 'a', 'A':
			_, ok = name(dayNames)
		case 'j':
			var yd int
			if yd, ok = num(3); ok {
				month, day = 1, yd
			}
		case 'z':
			if len(v) >= 5 && (v[0] == '+' || v[0] == '-') {
				s := strings.Replace(v[:min(len(v), 6)], ":", "", 1)
				if len(s) >= 5 {
					h, e1 := strconv.Atoi(s[1:3])
					mi, e2 := strconv.Atoi(s[3:5])
					if e1 == nil && e2 == nil {
						off := (h*60 + mi) * 60
						if v[0] == '-' {
							off = -off
						}
						zone = time.FixedZone("", off)
						if len(v) >= 6 && v[3] == ':' {
							v = v[6:]
						} else {
							v = v[5:]
						}
						ok = true
					}
				}
			} else if strings.HasPrefix(v, "Z") {
				zone, ok, v = time.UTC, true, v[1:]
			}
		case '%':
			ok = strings.HasPrefix(v, "%")
			if ok {
				v = v[1:]
			}
		default:
			return time.Time{}, fmt.Errorf("%w: bad directive %%%c in format %q", ErrFormat, format[i], format)
		}
		if !ok {
			return bad()
		}
	}
	if v != "" {
		return time.Time{}, fmt.Errorf("%w: unconverted data remains: %s", ErrFormat, v)
	}
	if hour12 && hasPM {
		hour %= 12
		if pm {
			hour += 12
		}
	}
	if month < 1 || month > 12 || day < 1 || day > 366 || hour > 23 || minute > 59 || sec > 61 {
		return bad()
	}
	if zone != nil {
		loc = zone
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, loc)
	if t.Day() != day && day <= 31 {
		return bad()
	}
	return t, nil
}

// Parse reads a date and/or time string the lenient way
// dateutil.parser.parse does for the strings Salt's schedule options
// hold ("when", "range", "until", "after", "skip_during_range"): ISO 8601
// ("2026-11-22T18:30:00", "2026-11-22 18:30", with Z or an offset),
// "11/22/2026 6:30pm", "Nov 22 2026 18:30", "22 November 2026", "5:00pm",
// "5pm", "18:30", "Monday 5:00pm", "tuesday". Fields that are not given
// come from now's date (time of day 00:00:00); a weekday name moves the
// date to the next such day (today included), as dateutil does. Times are
// in now's location unless the string names a zone.
func Parse(s string, now time.Time) (time.Time, error) {
	orig := s
	bad := func(why string) (time.Time, error) {
		return time.Time{}, fmt.Errorf("%w: %q: %s", ErrFormat, orig, why)
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return bad("empty")
	}
	// ISO 8601 with a T between date and time.
	if i := strings.IndexByte(s, 'T'); i == 10 && len(s) > 11 && s[4] == '-' {
		s = s[:10] + " " + s[11:]
	}
	year, month, day := -1, -1, -1
	hour, minute, sec, nsec := -1, 0, 0, 0
	weekday := -1
	loc := now.Location()
	var pending []int // bare numbers not yet placed
	fields := strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == ',' })
	setTime := func(tok string) bool {
		low := strings.ToLower(tok)
		ampm := ""
		for _, suf := range []string{"am", "pm", "a.m.", "p.m."} {
			if strings.HasSuffix(low, suf) {
				ampm, low = suf[:1], strings.TrimSpace(strings.TrimSuffix(low, suf))
				break
			}
		}
		// A zone glued to the time: 18:30:00Z, 18:30:00+01:00.
		if ampm == "" {
			if strings.HasSuffix(low, "z") {
				loc, low = time.UTC, strings.TrimSuffix(low, "z")
			} else if k := strings.LastIndexAny(low, "+-"); k > 0 && strings.Contains(low[:k], ":") {
				z, err := Strptime(strings.ToUpper(low[k:]), "%z", time.UTC)
				if err != nil {
					return false
				}
				loc, low = z.Location(), low[:k]
			}
		}
		parts := strings.Split(low, ":")
		if len(parts) > 3 || (len(parts) == 1 && ampm == "") {
			return false
		}
		vals := make([]int, 3)
		for i, p := range parts {
			if i == 2 {
				if dot := strings.IndexByte(p, '.'); dot >= 0 {
					frac := p[dot+1:]
					p = p[:dot]
					if len(frac) == 0 || len(frac) > 9 {
						return false
					}
					f, err := strconv.Atoi(frac)
					if err != nil {
						return false
					}
					for n := len(frac); n < 9; n++ {
						f *= 10
					}
					nsec = f
				}
			}
			n, err := strconv.Atoi(p)
			if err != nil || n < 0 || len(p) > 2 || len(p) == 0 {
				return false
			}
			vals[i] = n
		}
		h := vals[0]
		if ampm != "" {
			if h < 1 || h > 12 {
				return false
			}
			h %= 12
			if ampm == "p" {
				h += 12
			}
		}
		if h > 23 || vals[1] > 59 || vals[2] > 59 {
			return false
		}
		hour, minute, sec = h, vals[1], vals[2]
		return true
	}
	for _, tok := range fields {
		low := strings.ToLower(tok)
		switch {
		case low == "am" || low == "pm" || low == "a.m." || low == "p.m.":
			if hour < 0 && len(pending) > 0 {
				hour, pending = pending[len(pending)-1], pending[:len(pending)-1]
			}
			if hour < 1 || hour > 12 {
				return bad("am/pm without an hour")
			}
			hour %= 12
			if low[0] == 'p' {
				hour += 12
			}
		case low == "z" || low == "utc" || low == "gmt":
			loc = time.UTC
		case (low[0] == '+' || low[0] == '-') && len(low) >= 5:
			z, err := Strptime(low, "%z", time.UTC)
			if err != nil {
				return bad("bad zone " + tok)
			}
			loc = z.Location()
		case strings.Count(low, "-") == 2 && len(low) >= 8 && low[4] == '-':
			t, err := Strptime(low, "%Y-%m-%d", time.UTC)
			if err != nil {
				return bad("bad date " + tok)
			}
			year, month, day = t.Year(), int(t.Month()), t.Day()
		case strings.Count(low, "/") == 2:
			p := strings.Split(low, "/")
			layout := "%m/%d/%Y"
			if len(p[0]) == 4 {
				layout = "%Y/%m/%d"
			} else if len(p[2]) == 2 {
				layout = "%m/%d/%y"
			}
			t, err := Strptime(low, layout, time.UTC)
			if err != nil {
				return bad("bad date " + tok)
			}
			year, month, day = t.Year(), int(t.Month()), t.Day()
		case strings.Contains(low, ":") || strings.HasSuffix(low, "am") || strings.HasSuffix(low, "pm"):
			if !setTime(tok) {
				return bad("bad time " + tok)
			}
		default:
			if n, err := strconv.Atoi(low); err == nil {
				pending = append(pending, n)
				continue
			}
			found := false
			for i, mn := range monthNames {
				if low == mn || low == mn[:3] || low == mn[:3]+"." || (len(low) > 3 && strings.HasPrefix(mn, low)) {
					month, found = i+1, true
				}
			}
			for i, dn := range dayNames {
				if low == dn || low == dn[:3] || (len(low) > 3 && strings.HasPrefix(dn, low)) {
					weekday, found = i, true
				}
			}
			if !found {
				return bad("unknown word " + tok)
			}
		}
	}
	for _, n := range pending {
		switch {
		case n > 31 && year < 0:
			year = n
		case day < 0 && n >= 1 && n <= 31:
			day = n
		case year < 0 && n >= 0 && n < 100:
			year = 2000 + n
		default:
			return bad("cannot place " + strconv.Itoa(n))
		}
	}
	base := now.In(loc)
	if year < 0 {
		year = base.Year()
	}
	if month < 0 {
		month = int(base.Month())
	}
	if day < 0 {
		day = base.Day()
	}
	if hour < 0 {
		hour = 0
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, loc)
	if t.Day() != day || int(t.Month()) != month {
		return bad("day out of range")
	}
	if weekday >= 0 {
		t = t.AddDate(0, 0, (weekday-int(t.Weekday())+7)%7)
	}
	return t, nil
}
