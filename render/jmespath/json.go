package jmespath

import (
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/gsalt/gsalt/render/jinja"
	"github.com/gsalt/gsalt/wire/payload"
)

// errJSON is Python's json.JSONDecodeError; its text is the part of
// Python's message before the first ':'.
type errJSON string

func (e errJSON) Error() string { return string(e) }

// jsonDecoder reads one JSON document as Python's json.loads does, into
// the Jinja value model: objects keep their key order (a repeated key
// keeps its first place and its last value), integers of any size stay
// ints, NaN and Infinity are accepted.
type jsonDecoder struct {
	s     []rune
	i     int
	depth int
}

func jsonLiteral(s string) (any, error) {
	d := &jsonDecoder{s: []rune(s)}
	d.ws()
	v, err := d.value()
	if err != nil {
		return nil, err
	}
	d.ws()
	if d.i != len(d.s) {
		return nil, errJSON("Extra data")
	}
	return v, nil
}

// jsonString decodes a JSON string literal (quotes included).
func jsonString(s string) (string, error) {
	v, err := jsonLiteral(s)
	if err != nil {
		return "", err
	}
	str, ok := v.(string)
	if !ok {
		return "", errJSON("Expecting value")
	}
	return str, nil
}

func (d *jsonDecoder) ws() {
	for d.i < len(d.s) && strings.ContainsRune(" \t\n\r", d.s[d.i]) {
		d.i++
	}
}

func (d *jsonDecoder) has(word string) bool {
	w := []rune(word)
	if d.i+len(w) > len(d.s) || string(d.s[d.i:d.i+len(w)]) != word {
		return false
	}
	d.i += len(w)
	return true
}

func (d *jsonDecoder) value() (any, error) {
	d.depth++
	defer func() { d.depth-- }()
	if d.depth > maxDepth {
		return nil, ErrDepth
	}
	if d.i >= len(d.s) {
		return nil, errJSON("Expecting value")
	}
	switch c := d.s[d.i]; {
	case c == '"':
		return d.str()
	case c == '{':
		return d.object()
	case c == '[':
		return d.array()
	case d.has("null"):
		return nil, nil
	case d.has("true"):
		return true, nil
	case d.has("false"):
		return false, nil
	case d.has("NaN"):
		return math.NaN(), nil
	case d.has("Infinity"):
		return math.Inf(1), nil
	case d.has("-Infinity"):
		return math.Inf(-1), nil
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	}
	return nil, errJSON("Expecting value")
}

func (d *jsonDecoder) number() (any, error) {
	start := d.i
	if d.s[d.i] == '-' {
		d.i++
	}
	digits := func() int {
		n := 0
		for d.i < len(d.s) && d.s[d.i] >= '0' && d.s[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	if d.i < len(d.s) && d.s[d.i] == '0' {
		d.i++
	} else if digits() == 0 {
		return nil, errJSON("Expecting value")
	}
	isFloat := false
	if d.i+1 < len(d.s) && d.s[d.i] == '.' && d.s[d.i+1] >= '0' && d.s[d.i+1] <= '9' {
		d.i++
		digits()
		isFloat = true
	}
	if d.i < len(d.s) && (d.s[d.i] == 'e' || d.s[d.i] == 'E') {
		save := d.i
		d.i++
		if d.i < len(d.s) && (d.s[d.i] == '+' || d.s[d.i] == '-') {
			d.i++
		}
		if digits() == 0 {
			d.i = save
		} else {
			isFloat = true
		}
	}
	text := string(d.s[start:d.i])
	if isFloat {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, errJSON("Expecting value")
		}
		return f, nil
	}
	n, _ := new(big.Int).SetString(text, 10)
	if n.IsInt64() {
		return n.Int64(), nil
	}
	return n, nil
}

func (d *jsonDecoder) str() (any, error) {
	d.i++ // opening quote
	var b strings.Builder
	for {
		if d.i >= len(d.s) {
			return nil, errJSON("Unterminated string starting at")
		}
		c := d.s[d.i]
		switch {
		case c == '"':
			d.i++
			return b.String(), nil
		case c < 0x20:
			return nil, errJSON("Invalid control character at")
		case c == '\\':
			d.i++
			if d.i >= len(d.s) {
				return nil, errJSON("Unterminated string starting at")
			}
			e := d.s[d.i]
			d.i++
			switch e {
			case '"', '\\', '/':
				b.WriteRune(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r, ok := d.hex4()
				if !ok {
					return nil, errJSON("Invalid \\uXXXX escape")
				}
				if utf16.IsSurrogate(r) && d.i+1 < len(d.s) && d.s[d.i] == '\\' && d.s[d.i+1] == 'u' {
					save := d.i
					d.i += 2
					if r2, ok := d.hex4(); ok && utf16.DecodeRune(r, r2) != 0xFFFD {
						r = utf16.DecodeRune(r, r2)
					} else {
						d.i = save
					}
				}
				b.WriteRune(r)
			default:
				return nil, errJSON("Invalid \\escape")
			}
		default:
			b.WriteRune(c)
			d.i++
		}
	}
}

func (d *jsonDecoder) hex4() (rune, bool) {
	if d.i+4 > len(d.s) {
		return 0, false
	}
	h := string(d.s[d.i : d.i+4])
	if strings.ContainsAny(h, "xX+-") {
		return 0, false
	}
	n, err := strconv.ParseUint(h, 16, 32)
	if err != nil {
		return 0, false
	}
	d.i += 4
	return rune(n), true
}

func (d *jsonDecoder) array() (any, error) {
	d.i++
	l := jinja.NewList()
	d.ws()
	if d.i < len(d.s) && d.s[d.i] == ']' {
		d.i++
		return l, nil
	}
	for {
		d.ws()
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		l.Items = append(l.Items, v)
		if done, err := d.next(']'); done || err != nil {
			return l, err
		}
	}
}

func (d *jsonDecoder) object() (any, error) {
	d.i++
	m := payload.NewMap()
	d.ws()
	if d.i < len(d.s) && d.s[d.i] == '}' {
		d.i++
		return m, nil
	}
	for {
		d.ws()
		if d.i >= len(d.s) || d.s[d.i] != '"' {
			return nil, errJSON("Expecting property name enclosed in double quotes")
		}
		k, err := d.str()
		if err != nil {
			return nil, err
		}
		d.ws()
		if d.i >= len(d.s) || d.s[d.i] != ':' {
			return nil, errJSON("Expecting ':' delimiter")
		}
		d.i++
		d.ws()
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		jinja.DictSet(m, k, v)
		if done, err := d.next('}'); done || err != nil {
			return m, err
		}
	}
}

// next reads the ',' before another member or the closing delimiter
// (done).
func (d *jsonDecoder) next(closing rune) (bool, error) {
	d.ws()
	if d.i < len(d.s) {
		switch d.s[d.i] {
		case ',':
			d.i++
			return false, nil
		case closing:
			d.i++
			return true, nil
		}
	}
	return false, errJSON("Expecting ',' delimiter")
}
