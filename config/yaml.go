package config

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/payload"
)

// ErrYAML marks a YAML document that Salt's loader would reject (syntax
// errors, duplicate keys, unknown tags, several documents in one file).
var ErrYAML = errors.New("config: invalid YAML")

// Limits protecting DecodeYAML against alias bombs and runaway nesting.
const (
	maxYAMLDepth = 256
	maxYAMLNodes = 1 << 18
)

// Implicit resolvers of YAML 1.1 as implemented by PyYAML (the resolver Salt's
// loader uses). Timestamps are not listed: Salt's loader keeps them as
// strings, which is what an unresolved plain scalar becomes anyway.
var (
	reBool  = regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)
	reFloat = regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
	reInt   = regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)
	reNull  = regexp.MustCompile(`^(?:~|null|Null|NULL|)$`)
)

// DecodeYAML parses src, which must hold at most one YAML document, with the
// semantics of Salt 3006's YAML loader (PyYAML SafeLoader, YAML 1.1, plus
// Salt's tweaks), returning nil for an empty document.
//
// Conversions applied to plain (unquoted, untagged) scalars, exactly as PyYAML
// resolves them:
//   - bool: yes/Yes/YES, no/No/NO, true/True/TRUE, false/False/FALSE,
//     on/On/ON, off/Off/OFF. Other spellings (y, n, tRUE) stay strings.
//   - null: "", ~, null, Null, NULL → nil.
//   - int (Go int, *big.Int when it does not fit): decimal, 0b binary, 0x hex,
//     underscores ignored, base-60 like 1:30 (= 90). Salt strips the leading
//     zeros of an unsigned int, so 0755 is the DECIMAL 755 (not octal 493);
//     only a signed form such as -0755 or +0755 is read as octal. 09 and 0009
//     are not ints in YAML 1.1 and stay strings.
//   - float (float64): needs a dot: 1.5, 1., .5, 1.5e+3 (the exponent needs a
//     sign; 1e3 stays a string), base-60 1:30.5, .inf, -.Inf, .nan.
//   - timestamps (2001-12-14) stay strings, as in Salt.
//   - "<<" is a merge key (Salt's variant: keys of the mapping itself win over
//     merged ones, and two merged mappings sharing a key are an error).
//
// Quoted and block scalars are strings. Explicit tags !!str, !!int, !!float,
// !!bool, !!null, !!binary ([]byte), !!timestamp (string), !!map, !!seq,
// !!set (list of members), !!omap and !!pairs (list of [key, value] lists)
// are honoured; any other tag is an error, as with Salt's safe loader.
// Mapping keys are converted to strings the way Python's str() prints them
// (True, None, 1.5); duplicate keys are an error, with Python's equality
// (1, 1.0 and true are the same key).
func DecodeYAML(src []byte) (any, error) {
	return decodeYAML(src, maxYAMLNodes)
}

// DecodeYAMLPayload is DecodeYAML for data that keeps Python's types and
// order (grains files, command-line arguments), in the wire/payload data
// model:
//   - mappings are *payload.Map with their keys as decoded (1, True, None
//     and 1.5 stay an int, a bool, None and a float); duplicate keys are an
//     error with Python's equality, as in DecodeYAML;
//   - the order is Salt's: the document's, with the keys brought in by a
//     merge key ("<<") that the mapping does not override first, then the
//     mapping's own keys;
//   - integers are int64, or uint64 or *big.Int when they do not fit.
//
// Everything else (scalar resolution, tags, merge rules, limits, errors
// wrapping ErrYAML) is DecodeYAML's.
func DecodeYAMLPayload(src []byte) (any, error) {
	return decodeYAMLModel(src, maxYAMLNodes, true)
}

// ResolveScalar returns what Salt's loader makes of s as a plain
// (unquoted, untagged) YAML scalar, in the data model of DecodeYAMLPayload:
// nil, a bool, an int64 (uint64 or *big.Int when larger), a float64, or s
// itself. An error wrapping ErrYAML means the loader would fail, as for the
// merge key "<<" or an int such as 0b_ that PyYAML cannot construct.
func ResolveScalar(s string) (any, error) {
	d := &yamlDecoder{payload: true}
	return d.scalar(&yaml.Node{Kind: yaml.ScalarNode, Value: s}, false)
}

