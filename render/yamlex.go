package render

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/payload"
)

// YAMLEx is Salt's yamlex renderer (salt/renderers/yamlex.py): the text
// decoded by DecodeYAMLEx; a result Python finds false (None, an empty
// list or map, 0, "") renders as an empty dict.
type YAMLEx struct{}

// Render decodes input with DecodeYAMLEx, recording the aggregates in
// rc.Aggregates when it is set, else in the marks ctx carries
// (WithAggregateMarks).
func (YAMLEx) Render(ctx context.Context, input any, rc *Context) (any, error) {
	text, err := inputText("yamlex", input)
	if err != nil {
		return nil, err
	}
	marks := AggregateMarksFrom(ctx)
	if rc != nil && rc.Aggregates != nil {
		marks = rc.Aggregates
	}
	v, err := DecodeYAMLExMarked([]byte(text), marks)
	if err != nil {
		return nil, err
	}
	if !payload.Truthy(v) {
		return emptyMap(), nil
	}
	return v, nil
}

// Limits of DecodeYAMLEx (alias bombs, runaway nesting).
const (
	yamlexMaxDepth = 256
	yamlexMaxNodes = 1 << 18
)

// DecodeYAMLEx decodes one document with the semantics of Salt 3006's
// yamlex serializer (salt/serializers/yamlex.py) on PyYAML's libyaml
// loader (CSafeLoader, what Salt uses when PyYAML has it):
//   - every untagged mapping is an ordered map in which a repeated key is
//     merged with what came before (salt.utils.aggregation.aggregate,
//     level False): two maps keep the later one's keys (both start from
//     the earlier one when both are !aggregate maps), two !aggregate
//     sequences are joined without repeating the earlier one's items,
//     anything else is the later value;
//   - `!aggregate VALUE` marks a value for aggregation: a scalar becomes
//     a one-item list, null an empty list; on a key it applies to the
//     value (Salt logs a warning);
//   - `!reset KEY: VALUE` replaces what the key held;
//   - plain YAML 1.1 scalars, with integers read by Python's int() after
//     leading zeros are dropped (so 0x1F, 0b1 and 1:30 are errors, 010 is
//     10), timestamps as time.Time (the wall clock time written, in UTC,
//     as Salt's msgpack sends it);
//   - a plain sequence or !!map merged under a repeated key outside an
//     !aggregate or !reset value is empty in the result, as PyYAML has not
//     filled it yet when Salt copies it.
//
// Maps are *payload.Map with their keys as decoded, sequences []any. An
// empty document is nil. Errors wrap ErrData with the text of Salt's
// DeserializationError where gsalt reproduces it (constructor errors;
// libyaml scanner errors are "Unknown yaml render error").
func DecodeYAMLEx(src []byte) (any, error) { return DecodeYAMLExMarked(src, nil) }

// DecodeYAMLExMarked is DecodeYAMLEx recording in marks (when not nil)
// the maps and lists that are aggregates in Salt (!aggregate values).
func DecodeYAMLExMarked(src []byte, marks *AggregateMarks) (any, error) {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, yamlexSyntaxError(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, fmt.Errorf("%w: expected a single document in the stream\n%s\nbut found another document\n%s",
			ErrData, yamlexMark(&doc), yamlexMark(&extra))
	} else if !errors.Is(err, io.EOF) {
		return nil, yamlexSyntaxError(err)
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	c := &yamlexConstructor{}
	v, err := c.construct(doc.Content[0], 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrData, err)
	}
	return yamlexFinal(v, 0, marks), nil
}

// libyaml scanner problems: Salt maps a ScannerError to "Unknown yaml
// render error" (only PyYAML's own tab text has a better message).
var yamlexScannerProblems = []string{
	"cannot start any token", "mapping values are not allowed", "could not find expected ':'",
	"found unexpected end of stream", "found unknown escape character", "did not find expected hexdecimal",
	"found invalid Unicode character", "did not find expected comment or line break",
	"block sequence entries are not allowed", "found a tab character", "did not find URI escaped octet",
	"found unexpected ':'", "did not find expected alphabetic or numeric character",
	"did not find expected whitespace or line break", "found an incorrect leading UTF-8 octet",
	"found character that cannot start", "control characters are not allowed",
}

