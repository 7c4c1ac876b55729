package output

import (
	"math/big"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/wire/payload"
)

// PPrint renders v like Python's pprint.pformat(v, indent=indent) with the
// default width of 80 and sorted dicts. indent below 1 means 1.
func PPrint(v any, indent int) string {
	if indent < 1 {
		indent = 1
	}
	p := &pprinter{width: 80, indentPerLevel: indent}
	var b strings.Builder
	p.format(&b, normalize(v), 0, 0, 0)
	return b.String()
}

type pprinter struct {
	width          int
	indentPerLevel int
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }

// safeRepr is pprint's _safe_repr: repr with dicts sorted.
func (p *pprinter) safeRepr(v any, depth int) string {
	if depth > maxReprDepth {
		return "..."
	}
	switch x := v.(type) {
	case *payload.Map:
		if x == nil || x.Len() == 0 {
			return "{}"
		}
		items := pprintSorted(x)
		parts := make([]string, len(items))
		for i, it := range items {
			parts[i] = p.safeRepr(normalize(it.Key), depth+1) + ": " + p.safeRepr(normalize(it.Value), depth+1)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		if len(x) == 0 {
			return "[]"
		}
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = p.safeRepr(normalize(e), depth+1)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return PyRepr(v)
}

// pyTypeName is str(type(v)) for the values Salt decodes.
func pyTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "<class 'NoneType'>"
	case bool:
		return "<class 'bool'>"
	case int64, uint64, *big.Int:
		return "<class 'int'>"
	case float64:
		return "<class 'float'>"
	case string:
		return "<class 'str'>"
	case []byte:
		return "<class 'bytes'>"
	case []any:
		return "<class 'list'>"
	case *payload.Map:
		return "<class 'dict'>"
	case time.Time:
		return "<class 'datetime.datetime'>"
	}
	return "<class 'msgpack.ext.ExtType'>"
}

// safeLess is pprint's _safe_key ordering: Python's < when it works,
// otherwise the type names (the id() tie-break is arbitrary in Python; the
// original order is kept here).
func safeLess(a, b any) bool {
	if l, ok := pyLess(a, b); ok {
		return l
	}
	return pyTypeName(a) < pyTypeName(b)
}

func pprintSorted(m *payload.Map) []payload.Item {
	items := append([]payload.Item(nil), m.Items()...)
	sort.SliceStable(items, func(i, j int) bool {
		a, b := normalize(items[i].Key), normalize(items[j].Key)
		if pyEqual(a, b) {
			return safeLess(normalize(items[i].Value), normalize(items[j].Value))
		}
		return safeLess(a, b)
	})
	return items
}

func (p *pprinter) format(b *strings.Builder, v any, indent, allowance, level int) {
	rep := p.safeRepr(v, 0)
	maxWidth := p.width - indent - allowance
	if runeLen(rep) > maxWidth && level < maxReprDepth {
		switch x := v.(type) {
		case *payload.Map:
			b.WriteByte('{')
			if p.indentPerLevel > 1 {
				b.WriteString(strings.Repeat(" ", p.indentPerLevel-1))
			}
			if x.Len() > 0 {
				p.dictItems(b, pprintSorted(x), indent, allowance+1, level+1)
			}
			b.WriteByte('}')
			return
		case []any:
			b.WriteByte('[')
			p.items(b, x, indent, allowance+1, level+1)
			b.WriteByte(']')
			return
		case string:
			p.str(b, x, indent, allowance, level+1)
			return
		}
	}
	b.WriteString(rep)
}

func (p *pprinter) dictItems(b *strings.Builder, items []payload.Item, indent, allowance, level int) {
	indent += p.indentPerLevel
	delimnl := ",\n" + strings.Repeat(" ", indent)
	for i, it := range items {
		last := i == len(items)-1
		rep := p.safeRepr(normalize(it.Key), 0)
		b.WriteString(rep)
		b.WriteString(": ")
		a := 1
		if last {
			a = allowance
		}
		p.format(b, normalize(it.Value), indent+runeLen(rep)+2, a, level)
		if !last {
			b.WriteString(delimnl)
		}
	}
}

func (p *pprinter) items(b *strings.Builder, items []any, indent, allowance, level int) {
	indent += p.indentPerLevel
	if p.indentPerLevel > 1 {
		b.WriteString(strings.Repeat(" ", p.indentPerLevel-1))
	}
	delimnl := ",\n" + strings.Repeat(" ", indent)
	for i, e := range items {
		if i > 0 {
			b.WriteString(delimnl)
		}
		a := 1
		if i == len(items)-1 {
			a = allowance
		}
		p.format(b, normalize(e), indent, a, level)
	}
}

func (p *pprinter) str(b *strings.Builder, s string, indent, allowance, level int) {
	py.PPrintStr(b, s, p.width, indent, allowance, level, PyStrRepr)
}
