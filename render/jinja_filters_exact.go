package render

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"math"
	"math/big"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyre"
	"github.com/gsalt/gsalt/render/jinja"
	"github.com/gsalt/gsalt/wire/payload"
)

// exactFilters are Salt filters written as Salt's Python runs them on any
// value: its method calls go through the engine's Python methods, so a
// list or dict given where Salt expects a string fails with Python's
// AttributeError or TypeError, and odd inputs give Salt's odd results.
func exactFilters() map[string]jinja.FilterFunc {
	return map[string]jinja.FilterFunc{
		"to_snake_case":       filterToSnakeCase,
		"to_camelcase":        filterToCamelCase,
		"contains_whitespace": filterContainsWhitespace,
		"base64_encode":       filterBase64Encode,
		"base64_decode":       filterBase64Decode,
		"hmac":                filterHMAC,
		"hmac_compute":        filterHMACCompute,
		"regex_escape":        filterRegexEscape,
		"path_join":           filterPathJoin,
		"python": func(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
			if _, err := jinja.Bind("to_python", args, kw, nil); err != nil {
				return nil, err
			}
			return jinja.Pformat(v), nil
		},
		"method_call":        filterMethodCall,
		"is_text_file":       filterIsTextFile,
		"is_bin_file":        filterIsBinFile,
		"filter_by_networks": filterByNetworks,
		"xml":                filterXML,
		"avg":                filterAvg,
	}
}

// pyMethod calls obj.name(args...) as Python does: an AttributeError when
// obj has no such method.
func pyMethod(r *jinja.Runtime, obj any, name string, args ...any) (any, error) {
	m, err := r.GetAttr(obj, name)
	if err != nil {
		return nil, err
	}
	if _, undef := m.(*jinja.Undefined); undef {
		return nil, pyErr("AttributeError", "'%s' object has no attribute '%s'", jinja.TypeName(obj), name)
	}
	return r.Call(m, args, nil)
}

// pyItem is Python's obj[key] for an int key.
func pyItem(r *jinja.Runtime, obj any, key int64) (any, error) {
	switch obj.(type) {
	case string, *jinja.List, jinja.Tuple, []byte:
		v, err := r.GetItem(obj, key)
		if err != nil {
			return nil, err
		}
		if _, undef := v.(*jinja.Undefined); undef {
			name := jinja.TypeName(obj)
			if name == "str" {
				name = "string"
			}
			return nil, pyErr("IndexError", "%s index out of range", name)
		}
		return v, nil
	}
	return pyGetItem(obj, key)
}

// pyAdd is Python's a + b.
func pyAdd(a, b any) (any, error) { return jinja.BinOp("+", a, b) }

// pyTest calls obj.name() and tells whether the result is true.
func pyTest(r *jinja.Runtime, obj any, name string) (bool, error) {
	v, err := pyMethod(r, obj, name)
	if err != nil {
		return false, err
	}
	return jinja.Truthy(v)
}

