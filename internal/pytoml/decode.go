package pytoml

import (
	"errors"
	"math"
	"math/big"
	"regexp"
	"strings"
	"time"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/payload"
)

// ErrDecode marks every error of Loads: the text is Python's str() of the
// exception toml.loads raises, and errors.As finds the *py.Exception (its
// Type is TomlDecodeError for the decoder's own errors, or the Python
// exception that escaped it: IndexError, TypeError, ...).
var ErrDecode = errors.New("toml decode error")

// decodeError wraps the Python exception with ErrDecode.
type decodeError struct{ exc *py.Exception }

func (e *decodeError) Error() string { return e.exc.Msg }

func (e *decodeError) Unwrap() []error { return []error{ErrDecode, e.exc} }

// maxNesting bounds the nesting of arrays and inline tables (Python stops
// with RecursionError; gsalt must not overflow its stack).
const maxNesting = 200

var (
	timeRE       = regexp.MustCompile(`^([0-9]{2}):([0-9]{2}):([0-9]{2})(\.([0-9]{3,6}))?`)
	groupnameRE  = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	escapes      = "0bfnrt\""
	escapedChars = "\x00\b\f\n\r\t\""
	noChar       = rune(-1)
)

// Loads is toml.loads(s) of python3-toml 0.10.2 (Salt's toml serializer
// and renderer): tables are *payload.Map in document order, arrays []any,
// integers int64 or *big.Int, floats float64, booleans, strings, offset
// datetimes time.Time in a fixed zone named "UTC+hh:mm", local datetimes
// time.Time in UTC, local dates Date and local times TimeOfDay. The
// library's quirks are kept: what it accepts, the values it builds and
// the exception and message it raises.
func Loads(s string) (out *payload.Map, err error) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(raised)
			if !ok {
				panic(r)
			}
			out, err = nil, &decodeError{e.exc}
		}
	}()
	d := &decoder{original: []rune(s)}
	return plain(d.loads()).(*payload.Map), nil
}

// plain turns the decoder's lists into []any, in place (for the result,
// and for the repr() of an error's message, after which the decoder
// stops).
func plain(v any) any {
	switch t := v.(type) {
	case *pylist:
		out := make([]any, len(t.items))
		for i, e := range t.items {
			out[i] = plain(e)
		}
		return out
	case *payload.Map:
		for _, it := range t.Items() {
			if _, ok := it.Value.(*pylist); ok {
				t.Set(it.Key.(string), plain(it.Value))
			} else if m, ok := it.Value.(*payload.Map); ok {
				plain(m)
			}
		}
		return t
	}
	return v
}

type decoder struct {
	original runes
	depth    int
}

// decodeErr raises TomlDecodeError(msg, doc, pos).
func (d *decoder) decodeErr(msg string, pos int) {
	doc := d.original
	if pos > len(doc) {
		pos = len(doc)
	}
	lineno := 1
	last := -1
	for i := 0; i < pos; i++ {
		if doc[i] == '\n' {
			lineno++
			last = i
		}
	}
	colno := pos - last
	throw("TomlDecodeError", "%s (line %d column %d char %d)", msg, lineno, colno, pos)
}

// reraise runs fn and turns a ValueError it raises into TomlDecodeError at pos.
func (d *decoder) reraise(pos int, fn func()) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(raised); ok && (e.exc.Type == "ValueError" || e.exc.Type == "TomlDecodeError") {
				d.decodeErr(e.exc.Msg, pos)
			}
			panic(r)
		}
	}()
	fn()
}