func yamlexSyntaxError(err error) error {
	msg := err.Error()
	for _, p := range yamlexScannerProblems {
		if strings.Contains(msg, p) {
			return fmt.Errorf("%w: Unknown yaml render error (%s)", ErrData, msg)
		}
	}
	return fmt.Errorf("%w: %s", ErrData, strings.TrimPrefix(msg, "yaml: "))
}

// yamlexMark is PyYAML's Mark text of a node's start.
func yamlexMark(n *yaml.Node) string {
	return fmt.Sprintf("  in \"<unicode string>\", line %d, column %d", n.Line, n.Column)
}

// yxSeq is a Python list while the document is constructed: a plain
// list, or an AggregatedSequence (agg).
type yxSeq struct {
	items []any
	agg   bool
	// pending marks a list PyYAML builds in a generator outside deep
	// construction: it looks empty until the document is complete.
	pending bool
}

// yxMap is a Python dict while the document is constructed: an SLSMap
// (the default for mappings), a plain dict (!!map) or an AggregatedMap
// (agg). Keys compare with Python's equality.
type yxMap struct {
	keys, vals []any
	index      map[string]int
	agg        bool
	pending    bool
}

func newYXMap() *yxMap { return &yxMap{index: map[string]int{}} }

// get is m[k] as Python sees it now (a pending map is empty).
func (m *yxMap) get(k any) (any, bool) {
	if m.pending {
		return nil, false
	}
	i, ok := m.index[yamlexKeyID(k)]
	if !ok {
		return nil, false
	}
	return m.vals[i], true
}

// set is m[k] = v: an existing key keeps its place and its first form.
func (m *yxMap) set(k, v any) {
	id := yamlexKeyID(k)
	if i, ok := m.index[id]; ok {
		m.vals[i] = v
		return
	}
	m.index[id] = len(m.keys)
	m.keys = append(m.keys, k)
	m.vals = append(m.vals, v)
}

// copy is copy.copy: a shallow copy of what the map holds now.
func (m *yxMap) copy() *yxMap {
	out := newYXMap()
	out.agg = m.agg
	if m.pending {
		return out
	}
	for i, k := range m.keys {
		out.set(k, m.vals[i])
	}
	return out
}

// yamlexKeyID is equal for keys Python's dict finds equal.
func yamlexKeyID(k any) string {
	if t, ok := k.(time.Time); ok {
		return "t:" + t.Format(time.RFC3339Nano)
	}
	return config.KeyIdentity(k)
}

// yamlexAggregate is salt.utils.aggregation.aggregate(a, b, level=False)
// with yamlex's classes, on the values as they are at that moment.
func yamlexAggregate(a, b any, depth int) any {
	if depth > yamlexMaxDepth {
		return yamlexCopy(b)
	}
	am, aMap := a.(*yxMap)
	bm, bMap := b.(*yxMap)
	if aMap && bMap {
		var out *yxMap
		if am.agg && bm.agg {
			out = am.copy()
		} else {
			out = bm.copy()
		}
		if !bm.pending {
			for i, k := range bm.keys {
				v := bm.vals[i]
				if av, ok := am.get(k); ok {
					v = yamlexAggregate(av, v, depth+1)
				}
				out.set(k, v)
			}
		}
		return out
	}
	as, aSeq := a.(*yxSeq)
	bs, bSeq := b.(*yxSeq)
	if aSeq && bSeq && as.agg && bs.agg {
		out := &yxSeq{agg: true, items: append([]any(nil), as.items...)}
		in := newYamlexMembers(as.items)
		for _, v := range bs.items {
			if !in.has(v) {
				out.items = append(out.items, v)
			}
		}
		return out
	}
	return yamlexCopy(b)
}

// yamlexCopy is copy.copy of a value as it is now.
func yamlexCopy(v any) any {
	switch x := v.(type) {
	case *yxMap:
		return x.copy()
	case *yxSeq:
		out := &yxSeq{agg: x.agg}
		if !x.pending {
			out.items = append([]any(nil), x.items...)
		}
		return out
	}
	return v
}

