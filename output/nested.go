package output

import (
	"math/big"
	"strings"
	"unicode/utf8"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/wire/payload"
)

// Colors holds the ANSI sequences Salt's outputters use
// (salt.utils.color.get_colors); all empty when colour is off.
type Colors struct {
	Red, Green, Yellow, LightYellow, Cyan, LightRed, LightGreen, LightCyan, Endc string
}

// NewColors returns Salt's colour table, or empty strings when use is false.
func NewColors(use bool) Colors {
	if !use {
		return Colors{}
	}
	return Colors{
		Red:         "\x1b[0;31m",
		Green:       "\x1b[0;32m",
		Yellow:      "\x1b[0;33m",
		LightYellow: "\x1b[0;1;33m",
		Cyan:        "\x1b[0;36m",
		LightRed:    "\x1b[0;1;31m",
		LightGreen:  "\x1b[0;1;32m",
		LightCyan:   "\x1b[0;1;36m",
		Endc:        "\x1b[0;0m",
	}
}

// nestDisplay is the state of one nested rendering (salt/output/nested.py).
type nestDisplay struct {
	c           Colors
	stripColors bool
	retcode     int
	lines       []string
}

func (n *nestDisplay) ustring(indent int, color, msg, prefix, suffix string) string {
	return strings.Repeat(" ", indent) + color + prefix + msg + n.c.Endc + suffix
}

// Nested renders data like Salt's default "nested" outputter. retcode
// non-zero turns list markers and keys red, as Salt does.
func Nested(data any, o Options) string {
	n := &nestDisplay{c: NewColors(o.Color), stripColors: !o.KeepColors, retcode: o.Retcode}
	n.display(normalize(data), o.NestedIndent, "", 0)
	return strings.Join(n.lines, "\n")
}

func (n *nestDisplay) display(ret any, indent int, prefix string, depth int) {
	if depth > maxReprDepth {
		return
	}
	if b, ok := ret.([]byte); ok && utf8.Valid(b) {
		ret = string(b)
	}
	switch x := ret.(type) {
	case nil:
		n.lines = append(n.lines, n.ustring(indent, n.c.LightYellow, "None", prefix, ""))
	case bool:
		s := "False"
		if x {
			s = "True"
		}
		n.lines = append(n.lines, n.ustring(indent, n.c.LightYellow, s, prefix, ""))
	case int64, uint64, float64, *big.Int:
		n.lines = append(n.lines, n.ustring(indent, n.c.LightYellow, PyRepr(x), prefix, ""))
	case string:
		for i, line := range py.SplitLines(x, false) {
			p := prefix
			if i > 0 {
				p = strings.Repeat(" ", utf8.RuneCountInString(prefix))
			}
			if n.stripColors {
				line = strings.ReplaceAll(line, "\x1b", "?")
			}
			n.lines = append(n.lines, n.ustring(indent, n.c.Green, line, p, ""))
		}
	case []any:
		color := n.c.Green
		if n.retcode != 0 {
			color = n.c.Red
		}
		for _, e := range x {
			e = normalize(e)
			switch e.(type) {
			case []any, *payload.Map:
				n.lines = append(n.lines, n.ustring(indent, color, "|_", "", ""))
				p := "- "
				if _, isMap := e.(*payload.Map); isMap {
					p = ""
				}
				n.display(e, indent+2, p, depth+1)
			default:
				n.display(e, indent, "- ", depth+1)
			}
		}
	case *payload.Map:
		color := n.c.Cyan
		if n.retcode != 0 {
			color = n.c.Red
		}
		if indent != 0 {
			n.lines = append(n.lines, n.ustring(indent, color, "----------", "", ""))
		}
		items, ok := sortedItems(x)
		if !ok {
			items = strKeyed(x)
		}
		for _, it := range items {
			n.lines = append(n.lines, n.ustring(indent, color, PyStr(it.Key), prefix, ":"))
			n.display(normalize(it.Value), indent+4, "", depth+1)
		}
	}
}

// strKeyed is Salt's fallback when keys cannot be sorted: every key turned
// into str() (later duplicates win) and sorted as text.
func strKeyed(m *payload.Map) []payload.Item {
	conv := payload.NewMap()
	for _, it := range m.Items() {
		conv.Set(PyStr(it.Key), it.Value)
	}
	items, _ := sortedItems(conv)
	return items
}

// NoReturn renders data like Salt's "no_return" outputter, used for the
// "Minion did not return" notices.
func NoReturn(data any, o Options) string {
	c := NewColors(o.Color)
	var b strings.Builder
	var walk func(v any, indent int, prefix string, depth int)
	walk = func(v any, indent int, prefix string, depth int) {
		if depth > maxReprDepth {
			return
		}
		switch x := normalize(v).(type) {
		case string:
			for _, line := range strings.Split(x, "\n") {
				b.WriteString(c.Red + strings.Repeat(" ", indent) + prefix + line + c.Endc + "\n")
			}
		case *payload.Map:
			items, ok := sortedItems(x)
			if !ok {
				return
			}
			for _, it := range items {
				b.WriteString(c.Cyan + strings.Repeat(" ", indent) + prefix + PyStr(it.Key) + c.Endc + ":\n")
				walk(it.Value, indent+4, "", depth+1)
			}
		}
	}
	walk(data, 0, "", 0)
	return b.String()
}