// scan is the decoder's first pass over the characters: it checks key
// names and quotes and blanks out comments and line breaks inside arrays.
func (d *decoder) scan() runes {
	sl := append(runes(nil), d.original...)
	n := len(sl)
	at := func(i int) rune {
		if i < 0 {
			i += n
		}
		if i < 0 || i >= n {
			throw("IndexError", "list index out of range")
		}
		return sl[i]
	}
	// tryAt is at for the decoder's `try: ... except IndexError: pass`.
	tryAt := func(i int) (rune, bool) {
		if i < 0 {
			i += n
		}
		if i < 0 || i >= n {
			return 0, false
		}
		return sl[i], true
	}
	openarr := 0
	openstring, multilinestr, arrayoftables, keygroup, dottedkey := false, false, false, false, false
	openstrchar := noChar
	beginline := true
	keyname := 0
	// quote is what a quote character q does: when it counts (not
	// escaped), it opens or closes a string (a multi-line one when
	// triple); openstrchar then names the open string's quote.
	quote := func(counts, triple bool, q rune) {
		switch {
		case counts && triple:
			multilinestr = !multilinestr
			openstring = multilinestr
		case counts:
			openstring = !openstring
		}
		openstrchar = noChar
		if openstring {
			openstrchar = q
		}
	}
scan:
	for i := 0; i < n; i++ {
		item := sl[i]
		if item == '\r' && at(i+1) == '\n' {
			sl[i] = ' '
			continue
		}
		if keyname != 0 {
			if item == '\n' {
				d.decodeErr("Key name found without value. Reached end of line.", i)
			}
			if openstring {
				if item == openstrchar {
					odd := false
					for k := 1; i >= k && sl[i-k] == '\\'; k++ {
						odd = !odd
					}
					if !odd {
						keyname = 2
						openstring = false
						openstrchar = noChar
					}
				}
				continue
			} else if keyname == 1 {
				switch {
				case py.IsSpace(item):
					keyname = 2
					continue
				case item == '.':
					dottedkey = true
					continue
				case isAlnum(item) || item == '_' || item == '-':
					continue
				case dottedkey && at(i-1) == '.' && (item == '"' || item == '\''):
					openstring = true
					openstrchar = item
					continue
				}
			} else if keyname == 2 {
				if py.IsSpace(item) {
					if dottedkey {
						if next := at(i + 1); !py.IsSpace(next) && next != '.' {
							keyname = 1
						}
					}
					continue
				}
				if item == '.' {
					dottedkey = true
					if next := at(i + 1); !py.IsSpace(next) && next != '.' {
						keyname = 1
					}
					continue
				}
			}
			if item != '=' {
				d.decodeErr("Found invalid character in key name: '"+string(item)+"'. Try quoting the key name.", i)
			}
			keyname = 0
			dottedkey = false
		}
		if item == '\'' && openstrchar != '"' {
			k := 1
			for {
				r, ok := tryAt(i - k)
				if !ok || r != '\'' {
					break
				}
				k++
				if k == 3 {
					break
				}
			}
			quote(true, k == 3, '\'')
		}
		if item == '"' && openstrchar != '\'' {
			odd, tripquote := false, false
			k := 1
			func() {
				for {
					r, ok := tryAt(i - k)
					if !ok {
						return
					}
					if r != '"' {
						break
					}
					k++
					if k == 3 {
						tripquote = true
						break
					}
				}
				if k == 1 || (k == 3 && tripquote) {
					for {
						r, ok := tryAt(i - k)
						if !ok {
							return
						}
						if r != '\\' {
							break
						}
						odd = !odd
						k++
					}
				}
			}()
			quote(!odd, tripquote, '"')
		}
		if item == '#' && !openstring && !keygroup && !arrayoftables {
			for j := i; ; j++ {
				if j >= n {
					break scan
				}
				if sl[j] == '\n' {
					break
				}
				sl[j] = ' '
			}
		}
		if item == '[' && !openstring && !keygroup && !arrayoftables {
			if beginline {
				if n > i+1 && sl[i+1] == '[' {
					arrayoftables = true
				} else {
					keygroup = true
				}
			} else {
				openarr++
			}
		}
		if item == ']' && !openstring {
			switch {
			case keygroup:
				keygroup = false
			case arrayoftables:
				if at(i-1) == ']' {
					arrayoftables = false
				}
			default:
				openarr--
			}
		}
		if item == '\n' {
			switch {
			case openstring || multilinestr:
				if !multilinestr {
					d.decodeErr("Unbalanced quotes", i)
				}
				if p := at(i - 1); (p == '\'' || p == '"') && at(i-2) == p {
					sl[i] = p
					if at(i-3) == p {
						sl[i-3] = ' '
					}
				}
			case openarr != 0:
				sl[i] = ' '
			default:
				beginline = true
			}
		} else if beginline && sl[i] != ' ' && sl[i] != '\t' {
			beginline = false
			if !keygroup && !arrayoftables {
				if sl[i] == '=' {
					d.decodeErr("Found empty keyname. ", i)
				}
				keyname = 1
			}
		}
	}
	if keyname != 0 {
		d.decodeErr("Key name found without value. Reached end of file.", len(d.original))
	}
	if openstring {
		d.decodeErr("Unterminated string found. Reached end of file.", len(d.original))
	}
	return sl
}

