// Package pyyaml writes data as YAML the way PyYAML's safe_dump does, for
// the places where Salt prints YAML (the yaml outputter, the yaml Jinja
// filters): SafeRepresenter's choices (dict keys sorted, floats as repr,
// bytes as !!binary, the YAML 1.1 implicit resolvers deciding when a string
// must be quoted) and the emitter's layout (flow and block collections,
// scalar styles, folding at the line width, escapes).
//
// PyYAML has two emitters that differ in a few corners (which characters
// are printable, when a double-quoted scalar may fold, how long a simple
// key may be, tags on quoted non-strings); Options.Flavor picks the one to
// reproduce.
//
// The data model is nil, bool, int64, uint64, *big.Int, float64, string,
// []byte, time.Time (a naive datetime), []any and *payload.Map; see
// Options.Normalize and Options.UnknownAsNull for other values.
package pyyaml

import (
	"encoding/base64"
	"errors"
	"math"
	"math/big"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/payload"
)

// Flavor is the PyYAML emitter whose output is reproduced.
type Flavor int

const (
	// PyYAML is PyYAML's pure-Python yaml.emitter.Emitter (yaml.SafeDumper).
	// This port writes no tags: a non-string scalar that has to be quoted
	// (a datetime in flow style) is written without its !!timestamp tag.
	PyYAML Flavor = iota
	// LibYAML is libyaml's emitter, as used by yaml.CSafeDumper.
	LibYAML
)

// DefaultMaxDepth is the nesting depth Dump allows when Options.MaxDepth is
// zero.
const DefaultMaxDepth = 512

// ErrTooDeep is returned by Dump for data nested deeper than
// Options.MaxDepth.
var ErrTooDeep = errors.New("pyyaml: value nested too deeply")

// RepresentError is PyYAML's RepresenterError for a value outside the data
// model; its text is PyYAML's.
type RepresentError struct {
	// Value is the value that could not be represented.
	Value any
}

// Error returns PyYAML's message.
func (e *RepresentError) Error() string {
	return "cannot represent an object: " + pyfmt.Repr(e.Value)
}

// Options are the yaml.dump arguments and the representer's choices.
type Options struct {
	// Flavor is the emitter reproduced.
	Flavor Flavor
	// Flow is default_flow_style=True: every collection in flow style.
	// Otherwise collections are in block style, empty ones in flow style.
	Flow bool
	// FlowLeaves is default_flow_style=None (salt.utils.yaml.safe_dump's
	// default): a collection whose items (keys and values) are all scalars
	// without a chosen style is in flow style, others in block style.
	FlowLeaves bool
	// Indent is indent=; PyYAML keeps 2 unless 1 < Indent < 10.
	Indent int
	// Width is width=, the preferred line width; PyYAML keeps 80 unless
	// Width is more than twice the indent.
	Width int
	// AllowUnicode is allow_unicode=True: printable non-ASCII characters
	// are written as they are rather than escaped in double quotes.
	AllowUnicode bool
	// SortKeys orders each mapping's items as SafeRepresenter.represent_dict
	// does (sorted(data.items())); on its error the mapping keeps its own
	// order, as in PyYAML when keys do not sort. Without it every mapping
	// keeps its order (Salt's representation of an OrderedDict).
	SortKeys pyfmt.ItemSorter
	// Normalize, when set, maps every value and key onto the data model
	// before it is represented.
	Normalize func(v any) any
	// Binary represents []byte as SafeRepresenter.represent_binary does
	// (!!binary, base64 lines in literal style); otherwise bytes are written
	// as the str they hold.
	Binary bool
	// UnknownAsNull represents a value outside the data model as a "NULL"
	// scalar, as Salt's SafeOrderedDumper does; otherwise Dump returns a
	// *RepresentError.
	UnknownAsNull bool
	// MaxDepth bounds nesting (zero is DefaultMaxDepth).
	MaxDepth int
}

// Dump renders v as yaml.dump(v, Dumper=..., **o) does: one document,
// ending with a newline, without the "..." end marker PyYAML adds after a
// plain scalar at the top level.
func Dump(v any, o Options) (string, error) {
	if o.MaxDepth == 0 {
		o.MaxDepth = DefaultMaxDepth
	}
	root, err := (&representer{o}).represent(v, 0)
	if err != nil {
		return "", err
	}
	e := newEmitter(o)
	e.node(root, false, false)
	e.writeIndent()
	return e.b.String(), nil
}

// DoubleQuoted is s in PyYAML's double-quoted style with no line width and
// allow_unicode off, as Salt's yaml_dquote writes it.
func DoubleQuoted(s string) string {
	e := newEmitter(Options{Width: math.MaxInt})
	e.writeDoubleQuoted(s, true)
	return e.b.String()
}

// SingleQuoted is s in PyYAML's single-quoted style with no line width, as
// Salt's yaml_squote writes it.
func SingleQuoted(s string) string {
	e := newEmitter(Options{Width: math.MaxInt})
	e.writeSingleQuoted(s, true)
	return e.b.String()
}

// ScalarText is the text SafeRepresenter gives a non-string scalar: null,
// true/false, integers in decimal, floats as repr with PyYAML's spelling
// (.nan, .inf, 1.0e+16), datetimes as str(); anything else as str().
func ScalarText(v any) string {
	if text, _, ok := scalarText(v); ok {
		return text
	}
	return pyfmt.Str(v)
}

const (
	tagNull      = "tag:yaml.org,2002:null"
	tagBool      = "tag:yaml.org,2002:bool"
	tagInt       = "tag:yaml.org,2002:int"
	tagFloat     = "tag:yaml.org,2002:float"
	tagStr       = "tag:yaml.org,2002:str"
	tagBinary    = "tag:yaml.org,2002:binary"
	tagTimestamp = "tag:yaml.org,2002:timestamp"
)

