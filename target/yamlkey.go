package target

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gsalt/gsalt/config"
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

// yamlResolvePlain resolves a plain scalar with Salt's loader rules
// (config.ResolveScalar).
func yamlResolvePlain(s string) (any, yamlKind) {
	v, err := config.ResolveScalar(s)
	if err != nil {
		return nil, yFail
	}
	switch x := v.(type) {
	case nil:
		return nil, yNull
	case bool:
		return x, yBool
	case int64, uint64:
		return x, yInt
	case float64:
		return x, yFloat
	case string:
		return x, yStr
	}
	return nil, yFail // an int beyond 64 bits: no decoded dict holds such a key
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