// loads is the body of toml.loads after the first pass: line by line.
func (d *decoder) loads() any {
	var implicitgroups []string
	retval := payload.NewMap()
	var currentlevel any = retval
	lines := strings.Split(string(d.scan()), "\n")
	multikey := ""
	hasMultikey := false
	multilinestr := ""
	multibackslash := false
	pos := 0
	for index, line := range lines {
		if index > 0 {
			pos += ulen(lines[index-1]) + 1
		}
		if multilinestr == "" || multibackslash || !strings.Contains(multilinestr, "\n") {
			line = strip(line)
		}
		mk := hasMultikey && multikey != ""
		if line == "" && (!mk || multibackslash) {
			continue
		}
		if mk {
			multilinestr += line
			multibackslash = false
			closed := false
			first := sidx(multilinestr, 0)
			if first == '[' {
				closed = sidx(line, -1) == ']'
			} else if ulen(line) > 2 {
				closed = sidx(line, -1) == first && sidx(line, -2) == first && sidx(line, -3) == first
			}
			if closed {
				var value any
				d.reraise(pos, func() { value, _ = d.loadValue(multilinestr, true) })
				setItem(currentlevel, multikey, value)
				hasMultikey, multikey, multilinestr = false, "", ""
			} else {
				r := []rune(multilinestr)
				for k := len(r) - 1; k > -1 && r[k] == '\\'; k-- {
					multibackslash = !multibackslash
				}
				if multibackslash {
					multilinestr = string(r[:len(r)-1])
				} else {
					multilinestr += "\n"
				}
			}
			continue
		}
		switch sidx(line, 0) {
		case '[':
			currentlevel = d.table(line, pos, retval, &implicitgroups)
		case '{':
			if sidx(line, -1) != '}' {
				d.decodeErr("Line breaks are not allowed in inlineobjects", pos)
			}
			d.reraise(pos, func() { d.loadInlineObject(line, currentlevel, mk, multibackslash) })
		default:
			if strings.Contains(line, "=") {
				d.reraise(pos, func() {
					if ret, ok := d.loadLine(line, currentlevel, hasMultikey && multikey != "", multibackslash); ok {
						hasMultikey, multikey, multilinestr, multibackslash = true, ret.key, ret.str, ret.backslash
					}
				})
			}
		}
	}
	return retval
}

// table reads a [table] or [[array of tables]] header line and returns the
// table it opens.
func (d *decoder) table(line string, pos int, retval *payload.Map, implicitgroups *[]string) any {
	arrayoftables := false
	if ulen(line) == 1 {
		d.decodeErr("Opening key group bracket on line by itself.", pos)
	}
	splitstr := "]"
	if sidx(line, 1) == '[' {
		arrayoftables = true
		line = slice(line, 2, end)
		splitstr = "]]"
	} else {
		line = slice(line, 1, end)
	}
	i := 1
	quoted := false
	for _, qs := range splitOnQuotes(line) {
		if !quoted && strings.Contains(qs, splitstr) {
			break
		}
		i += strings.Count(qs, splitstr)
		quoted = !quoted
	}
	parts := split(line, splitstr, i)
	if len(parts) < i+1 || strip(last(parts)) != "" {
		d.decodeErr("Key group not on a line by itself.", pos)
	}
	groups := strings.Split(strings.Join(parts[:len(parts)-1], splitstr), ".")
	for i := 0; i < len(groups); i++ {
		groups[i] = strip(groups[i])
		if g := groups[i]; g != "" && (sidx(g, 0) == '"' || sidx(g, 0) == '\'') {
			groupstr := g
			j := i + 1
			for sidx(groupstr, 0) != sidx(groupstr, -1) || ulen(groupstr) == 1 {
				j++
				if j > len(groups)+2 {
					d.decodeErr("Invalid group name '"+groupstr+"' Something went wrong.", pos)
				}
				groupstr = strip(strings.Join(groups[i:min(j, len(groups))], "."))
			}
			groups[i] = slice(groupstr, 1, -1)
			groups = append(groups[:i+1], groups[min(j, len(groups)):]...)
		} else if !groupnameRE.MatchString(g) {
			d.decodeErr("Invalid group name '"+g+"'. Try quoting it.", pos)
		}
	}
	var currentlevel any = retval
	for i, group := range groups {
		lastGroup := i == len(groups)-1
		if group == "" {
			d.decodeErr("Can't have a keygroup with an empty name", pos)
		}
		var existing any
		var found bool
		if isTypeError(func() { existing, found = getItem(currentlevel, group) }) {
			currentlevel, _ = lastItem(currentlevel)
			if !contains(currentlevel, group) {
				setItem(currentlevel, group, payload.NewMap())
				if lastGroup && arrayoftables {
					setItem(currentlevel, group, &pylist{items: []any{payload.NewMap()}})
				}
			}
		} else if found {
			if lastGroup {
				if k := indexOf(*implicitgroups, group); k >= 0 {
					*implicitgroups = append((*implicitgroups)[:k], (*implicitgroups)[k+1:]...)
					if arrayoftables {
						d.decodeErr("An implicitly defined table can't be an array", pos)
					}
				} else if arrayoftables {
					appendItem(existing, payload.NewMap())
				} else {
					d.decodeErr("What? "+group+" already exists?"+pyfmt.Repr(plain(currentlevel)), pos)
				}
			}
		} else {
			if !lastGroup {
				*implicitgroups = append(*implicitgroups, group)
			}
			setItem(currentlevel, group, payload.NewMap())
			if lastGroup && arrayoftables {
				setItem(currentlevel, group, &pylist{items: []any{payload.NewMap()}})
			}
		}
		next, found := getItem(currentlevel, group)
		if !found {
			throw("KeyError", "%s", pyfmt.Repr(group))
		}
		currentlevel = next
		if arrayoftables {
			if item, missing := lastItem(currentlevel); !missing {
				currentlevel = item
			}
		}
	}
	return currentlevel
}

