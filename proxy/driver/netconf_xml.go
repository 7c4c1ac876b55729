package driver

// XML helpers of the NETCONF drivers: a small element tree that keeps the
// document's prefixes and namespace declarations as written (YANG
// identityref values such as "ianaift:ethernetCsmacd" refer to prefixes
// from the text, so a tree that renamed prefixes would change the data),
// a canonical indented rendering used for get_config and for the diff of
// two datastores, and the unified diff itself.

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// Limits of parseXML: deeper or bigger documents are refused (input
// texts are bounded by maxOutput as well).
const (
	maxXMLDepth = 256
	maxXMLNodes = 1 << 20
)

// Namespaces the NETCONF drivers use.
const (
	nsNetconf    = "urn:ietf:params:xml:ns:netconf:base:1.0"
	nsSystem     = "urn:ietf:params:xml:ns:yang:ietf-system"
	nsInterfaces = "urn:ietf:params:xml:ns:yang:ietf-interfaces"
	nsIP         = "urn:ietf:params:xml:ns:yang:ietf-ip"
)

// xnode is one XML element with its raw (prefixed) name, its attributes
// as written (namespace declarations included: Name.Space holds the prefix,
// "xmlns" for a declaration), the character data directly inside it and
// its child elements. The root returned by parseXML is a synthetic node
// without a name whose children are the document's top-level elements.
type xnode struct {
	prefix, local string
	attrs         []xml.Attr
	text          string
	kids          []*xnode
	parent        *xnode // set by parseXML; nil for the root and built nodes
	seq           int    // document order, set by parseXML
}

// errXML marks a text that is not well-formed XML.
var errXML = errors.New("malformed XML")

// parseXML parses a document or a sequence of top-level elements (a
// NETCONF <config> body may have several). Comments, processing
// instructions and directives are dropped.
func parseXML(s string) (*xnode, error) {
	if len(s) > maxOutput {
		return nil, fmt.Errorf("%w: document larger than %d bytes", errXML, maxOutput)
	}
	dec := xml.NewDecoder(strings.NewReader(s))
	root := &xnode{}
	stack := []*xnode{root}
	nodes := 0
	for {
		tok, err := dec.RawToken()
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("%w: %w", errXML, err)
		}
		top := stack[len(stack)-1]
		switch t := tok.(type) {
		case xml.StartElement:
			nodes++
			if nodes > maxXMLNodes || len(stack) > maxXMLDepth {
				return nil, fmt.Errorf("%w: document too big or too deep", errXML)
			}
			n := &xnode{prefix: t.Name.Space, local: t.Name.Local, attrs: slices.Clone(t.Attr), parent: top, seq: nodes}
			top.kids = append(top.kids, n)
			stack = append(stack, n)
		case xml.EndElement:
			if len(stack) == 1 || top.prefix != t.Name.Space || top.local != t.Name.Local {
				return nil, fmt.Errorf("%w: unexpected end element </%s>", errXML, rawName(t.Name))
			}
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) == 1 {
				if strings.TrimSpace(string(t)) != "" {
					return nil, fmt.Errorf("%w: text outside of any element", errXML)
				}
				continue
			}
			top.text += string(t)
		}
	}
	if len(stack) != 1 {
		return nil, fmt.Errorf("%w: unclosed element <%s>", errXML, stack[len(stack)-1].name())
	}
	return root, nil
}

func rawName(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	return n.Space + ":" + n.Local
}

// name returns the element's name as written ("prefix:local" or "local").
func (n *xnode) name() string { return rawName(xml.Name{Space: n.prefix, Local: n.local}) }

// child returns the first child element with local name local (any
// prefix), following path for further names; nil if there is none.
func (n *xnode) child(path ...string) *xnode {
	cur := n
	for _, p := range path {
		if cur == nil {
			return nil
		}
		var next *xnode
		for _, k := range cur.kids {
			if k.local == p {
				next = k
				break
			}
		}
		cur = next
	}
	return cur
}

// children returns the child elements with local name local.
func (n *xnode) children(local string) []*xnode {
	if n == nil {
		return nil
	}
	var out []*xnode
	for _, k := range n.kids {
		if k.local == local {
			out = append(out, k)
		}
	}
	return out
}

// find returns the first element named local in n's subtree (n excluded,
// depth first).
func (n *xnode) find(local string) *xnode {
	if n == nil {
		return nil
	}
	for _, k := range n.kids {
		if k.local == local {
			return k
		}
		if f := k.find(local); f != nil {
			return f
		}
	}
	return nil
}