// filterToSnakeCase is salt.utils.stringutils.camel_to_snake_case.
func filterToSnakeCase(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
	if _, err := jinja.Bind("camel_to_snake_case", args, kw, nil); err != nil {
		return nil, err
	}
	first, err := pyItem(r, v, int64(0))
	if err != nil {
		return nil, err
	}
	res, err := pyMethod(r, first, "lower")
	if err != nil {
		return nil, err
	}
	if _, ok := v.(*payload.Map); ok {
		// camel_input[1:] of a dict looks the slice up as a key
		return nil, pyErr("TypeError", "unhashable type: 'slice'")
	}
	n, err := jinja.Len(v)
	if err != nil {
		return nil, err
	}
	items, err := jinja.Iterate(v)
	if err != nil {
		return nil, err
	}
	for i := 1; i < len(items); i++ {
		letter := items[i]
		up, err := pyTest(r, letter, "isupper")
		if err != nil {
			return nil, err
		}
		if up {
			prev, err := pyItem(r, v, int64(i-1))
			if err != nil {
				return nil, err
			}
			sep, err := pyTest(r, prev, "islower")
			if err != nil {
				return nil, err
			}
			if !sep && i != n-1 {
				next, err := pyItem(r, v, int64(i+1))
				if err != nil {
					return nil, err
				}
				if sep, err = pyTest(r, next, "islower"); err != nil {
					return nil, err
				}
			}
			if sep {
				if res, err = pyAdd(res, "_"); err != nil {
					return nil, err
				}
			}
		}
		low, err := pyMethod(r, letter, "lower")
		if err != nil {
			return nil, err
		}
		if res, err = pyAdd(res, low); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// filterToCamelCase is salt.utils.stringutils.snake_to_camel_case.
func filterToCamelCase(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
	a, err := jinja.Bind("snake_to_camel_case", args, kw, []string{"uppercamel"}, false)
	if err != nil {
		return nil, err
	}
	w, err := pyMethod(r, v, "split", "_")
	if err != nil {
		return nil, err
	}
	words, err := jinja.Iterate(w)
	if err != nil {
		return nil, err
	}
	upper, err := jinja.Truthy(a[0])
	if err != nil {
		return nil, err
	}
	if upper {
		if words[0], err = pyMethod(r, words[0], "capitalize"); err != nil {
			return nil, err
		}
	}
	var b strings.Builder
	b.WriteString(words[0].(string))
	for _, word := range words[1:] {
		c, err := pyMethod(r, word, "capitalize")
		if err != nil {
			return nil, err
		}
		b.WriteString(c.(string))
	}
	return b.String(), nil
}

// filterContainsWhitespace is any(x.isspace() for x in text).
func filterContainsWhitespace(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
	if _, err := jinja.Bind("contains_whitespace", args, kw, nil); err != nil {
		return nil, err
	}
	// a one-shot iterator is read item by item: the first item without
	// isspace raises before the later ones are made
	next, err := pyNext(v)
	if err != nil {
		return nil, err
	}
	for {
		x, ok, err := next()
		if err != nil || !ok {
			return false, err
		}
		sp, err := pyTest(r, x, "isspace")
		if err != nil {
			return nil, err
		}
		if sp {
			return true, nil
		}
	}
}

func filterBase64Encode(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
	if _, err := jinja.Bind("base64_b64encode", args, kw, nil); err != nil {
		return nil, err
	}
	b, err := toBytes(v)
	if err != nil {
		return nil, err
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// filterBase64Decode is base64.b64decode (characters outside the
// alphabet are skipped), then str when the bytes are UTF-8.
func filterBase64Decode(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
	if _, err := jinja.Bind("base64_b64decode", args, kw, nil); err != nil {
		return nil, err
	}
	b, err := toBytes(v)
	if err != nil {
		return nil, err
	}
	out, err := a2bBase64(b)
	if err != nil {
		return nil, err
	}
	if utf8.Valid(out) {
		return string(out), nil
	}
	return out, nil
}

// a2bBase64 is binascii.a2b_base64 in its default, non-strict mode.
func a2bBase64(in []byte) ([]byte, error) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	var out []byte
	quad, pads := 0, 0
	var left byte
	for _, c := range in {
		if c == '=' {
			pads++
			if quad >= 2 && quad+pads >= 4 {
				return out, nil
			}
			continue
		}
		d := strings.IndexByte(alphabet, c)
		if d < 0 {
			continue
		}
		pads = 0
		ch := byte(d)
		switch quad {
		case 0:
			left, quad = ch, 1
		case 1:
			out = append(out, left<<2|ch>>4)
			left, quad = ch&0xf, 2
		case 2:
			out = append(out, left<<4|ch>>2)
			left, quad = ch&0x3, 3
		default:
			out = append(out, left<<6|ch)
			quad = 0
		}
	}
	switch quad {
	case 0:
		return out, nil
	case 1:
		return nil, pyErr("Error", "Invalid base64-encoded string: number of data characters (%d) cannot be 1 more than a multiple of 4", len(out)/3*4+1)
	}
	return nil, pyErr("Error", "Incorrect padding")
}

func hmacSHA256(key, msg []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(msg)
	return m.Sum(nil)
}

// filterHMAC is salt.utils.hashutils.hmac_signature.
func filterHMAC(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
	a, err := jinja.Bind("hmac_signature", args, kw, []string{"shared_secret", "challenge_hmac"}, jinja.Required, jinja.Required)
	if err != nil {
		return nil, err
	}
	var bs [3][]byte
	for i, x := range []any{v, a[0], a[1]} {
		if bs[i], err = toBytes(x); err != nil {
			return nil, err
		}
	}
	return base64.StdEncoding.EncodeToString(hmacSHA256(bs[1], bs[0])) == string(bs[2]), nil
}

// filterHMACCompute is salt.utils.hashutils.hmac_compute.
func filterHMACCompute(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
	a, err := jinja.Bind("hmac_compute", args, kw, []string{"shared_secret"}, jinja.Required)
	if err != nil {
		return nil, err
	}
	msg, err := toBytes(v)
	if err != nil {
		return nil, err
	}
	key, err := toBytes(a[0])
	if err != nil {
		return nil, err
	}
	return hex.EncodeToString(hmacSHA256(key, msg)), nil
}

// filterRegexEscape is re.escape.
func filterRegexEscape(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
	if _, err := jinja.Bind("regex_escape", args, kw, nil); err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case string:
		return pyre.Escape(x), nil
	case []byte:
		return []byte(pyre.Escape(string(x))), nil
	}
	return nil, pyErr("TypeError", "decoding to str: need a bytes-like object, %s found", jinja.TypeName(v))
}

// pyNormpath is posixpath.normpath (py.Normpath).
func pyNormpath(p string) string { return py.Normpath(p) }

// filterPathJoin is salt.utils.path.join.
func filterPathJoin(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
	if kw != nil {
		for _, it := range kw.Items() {
			if k := payload.KeyString(it.Key); k != "use_posixpath" && !strings.HasPrefix(k, "__") {
				return nil, pyErr("SaltInvocationError", "The following keyword arguments are not valid: %s=%s", k, jinja.Repr(it.Value))
			}
		}
	}
	var parts []string
	for _, x := range append([]any{v}, args...) {
		b, err := toBytes(x)
		if err != nil {
			return nil, err
		}
		parts = append(parts, pyNormpath(string(b)))
	}
	ret := parts[0]
	for _, p := range parts[1:] {
		p = strings.TrimLeft(p, "/")
		if ret == "" || strings.HasSuffix(ret, "/") {
			ret += p
		} else {
			ret += "/" + p
		}
	}
	return pyNormpath(ret), nil
}

// filterMethodCall is getattr(obj, f_name, lambda *a, **k: None)(*args, **kwargs).
func filterMethodCall(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
	if len(args) == 0 {
		return nil, pyErr("TypeError", "method_call() missing 1 required positional argument: 'f_name'")
	}
	name, ok := args[0].(string)
	if !ok {
		return nil, pyErr("TypeError", "attribute name must be string, not '%s'", jinja.TypeName(args[0]))
	}
	m, err := r.GetAttr(v, name)
	if err != nil {
		return nil, err
	}
	if _, undef := m.(*jinja.Undefined); undef {
		return nil, nil
	}
	return r.Call(m, args[1:], kw)
}

// readBlock reads up to n bytes of a file; ok is false when it cannot be
// opened or read.
func readBlock(p any, n int) ([]byte, bool, error) {
	var name string
	switch x := p.(type) {
	case string:
		name = x
	case []byte:
		name = string(x)
	default:
		return nil, false, pyErr("TypeError", "expected str, bytes or os.PathLike object, not %s", jinja.TypeName(p))
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, false, nil
	}
	defer f.Close()
	buf := make([]byte, n)
	k, err := f.Read(buf)
	if err != nil && k == 0 && err.Error() != "EOF" {
		return nil, false, nil
	}
	return buf[:k], true, nil
}

func isTextChar(c byte) bool {
	return (c >= 32 && c < 127) || strings.IndexByte("\n\r\t\f\b", c) >= 0
}

// filterIsTextFile is salt.utils.files.is_text.
func filterIsTextFile(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
	a, err := jinja.Bind("is_text", args, kw, []string{"blocksize"}, int64(512))
	if err != nil {
		return nil, err
	}
	size, _ := a[0].(int64)
	block, ok, err := readBlock(v, int(max(size, 0)))
	if err != nil || !ok {
		return false, err
	}
	if strings.IndexByte(string(block), 0) >= 0 {
		return false, nil
	}
	if len(block) == 0 || utf8.Valid(block) {
		return true, nil
	}
	non := 0
	for _, c := range block {
		if !isTextChar(c) {
			non++
		}
	}
	return float64(non)/float64(len(block)) <= 0.30, nil
}

// filterIsBinFile is salt.utils.files.is_binary.
func filterIsBinFile(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
	if _, err := jinja.Bind("is_binary", args, kw, nil); err != nil {
		return nil, err
	}
	if s, ok := v.(string); ok {
		if fi, err := os.Stat(s); err != nil || !fi.Mode().IsRegular() {
			return false, nil
		}
	}
	block, ok, err := readBlock(v, 2048)
	if err != nil || !ok {
		return false, err
	}
	if !utf8.Valid(block) {
		return true, nil
	}
	s := string(block)
	if s == "" {
		return false, nil
	}
	if strings.IndexByte(s, 0) >= 0 {
		return true, nil
	}
	non, n := 0, 0
	for _, c := range s {
		n++
		if c > 127 || !(c >= 32 && c < 127 || strings.ContainsRune("\n\r\t\b", c)) {
			non++
		}
	}
	return float64(non)/float64(n) > 0.30, nil
}

// filterByNetworks is salt.utils.network.filter_by_networks.
func filterByNetworks(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
	a, err := jinja.Bind("filter_by_networks", args, kw, []string{"networks"}, jinja.Required)
	if err != nil {
		return nil, err
	}
	if a[0] == nil {
		return v, nil
	}
	netItems, err := jinja.Iterate(a[0])
	if err != nil {
		return nil, err
	}
	var nets []netip.Prefix
	for _, n := range netItems {
		s, ok := n.(string)
		p, perr := netip.ParsePrefix(s)
		if !ok || perr != nil || p.Masked() != p {
			if ok && perr != nil {
				if addr, aerr := netip.ParseAddr(s); aerr == nil {
					nets = append(nets, netip.PrefixFrom(addr, addr.BitLen()))
					continue
				}
			}
			return nil, pyErr("ValueError", "%s does not appear to be an IPv4 or IPv6 network", jinja.Repr(n))
		}
		nets = append(nets, p)
	}
	filter := func(ips any) (any, error) {
		items, err := jinja.Iterate(ips)
		if err != nil {
			return nil, err
		}
		out := jinja.NewList()
		for _, ip := range items {
			s, ok := ip.(string)
			if !ok {
				if s, ok = intIP(ip); !ok {
					return nil, pyErr("ValueError", "%s does not appear to be an IPv4 or IPv6 address", jinja.Repr(ip))
				}
			}
			addr, err := netip.ParseAddr(s)
			if err != nil || addr.Zone() != "" {
				return nil, pyErr("ValueError", "%s does not appear to be an IPv4 or IPv6 address", jinja.Repr(ip))
			}
			for _, n := range nets {
				if n.Contains(addr) {
					out.Items = append(out.Items, ip)
				}
			}
		}
		return out, nil
	}
	switch x := v.(type) {
	case *payload.Map:
		out := payload.NewMap()
		for _, it := range x.Items() {
			f, err := filter(it.Value)
			if err != nil {
				return nil, err
			}
			out.SetKey(it.Key, f)
		}
		return out, nil
	case *jinja.List, jinja.Tuple, string:
		return filter(v)
	}
	if jinja.TypeName(v) == "range" {
		// a collections.abc.Sequence (a dict view is not)
		return filter(v)
	}
	return nil, pyErr("ValueError", "Do not know how to filter a %s", pyClass(v))
}

// filterAvg is Salt's avg: float(sum(lst) / len(lst)) for what is not
// hashable (list, dict, set), float(lst) for anything else (a tuple or
// range is hashable, so float() refuses it).
func filterAvg(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
	if _, err := jinja.Bind("lst_avg", args, kw, nil); err != nil {
		return nil, err
	}
	switch v.(type) {
	case *jinja.List, *payload.Map, *jinja.Set, []any:
		items, err := jinja.Iterate(v)
		if err != nil {
			return nil, err
		}
		var sum any = int64(0)
		for _, it := range items {
			if sum, err = jinja.BinOp("+", sum, it); err != nil {
				return nil, err
			}
		}
		if len(items) == 0 {
			return nil, &jinja.Error{Kind: "ZeroDivisionError", Msg: "division by zero"}
		}
		q, err := jinja.BinOp("/", sum, int64(len(items)))
		if err != nil {
			return nil, err
		}
		return pyFloat(q)
	}
	return pyFloat(v)
}

// pyFloat is Python's float(v) for numbers and strings.
func pyFloat(v any) (any, error) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1.0, nil
		}
		return 0.0, nil
	case int64:
		return float64(x), nil
	case float64:
		return x, nil
	case *big.Int:
		f, _ := new(big.Float).SetInt(x).Float64()
		if math.IsInf(f, 0) {
			return nil, pyErr("OverflowError", "int too large to convert to float")
		}
		return f, nil
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil || strings.ContainsAny(strings.ToLower(x), "x") {
			return nil, pyErr("ValueError", "could not convert string to float: %s", jinja.Repr(x))
		}
		return f, nil
	}
	return nil, pyErr("TypeError", "float() argument must be a string or a real number, not '%s'", jinja.TypeName(v))
}