type nodeKind int

const (
	scalarNode nodeKind = iota
	sequenceNode
	mappingNode
)

// node is a representation node (PyYAML's ScalarNode, SequenceNode,
// MappingNode) with the serializer's implicit flags.
type node struct {
	kind  nodeKind
	tag   string
	value string
	style byte // 0 (any) or '|'
	// plainImplicit and quotedImplicit are the serializer's implicit pair:
	// the tag needs not be written when the scalar is plain, or quoted.
	plainImplicit, quotedImplicit bool
	items                         []*node    // sequence
	pairs                         [][2]*node // mapping
}

// plainLeaves is PyYAML's best_style for default_flow_style=None: every
// item of the collection is a scalar without a chosen style.
func (n *node) plainLeaves() bool {
	plain := func(c *node) bool { return c.kind == scalarNode && c.style == 0 }
	for _, c := range n.items {
		if !plain(c) {
			return false
		}
	}
	for _, p := range n.pairs {
		if !plain(p[0]) || !plain(p[1]) {
			return false
		}
	}
	return true
}

func newScalar(tag, value string, style byte) *node {
	return &node{kind: scalarNode, tag: tag, value: value, style: style,
		plainImplicit: tag == resolve(value), quotedImplicit: tag == tagStr}
}

// resolvers are PyYAML's YAML 1.1 implicit resolvers (yaml/resolver.py),
// compiled on first use: compiling them at package init cost every gsalt
// command ~4 ms of start-up, also those that never write YAML.
var resolvers = sync.OnceValue(func() []resolver {
	return []resolver{
		{tagBool, regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)},
		{tagFloat, regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)},
		{tagInt, regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)},
		{"tag:yaml.org,2002:merge", regexp.MustCompile(`^(?:<<)$`)},
		{tagNull, regexp.MustCompile(`^(?:~|null|Null|NULL|)$`)},
		{tagTimestamp, regexp.MustCompile(`^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$`)},
		{"tag:yaml.org,2002:value", regexp.MustCompile(`^(?:=)$`)},
	}
})

// resolver is one implicit resolver: the tag of the plain scalars re
// matches.
type resolver struct {
	tag string
	re  *regexp.Regexp
}

// resolve is the tag a plain scalar with this text is read back as.
// Python's "$" also matches before a final newline.
func resolve(value string) string {
	v := strings.TrimSuffix(value, "\n")
	for _, r := range resolvers() {
		if r.re.MatchString(v) {
			return r.tag
		}
	}
	return tagStr
}

// scalarText is SafeRepresenter's text and tag for a scalar of the data
// model other than bytes.
func scalarText(v any) (text, tag string, ok bool) {
	switch x := v.(type) {
	case nil:
		return "null", tagNull, true
	case bool:
		if x {
			return "true", tagBool, true
		}
		return "false", tagBool, true
	case int64, uint64, *big.Int:
		return pyfmt.Str(x), tagInt, true
	case float64:
		return floatText(x), tagFloat, true
	case string:
		return x, tagStr, true
	case time.Time:
		return pyfmt.Str(x), tagTimestamp, true
	}
	return "", "", false
}

// floatText is SafeRepresenter.represent_float.
func floatText(f float64) string {
	switch {
	case math.IsNaN(f):
		return ".nan"
	case math.IsInf(f, 1):
		return ".inf"
	case math.IsInf(f, -1):
		return "-.inf"
	}
	s := strings.ToLower(pyfmt.FloatRepr(f))
	if !strings.Contains(s, ".") && strings.Contains(s, "e") {
		s = strings.Replace(s, "e", ".0e", 1) // 1e+16 -> 1.0e+16
	}
	return s
}

// base64Lines is Python's base64.encodebytes: 76-character lines, each
// ending in a newline.
func base64Lines(p []byte) string {
	enc := base64.StdEncoding.EncodeToString(p)
	var b strings.Builder
	for len(enc) > 76 {
		b.WriteString(enc[:76])
		b.WriteByte('\n')
		enc = enc[76:]
	}
	if enc != "" {
		b.WriteString(enc)
		b.WriteByte('\n')
	}
	return b.String()
}

type representer struct{ o Options }

// represent builds the node tree as SafeRepresenter does.
func (r *representer) represent(v any, depth int) (*node, error) {
	if depth > r.o.MaxDepth {
		return nil, ErrTooDeep
	}
	if r.o.Normalize != nil {
		v = r.o.Normalize(v)
	}
	switch x := v.(type) {
	case []any:
		n := &node{kind: sequenceNode}
		for _, e := range x {
			c, err := r.represent(e, depth+1)
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, c)
		}
		return n, nil
	case *payload.Map:
		n := &node{kind: mappingNode}
		items := x.Items()
		if r.o.SortKeys != nil && len(items) > 0 {
			if sorted, err := r.o.SortKeys(x); err == nil {
				items = sorted
			}
		}
		for _, it := range items {
			k, err := r.represent(it.Key, depth+1)
			if err != nil {
				return nil, err
			}
			val, err := r.represent(it.Value, depth+1)
			if err != nil {
				return nil, err
			}
			n.pairs = append(n.pairs, [2]*node{k, val})
		}
		return n, nil
	case []byte:
		if r.o.Binary {
			return newScalar(tagBinary, base64Lines(x), '|'), nil
		}
		return newScalar(tagStr, string(x), 0), nil
	}
	if text, tag, ok := scalarText(v); ok {
		return newScalar(tag, text, 0), nil
	}
	if r.o.UnknownAsNull {
		return newScalar(tagNull, "NULL", 0), nil
	}
	return nil, &RepresentError{Value: v}
}
