package jinja

import (
	"sort"
	"strings"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/wire/payload"
)

// Pformat is Python's pprint.pformat(v) (width 80, indent 1, dicts
// sorted by key): what Jinja2's pprint filter prints.
func Pformat(v any) string {
	var b strings.Builder
	pp := &pprinter{width: 80}
	pp.format(&b, v, 0, 0, 0)
	return b.String()
}

type pprinter struct{ width int }

// sortedItems orders a dict's items like pprint's _safe_key: each pair
// of keys by Python's <, and a pair that does not compare (TypeError) by
// its types' names (pprint then compares ids, which only ties of one type
// reach; those keep their order), so ints sort among themselves before
// the str keys of the same dict.
func sortedItems(m *payload.Map) []payload.Item {
	items := append([]payload.Item(nil), m.Items()...)
	sort.SliceStable(items, func(i, j int) bool {
		return safeKeyLess(items[i].Key, items[j].Key)
	})
	return items
}

// safeKeyLess is pprint's _safe_key.__lt__.
func safeKeyLess(a, b any) bool {
	if c, err := Compare(a, b, "<"); err == nil {
		return c < 0
	}
	return TypeName(a) < TypeName(b)
}

// safeRepr is pprint's repr: dicts with sorted keys at every level.
func safeRepr(v any, depth int) string {
	if depth > 200 {
		return "..."
	}
	switch x := v.(type) {
	case *payload.Map:
		var parts []string
		for _, it := range sortedItems(x) {
			parts = append(parts, safeRepr(it.Key, depth+1)+": "+safeRepr(it.Value, depth+1))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case *List:
		return "[" + joinReprs(x.Items, depth) + "]"
	case Tuple:
		if len(x) == 1 {
			return "(" + safeRepr(x[0], depth+1) + ",)"
		}
		return "(" + joinReprs(x, depth) + ")"
	}
	return Repr(v)
}

func joinReprs(items []any, depth int) string {
	parts := make([]string, len(items))
	for i, e := range items {
		parts[i] = safeRepr(e, depth+1)
	}
	return strings.Join(parts, ", ")
}

func (pp *pprinter) format(b *strings.Builder, v any, indent, allowance, level int) {
	rep := safeRepr(v, 0)
	if len([]rune(rep)) <= pp.width-indent-allowance || level > 100 {
		b.WriteString(rep)
		return
	}
	switch x := v.(type) {
	case string:
		pp.str(b, x, indent, allowance, level+1)
	case *payload.Map:
		b.WriteByte('{')
		items := sortedItems(x)
		ind := indent + 1
		for i, it := range items {
			last := i == len(items)-1
			k := safeRepr(it.Key, 0)
			b.WriteString(k)
			b.WriteString(": ")
			allow := 1
			if last {
				allow = allowance + 1
			}
			pp.format(b, it.Value, ind+len([]rune(k))+2, allow, level+1)
			if !last {
				b.WriteString(",\n" + strings.Repeat(" ", ind))
			}
		}
		b.WriteByte('}')
	case *List:
		b.WriteByte('[')
		pp.items(b, x.Items, indent, allowance+1, level)
		b.WriteByte(']')
	case Tuple:
		end := ")"
		if len(x) == 1 {
			end = ",)"
		}
		b.WriteByte('(')
		pp.items(b, x, indent, allowance+len(end), level)
		b.WriteString(end)
	default:
		b.WriteString(rep)
	}
}

func (pp *pprinter) items(b *strings.Builder, items []any, indent, allowance, level int) {
	ind := indent + 1
	for i, e := range items {
		last := i == len(items)-1
		if i > 0 {
			b.WriteString(",\n" + strings.Repeat(" ", ind))
		}
		allow := 1
		if last {
			allow = allowance
		}
		pp.format(b, e, ind, allow, level+1)
	}
}

// str is PrettyPrinter._pprint_str (py.PPrintStr).
func (pp *pprinter) str(b *strings.Builder, s string, indent, allowance, level int) {
	py.PPrintStr(b, s, pp.width, indent, allowance, level, pyStrRepr)
}