// yamlexMembers answers Python's `v in items` for one list: scalars
// through a set (Python's == on them is its dict key equality), the
// other items compared one by one.
type yamlexMembers struct {
	scalars map[string]bool
	others  []any // finalised containers
}

func newYamlexMembers(items []any) *yamlexMembers {
	m := &yamlexMembers{scalars: map[string]bool{}}
	for _, it := range items {
		if hashable(it) {
			m.scalars[yamlexKeyID(it)] = true
		} else {
			m.others = append(m.others, yamlexFinal(it, 0, nil))
		}
	}
	return m
}

func (m *yamlexMembers) has(v any) bool {
	if hashable(v) {
		return m.scalars[yamlexKeyID(v)]
	}
	fv := yamlexFinal(v, 0, nil)
	for _, o := range m.others {
		if py.Equal(o, fv) {
			return true
		}
	}
	return false
}

// yamlexFinal turns the constructed tree into payload values (pending
// containers are complete by now), recording the aggregates in marks.
func yamlexFinal(v any, depth int, marks *AggregateMarks) any {
	if depth > yamlexMaxDepth*4 {
		return nil
	}
	switch x := v.(type) {
	case *yxMap:
		out := payload.NewMap()
		for i, k := range x.keys {
			out.SetKey(k, yamlexFinal(x.vals[i], depth+1, marks))
		}
		if x.agg {
			marks.Mark(out)
		}
		return out
	case *yxSeq:
		// a backing array of its own, even when empty: marks go by it
		out := make([]any, len(x.items), max(len(x.items), 1))
		for i, e := range x.items {
			out[i] = yamlexFinal(e, depth+1, marks)
		}
		if x.agg {
			marks.Mark(out)
		}
		return out
	}
	return v
}

// yamlexConstructor is the yamlex Loader's constructor state.
type yamlexConstructor struct {
	// deep is PyYAML's deep_construct: set while an !aggregate or
	// !reset collection is built, when lists are filled at once.
	deep  bool
	nodes int
}

// Tags of the YAML 1.1 core schema in yaml.v3's short form.
const (
	yxStr  = "!!str"
	yxSeqT = "!!seq"
	yxOmap = "!!omap"
)

// yamlexTimestamp is PyYAML's timestamp resolver and constructor regexp.
var yamlexTimestamp = regexp.MustCompile(`^([0-9][0-9][0-9][0-9])-([0-9][0-9]?)-([0-9][0-9]?)(?:(?:[Tt]|[ \t]+)([0-9][0-9]?):([0-9][0-9]):([0-9][0-9])(?:\.([0-9]*))?(?:[ \t]*(Z|([-+])([0-9][0-9]?)(?::([0-9][0-9]))?))?)?$`)

// yamlexResolveTimestamp reports whether PyYAML's implicit resolver makes
// s a timestamp (its resolver regexp is stricter on the date form).
func yamlexResolveTimestamp(s string) bool {
	if !yamlexTimestamp.MatchString(s) {
		return false
	}
	date := len(s) == 10 && s[4] == '-' && s[7] == '-'
	return date || (len(s) > 10 && strings.IndexAny(s, "Tt \t") > 0)
}

// implicitTag is the tag the resolver gives a scalar's text.
func implicitTag(s string) string {
	tag := config.PlainTag(s)
	if tag == yxStr && yamlexResolveTimestamp(s) {
		return "!!timestamp"
	}
	return tag
}

// tagOf is the tag the yamlex Loader constructs a node with: its explicit
// tag, else the resolved one (untagged mappings are omaps).
func tagOf(n *yaml.Node) string {
	if n.Style&yaml.TaggedStyle != 0 && n.Tag != "" {
		return n.Tag
	}
	switch n.Kind {
	case yaml.SequenceNode:
		return yxSeqT
	case yaml.MappingNode:
		return yxOmap
	}
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return yxStr
	}
	return implicitTag(n.Value)
}

// resolveSLS is the Loader's resolve_sls_tag: the tag a node tagged
// !aggregate or !reset is built with, and whether deeply.
func resolveSLS(n *yaml.Node) (string, bool) {
	switch n.Kind {
	case yaml.SequenceNode:
		return yxSeqT, true
	case yaml.MappingNode:
		return yxOmap, true
	}
	return implicitTag(n.Value), false
}