// decodeYAML is DecodeYAML with a node budget.
func decodeYAML(src []byte, maxNodes int) (any, error) {
	return decodeYAMLModel(src, maxNodes, false)
}

// decodeYAMLModel decodes with a node budget, in the payload data model
// (DecodeYAMLPayload) or the options one (DecodeYAML).
func decodeYAMLModel(src []byte, maxNodes int, payloadModel bool) (any, error) {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, fmt.Errorf("%w: %w%s", ErrYAML, err, yamlProblemLine(src, err))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, fmt.Errorf("%w: line %d: expected a single document in the stream", ErrYAML, extra.Line)
	} else if !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: %w", ErrYAML, err)
	}
	d := &yamlDecoder{maxNodes: maxNodes, payload: payloadModel}
	return d.value(&doc, 0)
}

type yamlDecoder struct {
	nodes    int
	maxNodes int
	// payload selects the data model of DecodeYAMLPayload.
	payload bool
}

// ConflictingIDError is a mapping with a key twice (Salt's YAML loader
// refuses it). Its text is PyYAML's ConstructorError as Salt raises it,
// with the mapping's and the repeated key's positions.
type ConflictingIDError struct {
	ID                 string
	MapLine, MapColumn int
	Line, Column       int
}

func (e *ConflictingIDError) Error() string {
	return fmt.Sprintf("while constructing a mapping\n  in \"<unicode string>\", line %d, column %d\nfound conflicting ID '%s'\n  in \"<unicode string>\", line %d, column %d",
		e.MapLine, e.MapColumn, e.ID, e.Line, e.Column)
}

// Unwrap makes a ConflictingIDError an ErrYAML.
func (e *ConflictingIDError) Unwrap() error { return ErrYAML }

func yamlErr(n *yaml.Node, format string, args ...any) error {
	return fmt.Errorf("%w: line %d: %s", ErrYAML, n.Line, fmt.Sprintf(format, args...))
}

// deref follows aliases to the anchored node.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < maxYAMLDepth; i++ {
		n = n.Alias
	}
	return n
}

func (d *yamlDecoder) value(n *yaml.Node, depth int) (any, error) {
	if depth > maxYAMLDepth {
		return nil, yamlErr(n, "nesting deeper than %d levels", maxYAMLDepth)
	}
	d.nodes++
	if d.nodes > d.maxNodes {
		return nil, yamlErr(n, "more than %d nodes after alias expansion", d.maxNodes)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return d.value(n.Content[0], depth+1)
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, yamlErr(n, "unknown alias")
		}
		return d.value(n.Alias, depth+1)
	case yaml.ScalarNode:
		return d.scalar(n, false)
	case yaml.SequenceNode:
		return d.sequence(n, depth)
	case yaml.MappingNode:
		return d.mapping(n, depth)
	}
	return nil, yamlErr(n, "unexpected node kind %v", n.Kind)
}

func explicitTag(n *yaml.Node) string {
	if n.Style&yaml.TaggedStyle != 0 {
		return n.Tag
	}
	return ""
}