// findAll returns every element named local in n's subtree, in document
// order, without descending into matches.
func (n *xnode) findAll(local string) []*xnode {
	if n == nil {
		return nil
	}
	var out []*xnode
	for _, k := range n.kids {
		if k.local == local {
			out = append(out, k)
			continue
		}
		out = append(out, k.findAll(local)...)
	}
	return out
}

// value returns the trimmed text of the child at path ("" when absent).
func (n *xnode) value(path ...string) string {
	c := n.child(path...)
	if c == nil {
		return ""
	}
	return strings.TrimSpace(c.text)
}

// attr returns the value of the attribute with local name local (not a
// namespace declaration), "" when absent.
func (n *xnode) attr(local string) string {
	if n == nil {
		return ""
	}
	for _, a := range n.attrs {
		if a.Name.Local == local && a.Name.Space != "xmlns" && !(a.Name.Space == "" && a.Name.Local == "xmlns") {
			return a.Value
		}
	}
	return ""
}

// allText returns the text of n's subtree, element texts joined in
// document order.
func (n *xnode) allText() string {
	var b strings.Builder
	var walk func(x *xnode)
	walk = func(x *xnode) {
		b.WriteString(x.text)
		for _, k := range x.kids {
			walk(k)
		}
	}
	walk(n)
	return b.String()
}

// isDecl reports whether a is a namespace declaration; its prefix is ""
// for the default namespace.
func isDecl(a xml.Attr) (prefix string, ok bool) {
	switch {
	case a.Name.Space == "" && a.Name.Local == "xmlns":
		return "", true
	case a.Name.Space == "xmlns":
		return a.Name.Local, true
	}
	return "", false
}

// declared returns the namespace n declares for prefix ("" = default).
func (n *xnode) declared(prefix string) (string, bool) {
	for _, a := range n.attrs {
		if p, ok := isDecl(a); ok && p == prefix {
			return a.Value, true
		}
	}
	return "", false
}

// attrOrder sorts attributes for the canonical rendering: the default
// namespace declaration, then prefixed declarations, then the others, by
// name within each group.
func attrOrder(a, b xml.Attr) int {
	rank := func(x xml.Attr) int {
		p, ok := isDecl(x)
		switch {
		case ok && p == "":
			return 0
		case ok:
			return 1
		}
		return 2
	}
	if ra, rb := rank(a), rank(b); ra != rb {
		return ra - rb
	}
	return strings.Compare(rawName(a.Name), rawName(b.Name))
}

