package virt

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/gsalt/gsalt/wire/payload"
)

// node is a parsed XML element: attributes in document order (as Python's
// ElementTree keeps them), children and text.
type node struct {
	Tag      string
	Attrs    []xml.Attr
	Children []*node
	Text     string
	// HasText tells a leaf's empty text ("<a>\n</a>" then stripped) from
	// no text at all ("<a/>"), as ElementTree's None does.
	HasText bool
}

// maxXML bounds the XML documents gsalt parses.
const maxXML = 16 << 20

func parseXML(s string) (*node, error) {
	if len(s) > maxXML {
		return nil, fmt.Errorf("virt: XML document larger than %d bytes", maxXML)
	}
	d := xml.NewDecoder(strings.NewReader(s))
	var stack []*node
	var root *node
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("virt: bad XML: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			n := &node{Tag: t.Name.Local}
			for _, a := range t.Attr {
				if a.Name.Space == "xmlns" || a.Name.Local == "xmlns" {
					continue
				}
				n.Attrs = append(n.Attrs, xml.Attr{Name: xml.Name{Local: a.Name.Local}, Value: a.Value})
			}
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				p.Children = append(p.Children, n)
			} else if root == nil {
				root = n
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].Text += string(t)
				stack[len(stack)-1].HasText = true
			}
		}
	}
	if root == nil {
		return nil, fmt.Errorf("virt: empty XML document")
	}
	return root, nil
}

// get returns an attribute and whether it is set.
func (n *node) get(name string) (string, bool) {
	if n == nil {
		return "", false
	}
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value, true
		}
	}
	return "", false
}

// attr returns an attribute or "".
func (n *node) attr(name string) string { v, _ := n.get(name); return v }

// attrMap is dict(node.attrib).
func (n *node) attrMap() *payload.Map {
	m := payload.NewMap()
	for _, a := range n.Attrs {
		m.Set(a.Name.Local, a.Value)
	}
	return m
}

// findAll follows a slash-separated path of tags ("devices/disk").
func (n *node) findAll(path string) []*node {
	cur := []*node{n}
	for _, part := range strings.Split(path, "/") {
		var next []*node
		for _, c := range cur {
			for _, ch := range c.Children {
				if ch.Tag == part {
					next = append(next, ch)
				}
			}
		}
		cur = next
	}
	return cur
}

// find returns the first match of path or nil.
func (n *node) find(path string) *node {
	if n == nil {
		return nil
	}
	if all := n.findAll(path); len(all) > 0 {
		return all[0]
	}
	return nil
}

// text returns the node's text, "" for a nil node.
func (n *node) text() string {
	if n == nil {
		return ""
	}
	return n.Text
}

// descendants returns every element below n with the tag (".//tag").
func (n *node) descendants(tag string) []*node {
	var out []*node
	var walk func(*node)
	walk = func(x *node) {
		for _, c := range x.Children {
			if c.Tag == tag {
				out = append(out, c)
			}
			walk(c)
		}
	}
	walk(n)
	return out
}