func (d *yamlDecoder) sequence(n *yaml.Node, depth int) (any, error) {
	switch tag := explicitTag(n); tag {
	case "", "!!seq":
	case "!!omap", "!!pairs":
		out := make([]any, 0, len(n.Content))
		for _, item := range n.Content {
			it := deref(item)
			if it.Kind != yaml.MappingNode || len(it.Content) != 2 {
				return nil, yamlErr(item, "%s entries must be single-key mappings", tag)
			}
			k, err := d.value(it.Content[0], depth+1)
			if err != nil {
				return nil, err
			}
			v, err := d.value(it.Content[1], depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, []any{k, v})
		}
		return out, nil
	default:
		return nil, yamlErr(n, "could not determine a constructor for the tag %q", tag)
	}
	out := make([]any, 0, len(n.Content))
	for _, c := range n.Content {
		v, err := d.value(c, depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func isMergeKey(k *yaml.Node) bool {
	k = deref(k)
	if k.Kind != yaml.ScalarNode {
		return false
	}
	if t := explicitTag(k); t != "" {
		return t == "!!merge"
	}
	return k.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0 && k.Value == "<<"
}

// flatten returns the key/value node pairs of a mapping with merge keys
// resolved the way Salt's loader does it: the merged pairs the mapping does
// not override, then its own.
func (d *yamlDecoder) flatten(n *yaml.Node, depth int) ([][2]*yaml.Node, error) {
	merged, own, err := d.flattenParts(n, depth)
	if err != nil {
		return nil, err
	}
	if len(merged) == 0 {
		return own, nil
	}
	return append(merged, own...), nil
}

// flattenParts is flatten with the merged pairs (those the mapping does not
// override) and the mapping's own pairs apart.
func (d *yamlDecoder) flattenParts(n *yaml.Node, depth int) (merged, own [][2]*yaml.Node, err error) {
	if depth > maxYAMLDepth {
		return nil, nil, yamlErr(n, "merge nesting deeper than %d levels", maxYAMLDepth)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !isMergeKey(k) {
			own = append(own, [2]*yaml.Node{k, v})
			continue
		}
		v = deref(v)
		switch v.Kind {
		case yaml.MappingNode:
			pairs, err := d.flatten(v, depth+1)
			if err != nil {
				return nil, nil, err
			}
			merged = append(merged, pairs...)
		case yaml.SequenceNode:
			var subs [][][2]*yaml.Node
			for _, s := range v.Content {
				s = deref(s)
				if s.Kind != yaml.MappingNode {
					return nil, nil, yamlErr(s, "expected a mapping for merging")
				}
				pairs, err := d.flatten(s, depth+1)
				if err != nil {
					return nil, nil, err
				}
				subs = append(subs, pairs)
			}
			for i := len(subs) - 1; i >= 0; i-- {
				merged = append(merged, subs[i]...)
			}
		default:
			return nil, nil, yamlErr(v, "expected a mapping or list of mappings for merging")
		}
	}
	if len(merged) == 0 {
		return nil, own, nil
	}
	existing := make(map[string]bool, len(own))
	for _, p := range own {
		existing[deref(p[0]).Value] = true
	}
	kept := make([][2]*yaml.Node, 0, len(merged))
	for _, p := range merged {
		if !existing[deref(p[0]).Value] {
			kept = append(kept, p)
		}
	}
	return kept, own, nil
}

func (d *yamlDecoder) mapping(n *yaml.Node, depth int) (any, error) {
	tag := explicitTag(n)
	switch tag {
	case "", "!!map", "!!set":
	default:
		return nil, yamlErr(n, "could not determine a constructor for the tag %q", tag)
	}
	merged, own, err := d.flattenParts(n, 0)
	if err != nil {
		return nil, err
	}
	pairs := own
	if len(merged) > 0 {
		pairs = append(append(make([][2]*yaml.Node, 0, len(merged)+len(own)), merged...), own...)
	}
	var out map[string]any
	var ordered []payload.Item
	if d.payload {
		ordered = make([]payload.Item, 0, len(pairs))
	} else {
		out = make(map[string]any, len(pairs))
	}
	seen := make(map[string]bool, len(pairs))
	var set []any
	for _, p := range pairs {
		kn := deref(p[0])
		var key any
		switch kn.Kind {
		case yaml.ScalarNode:
			key, err = d.scalar(kn, true)
			if err != nil {
				return nil, err
			}
		default:
			return nil, yamlErr(kn, "found unacceptable (unhashable) mapping key")
		}
		id := pyKeyIdentity(key)
		if seen[id] {
			return nil, &ConflictingIDError{ID: pyfmt.Str(key), MapLine: n.Line, MapColumn: n.Column, Line: kn.Line, Column: kn.Column}
		}
		seen[id] = true
		var ks string
		if !d.payload {
			ks = pyfmt.Str(key)
			if _, dup := out[ks]; dup {
				return nil, yamlErr(kn, "keys that differ only in type print the same: '%s'", ks)
			}
		}
		v, err := d.value(p[1], depth+1)
		if err != nil {
			return nil, err
		}
		if d.payload {
			ordered = append(ordered, payload.Item{Key: key, Value: v})
		} else {
			out[ks] = v
		}
		if tag == "!!set" {
			set = append(set, key)
		}
	}
	if tag == "!!set" {
		if set == nil {
			set = []any{}
		}
		return set, nil
	}
	if d.payload {
		// merged keys the mapping does not override first, then its own,
		// like Salt's loader (see DecodeYAMLPayload)
		m := &payload.Map{}
		for _, it := range ordered {
			m.SetKey(it.Key, it.Value)
		}
		return m, nil
	}
	return out, nil
}

// pyKeyIdentity maps a decoded key to a string equal for keys Python
// considers equal (1 == 1.0 == True).
func pyKeyIdentity(k any) string {
	switch v := k.(type) {
	case nil:
		return "none"
	case bool:
		if v {
			return "n:1"
		}
		return "n:0"
	case int:
		return "n:" + strconv.Itoa(v)
	case int64:
		return "n:" + strconv.FormatInt(v, 10)
	case uint64:
		return "n:" + strconv.FormatUint(v, 10)
	case *big.Int:
		return "n:" + v.String()
	case float64:
		if v == math.Trunc(v) && !math.IsInf(v, 0) && math.Abs(v) < 1e18 {
			return "n:" + strconv.FormatInt(int64(v), 10)
		}
		return "f:" + pyfmt.FloatRepr(v)
	case string:
		return "s:" + v
	case []byte:
		return "b:" + string(v)
	}
	return fmt.Sprintf("?:%v", k)
}

func (d *yamlDecoder) scalar(n *yaml.Node, isKey bool) (any, error) {
	tag := explicitTag(n)
	if tag == "" {
		if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
			return n.Value, nil
		}
		tag = resolvePlain(n.Value)
	}
	v := n.Value
	switch tag {
	case "!!str", "!!timestamp":
		return v, nil
	case "!!null":
		return nil, nil
	case "!!bool":
		if b, ok := ConstructBool(v); ok {
			return b, nil
		}
		return nil, yamlErr(n, "invalid boolean %q", v)
	case "!!int":
		i, ok := constructInt(v)
		if !ok {
			return nil, yamlErr(n, "invalid integer %q", v)
		}
		return d.intValue(i), nil
	case "!!float":
		f, ok := constructFloat(v)
		if !ok {
			return nil, yamlErr(n, "invalid float %q", v)
		}
		return f, nil
	case "!!binary":
		b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(v), ""))
		if err != nil {
			return nil, yamlErr(n, "invalid base64 data: %v", err)
		}
		return b, nil
	case "!!value":
		if isKey {
			return v, nil
		}
	}
	return nil, yamlErr(n, "could not determine a constructor for the tag %q", tag)
}

