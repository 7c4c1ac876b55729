package virt

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/gsalt/gsalt/wire/payload"
)

// This file is the engine behind virt.update's definition changes: the
// behaviour of Salt's xmlutil.change_xml (a mapping from colon paths in
// the call's data to simplified XPaths in the domain XML, with {id}
// placeholders walking dictionaries and lists) written for gsalt's node
// tree.

// missingValue marks a path that is not in the data (get_value's []):
// the XML is then left as it is.
type missingValue struct{}

// pathValue is one value found under a path and the keys its placeholders
// stood for.
type pathValue struct {
	value any
	ph    map[string]any
}

// pathValues is salt.utils.data.get_value with an empty-list default.
func pathValues(obj any, path []string) []pathValue {
	if len(path) == 0 {
		return []pathValue{{value: obj}}
	}
	key, rest := path[0], path[1:]
	if strings.HasPrefix(key, "{") && strings.HasSuffix(key, "}") {
		name := key[1 : len(key)-1]
		if obj == nil {
			return []pathValue{{value: nil}}
		}
		var out []pathValue
		add := func(k, v any) {
			for _, pv := range pathValues(v, rest) {
				if pv.ph == nil {
					pv.ph = map[string]any{}
				}
				pv.ph[name] = k
				out = append(out, pv)
			}
		}
		switch o := obj.(type) {
		case *payload.Map:
			for _, it := range o.Items() {
				add(it.Key, it.Value)
			}
		case []any:
			for i, e := range o {
				add(int64(i), e)
			}
		}
		return out
	}
	if m, ok := obj.(*payload.Map); ok {
		v, has := m.Get(key)
		if !has {
			return []pathValue{{value: missingValue{}}}
		}
		return pathValues(v, rest)
	}
	if obj == nil {
		return []pathValue{{value: nil}}
	}
	return []pathValue{{value: missingValue{}}}
}

// pyStr is Python's str() of a value as change_xml compares and writes it.
func pyStr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return payload.Text(v)
}

// xstep is one segment of a simplified XPath: a tag with an optional
// [@attr='value'], [@attr] or [N] filter.
type xstep struct {
	tag, attr, value string
	hasValue         bool
	index            int
}

var xstepRe = regexp.MustCompile(`^([^\[]+)(?:\[(?:@(\w+)(?:=["']([^"']*)["'])?|([0-9]+))\])?$`)

func parseXPath(xpath string) []xstep {
	xpath = strings.TrimPrefix(xpath, "./")
	if xpath == "" || xpath == "." {
		return nil
	}
	var out []xstep
	for _, seg := range splitXPath(xpath) {
		m := xstepRe.FindStringSubmatch(seg)
		if m == nil {
			out = append(out, xstep{tag: seg})
			continue
		}
		st := xstep{tag: m[1], attr: m[2], value: m[3], hasValue: strings.Contains(seg, "=")}
		if m[4] != "" {
			st.index, _ = strconv.Atoi(m[4])
		}
		out = append(out, st)
	}
	return out
}

// splitXPath splits on the slashes outside of [] filters.
func splitXPath(xpath string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range xpath {
		switch r {
		case '[':
			depth++
		case ']':
			depth--
		case '/':
			if depth == 0 {
				out = append(out, xpath[start:i])
				start = i + 1
			}
		}
	}
	return append(out, xpath[start:])
}

// xfindAll is ElementTree's findall for the simplified XPaths.
func xfindAll(doc *node, xpath string) []*node {
	cur := []*node{doc}
	for _, st := range parseXPath(xpath) {
		var next []*node
		for _, p := range cur {
			pos := 0
			for _, c := range p.Children {
				if c.Tag != st.tag {
					continue
				}
				pos++
				switch {
				case st.index > 0:
					if pos != st.index {
						continue
					}
				case st.attr != "":
					v, ok := c.get(st.attr)
					if !ok || (st.hasValue && v != st.value) {
						continue
					}
				}
				next = append(next, c)
			}
		}
		cur = next
	}
	return cur
}

func xfind(doc *node, xpath string) *node {
	if all := xfindAll(doc, xpath); len(all) > 0 {
		return all[0]
	}
	return nil
}