func indexOf(l []string, s string) int {
	for i, x := range l {
		if x == s {
			return i
		}
	}
	return -1
}

// loadDate is the decoder's _load_date: a Date, a time.Time or nil.
func loadDate(val string) any {
	rv := []rune(val)
	microsecond := 0
	tz := ""
	func() {
		defer func() {
			if r := recover(); r != nil {
				if e, ok := r.(raised); ok && e.exc.Type == "ValueError" {
					tz = ""
					return
				}
				panic(r)
			}
		}()
		if len(rv) <= 19 {
			return
		}
		if rv[19] != '.' {
			tz = newTZ(string(rv[19:]))
			return
		}
		var sub, tzval string
		hasTZ := true
		if r := rv[len(rv)-1]; r == 'Z' || r == 'z' {
			sub, tzval = string(rv[20:len(rv)-1]), "Z"
		} else {
			rest := string(rv[20:])
			if k := strings.IndexByte(rest, '+'); k >= 0 {
				sub, tzval = rest[:k], rest[k:]
			} else if k := strings.IndexByte(rest, '-'); k >= 0 {
				sub, tzval = rest[:k], rest[k:]
			} else {
				sub, hasTZ = rest, false
			}
		}
		if hasTZ {
			tz = newTZ(tzval)
		}
		n := pyInt(sub, 10)
		digits := ulen(sub)
		if digits <= 6 {
			m := new(big.Int).Mul(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(6-digits)), nil))
			microsecond = badMicro
			if m.IsInt64() && m.Int64() <= math.MaxInt32 && m.Int64() >= math.MinInt32 {
				microsecond = int(m.Int64())
			}
			return
		}
		f, _ := new(big.Float).SetInt(n).Float64()
		if math.IsInf(f, 0) {
			throw("OverflowError", "int too large to convert to float")
		}
		x := math.Trunc(f * math.Pow(10, float64(6-digits)))
		microsecond = badMicro
		if x <= math.MaxInt32 && x >= math.MinInt32 {
			microsecond = int(x)
		}
	}()
	if !strings.Contains(slice(val, 1, end), "-") {
		return nil
	}
	field := func(a, b int) int {
		n, ok := tryInt(slice(val, a, b))
		if !ok || n > math.MaxInt32 || n < math.MinInt32 {
			return -1 << 40 // out of every range: datetime raises ValueError
		}
		return int(n)
	}
	y, mo, dd := field(0, 4), field(5, 7), field(8, 10)
	if len(rv) == 10 {
		if !validDate(y, mo, dd) {
			return nil
		}
		return Date{y, mo, dd}
	}
	h, mi, sec := field(11, 13), field(14, 16), field(17, 19)
	if !validDate(y, mo, dd) || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59 || microsecond < 0 || microsecond > 999999 {
		return nil
	}
	loc := time.UTC
	if tz != "" {
		loc = tzLocation(tz)
	}
	return time.Date(y, time.Month(mo), dd, h, mi, sec, microsecond*1000, loc)
}

// badMicro is a microsecond datetime() refuses.
const badMicro = 1 << 30

// newTZ is toml.tz.TomlTz(offset): the raw offset it keeps, after the
// checks its constructor makes.
func newTZ(offset string) string {
	raw := offset
	if offset == "Z" {
		raw = "+00:00"
	}
	sidx(raw, 0)
	pyInt(slice(raw, 1, 3), 10)
	pyInt(slice(raw, 4, 6), 10)
	return raw
}

// tzLocation is the fixed zone of a TomlTz: named "UTC" + the raw offset,
// as its tzname() is.
func tzLocation(raw string) *time.Location {
	sign := 1
	if sidx(raw, 0) == '-' {
		sign = -1
	}
	h, m := pyInt(slice(raw, 1, 3), 10).Int64(), pyInt(slice(raw, 4, 6), 10).Int64()
	return time.FixedZone("UTC"+raw, sign*int(h*3600+m*60))
}