func pyTag(tag string) string {
	if strings.HasPrefix(tag, "!!") {
		return "tag:yaml.org,2002:" + tag[2:]
	}
	return tag
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "sequence"
	case yaml.MappingNode:
		return "mapping"
	}
	return "scalar"
}

// construct builds node n with its own tag.
func (c *yamlexConstructor) construct(n *yaml.Node, depth int) (any, error) {
	for i := 0; n.Kind == yaml.AliasNode && i < yamlexMaxDepth; i++ {
		if n.Alias == nil {
			return nil, fmt.Errorf("found undefined alias\n%s", yamlexMark(n))
		}
		n = n.Alias
	}
	return c.constructAs(n, tagOf(n), depth)
}

// constructAs builds node n as if tagged tag.
func (c *yamlexConstructor) constructAs(n *yaml.Node, tag string, depth int) (any, error) {
	if depth > yamlexMaxDepth {
		return nil, fmt.Errorf("nesting deeper than %d levels\n%s", yamlexMaxDepth, yamlexMark(n))
	}
	if c.nodes++; c.nodes > yamlexMaxNodes {
		return nil, fmt.Errorf("more than %d nodes after alias expansion\n%s", yamlexMaxNodes, yamlexMark(n))
	}
	switch tag {
	case "!aggregate", "!reset":
		sub, deep := resolveSLS(n)
		v, err := c.constructDeep(n, sub, deep, depth)
		if err != nil || tag == "!reset" {
			return v, err
		}
		switch x := v.(type) {
		case nil:
			return &yxSeq{agg: true}, nil
		case *yxMap:
			if sub == yxOmap {
				m := x.copy()
				m.agg = true
				return m, nil
			}
		case *yxSeq:
			if sub == yxSeqT {
				return &yxSeq{agg: true, items: x.items}, nil
			}
		}
		return &yxSeq{agg: true, items: []any{v}}, nil
	case yxOmap:
		return c.omap(n, depth)
	case "!!map", "!!set":
		if n.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("expected a mapping node, but found %s\n%s", kindName(n), yamlexMark(n))
		}
		return c.plainMap(n, tag == "!!set", depth)
	case yxSeqT, "!!pairs":
		if n.Kind != yaml.SequenceNode {
			return nil, fmt.Errorf("expected a sequence node, but found %s\n%s", kindName(n), yamlexMark(n))
		}
		return c.sequence(n, tag == "!!pairs", depth)
	}
	if n.Kind != yaml.ScalarNode {
		switch tag {
		case yxStr, "!!int", "!!float", "!!bool", "!!null", "!!binary", "!!timestamp":
			return nil, fmt.Errorf("expected a scalar node, but found %s\n%s", kindName(n), yamlexMark(n))
		}
		return nil, fmt.Errorf("could not determine a constructor for the tag '%s'\n%s", pyTag(tag), yamlexMark(n))
	}
	return yamlexScalar(n, tag)
}

// constructDeep is construct_object(node, deep) with node's tag replaced.
func (c *yamlexConstructor) constructDeep(n *yaml.Node, tag string, deep bool, depth int) (any, error) {
	if !deep || c.deep {
		return c.constructAs(n, tag, depth+1)
	}
	c.deep = true
	defer func() { c.deep = false }()
	return c.constructAs(n, tag, depth+1)
}

// yamlexScalar constructs a scalar node.
func yamlexScalar(n *yaml.Node, tag string) (any, error) {
	v := n.Value
	switch tag {
	case yxStr:
		return v, nil
	case "!!null":
		return nil, nil
	case "!!bool":
		if b, ok := config.ConstructBool(v); ok {
			return b, nil
		}
		return nil, fmt.Errorf("%s", pyfmt.Repr(strings.ToLower(v)))
	case "!!int":
		return yamlexInt(v)
	case "!!float":
		f, ok := config.ConstructFloat(v)
		if !ok {
			return nil, fmt.Errorf("could not convert string to float: %s", pyfmt.Repr(v))
		}
		return f, nil
	case "!!binary":
		b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(v), ""))
		if err != nil {
			return nil, fmt.Errorf("failed to convert base64 data: %w\n%s", err, yamlexMark(n))
		}
		return b, nil
	case "!!timestamp":
		return yamlexTime(v)
	}
	return nil, fmt.Errorf("could not determine a constructor for the tag '%s'\n%s", pyTag(tag), yamlexMark(n))
}