// xgetNode is xmlutil.get_xml_node: the node at xpath, created (with its
// missing ancestors) when absent.
func xgetNode(doc *node, xpath string) *node {
	if n := xfind(doc, xpath); n != nil {
		return n
	}
	xpath = strings.TrimPrefix(xpath, "./")
	segs := splitXPath(xpath)
	parent := doc
	if len(segs) > 1 {
		parent = xgetNode(doc, strings.Join(segs[:len(segs)-1], "/"))
	}
	st := parseXPath(segs[len(segs)-1])[0]
	n := &node{Tag: st.tag}
	if st.attr != "" && st.value != "" {
		n.set(st.attr, st.value)
	}
	parent.Children = append(parent.Children, n)
	return n
}

// xmapEntry is one item of a change_xml mapping. Nil functions take
// change_xml's defaults (the text, str() comparison, removal of the
// element).
type xmapEntry struct {
	path, xpath string
	get         func(n *node) any
	set         func(n *node, v any)
	del         func(doc, n *node) bool
	convert     func(v any) (any, error)
	equals      func(cur, neu any) bool
}

// delText is xmlutil.del_text: the element goes (no further cleanup).
func delText(doc, n *node) bool {
	if p := parentOf(doc, n); p != nil {
		p.remove(n)
	}
	return true
}

// delAttribute is xmlutil.del_attribute.
func delAttribute(attr string, ignored ...string) func(doc, n *node) bool {
	return func(doc, n *node) bool {
		if !n.del(attr) {
			return false
		}
		cleanNode(doc, n, ignored)
		return true
	}
}

// attrEntry is xmlutil.attribute.
func attrEntry(path, xpath, attr string, ignored ...string) xmapEntry {
	return xmapEntry{path: path, xpath: xpath,
		get: func(n *node) any { return attrOrNil(n, attr) },
		set: func(n *node, v any) { n.set(attr, pyStr(v)) },
		del: delAttribute(attr, ignored...)}
}

// intAttrEntry is xmlutil.int_attribute.
func intAttrEntry(path, xpath, attr string, ignored ...string) xmapEntry {
	e := attrEntry(path, xpath, attr, ignored...)
	e.get = func(n *node) any {
		v := n.attr(attr)
		if v == "" {
			return nil
		}
		if i, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			return i
		}
		return v
	}
	return e
}

// yesNoEntry is update's _yesno_attribute.
func yesNoEntry(path, xpath, attr string, ignored ...string) xmapEntry {
	e := attrEntry(path, xpath, attr, ignored...)
	e.convert = func(v any) (any, error) {
		if payload.Truthy(v) {
			return "yes", nil
		}
		return "no", nil
	}
	return e
}

// memEntry is update's _memory_parameter: sizes written in bytes and
// compared almost equal.
func memEntry(path, xpath, attr string, ignored ...string) xmapEntry {
	e := xmapEntry{path: path, xpath: xpath,
		convert: func(v any) (any, error) {
			b, err := handleUnit(v)
			return b, err
		},
		get: func(n *node) any {
			if b := memBytes(n); b != nil {
				return *b
			}
			return nil
		},
		set: func(n *node, v any) {
			if attr != "" {
				n.set(attr, pyStr(v))
			} else {
				n.setText(pyStr(v))
			}
			n.set("unit", "bytes")
		},
		equals: func(cur, neu any) bool {
			c, ok1 := cur.(int64)
			b, ok2 := neu.(int64)
			return ok1 && ok2 && almostEqual(&c, b)
		}}
	if attr != "" {
		e.del = delAttribute(attr, ignored...)
	}
	return e
}

// cpusetEntry is update's _cpuset_parameter.
func cpusetEntry(path, xpath, attr string, ignored ...string) xmapEntry {
	e := xmapEntry{path: path, xpath: xpath,
		convert: func(v any) (any, error) { return expandCPUSet(v) },
		get: func(n *node) any {
			var raw any
			if attr != "" {
				raw = attrOrNil(n, attr)
			} else {
				raw = n.textOrNil()
			}
			if raw == nil {
				return nil
			}
			s, err := expandCPUSet(raw)
			if err != nil {
				return raw
			}
			return s
		},
		set: func(n *node, v any) {
			if attr != "" {
				n.set(attr, pyStr(v))
			} else {
				n.setText(pyStr(v))
			}
		}}
	if attr != "" {
		e.del = delAttribute(attr, ignored...)
	}
	return e
}