func validDate(y, m, d int) bool {
	if y < 1 || y > 9999 || m < 1 || m > 12 || d < 1 {
		return false
	}
	days := [...]int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[m-1]
	if m == 2 && y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		days = 29
	}
	return d <= days
}

// loadUnicodeEscapes is the decoder's _load_unicode_escapes.
func loadUnicodeEscapes(v string, hexbytes []string, prefix string) string {
	skip := false
	r := []rune(v)
	for i := len(r) - 1; i > -1 && r[i] == '\\'; i-- {
		skip = !skip
	}
	var b strings.Builder
	b.WriteString(v)
	for _, hx := range hexbytes {
		if skip {
			skip = false
			hr := []rune(hx)
			for i := len(hr) - 1; i > -1 && hr[i] == '\\'; i-- {
				skip = !skip
			}
			b.WriteString(prefix)
			b.WriteString(hx)
			continue
		}
		n := 4
		if prefix == `\U` {
			n = 8
		}
		hxb := strings.ToLower(slice(hx, 0, n))
		if strings.Trim(hxb, "0123456789abcdef") != "" {
			valueError("Invalid escape sequence: %s", hxb)
		}
		if sidx(hxb, 0) == 'd' && strings.Trim(string(sidx(hxb, 1)), "01234567") != "" {
			valueError("Invalid escape sequence: %s. Only scalar unicode points are allowed.", hxb)
		}
		c := pyInt("0x"+hxb, 0)
		if !c.IsInt64() || c.Int64() > math.MaxInt32 {
			throw("OverflowError", "Python int too large to convert to C int")
		}
		if c.Int64() > 0x10FFFF {
			valueError("chr() arg not in range(0x110000)")
		}
		b.WriteRune(rune(c.Int64()))
		b.WriteString(slice(hx, ulen(hxb), end))
	}
	return b.String()
}

// unescape is the decoder's _unescape.
func unescape(v string) string {
	r := []rune(v)
	backslash := false
	for i := 0; i < len(r); {
		if backslash {
			backslash = false
			switch c := r[i]; {
			case strings.ContainsRune(escapes, c):
				e := rune(escapedChars[strings.IndexRune(escapes, c)])
				r = append(append(append(runes(nil), r[:i-1]...), e), r[i+1:]...)
			case c == '\\':
				r = append(append(runes(nil), r[:i-1]...), r[i:]...)
			case c == 'u' || c == 'U':
				i++
			default:
				valueError("Reserved escape sequence used")
			}
			continue
		}
		if r[i] == '\\' {
			backslash = true
		}
		i++
	}
	return string(r)
}

// splitOnQuotes is TomlDecoder._get_split_on_quotes.
func splitOnQuotes(line string) []string {
	dqs := strings.Split(line, `"`)
	quoted := false
	var out []string
	if len(dqs) > 1 && strings.Contains(dqs[0], "'") {
		sqs := strings.Split(dqs[0], "'")
		dqs = dqs[1:]
		for len(sqs)%2 == 0 && len(dqs) > 0 {
			sqs[len(sqs)-1] += `"` + dqs[0]
			dqs = dqs[1:]
			if l := sqs[len(sqs)-1]; strings.Contains(l, "'") {
				sqs = append(sqs[:len(sqs)-1], strings.Split(l, "'")...)
			}
		}
		out = append(out, sqs...)
	}
	for _, dq := range dqs {
		if quoted {
			out = append(out, dq)
		} else {
			out = append(out, strings.Split(dq, "'")...)
			quoted = !quoted
		}
	}
	return out
}

// multiline is what load_line returns when a multi-line string starts.
type multiline struct {
	key, str  string
	backslash bool
}

// strictlyValidNum is the decoder's _strictly_valid_num.
func strictlyValidNum(n string) bool {
	n = strip(n)
	switch {
	case n == "":
		return false
	case n[0] == '_', n[len(n)-1] == '_':
		return false
	case strings.Contains(n, "_.") || strings.Contains(n, "._"):
		return false
	}
	r := []rune(n)
	if len(r) == 1 {
		return true
	}
	if r[0] == '0' && !strings.ContainsRune(".obx", r[1]) {
		return false
	}
	if r[0] == '+' || r[0] == '-' {
		r = r[1:]
		if len(r) > 1 && r[0] == '0' && r[1] != '.' {
			return false
		}
	}
	return !strings.Contains(string(r), "__")
}

