package render

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/gsalt/gsalt/render/jinja"
	"github.com/gsalt/gsalt/wire/payload"
)

// xmlNode is an element of Salt's xml filter tree (an ElementTree
// Element): no mixed content, as the filter never gives an element both
// text and children.
type xmlNode struct {
	tag      any
	attrs    []xmlAttr
	text     string
	children []*xmlNode
}

type xmlAttr struct {
	name  any
	value string
}

// filterXML is Salt's xml filter (SerializerExtension.format_xml): the
// value's dict items (or a list of two-item strings) become elements, a
// scalar value the element's text, a dict value the element's attributes
// (its scalar items) and children (its dict and list items), a list
// value one element per item. Only the last top-level element is kept,
// as in Salt. The tree is written as ElementTree serializes it, parsed
// again by minidom and pretty-printed with one-space indents.
func filterXML(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
	if _, err := jinja.Bind("format_xml", args, kw, nil); err != nil {
		return nil, err
	}
	items, err := xmlNormalize(v)
	if err != nil {
		return nil, err
	}
	root, err := xmlRecurse(items, nil, 0)
	if err != nil {
		return nil, err
	}
	if root == nil {
		return nil, pyErr("AttributeError", "'NoneType' object has no attribute 'iter'")
	}
	if err := xmlCheck(root, 0); err != nil {
		return nil, err
	}
	root.children = xmlUnwrapNone(root.children, root, 0)
	if root.tag == nil {
		// ElementTree writes an element whose tag is None as its text
		// and children only: one child becomes the document element,
		// anything else is not a document minidom parses
		if root.text != "" || len(root.children) != 1 {
			return nil, pyErr("ExpatError", "syntax error: line 1, column 0")
		}
		root = root.children[0]
	}
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\" ?>\n")
	xmlWrite(&b, root, "")
	return b.String(), nil
}

// xmlNormalize is format_xml's normalize_iter: a dict's items, a list
// or tuple whose first item is a string itself, any other list or tuple
// nothing.
func xmlNormalize(v any) ([]any, error) {
	switch x := v.(type) {
	case *jinja.List, jinja.Tuple:
		items, err := jinja.Iterate(x)
		if err != nil {
			return nil, err
		}
		if len(items) == 0 {
			return nil, pyErr("IndexError", "%s index out of range", jinja.TypeName(v))
		}
		if _, ok := items[0].(string); ok {
			return items, nil
		}
		return nil, nil
	case *payload.Map:
		out := make([]any, 0, x.Len())
		for _, it := range x.Items() {
			out = append(out, jinja.Tuple{it.Key, it.Value})
		}
		return out, nil
	}
	return nil, &jinja.Error{Kind: "TemplateRuntimeError", Msg: "Value is not a dict or list. Cannot render as XML"}
}

// xmlUnpack is Python's `a, b = item`.
func xmlUnpack(item any) (any, any, error) {
	var parts []any
	switch x := item.(type) {
	case string:
		for _, c := range x {
			parts = append(parts, string(c))
		}
	case *jinja.List, jinja.Tuple, *payload.Map:
		p, err := jinja.Iterate(x)
		if err != nil {
			return nil, nil, err
		}
		parts = p
	default:
		return nil, nil, pyErr("TypeError", "cannot unpack non-iterable %s object", jinja.TypeName(item))
	}
	switch {
	case len(parts) > 2:
		return nil, nil, pyErr("ValueError", "too many values to unpack (expected 2)")
	case len(parts) < 2:
		return nil, nil, pyErr("ValueError", "not enough values to unpack (expected 2, got %d)", len(parts))
	}
	return parts[0], parts[1], nil
}

func xmlIsContainer(v any) bool {
	switch v.(type) {
	case *payload.Map, *jinja.List:
		return true
	}
	return false
}

// xmlSecond is item[1] of a normalize_iter item.
func xmlSecond(item any) (any, error) {
	switch x := item.(type) {
	case jinja.Tuple:
		if len(x) > 1 {
			return x[1], nil
		}
		return nil, pyErr("IndexError", "tuple index out of range")
	case string:
		rs := []rune(x)
		if len(rs) > 1 {
			return string(rs[1]), nil
		}
		return nil, pyErr("IndexError", "string index out of range")
	}
	return nil, pyErr("TypeError", "'%s' object is not subscriptable", jinja.TypeName(item))
}