// yamlexInt is the Loader's construct_sls_int: leading zeros of an
// unsigned value dropped, then Python's int(text).
func yamlexInt(v string) (any, error) {
	s := v
	if s != "0" && strings.HasPrefix(s, "0") && !strings.HasPrefix(s, "0b") && !strings.HasPrefix(s, "0x") {
		if s = strings.TrimLeft(s, "0"); s == "" {
			s = "0"
		}
	}
	bad := fmt.Errorf("invalid literal for int() with base 10: %s", pyfmt.Repr(s))
	t := strings.TrimSpace(s)
	if t != "" && (t[0] == '+' || t[0] == '-') {
		t = t[1:]
	}
	if t == "" || t[0] == '_' || t[len(t)-1] == '_' || strings.Contains(t, "__") {
		return nil, bad
	}
	digits := strings.ReplaceAll(t, "_", "")
	for _, r := range digits {
		if r < '0' || r > '9' {
			return nil, bad
		}
	}
	n, ok := new(big.Int).SetString(strings.TrimSpace(strings.ReplaceAll(s, "_", "")), 10)
	if !ok {
		return nil, bad
	}
	if n.IsInt64() {
		return n.Int64(), nil
	}
	return n, nil
}

// yamlexTime is PyYAML's construct_yaml_timestamp: a date is midnight;
// the wall clock time written is kept (Salt's msgpack drops the offset).
func yamlexTime(v string) (any, error) {
	m := yamlexTimestamp.FindStringSubmatch(v)
	if m == nil {
		return nil, fmt.Errorf("could not convert %s to a timestamp", pyfmt.Repr(v))
	}
	num := func(s string) int { n, _ := strconv.Atoi(s); return n }
	year, month, day := num(m[1]), num(m[2]), num(m[3])
	hour, minute, sec, frac := 0, 0, 0, 0
	if m[4] != "" {
		hour, minute, sec = num(m[4]), num(m[5]), num(m[6])
		if f := m[7]; f != "" {
			f = (f + "000000")[:6]
			frac = num(f)
		}
	}
	switch {
	case year < 1:
		return nil, fmt.Errorf("year %d is out of range", year)
	case month < 1 || month > 12:
		return nil, errors.New("month must be in 1..12")
	case day < 1 || day > time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day():
		return nil, errors.New("day is out of range for month")
	case hour > 23:
		return nil, errors.New("hour must be in 0..23")
	case minute > 59:
		return nil, errors.New("minute must be in 0..59")
	case sec > 59:
		return nil, errors.New("second must be in 0..59")
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, frac*1000, time.UTC), nil
}

// flatten is SafeConstructor.flatten_mapping: the pairs of the merge
// keys ("<<") first, then the mapping's own, duplicates kept.
func (c *yamlexConstructor) flatten(n *yaml.Node, depth int) ([][2]*yaml.Node, error) {
	if depth > yamlexMaxDepth {
		return nil, fmt.Errorf("merge nesting deeper than %d levels\n%s", yamlexMaxDepth, yamlexMark(n))
	}
	var merge, own [][2]*yaml.Node
	deref := func(x *yaml.Node) *yaml.Node {
		for i := 0; x.Kind == yaml.AliasNode && x.Alias != nil && i < yamlexMaxDepth; i++ {
			x = x.Alias
		}
		return x
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if tagOf(deref(k)) != "!!merge" {
			own = append(own, [2]*yaml.Node{k, v})
			continue
		}
		v = deref(v)
		switch v.Kind {
		case yaml.MappingNode:
			pairs, err := c.flatten(v, depth+1)
			if err != nil {
				return nil, err
			}
			merge = append(merge, pairs...)
		case yaml.SequenceNode:
			var subs [][][2]*yaml.Node
			for _, s := range v.Content {
				s = deref(s)
				if s.Kind != yaml.MappingNode {
					return nil, fmt.Errorf("while constructing a mapping\n%s\nexpected a mapping for merging, but found %s\n%s", yamlexMark(n), kindName(s), yamlexMark(s))
				}
				pairs, err := c.flatten(s, depth+1)
				if err != nil {
					return nil, err
				}
				subs = append(subs, pairs)
			}
			for i := len(subs) - 1; i >= 0; i-- {
				merge = append(merge, subs[i]...)
			}
		default:
			return nil, fmt.Errorf("while constructing a mapping\n%s\nexpected a mapping or list of mappings for merging, but found %s\n%s", yamlexMark(n), kindName(v), yamlexMark(v))
		}
	}
	return append(merge, own...), nil
}