// escapeAttr escapes an attribute value (quotes and white space other
// than the space included, which attribute normalisation would change).
func escapeAttr(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// textEscaper escapes character data; new lines and tabs stay as they
// are (configuration texts keep their lines), carriage returns become
// references (XML parsers would drop them otherwise).
var textEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\r", "&#xD;")

// escapeXML escapes character data.
func escapeXML(s string) string { return textEscaper.Replace(s) }

// render writes n (and its subtree) in the canonical form: two spaces of
// indentation per level, one element per line, leaf text on the
// element's line, empty elements self-closed, sorted attributes. Text
// that is only white space is dropped; other text is kept as is.
func (n *xnode) render(b *strings.Builder, depth int) {
	if n.local == "" { // synthetic root
		for _, k := range n.kids {
			k.render(b, depth)
		}
		return
	}
	ind := strings.Repeat("  ", depth)
	b.WriteString(ind)
	b.WriteByte('<')
	b.WriteString(n.name())
	attrs := slices.Clone(n.attrs)
	slices.SortStableFunc(attrs, attrOrder)
	for _, a := range attrs {
		fmt.Fprintf(b, " %s=\"%s\"", rawName(a.Name), escapeAttr(a.Value))
	}
	text := n.text
	if strings.TrimSpace(text) == "" {
		text = ""
	}
	switch {
	case len(n.kids) == 0 && text == "":
		b.WriteString("/>\n")
	case len(n.kids) == 0:
		fmt.Fprintf(b, ">%s</%s>\n", escapeXML(text), n.name())
	default:
		b.WriteString(">\n")
		if text != "" {
			fmt.Fprintf(b, "%s  %s\n", ind, escapeXML(strings.TrimSpace(text)))
		}
		for _, k := range n.kids {
			k.render(b, depth+1)
		}
		fmt.Fprintf(b, "%s</%s>\n", ind, n.name())
	}
}

// renderXML returns the canonical rendering of nodes.
func renderXML(nodes ...*xnode) string {
	var b strings.Builder
	for _, n := range nodes {
		n.render(&b, 0)
	}
	return b.String()
}

// canonicalXML re-renders an XML text canonically (see xnode.render).
func canonicalXML(s string) (string, error) {
	root, err := parseXML(s)
	if err != nil {
		return "", err
	}
	return renderXML(root), nil
}

// usedPrefixes returns the namespace prefixes n's subtree refers to in
// element and attribute names and in "prefix:value" leaf texts (YANG
// identityref and instance-identifier values), except xml and xmlns.
func (n *xnode) usedPrefixes(into map[string]bool) {
	if n.prefix != "" {
		into[n.prefix] = true
	}
	for _, a := range n.attrs {
		if _, decl := isDecl(a); !decl && a.Name.Space != "" && a.Name.Space != "xml" {
			into[a.Name.Space] = true
		}
	}
	if len(n.kids) == 0 {
		t := strings.TrimLeft(strings.TrimSpace(n.text), "/")
		if i := strings.IndexByte(t, ':'); i > 0 && !strings.ContainsAny(t[:i], " /\t\n") {
			into[t[:i]] = true
		}
	}
	for _, k := range n.kids {
		k.usedPrefixes(into)
	}
}

// detach makes the children of parent standalone elements: each one gets
// the namespace declarations it inherits from scope (prefix -> URI of the
// ancestors, parent included) and uses. The children are modified in
// place and returned.
func detach(parent *xnode, scope map[string]string) []*xnode {
	inner := scopeOf(parent, scope)
	for _, k := range parent.kids {
		used := map[string]bool{}
		k.usedPrefixes(used)
		if k.prefix == "" {
			used[""] = true
		}
		prefixes := make([]string, 0, len(used))
		for p := range used {
			prefixes = append(prefixes, p)
		}
		for _, p := range slices.Sorted(slices.Values(prefixes)) {
			if _, own := k.declared(p); own {
				continue
			}
			uri, ok := inner[p]
			if !ok || (p == "" && uri == "") {
				continue
			}
			name := xml.Name{Space: "xmlns", Local: p}
			if p == "" {
				name = xml.Name{Local: "xmlns"}
			}
			k.attrs = append(k.attrs, xml.Attr{Name: name, Value: uri})
		}
	}
	return parent.kids
}

// scopeOf returns scope extended with n's own declarations.
func scopeOf(n *xnode, scope map[string]string) map[string]string {
	out := make(map[string]string, len(scope)+2)
	for k, v := range scope {
		out[k] = v
	}
	for _, a := range n.attrs {
		if p, ok := isDecl(a); ok {
			out[p] = a.Value
		}
	}
	return out
}

// replyData returns the children of the <data> element of a NETCONF
// <rpc-reply> as standalone elements (see detach); nil when the reply has
// no data.
func replyData(reply *xnode) []*xnode {
	scope := map[string]string{}
	walk := func(n *xnode) []*xnode {
		for _, k := range n.kids {
			if k.local == "data" {
				return detach(k, scopeOf(n, scope))
			}
		}
		return nil
	}
	rr := reply.child("rpc-reply")
	if rr == nil {
		return walk(reply)
	}
	return walk(rr)
}

// configBody splits a user's XML configuration into NETCONF terms: when
// the text is one <config> element (RFC 6241's edit-config parameter, in
// any namespace prefix) it is returned as is with wrapped=true; otherwise
// the text's top-level elements are the body of a <config> the caller
// adds.
func configBody(text string) (root *xnode, wrapped bool, err error) {
	root, err = parseXML(text)
	if err != nil {
		return nil, false, err
	}
	if len(root.kids) == 0 {
		return nil, false, fmt.Errorf("%w: no element", errXML)
	}
	return root, len(root.kids) == 1 && root.kids[0].local == "config", nil
}

// configElement returns a <config> element for edit-config and
// copy-config holding the user's configuration (see configBody).
func configElement(text string) (string, error) {
	root, wrapped, err := configBody(text)
	if err != nil {
		return "", err
	}
	if wrapped {
		return renderXML(root), nil
	}
	return "<config xmlns=\"" + nsNetconf + "\">\n" + renderXML(root) + "</config>", nil
}

// diffLines splits s into "\n"-terminated lines (difflib.SplitLines
// would add an empty last line to a text that ends with a new line).
func diffLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		return lines[:len(lines)-1]
	}
	lines[len(lines)-1] += "\n"
	return lines
}

// unifiedDiff returns the unified diff (3 lines of context) that turns a
// into b, "" when they are equal.
func unifiedDiff(a, b, fromName, toName string) string {
	if a == b {
		return ""
	}
	out, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: diffLines(a), B: diffLines(b),
		FromFile: fromName, ToFile: toName, Context: 3,
	})
	if err != nil {
		return ""
	}
	return strings.TrimRight(out, "\n")
}