// resolvePlain returns the YAML 1.1 tag PyYAML gives a plain scalar.
func resolvePlain(s string) string {
	switch {
	case reBool.MatchString(s):
		return "!!bool"
	case reFloat.MatchString(s):
		return "!!float"
	case reInt.MatchString(s):
		return "!!int"
	case s == "<<":
		return "!!merge"
	case reNull.MatchString(s):
		return "!!null"
	case s == "=":
		return "!!value"
	}
	return "!!str"
}

// intValue gives an integer the Go type of the decoder's data model: int
// (*big.Int when larger) for DecodeYAML, int64 (uint64, *big.Int) for
// DecodeYAMLPayload.
func (d *yamlDecoder) intValue(n *big.Int) any {
	switch {
	case d.payload && n.IsInt64():
		return n.Int64()
	case d.payload && n.IsUint64():
		return n.Uint64()
	case !d.payload && n.IsInt64() && n.Int64() >= math.MinInt && n.Int64() <= math.MaxInt:
		return int(n.Int64())
	}
	return n
}

// constructInt converts an int scalar like Salt's loader: unsigned values
// lose their leading zeros (so 0755 is decimal), then PyYAML's rules apply.
func constructInt(v string) (*big.Int, bool) {
	if v != "0" && strings.HasPrefix(v, "0") && !strings.HasPrefix(v, "0b") && !strings.HasPrefix(v, "0x") {
		v = strings.TrimLeft(v, "0")
		if v == "" {
			v = "0"
		}
	}
	v = strings.ReplaceAll(v, "_", "")
	if v == "" {
		return nil, false
	}
	neg := false
	if v[0] == '-' || v[0] == '+' {
		neg = v[0] == '-'
		v = v[1:]
	}
	n := new(big.Int)
	ok := false
	switch {
	case v == "0":
		ok = true
	case strings.HasPrefix(v, "0b"):
		_, ok = n.SetString(v[2:], 2)
	case strings.HasPrefix(v, "0x"):
		_, ok = n.SetString(v[2:], 16)
	case strings.HasPrefix(v, "0"):
		_, ok = n.SetString(v, 8)
	case strings.Contains(v, ":"):
		ok = true
		for _, part := range strings.Split(v, ":") {
			p, good := new(big.Int).SetString(part, 10)
			if !good {
				return nil, false
			}
			n.Mul(n, big.NewInt(60))
			n.Add(n, p)
		}
	default:
		_, ok = n.SetString(v, 10)
	}
	if !ok || v == "" {
		return nil, false
	}
	if neg {
		n.Neg(n)
	}
	return n, true
}

