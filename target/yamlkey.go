package target

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The YAML 1.1 implicit resolvers of PyYAML's SafeLoader (immutable after
// package initialisation).
var (
	yamlBoolRe  = regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)
	yamlNullRe  = regexp.MustCompile(`^(?:~|null|Null|NULL|)$`)
	yamlIntRe   = regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)
	yamlFloatRe = regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
)

type yamlKind int

const (
	yFail yamlKind = iota // parse error or a value that can never be a dict key
	yNull
	yBool
	yInt
	yFloat
	yStr
	yColl // a mapping or sequence (unhashable, or returned unchanged by Salt)
)

// yamlifyKey mirrors what traverse_dict_and_list does after a failed key
// lookup: salt.utils.args.yamlify_arg(key). It returns the loaded key and
// true when the loaded value differs from the string (so the lookup is
// retried with it), or false when the traversal must give up.
//
// Supported: plain scalars resolved as null/bool/int/float (YAML 1.1 with
// Salt's "leading zero means decimal" rule), single- and double-quoted
// strings, trailing comments and surrounding spaces. Anchors, tags, block
// scalars, document markers and flow collections make the lookup fail,
// which is what they do in Salt for any key a msgpack dict can hold.
func yamlifyKey(arg string) (any, bool) {
	st := strings.TrimFunc(arg, pyIsSpace)
	if st == "" || st == "---" || st == "..." {
		return nil, false
	}
	if strings.Contains(arg, "_") && strings.Trim(st, "0123456789_") == "" {
		return nil, false
	}
	if strings.ContainsAny(arg, "\t\r\n") {
		return nil, false
	}
	if strings.Contains(arg, "#") {
		v, k := yamlScalar(arg)
		switch k {
		case yBool, yInt, yFloat:
			return v, true
		}
		return nil, false
	}
	if arg == "None" {
		return nil, true
	}
	v, k := yamlScalar(arg)
	switch k {
	case yNull:
		if arg == "!" {
			return nil, false
		}
		return nil, true
	case yBool, yInt, yFloat:
		return v, true
	case yStr:
		s := v.(string)
		if s == arg || (s == "" && (arg == "|" || arg == "!")) {
			return nil, false
		}
		return s, true
	}
	return nil, false
}

// yamlScalar loads a one-line YAML document that is expected to be a scalar.
func yamlScalar(doc string) (any, yamlKind) {
	s := strings.Trim(doc, " ")
	if s == "" {
		return nil, yNull
	}
	switch s[0] {
	case '"', '\'':
		val, rest, ok := yamlQuoted(s)
		if !ok {
			return nil, yFail
		}
		rest = strings.TrimLeft(rest, " ")
		if rest != "" && !strings.HasPrefix(rest, "#") {
			return nil, yFail
		}
		return val, yStr
	case '#':
		return nil, yNull
	case '[', '{':
		return nil, yColl
	case '&':
		// an anchor: "&name" alone is an empty (null) node
		_, rest, _ := strings.Cut(s, " ")
		if strings.TrimLeft(rest, " ") == "" {
			return nil, yNull
		}
		return yamlScalar(rest)
	case ']', '}', ',', '*', '!', '|', '>', '%', '@', '`':
		return nil, yFail
	case '-', '?', ':':
		if len(s) == 1 || s[1] == ' ' {
			return nil, yColl
		}
	}
	// strip a comment: '#' preceded by a space
	if i := strings.Index(s, " #"); i >= 0 {
		s = strings.TrimRight(s[:i], " ")
	}
	if strings.Contains(s, ": ") || strings.HasSuffix(s, ":") {
		return nil, yColl
	}
	return yamlResolvePlain(s)
}

func yamlResolvePlain(s string) (any, yamlKind) {
	switch {
	case yamlNullRe.MatchString(s):
		return nil, yNull
	case yamlBoolRe.MatchString(s):
		switch s[0] {
		case 'y', 'Y', 't', 'T':
			return true, yBool
		case 'o', 'O':
			return s[1] == 'n' || s[1] == 'N', yBool
		}
		return false, yBool
	case yamlIntRe.MatchString(s):
		if v, ok := yamlInt(s); ok {
			return v, yInt
		}
		return nil, yFail
	case yamlFloatRe.MatchString(s):
		if v, ok := yamlFloat(s); ok {
			return v, yFloat
		}
		return nil, yFail
	}
	return s, yStr
}