// loadLine is TomlDecoder.load_line: one key = value line into currentlevel.
func (d *decoder) loadLine(line string, currentlevel any, multikeyIn, multibackslash bool) (multiline, bool) {
	i := 1
	quoted := false
	for _, qs := range splitOnQuotes(line) {
		if !quoted && strings.Contains(qs, "=") {
			break
		}
		i += strings.Count(qs, "=")
		quoted = !quoted
	}
	pair := split(line, "=", i)
	strictlyValid := strictlyValidNum(last(pair))
	if v := last(pair); v != "" && v[0] >= '0' && v[0] <= '9' {
		pair[len(pair)-1] = strings.ReplaceAll(v, "_", "")
	}
	for {
		v := last(pair)
		if v == "" {
			break
		}
		c := sidx(v, 0)
		if c == ' ' || c == '\t' || c == '\'' || c == '"' || c == '[' || c == '{' || strip(v) == "true" || strip(v) == "false" {
			break
		}
		if _, ok := pyFloat(v); ok {
			break
		}
		if loadDate(v) != nil {
			break
		}
		if timeRE.MatchString(v) {
			break
		}
		i++
		prev := v
		pair = split(line, "=", i)
		if prev == last(pair) {
			valueError("Invalid date or number")
		}
		if strictlyValid {
			strictlyValid = strictlyValidNum(last(pair))
		}
	}
	key := strip(strings.Join(pair[:len(pair)-1], "="))
	val := strip(last(pair))
	if strings.Contains(key, ".") {
		var levels []string
		if strings.ContainsAny(key, `"'`) {
			quoted := false
			for _, qs := range splitOnQuotes(key) {
				if quoted {
					levels = append(levels, qs)
				} else {
					for _, l := range strings.Split(qs, ".") {
						levels = append(levels, strip(l))
					}
				}
				quoted = !quoted
			}
		} else {
			levels = strings.Split(key, ".")
		}
		for last(levels) == "" {
			levels = levels[:len(levels)-1]
		}
		for _, level := range levels[:len(levels)-1] {
			if level == "" {
				continue
			}
			if !contains(currentlevel, level) {
				setItem(currentlevel, level, payload.NewMap())
			}
			next, found := getItem(currentlevel, level)
			if !found {
				throw("KeyError", "%s", pyfmt.Repr(level))
			}
			currentlevel = next
		}
		key = strip(last(levels))
	} else if c := sidx(key, 0); (c == '"' || c == '\'') && sidx(key, -1) == c {
		key = unescape(slice(key, 1, -1))
	}
	var value any
	hasValue := false
	multikey, multikeySet := "", false
	multilinestr := ""
	if k, koffset := multilineStart(val); k > -1 {
		vr := []rune(val)
		for ; k > -1 && vr[k+koffset] == '\\'; k-- {
			multibackslash = !multibackslash
		}
		if multibackslash {
			multilinestr = slice(val, 0, -1)
		} else {
			multilinestr = val + "\n"
		}
		multikey, multikeySet = key, true
	} else {
		value, _ = d.loadValue(val, strictlyValid)
		hasValue = true
	}
	var found bool
	if isTypeError(func() { _, found = getItem(currentlevel, key) }) || found {
		valueError("Duplicate keys!")
	}
	if !multikeySet && multikeyIn {
		throw("UnboundLocalError", "cannot access local variable 'multilinestr' where it is not associated with a value")
	}
	if multikeySet && multikey != "" {
		return multiline{key: multikey, str: multilinestr, backslash: multibackslash}, true
	}
	if !hasValue {
		throw("UnboundLocalError", "cannot access local variable 'value' where it is not associated with a value")
	}
	setItem(currentlevel, key, value)
	return multiline{}, false
}

// multilineStart is TomlDecoder._load_line_multiline_str: where a value
// opening a multi-line string ends, -1 when it does not open one.
func multilineStart(p string) (int, int) {
	poffset := 0
	if ulen(p) < 3 {
		return -1, poffset
	}
	if sidx(p, 0) == '[' && sidx(strip(p), -1) != ']' && isStrArray(p) {
		newp := strings.Split(strip(slice(p, 1, end)), ",")
		for len(newp) > 1 {
			c := sidx(last(newp), 0)
			if c == '"' || c == '\'' {
				break
			}
			n := len(newp)
			newp = append(newp[:n-2], newp[n-2]+","+newp[n-1])
		}
		np := last(newp)
		poffset = ulen(p) - ulen(np)
		p = np
	}
	c := sidx(p, 0)
	if c != '"' && c != '\'' {
		return -1, poffset
	}
	if sidx(p, 1) != c || sidx(p, 2) != c {
		return -1, poffset
	}
	if ulen(p) > 5 && sidx(p, -1) == c && sidx(p, -2) == c && sidx(p, -3) == c {
		return -1, poffset
	}
	return ulen(p) - 1, poffset
}

