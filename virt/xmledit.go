package virt

import (
	"encoding/xml"
	"reflect"
	"strings"

	"github.com/gsalt/gsalt/wire/payload"
)

// This file edits parsed XML documents the way Salt's virt module edits
// its ElementTree documents (update, network_update, pool_update).

// clone deep-copies n.
func (n *node) clone() *node {
	c := &node{Tag: n.Tag, Text: n.Text, HasText: n.HasText, Attrs: append([]xml.Attr(nil), n.Attrs...)}
	for _, ch := range n.Children {
		c.Children = append(c.Children, ch.clone())
	}
	return c
}

// set sets an attribute, keeping its place when it exists.
func (n *node) set(name, value string) {
	for i, a := range n.Attrs {
		if a.Name.Local == name {
			n.Attrs[i].Value = value
			return
		}
	}
	n.Attrs = append(n.Attrs, xml.Attr{Name: xml.Name{Local: name}, Value: value})
}

// del removes an attribute and tells whether it was there.
func (n *node) del(name string) bool {
	for i, a := range n.Attrs {
		if a.Name.Local == name {
			n.Attrs = append(n.Attrs[:i], n.Attrs[i+1:]...)
			return true
		}
	}
	return false
}

// setText sets a leaf's text.
func (n *node) setText(s string) { n.Text, n.HasText = s, true }

// remove drops child c from n.
func (n *node) remove(c *node) bool {
	for i, x := range n.Children {
		if x == c {
			n.Children = append(n.Children[:i], n.Children[i+1:]...)
			return true
		}
	}
	return false
}

// insert puts c at index i of n's children (like Element.insert).
func (n *node) insert(i int, c *node) {
	if i > len(n.Children) {
		i = len(n.Children)
	}
	n.Children = append(n.Children, nil)
	copy(n.Children[i+1:], n.Children[i:])
	n.Children[i] = c
}

// textOrNil is ElementTree's text: None when the element has none.
func (n *node) textOrNil() any {
	if n == nil || !n.HasText {
		return nil
	}
	return n.Text
}

// String serializes the element (no XML declaration); the text of
// elements with children (indentation) is left out.
func (n *node) String() string {
	var b strings.Builder
	n.write(&b, "")
	return b.String()
}

func (n *node) write(b *strings.Builder, indent string) {
	b.WriteString(indent + "<" + n.Tag)
	for _, a := range n.Attrs {
		b.WriteString(" " + a.Name.Local + "='")
		_ = xml.EscapeText(b, []byte(a.Value))
		b.WriteString("'")
	}
	switch {
	case len(n.Children) > 0:
		b.WriteString(">\n")
		for _, c := range n.Children {
			c.write(b, indent+"  ")
		}
		b.WriteString(indent + "</" + n.Tag + ">\n")
	case n.HasText && n.Text != "":
		b.WriteString(">")
		_ = xml.EscapeText(b, []byte(n.Text))
		b.WriteString("</" + n.Tag + ">\n")
	default:
		b.WriteString("/>\n")
	}
}

// stripSpaces is xmlutil.strip_spaces: trims the texts.
func (n *node) stripSpaces() *node {
	if n.HasText {
		n.Text = strings.Trim(n.Text, " \t\n")
	}
	for _, c := range n.Children {
		c.stripSpaces()
	}
	return n
}

// removeEmpty is virt's _remove_empty_xml_node on a stripped document:
// children with no text, attribute or child go. Like Salt's loop, which
// removes from the list it walks, the sibling after a removed child is
// not looked into.
func (n *node) removeEmpty() *node {
	for i := 0; i < len(n.Children); i++ {
		c := n.Children[i]
		if c.Text == "" && len(c.Attrs) == 0 && len(c.Children) == 0 {
			n.Children = append(n.Children[:i], n.Children[i+1:]...)
			continue // the next child now sits at i and is skipped
		}
		c.removeEmpty()
	}
	return n
}

// fullDict is xmlutil.to_dict(node, True): attributes and children by
// name, repeated children as lists, a bare leaf as its text.
func (n *node) fullDict() any {
	d := map[string]any{}
	for _, a := range n.Attrs {
		d[a.Name.Local] = a.Value
	}
	if len(n.Children) == 0 {
		if len(d) == 0 {
			return n.textOrNil()
		}
		if n.HasText && n.Text != "" {
			d[n.Tag] = n.Text
		}
	}
	for _, c := range n.Children {
		v := c.fullDict()
		old, ok := d[c.Tag]
		if !ok {
			d[c.Tag] = v
			continue
		}
		if l, isList := old.([]any); isList {
			d[c.Tag] = append(l, v)
		} else {
			d[c.Tag] = []any{old, v}
		}
	}
	return d
}

// sameDoc compares two documents like Salt's to_dict(x, True) equality.
func sameDoc(a, b *node) bool { return reflect.DeepEqual(a.fullDict(), b.fullDict()) }

// child returns the first child with the tag, or nil.
func (n *node) child(tag string) *node {
	if n == nil {
		return nil
	}
	for _, c := range n.Children {
		if c.Tag == tag {
			return c
		}
	}
	return nil
}

// strOrNil is a text that may be None.
func strOrNil(n *node) any {
	if n == nil {
		return nil
	}
	return n.textOrNil()
}

// attrOrNil is node.get(name): None when unset.
func attrOrNil(n *node, name string) any {
	if v, ok := n.get(name); ok {
		return v
	}
	return nil
}

var _ = payload.NewMap