// yamlInt constructs an int the way Salt's SaltYamlSafeLoader does: an
// unsigned value with leading zeros is decimal, a signed one is octal.
func yamlInt(s string) (any, bool) {
	if s != "0" && strings.HasPrefix(s, "0") && !strings.HasPrefix(s, "0b") && !strings.HasPrefix(s, "0x") {
		s = strings.TrimLeft(s, "0")
		if s == "" {
			s = "0"
		}
	}
	v := strings.ReplaceAll(s, "_", "")
	neg := false
	if v != "" && (v[0] == '-' || v[0] == '+') {
		neg = v[0] == '-'
		v = v[1:]
	}
	var u uint64
	var err error
	switch {
	case v == "0":
		u = 0
	case strings.HasPrefix(v, "0b"):
		u, err = strconv.ParseUint(v[2:], 2, 64)
	case strings.HasPrefix(v, "0x"):
		u, err = strconv.ParseUint(v[2:], 16, 64)
	case v != "" && v[0] == '0':
		u, err = strconv.ParseUint(v, 8, 64)
	case strings.Contains(v, ":"):
		f, ok := sexagesimal(v)
		if !ok || f > math.MaxInt64 {
			return nil, false
		}
		u = uint64(f)
	default:
		u, err = strconv.ParseUint(v, 10, 64)
	}
	if err != nil {
		return nil, false
	}
	if neg {
		if u > 1<<63 {
			return nil, false
		}
		return -int64(u), true
	}
	if u > math.MaxInt64 {
		return u, true
	}
	return int64(u), true
}

func yamlFloat(s string) (any, bool) {
	v := strings.ToLower(strings.ReplaceAll(s, "_", ""))
	sign := 1.0
	if v != "" && (v[0] == '-' || v[0] == '+') {
		if v[0] == '-' {
			sign = -1
		}
		v = v[1:]
	}
	switch {
	case v == ".inf":
		return sign * math.Inf(1), true
	case v == ".nan":
		return math.NaN(), true
	case strings.Contains(v, ":"):
		f, ok := sexagesimal(v)
		return sign * f, ok
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return nil, false
	}
	return sign * f, true
}

func sexagesimal(v string) (float64, bool) {
	parts := strings.Split(v, ":")
	var acc float64
	for _, p := range parts {
		f, err := strconv.ParseFloat(p, 64)
		if err != nil {
			return 0, false
		}
		acc = acc*60 + f
	}
	return acc, true
}

// yamlQuoted parses a quoted scalar at the start of s and returns its value
// and what follows the closing quote.
func yamlQuoted(s string) (string, string, bool) {
	q := s[0]
	var b strings.Builder
	i := 1
	for i < len(s) {
		c := s[i]
		if q == '\'' {
			if c == '\'' {
				if i+1 < len(s) && s[i+1] == '\'' {
					b.WriteByte('\'')
					i += 2
					continue
				}
				return b.String(), s[i+1:], true
			}
			b.WriteByte(c)
			i++
			continue
		}
		switch c {
		case '"':
			return b.String(), s[i+1:], true
		case '\\':
			if i+1 >= len(s) {
				return "", "", false
			}
			e := s[i+1]
			i += 2
			simple := map[byte]string{'0': "\x00", 'a': "\a", 'b': "\b", 't': "\t", '\t': "\t", 'n': "\n",
				'v': "\v", 'f': "\f", 'r': "\r", 'e': "\x1b", ' ': " ", '"': "\"", '/': "/", '\\': "\\",
				'N': "\u0085", '_': "\u00a0", 'L': "\u2028", 'P': "\u2029"}
			if r, ok := simple[e]; ok {
				b.WriteString(r)
				continue
			}
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if n == 0 || i+n > len(s) {
				return "", "", false
			}
			cp, err := strconv.ParseUint(s[i:i+n], 16, 32)
			if err != nil || !utf8.ValidRune(rune(cp)) {
				return "", "", false
			}
			b.WriteRune(rune(cp))
			i += n
		default:
			b.WriteByte(c)
			i++
		}
	}
	return "", "", false
}