// constructFloat converts a float scalar like PyYAML.
func constructFloat(v string) (float64, bool) {
	v = strings.ToLower(strings.ReplaceAll(v, "_", ""))
	if v == "" {
		return 0, false
	}
	sign := 1.0
	if v[0] == '-' || v[0] == '+' {
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
		total := 0.0
		for _, part := range strings.Split(v, ":") {
			p, err := strconv.ParseFloat(part, 64)
			if err != nil {
				return 0, false
			}
			total = total*60 + p
		}
		return sign * total, true
	}
	if strings.ContainsAny(v, "xp") { // Go-only hex float syntax
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
			return sign * f, true
		}
		return 0, false
	}
	return sign * f, true
}

// pyRepr renders a value for error and log messages: Python's repr()
// layout (None, True, [...], {...}) but with strings in Go's double-quoted
// form, which the config error texts use; other scalars are pyfmt.Str.
func pyRepr(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case []byte:
		return "b" + strconv.Quote(string(x))
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = pyRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := slices.Sorted(maps.Keys(x))
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = strconv.Quote(k) + ": " + pyRepr(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case nil, bool, int, *big.Int, float64:
		return pyfmt.Str(x)
	}
	return fmt.Sprintf("%v", v)
}

// PlainTag returns the YAML 1.1 tag PyYAML's implicit resolver gives a
// plain scalar, in yaml.v3's short form ("!!bool", "!!float", "!!int",
// "!!merge", "!!null", "!!value" or "!!str"); timestamps are not
// resolved (see DecodeYAML).
func PlainTag(s string) string { return resolvePlain(s) }

// KeyIdentity maps a decoded key to a string equal for the keys a Python
// dict finds equal (1, 1.0 and True are one key; str and bytes differ).
func KeyIdentity(k any) string { return pyKeyIdentity(k) }

// ConstructBool converts the text of a bool scalar as PyYAML's
// construct_yaml_bool does (yes/no, true/false, on/off in any case); ok
// is false for other text.
func ConstructBool(v string) (b, ok bool) {
	switch strings.ToLower(v) {
	case "yes", "true", "on":
		return true, true
	case "no", "false", "off":
		return false, true
	}
	return false, false
}

// ConstructFloat converts the text of a float scalar as PyYAML's
// construct_yaml_float does (underscores, base 60, .inf, .nan).
func ConstructFloat(v string) (float64, bool) { return constructFloat(v) }

// yamlLineRe reads the line number yaml.v3 puts in a syntax error.
var yamlLineRe = regexp.MustCompile(`^yaml: line (\d+):`)

// maxProblemSearch bounds the document size for which yamlProblemLine
// looks for the failing line.
const maxProblemSearch = 1 << 20

// yamlProblemLine names the line at which src stops parsing, for a syntax
// error err of yaml.v3, when that is not the line err names: yaml.v3 names
// the start of the enclosing block for a parser error ("while parsing a
// block mapping"), often many lines above the text that is wrong, where
// PyYAML's message also gives the problem's line. The line is the first
// one whose addition makes the document's leading lines fail to parse
// (bisected, about log2(lines) parses); it returns "" when it finds no
// better line.
func yamlProblemLine(src []byte, err error) string {
	if len(src) > maxProblemSearch {
		return ""
	}
	lines := bytes.SplitAfter(src, []byte("\n"))
	parses := func(n int) bool {
		dec := yaml.NewDecoder(bytes.NewReader(bytes.Join(lines[:n], nil)))
		for {
			var node yaml.Node
			if err := dec.Decode(&node); err != nil {
				return errors.Is(err, io.EOF)
			}
		}
	}
	lo, hi := 0, len(lines)
	if parses(hi) {
		return ""
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if parses(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	if m := yamlLineRe.FindStringSubmatch(err.Error()); m != nil && m[1] == strconv.Itoa(hi) {
		return ""
	}
	text := strings.TrimRight(string(lines[hi-1]), "\r\n")
	if len(text) > 120 {
		text = text[:120] + "..."
	}
	return fmt.Sprintf(" (the text stops parsing at line %d: %s)", hi, text)
}