// xmlRecurse is format_xml's recurse_tree.
func xmlRecurse(items []any, parent *xmlNode, depth int) (*xmlNode, error) {
	if depth > 200 {
		return nil, pyErr("RecursionError", "maximum recursion depth exceeded")
	}
	var sub *xmlNode
	for _, item := range items {
		tag, attrs, err := xmlUnpack(item)
		if err != nil {
			return nil, err
		}
		if l, ok := attrs.(*jinja.List); ok {
			for _, a := range l.Items {
				if _, err := xmlRecurse([]any{jinja.Tuple{tag, a}}, parent, depth+1); err != nil {
					return nil, err
				}
			}
		} else if parent != nil {
			sub = &xmlNode{tag: tag}
			parent.children = append(parent.children, sub)
		} else {
			sub = &xmlNode{tag: tag}
		}
		switch attrs.(type) {
		case string, int64, *big.Int, bool, float64:
			s, err := jinja.Str(attrs)
			if err != nil {
				return nil, err
			}
			sub.text = s
			continue
		}
		if m, ok := attrs.(*payload.Map); ok {
			sub.attrs = nil
			for _, it := range m.Items() {
				if xmlIsContainer(it.Value) {
					continue
				}
				s, err := jinja.Str(it.Value)
				if err != nil {
					return nil, err
				}
				sub.attrs = append(sub.attrs, xmlAttr{it.Key, s})
			}
		}
		norm, err := xmlNormalize(attrs)
		if err != nil {
			return nil, err
		}
		for _, it := range norm {
			second, err := xmlSecond(it)
			if err != nil {
				return nil, err
			}
			if !xmlIsContainer(second) {
				continue
			}
			tag2, val, err := xmlUnpack(it)
			if err != nil {
				return nil, err
			}
			if _, err := xmlRecurse([]any{jinja.Tuple{tag2, val}}, sub, depth+1); err != nil {
				return nil, err
			}
		}
	}
	return sub, nil
}

// xmlCheck refuses what ElementTree cannot serialize (names that are not
// strings) and what minidom's parser then refuses (names that are not
// XML names, characters XML does not allow).
func xmlCheck(n *xmlNode, depth int) error {
	name := func(v any, attr bool) error {
		s, ok := v.(string)
		switch x := v.(type) {
		case nil:
			// a tag None is written as its content only; an attribute
			// name None is "None" (ElementTree's qnames maps None to
			// None, which "%s" writes)
			return nil
		case jinja.Tuple:
			// an attribute name is sliced (name[:1] == "{") and written
			// with "%s": a tuple passes as its repr; a tag must be a str
			if attr {
				s, ok = jinja.Repr(x), true
			}
		}
		if !ok {
			return pyErr("TypeError", "cannot serialize %s (type %s)", jinja.Repr(v), jinja.TypeName(v))
		}
		if !xmlName(s) {
			return pyErr("ExpatError", "not well-formed (invalid token)")
		}
		return nil
	}
	if err := name(n.tag, false); err != nil {
		return err
	}
	for _, a := range n.attrs {
		if err := name(a.name, true); err != nil {
			return err
		}
		if !xmlChars(a.value) {
			return pyErr("ExpatError", "not well-formed (invalid token)")
		}
	}
	if !xmlChars(n.text) {
		return pyErr("ExpatError", "not well-formed (invalid token)")
	}
	for _, c := range n.children {
		if err := xmlCheck(c, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// xmlUnwrapNone replaces each element whose tag is None by what
// ElementTree writes for it: its text (into parent) and its children.
func xmlUnwrapNone(children []*xmlNode, parent *xmlNode, depth int) []*xmlNode {
	var out []*xmlNode
	for _, c := range children {
		if depth < 200 {
			c.children = xmlUnwrapNone(c.children, c, depth+1)
		}
		if c.tag != nil {
			out = append(out, c)
			continue
		}
		parent.text += c.text
		out = append(out, c.children...)
	}
	return out
}

// xmlName reports whether s is an XML name without a namespace prefix
// that ElementTree writes as is: ASCII only, since it serializes to
// us-ascii and a character reference cannot stand in a name.
func xmlName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z'):
		case i > 0 && (c == '-' || c == '.' || ('0' <= c && c <= '9')):
		default:
			return false
		}
	}
	return true
}

// xmlChars reports whether every character of s is an XML 1.0 Char.
func xmlChars(s string) bool {
	for _, c := range s {
		switch {
		case c == 0x9 || c == 0xA || c == 0xD:
		case c >= 0x20 && c <= 0xD7FF:
		case c >= 0xE000 && c <= 0xFFFD:
		case c >= 0x10000 && c <= 0x10FFFF:
		default:
			return false
		}
	}
	return true
}

// xmlData is minidom's _write_data escaping.
func xmlData(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", "\"", "&quot;", ">", "&gt;").Replace(s)
}

// xmlWrite is minidom's Element.writexml with addindent " " and newl
// "\n". Text went through ElementTree unescaped for carriage returns, so
// the parser turned them into newlines; attribute values keep theirs.
func xmlWrite(b *strings.Builder, n *xmlNode, indent string) {
	fmt.Fprintf(b, "%s<%s", indent, n.tag)
	for _, a := range n.attrs {
		name := "None"
		if a.name != nil {
			name = payload.Text(a.name)
		}
		fmt.Fprintf(b, " %s=\"%s\"", name, xmlData(a.value))
	}
	text := strings.ReplaceAll(strings.ReplaceAll(n.text, "\r\n", "\n"), "\r", "\n")
	switch {
	case text != "":
		fmt.Fprintf(b, ">%s</%s>\n", xmlData(text), n.tag)
	case len(n.children) > 0:
		b.WriteString(">\n")
		for _, c := range n.children {
			xmlWrite(b, c, indent+" ")
		}
		fmt.Fprintf(b, "%s</%s>\n", indent, n.tag)
	default:
		b.WriteString("/>\n")
	}
}