var (
	placeholderRe = regexp.MustCompile(`\$(\w+)`)
	allNodesRe    = regexp.MustCompile(`(?:=['"]\$\$\$["'])|(?:\[\$\$\$\])`)
)

// changeXML is xmlutil.change_xml: it applies the data to the document
// through the mapping and tells whether anything changed.
func changeXML(doc *node, data *payload.Map, mapping []xmapEntry) (bool, error) {
	need := false
	for _, e := range mapping {
		values := pathValues(data, strings.Split(e.path, ":"))
		var placeholders []string
		for _, s := range strings.Split(e.path, ":") {
			if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
				placeholders = append(placeholders, s[1:len(s)-1])
			}
		}
		allXPath := allNodesRe.ReplaceAllString(placeholderRe.ReplaceAllString(e.xpath, "$$$$$$"), "")
		del := e.del
		if del == nil {
			del = delText
		}
		kept := map[*node]bool{}
		cleanup := false
		for _, pv := range values {
			v := pv.value
			switch x := v.(type) {
			case missingValue:
				continue
			case []any:
				cleanup = cleanup || len(x) > 0
				continue
			case *payload.Map:
				cleanup = true
				continue
			}
			cleanup = true
			if v == nil {
				for _, n := range xfindAll(doc, allXPath) {
					if del(doc, n) {
						need = true
					}
				}
				continue
			}
			xpath := placeholderRe.ReplaceAllStringFunc(e.xpath, func(m string) string {
				name := m[1:]
				k, ok := pv.ph[name]
				if !ok {
					return ""
				}
				if strings.Contains(e.xpath, "[$"+name+"]") {
					if i, isInt := k.(int64); isInt {
						return strconv.FormatInt(i+1, 10)
					}
				}
				return pyStr(k)
			})
			n := xgetNode(doc, xpath)
			kept[n] = true
			var cur any
			if e.get != nil {
				cur = e.get(n)
			} else {
				cur = n.textOrNil()
			}
			if e.convert != nil {
				var err error
				if v, err = e.convert(v); err != nil {
					return false, err
				}
			}
			same := false
			if e.equals != nil {
				same = e.equals(cur, v)
			} else {
				same = pyStr(cur) == pyStr(v)
			}
			if !same {
				if e.set != nil {
					e.set(n, v)
				} else {
					n.setText(pyStr(v))
				}
				need = true
			}
		}
		// Placeholder paths: the elements no value named go.
		if len(placeholders) > 0 && cleanup {
			for _, n := range xfindAll(doc, allXPath) {
				if !kept[n] && del(doc, n) {
					need = true
				}
			}
		}
	}
	return need, nil
}

// normalizeCPUSets is update's _normalize_cpusets: the cpusets used as
// keys (cachetune and memorytune vcpus) are expanded on both sides so
// that they compare.
func normalizeCPUSets(desc *node, data *payload.Map) error {
	for _, xp := range []string{"cputune/cachetune", "cputune/cachetune/monitor", "cputune/memorytune"} {
		for _, n := range xfindAll(desc, xp) {
			s, err := expandCPUSet(attrOrNil(n, "vcpus"))
			if err != nil {
				return err
			}
			n.set("vcpus", s)
		}
	}
	cpu := asMap(val(data, "cpu"))
	if cpu == nil {
		return nil
	}
	tuning := asMap(val(cpu, "tuning"))
	if tuning == nil {
		return nil
	}
	for _, child := range []string{"cachetune", "memorytune"} {
		items := asMap(val(tuning, child))
		if items == nil || items.Len() == 0 {
			continue
		}
		out := payload.NewMap()
		for _, it := range items.Items() {
			v := it.Value
			if vm := asMap(v); vm != nil && child == "cachetune" {
				if mon := asMap(val(vm, "monitor")); mon != nil && mon.Len() > 0 {
					nm := payload.NewMap()
					for _, mi := range mon.Items() {
						k, err := expandCPUSet(mi.Key)
						if err != nil {
							return err
						}
						nm.Set(k, mi.Value)
					}
					vm.Set("monitor", nm)
				}
			}
			k, err := expandCPUSet(it.Key)
			if err != nil {
				return err
			}
			out.Set(k, v)
		}
		tuning.Set(child, out)
	}
	return nil
}