// loadInlineObject is TomlDecoder.load_inline_object.
func (d *decoder) loadInlineObject(line string, currentlevel any, multikeyIn, multibackslash bool) {
	candidates := strings.Split(slice(line, 1, -1), ",")
	var groups []string
	if len(candidates) == 1 && strip(candidates[0]) == "" {
		candidates = nil
	}
	for len(candidates) > 0 {
		cg := candidates[0]
		candidates = candidates[1:]
		parts := strings.SplitN(cg, "=", 2)
		if len(parts) != 2 {
			valueError("Invalid inline table encountered")
		}
		value := strip(parts[1])
		first, lastc := sidx(value, 0), sidx(value, -1)
		if (first == lastc && (first == '"' || first == '\'')) || strings.ContainsRune("-0123456789", first) ||
			value == "true" || value == "false" || (first == '[' && lastc == ']') || (first == '{' && lastc == '}') {
			groups = append(groups, cg)
		} else if len(candidates) > 0 {
			candidates[0] = cg + "," + candidates[0]
		} else {
			valueError("Invalid inline table value encountered")
		}
	}
	for _, g := range groups {
		if _, started := d.loadLine(g, currentlevel, multikeyIn, multibackslash); started {
			break
		}
	}
}

// loadValue is TomlDecoder.load_value: a value and its type name.
func (d *decoder) loadValue(v string, strictlyValid bool) (any, string) {
	if v == "" {
		valueError("Empty value is invalid")
	}
	switch {
	case v == "true":
		return true, "bool"
	case strings.ToLower(v) == "true":
		valueError("Only all lowercase booleans allowed")
	case v == "false":
		return false, "bool"
	case strings.ToLower(v) == "false":
		valueError("Only all lowercase booleans allowed")
	}
	switch c := sidx(v, 0); {
	case c == '"' || c == '\'':
		return d.loadString(v, c), "str"
	case c == '[':
		d.enter()
		defer d.leave()
		return d.loadArray(v), "array"
	case c == '{':
		d.enter()
		defer d.leave()
		obj := payload.NewMap()
		d.loadInlineObject(v, obj, false, false)
		return obj, "inline_object"
	}
	if m := timeRE.FindStringSubmatch(v); m != nil {
		num := func(s string) int { n, _ := tryInt(s); return int(n) }
		t := TimeOfDay{num(m[1]), num(m[2]), num(m[3]), 0}
		if m[5] != "" {
			t.Microsecond = num(m[5])
		}
		switch {
		case t.Hour > 23:
			valueError("hour must be in 0..23")
		case t.Minute > 59:
			valueError("minute must be in 0..59")
		case t.Second > 59:
			valueError("second must be in 0..59")
		}
		return t, "time"
	}
	if date := loadDate(v); date != nil {
		return date, "date"
	}
	if !strictlyValid {
		valueError("Weirdness with leading zeroes or underscores in your number.")
	}
	neg := false
	switch sidx(v, 0) {
	case '-':
		neg = true
		v = slice(v, 1, end)
	case '+':
		v = slice(v, 1, end)
	}
	v = strings.ReplaceAll(v, "_", "")
	lowerv := strings.ToLower(v)
	isFloat := false
	var f float64
	if strings.Contains(v, ".") || (!strings.Contains(v, "x") && strings.ContainsAny(v, "eE")) {
		if strings.Contains(v, ".") && split(v, ".", 1)[1] == "" {
			valueError("This float is missing digits after the point")
		}
		if !strings.ContainsRune("0123456789", sidx(v, 0)) {
			valueError("This float doesn't have a leading digit")
		}
		f, isFloat = floatOrRaise(v), true
	} else if ulen(lowerv) == 3 && (lowerv == "inf" || lowerv == "nan") {
		f, isFloat = floatOrRaise(v), true
	}
	if isFloat {
		if neg {
			return 0 - f, "float"
		}
		return f, "float"
	}
	n := pyInt(v, 0)
	if neg {
		n.Neg(n)
	}
	return intValue(n), "int"
}

func (d *decoder) enter() {
	if d.depth++; d.depth > maxNesting {
		throw("RecursionError", "maximum recursion depth exceeded")
	}
}

func (d *decoder) leave() { d.depth-- }

