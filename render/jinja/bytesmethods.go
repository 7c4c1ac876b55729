package jinja

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/gsalt/gsalt/wire/payload"
)

// bytesMethods are the methods of Python's bytes a template calls (what
// to_bytes and str.encode return): ASCII-only case changes, and
// arguments that must be bytes-like (a str is a TypeError).
var bytesMethods map[string]methodFn

func init() {
	caseMap := func(name string, f func(byte) byte) methodFn {
		return noArgMethod("bytes", name, func(in []byte) any {
			out := make([]byte, len(in))
			for i, c := range in {
				out[i] = f(c)
			}
			return out
		})
	}
	upper := func(c byte) byte {
		if 'a' <= c && c <= 'z' {
			return c - 32
		}
		return c
	}
	lower := func(c byte) byte {
		if 'A' <= c && c <= 'Z' {
			return c + 32
		}
		return c
	}
	const asciiSpace = " \t\n\r\x0b\x0c"
	strip := func(name string, left, right bool) methodFn {
		return func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			if err := nargs("bytes."+name, args, kw, 0, 1); err != nil {
				return nil, err
			}
			cut := asciiSpace
			if len(args) == 1 && args[0] != nil {
				b, err := bytesArg(args[0])
				if err != nil {
					return nil, err
				}
				cut = string(b)
			}
			s := string(recv.([]byte))
			if left {
				s = strings.TrimLeft(s, cut)
			}
			if right {
				s = strings.TrimRight(s, cut)
			}
			return []byte(s), nil
		}
	}
	// sub is the byte string a count/find/index argument stands for: a
	// bytes-like object or an int in range(256)
	sub := func(v any) ([]byte, error) {
		if n, ok := v.(int64); ok {
			if n < 0 || n > 255 {
				return nil, valueErr("byte must be in range(0, 256)")
			}
			return []byte{byte(n)}, nil
		}
		if _, ok := v.(bool); ok {
			if v.(bool) {
				return []byte{1}, nil
			}
			return []byte{0}, nil
		}
		return bytesArg(v)
	}
	find := func(name string, missing func() (any, error)) methodFn {
		return func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			if err := nargs("bytes."+name, args, kw, 1, 1); err != nil {
				return nil, err
			}
			b, err := sub(args[0])
			if err != nil {
				return nil, err
			}
			in := recv.([]byte)
			if name == "count" {
				if len(b) == 0 {
					return int64(len(in) + 1), nil
				}
				return int64(bytes.Count(in, b)), nil
			}
			if i := bytes.Index(in, b); i >= 0 {
				return int64(i), nil
			}
			return missing()
		}
	}
	bytesMethods = map[string]methodFn{
		"upper": caseMap("upper", upper),
		"lower": caseMap("lower", lower),
		"swapcase": caseMap("swapcase", func(c byte) byte {
			if u := upper(c); u != c {
				return u
			}
			return lower(c)
		}),
		"strip":  strip("strip", true, true),
		"lstrip": strip("lstrip", true, false),
		"rstrip": strip("rstrip", false, true),
		"count":  find("count", nil),
		"find":   find("find", func() (any, error) { return int64(-1), nil }),
		"index":  find("index", func() (any, error) { return nil, valueErr("subsection not found") }),
		"decode": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			if err := nargs("decode", args, kw, 0, 2); err != nil {
				return nil, err
			}
			in := recv.([]byte)
			if !utf8.Valid(in) {
				return nil, &Error{Kind: "UnicodeDecodeError", Msg: "'utf-8' codec can't decode bytes"}
			}
			return string(in), nil
		},
		"split": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			if err := nargs("split", args, kw, 0, 2); err != nil {
				return nil, err
			}
			in := recv.([]byte)
			var parts [][]byte
			if len(args) == 0 || args[0] == nil {
				parts = bytes.FieldsFunc(in, func(r rune) bool { return strings.ContainsRune(asciiSpace, r) })
			} else {
				sep, err := bytesArg(args[0])
				if err != nil {
					return nil, err
				}
				if len(sep) == 0 {
					return nil, valueErr("empty separator")
				}
				parts = bytes.Split(in, sep)
			}
			out := make([]any, len(parts))
			for i, p := range parts {
				out[i] = p
			}
			return &List{Items: out}, nil
		},
		"startswith": affix("startswith", bytes.HasPrefix),
		"endswith":   affix("endswith", bytes.HasSuffix),
		"replace": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			if err := nargs("replace", args, kw, 2, 3); err != nil {
				return nil, err
			}
			old, err := bytesArg(args[0])
			if err != nil {
				return nil, err
			}
			nw, err := bytesArg(args[1])
			if err != nil {
				return nil, err
			}
			n := -1
			if len(args) == 3 {
				c, ok := args[2].(int64)
				if !ok {
					return nil, typeErr("'%s' object cannot be interpreted as an integer", TypeName(args[2]))
				}
				if c >= 0 && c < int64(len(recv.([]byte))+1) {
					n = int(c)
				}
			}
			return bytes.Replace(recv.([]byte), old, nw, n), nil
		},
		"join": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			if err := nargs("join", args, kw, 1, 1); err != nil {
				return nil, err
			}
			items, err := Iterate(args[0])
			if err != nil {
				return nil, typeErr("can only join an iterable")
			}
			parts := make([][]byte, len(items))
			for i, it := range items {
				b, ok := it.([]byte)
				if !ok {
					return nil, typeErr("sequence item %d: expected a bytes-like object, %s found", i, TypeName(it))
				}
				parts[i] = b
			}
			return bytes.Join(parts, recv.([]byte)), nil
		},
	}
}

// affix is bytes.startswith/endswith: a bytes prefix or a tuple of them.
func affix(name string, has func(s, p []byte) bool) methodFn {
	return func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
		if err := nargs(name, args, kw, 1, 3); err != nil {
			return nil, err
		}
		in := recv.([]byte)
		var cands []any
		if t, ok := args[0].(Tuple); ok {
			cands = t
		} else {
			cands = []any{args[0]}
		}
		for _, c := range cands {
			b, ok := c.([]byte)
			if !ok {
				if _, tuple := args[0].(Tuple); tuple {
					return nil, typeErr("a bytes-like object is required, not '%s'", TypeName(c))
				}
				return nil, typeErr("%s first arg must be bytes or a tuple of bytes, not %s", name, TypeName(c))
			}
			if has(in, b) {
				return true, nil
			}
		}
		return false, nil
	}
}

// bytesArg is a bytes-like argument of a bytes method.
func bytesArg(v any) ([]byte, error) {
	if b, ok := v.([]byte); ok {
		return b, nil
	}
	if err := strictCheck(v); err != nil {
		return nil, err
	}
	return nil, typeErr("a bytes-like object is required, not '%s'", TypeName(v))
}