// hashable reports whether a constructed key can be a dict key.
func hashable(k any) bool {
	switch k.(type) {
	case *yxMap, *yxSeq:
		return false
	}
	return true
}

// omap is the Loader's construct_yaml_omap: an SLSMap whose repeated keys
// are merged, !reset keys replaced and !aggregate keys moved to their
// value.
func (c *yamlexConstructor) omap(n *yaml.Node, depth int) (any, error) {
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("expected a mapping node, but found %s\n%s", kindName(n), yamlexMark(n))
	}
	pairs, err := c.flatten(n, 0)
	if err != nil {
		return nil, err
	}
	m := newYXMap()
	for _, p := range pairs {
		kn, vn := p[0], p[1]
		ktag, vtag := tagOf(kn), ""
		reset := ktag == "!reset"
		if ktag == "!aggregate" {
			// Salt warns: !aggregate applies on values only
			vtag = "!aggregate"
			ktag, _ = resolveSLS(kn)
		}
		key, err := c.constructAs(kn, ktag, depth+1)
		if err != nil {
			return nil, err
		}
		if !hashable(key) {
			return nil, fmt.Errorf("While constructing a mapping %s found unacceptable key %s", yamlexMark(n), yamlexMark(kn))
		}
		var val any
		if vtag != "" {
			val, err = c.constructAs(vn, vtag, depth+1)
		} else {
			val, err = c.construct(vn, depth+1)
		}
		if err != nil {
			return nil, err
		}
		if old, ok := m.get(key); ok && !reset {
			val = yamlexAggregate(old, val, 0)
		}
		m.set(key, val)
	}
	return m, nil
}

// plainMap is construct_yaml_map (a dict, later keys winning) or
// construct_yaml_set (its keys, as a list), both built in a generator.
func (c *yamlexConstructor) plainMap(n *yaml.Node, set bool, depth int) (any, error) {
	pairs, err := c.flatten(n, 0)
	if err != nil {
		return nil, err
	}
	m := newYXMap()
	m.pending = !c.deep
	for _, p := range pairs {
		key, err := c.construct(p[0], depth+1)
		if err != nil {
			return nil, err
		}
		if !hashable(key) {
			return nil, fmt.Errorf("while constructing a mapping\n%s\nfound unhashable key\n%s", yamlexMark(n), yamlexMark(p[0]))
		}
		val, err := c.construct(p[1], depth+1)
		if err != nil {
			return nil, err
		}
		m.set(key, val)
	}
	if set {
		return &yxSeq{items: m.keys, pending: m.pending}, nil
	}
	return m, nil
}

// sequence is construct_yaml_seq or construct_yaml_pairs (a list of
// [key, value] pairs), built in a generator.
func (c *yamlexConstructor) sequence(n *yaml.Node, pairs bool, depth int) (any, error) {
	s := &yxSeq{pending: !c.deep, items: make([]any, 0, len(n.Content))}
	for _, e := range n.Content {
		if pairs {
			if e.Kind != yaml.MappingNode || len(e.Content) != 2 {
				return nil, fmt.Errorf("while constructing pairs\n%s\nexpected a single mapping item\n%s", yamlexMark(n), yamlexMark(e))
			}
			k, err := c.construct(e.Content[0], depth+1)
			if err != nil {
				return nil, err
			}
			v, err := c.construct(e.Content[1], depth+1)
			if err != nil {
				return nil, err
			}
			s.items = append(s.items, &yxSeq{items: []any{k, v}})
			continue
		}
		v, err := c.construct(e, depth+1)
		if err != nil {
			return nil, err
		}
		s.items = append(s.items, v)
	}
	return s, nil
}