// loadString is the string branch of load_value.
func (d *decoder) loadString(v string, quote rune) string {
	q := string(quote)
	testv := strings.Split(slice(v, 1, end), q)
	triplequote := false
	count := 0
	if len(testv) > 1 && testv[0] == "" && testv[1] == "" {
		testv = testv[2:]
		triplequote = true
	}
	closed := false
	for _, tv := range testv {
		if tv == "" {
			if triplequote {
				count++
			} else {
				closed = true
			}
			continue
		}
		odd := false
		r := []rune(tv)
		for i := len(r) - 1; i >= 0 && r[i] == '\\'; i-- {
			odd = !odd
		}
		if !odd {
			if closed {
				valueError("Found tokens after a closed string. Invalid TOML.")
			}
			if !triplequote || count > 1 {
				closed = true
			} else {
				count = 0
			}
		}
	}
	if quote == '"' {
		backslash := false
		for _, e := range strings.Split(v, `\`)[1:] {
			if e == "" {
				backslash = !backslash
				continue
			}
			c := sidx(e, 0)
			if !strings.ContainsRune(escapes, c) && c != 'u' && c != 'U' && !backslash {
				valueError("Reserved escape sequence used")
			}
			backslash = false
		}
		for _, prefix := range []string{`\u`, `\U`} {
			if strings.Contains(v, prefix) {
				hexbytes := strings.Split(v, prefix)
				v = loadUnicodeEscapes(hexbytes[0], hexbytes[1:], prefix)
			}
		}
		v = unescape(v)
	}
	if ulen(v) > 1 && sidx(v, 1) == quote && (ulen(v) < 3 || sidx(v, 1) == sidx(v, 2)) {
		v = slice(v, 2, -2)
	}
	return slice(v, 1, -1)
}

// boundedString is TomlDecoder.bounded_string.
func boundedString(s string) bool {
	r := []rune(s)
	if len(r) == 0 {
		return true
	}
	if r[len(r)-1] != r[0] {
		return false
	}
	backslash := false
	for i := len(r) - 2; i > 0 && r[i] == '\\'; i-- {
		backslash = !backslash
	}
	return !backslash
}

// isStrArray is TomlDecoder._load_array_isstrarray.
func isStrArray(a string) bool {
	a = strip(slice(a, 1, -1))
	return a != "" && (sidx(a, 0) == '"' || sidx(a, 0) == '\'')
}

// loadArray is TomlDecoder.load_array.
func (d *decoder) loadArray(a string) *pylist {
	retval := &pylist{}
	a = strip(a)
	inner := slice(a, 1, -1)
	var elems []string
	if !strings.Contains(inner, "[") || strip(strings.Split(inner, "[")[0]) != "" {
		strarray := isStrArray(a)
		if !strings.HasPrefix(strip(inner), "{") {
			elems = strings.Split(inner, ",")
		} else {
			elems = inlineGroups([]rune(a))
		}
		if strarray {
			for b := 0; b < len(elems)-1; b++ {
				ab := strip(elems[b])
				for {
					r := []rune(ab)
					if boundedString(ab) && !(len(r) > 2 && r[0] == r[1] && r[1] == r[2] && r[len(r)-2] != r[0] && r[len(r)-3] != r[0]) {
						break
					}
					if b+1 >= len(elems) {
						throw("IndexError", "list index out of range")
					}
					elems[b] = elems[b] + "," + elems[b+1]
					ab = strip(elems[b])
					if b < len(elems)-2 {
						elems = append(elems[:b+1], elems[b+2:]...)
					} else {
						elems = elems[:b+1]
					}
				}
			}
		}
	} else {
		al := []rune(inner)
		openarr, j := 0, 0
		for i, c := range al {
			switch {
			case c == '[':
				openarr++
			case c == ']':
				openarr--
			case c == ',' && openarr == 0:
				elems = append(elems, string(al[j:i]))
				j = i + 1
			}
		}
		elems = append(elems, string(al[j:]))
	}
	atype := ""
	for _, e := range elems {
		e = strip(e)
		if e == "" {
			continue
		}
		nval, ntype := d.loadValue(e, true)
		if atype != "" && ntype != atype {
			valueError("Not a homogeneous array")
		}
		atype = ntype
		retval.items = append(retval.items, nval)
	}
	return retval
}

// inlineGroups splits an array of inline tables at its top-level braces
// (the inline-object branch of load_array).
func inlineGroups(a runes) []string {
	var out []string
	n := len(a) - 1 // len(a[1:])
	start, stop := 1, 2
	open := 0
	if idx(a, start) == '{' {
		open = 1
	}
	inStr := false
	for stop < n {
		c := a[stop]
		if c == '"' || c == '\'' {
			if inStr {
				for bi := stop - 1; bi > -1 && a[bi] == '\\'; bi-- {
					inStr = !inStr
				}
			}
			inStr = !inStr
		}
		if !inStr && c == '{' {
			open++
		}
		if inStr || c != '}' {
			stop++
			continue
		}
		if open > 1 {
			open--
			stop++
			continue
		}
		stop++
		out = append(out, string(a[start:stop]))
		start = stop + 1
		for start < n && a[start] != '{' {
			start++
		}
		stop = start + 1
	}
	return out
}
