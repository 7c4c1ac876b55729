package devsim

import (
	"slices"
	"strconv"
	"strings"
)

// stanza is one configuration line with the lines of its sub-mode.
type stanza struct {
	line     string
	children []*stanza
}

// config is a configuration tree: the global-mode lines in order.
type config struct {
	items []*stanza
}

func cloneList(l []*stanza) []*stanza {
	if l == nil {
		return nil
	}
	out := make([]*stanza, len(l))
	for i, s := range l {
		out[i] = &stanza{line: s.line, children: cloneList(s.children)}
	}
	return out
}

func (c *config) clone() *config { return &config{items: cloneList(c.items)} }

// find returns the index of the stanza whose line equals line, or -1.
func find(list []*stanza, line string) int {
	for i, s := range list {
		if s.line == line {
			return i
		}
	}
	return -1
}

// top returns the first global line starting with the given words, or "".
func (c *config) top(words ...string) string {
	for _, s := range c.items {
		if hasWords(s.line, words) {
			return s.line
		}
	}
	return ""
}

// hasWords reports whether line's first fields are words.
func hasWords(line string, words []string) bool {
	f := strings.Fields(line)
	if len(f) < len(words) {
		return false
	}
	for i, w := range words {
		if w != "*" && f[i] != w {
			return false
		}
	}
	return true
}

// blockFor returns the children of the global block whose line equals line.
func (c *config) block(line string) (*stanza, bool) {
	i := find(c.items, line)
	if i < 0 {
		return nil, false
	}
	return c.items[i], true
}

// applyResult reports what one configuration line did.
type applyResult struct {
	path    []string // mode path after the line
	changed bool     // the tree changed
	exit    bool     // the line left configuration mode ("end", or "exit" at the top)
	errMsg  string   // non-empty: the line was rejected with this error
	badTok  int      // index of the offending token when errMsg is an invalid-input error
}

// resolved is a configuration line matched against a mode.
type resolved struct {
	neg    bool     // "no"/"default" form
	body   []string // canonical words without the negation
	opens  string   // kind of the block the line opens, "" for a leaf
	single int      // number of leading words forming the key of a single-valued setting, 0 if none
}

// kindAt returns the mode kind of a path (global mode is "").
func (d *dialect) kindAt(path []string) string {
	kind := ""
	for _, l := range path {
		k := d.opener(kind, strings.Fields(l))
		if k == "" {
			k = "generic"
		}
		kind = k
	}
	return kind
}

// resolve matches toks against the mode kind; ok false means the mode does not accept them.
func (d *dialect) resolve(kind string, toks []string) (r resolved, bad int, ok bool) {
	body := toks
	if len(toks) > 0 && (toks[0] == "no" || toks[0] == "default") {
		r.neg = true
		body = toks[1:]
	}
	off := len(toks) - len(body)
	if len(body) == 0 {
		return r, off, false
	}
	body = append([]string(nil), body...)
	var words []string
	switch kind {
	case "":
		words = d.topWords
	case "interface":
		words = d.ifWords
	case "line":
		words = d.lineWords
	}
	if words != nil {
		w, ok := expandWord(body[0], words)
		if !ok {
			return r, off, false
		}
		body[0] = w
		if kind == "interface" && (w == "ip" || w == "ipv6") {
			sub := d.ifIPWords
			if w == "ipv6" {
				sub = d.ifIPv6Words
			}
			if len(body) < 2 {
				return r, off + 1, false
			}
			w2, ok := expandWord(body[1], sub)
			if !ok {
				return r, off + 1, false
			}
			body[1] = w2
		}
	} else {
		// Block modes without a keyword list accept anything except global-only commands.
		if d.opener(kind, body) == "" {
			if w, ok := expandWord(body[0], d.topOnly); ok && len(w) > 0 && !d.nestedOK(kind, w) {
				return r, off, false
			}
		}
	}
	if kind == "" && body[0] == "interface" {
		if len(body) < 2 {
			return r, off + 1, false
		}
		name, ok := d.canonIf(strings.Join(body[1:], ""))
		if !ok {
			return r, off + 1, false
		}
		body = []string{"interface", name}
	}
	r.body = body
	r.opens = d.opener(kind, body)
	r.single = d.singleKey(kind, body)
	return r, 0, true
}

// nestedOK reports whether a global keyword is also a command inside the block kind.
func (d *dialect) nestedOK(kind, word string) bool {
	for _, w := range d.shared[kind] {
		if w == word {
			return true
		}
	}
	return false
}

// expandWord expands an abbreviation to the unique keyword of words it prefixes.
func expandWord(tok string, words []string) (string, bool) {
	lt := strings.ToLower(tok)
	found := ""
	n := 0
	for _, w := range words {
		if w == lt {
			return w, true
		}
		if strings.HasPrefix(w, lt) {
			found = w
			n++
		}
	}
	return found, n == 1
}

// singleKey returns how many leading words of body form the key of a single-valued setting.
func (d *dialect) singleKey(kind string, body []string) int {
	if len(body) > 0 && body[len(body)-1] == "secondary" {
		return 0
	}
	for _, pat := range d.singles[kind] {
		if len(body) >= len(pat) && hasWords(strings.Join(body, " "), pat) {
			return len(pat)
		}
	}
	return 0
}

// resolvePath returns a pointer to the children list at path, creating missing blocks.
func resolvePath(c *config, path []string) *[]*stanza {
	list := &c.items
	for _, l := range path {
		i := find(*list, l)
		if i < 0 {
			*list = append(*list, &stanza{line: l})
			i = len(*list) - 1
		}
		list = &(*list)[i].children
	}
	return list
}

// apply interprets one configuration line typed in the mode at path.
func (d *dialect) apply(c *config, path []string, line string) applyResult {
	return d.applyRef(c, c, path, line)
}

// applyRef is apply where physical interfaces must exist in ref (nil: any may be created).
func (d *dialect) applyRef(c, ref *config, path []string, line string) applyResult {
	raw := strings.TrimSpace(line)
	res := applyResult{path: path}
	if raw == "" || strings.HasPrefix(raw, "!") {
		return res
	}
	toks := strings.Fields(raw)
	switch strings.ToLower(toks[0]) {
	case "end":
		res.exit = true
		res.path = nil
		return res
	case "exit", "exit-address-family":
		if len(path) == 0 {
			res.exit = true
			return res
		}
		res.path = path[:len(path)-1]
		return res
	}
	firstBad := -1
	for depth := len(path); depth >= 0; depth-- {
		kind := d.kindAt(path[:depth])
		r, bad, ok := d.resolve(kind, toks)
		if !ok {
			if firstBad < 0 || bad > firstBad {
				firstBad = bad
			}
			continue
		}
		parent := resolvePath(c, path[:depth])
		base := append([]string(nil), path[:depth]...)
		if msg := d.check(c, ref, kind, r); msg != "" {
			res.errMsg = msg
			res.badTok = len(toks) - len(r.body) + 1
			return res
		}
		text := strings.Join(r.body, " ")
		if r.opens != "" {
			if r.neg {
				if i := find(*parent, text); i >= 0 {
					*parent = append((*parent)[:i], (*parent)[i+1:]...)
					res.changed = true
				}
				res.path = base
				return res
			}
			if find(*parent, text) < 0 {
				if len(*parent) >= maxBlockLines {
					res.errMsg = "full"
					return res
				}
				insertBlock(parent, &stanza{line: text})
				res.changed = true
			}
			res.path = append(base, text)
			return res
		}
		if !r.neg && len(*parent) >= maxBlockLines {
			res.errMsg = "full"
			return res
		}
		res.changed = d.setLeaf(parent, kind, r)
		res.path = base
		return res
	}
	res.errMsg = "invalid"
	res.badTok = max(firstBad, 0)
	return res
}

// insertBlock appends a block after the last block with the same first word, keeping groups.
func insertBlock(list *[]*stanza, s *stanza) {
	first := strings.Fields(s.line)[0]
	at := -1
	for i, x := range *list {
		if strings.Fields(x.line)[0] == first {
			at = i
		}
	}
	if at < 0 || at == len(*list)-1 {
		*list = append(*list, s)
		return
	}
	*list = append(*list, nil)
	copy((*list)[at+2:], (*list)[at+1:])
	(*list)[at+1] = s
}

// setLeaf applies a leaf line (or its negation) to a children list.
func (d *dialect) setLeaf(list *[]*stanza, kind string, r resolved) bool {
	text := strings.Join(r.body, " ")
	if d.storedNeg(kind, text) {
		// Lines like EOS "no switchport" are shown as such in the running config.
		pos, neg := text, "no "+text
		want, drop := pos, neg
		if r.neg {
			want, drop = neg, pos
		}
		changed := false
		if i := find(*list, drop); i >= 0 {
			*list = append((*list)[:i], (*list)[i+1:]...)
			changed = true
		}
		if (r.neg || d.positiveShown(kind, text)) && find(*list, want) < 0 {
			*list = append(*list, &stanza{line: want})
			changed = true
		}
		return changed
	}
	if r.neg {
		changed := false
		out := (*list)[:0]
		for _, s := range *list {
			if len(s.children) == 0 && (s.line == text || strings.HasPrefix(s.line, text+" ")) {
				changed = true
				continue
			}
			out = append(out, s)
		}
		*list = out
		return changed
	}
	if find(*list, text) >= 0 {
		return false
	}
	if r.single > 0 {
		key := r.body[:r.single]
		for _, s := range *list {
			if hasWords(s.line, key) && d.singleKey(kind, strings.Fields(s.line)) == r.single {
				s.line = text
				return true
			}
		}
	}
	d.insertLeaf(list, kind, &stanza{line: text})
	return true
}

// leafRank orders interface sub-commands the way devices print them.
func leafRank(line string) int {
	f := strings.Fields(line)
	switch f[0] {
	case "description":
		return 0
	case "switchport":
		return 1
	case "no":
		if len(f) > 1 && f[1] == "switchport" {
			return 1
		}
		return 6
	case "vrf", "encapsulation":
		return 2
	case "mtu":
		return 3
	case "ip":
		return 4
	case "ipv6":
		return 5
	case "shutdown":
		return 8
	case "negotiation", "speed", "duplex":
		return 9
	}
	return 6
}

// insertLeaf adds a leaf: interface lines by rank, global lines after their siblings, other
// block lines before the block's nested blocks.
func (d *dialect) insertLeaf(list *[]*stanza, kind string, s *stanza) {
	at := len(*list)
	switch kind {
	default:
		for i, x := range *list {
			if len(x.children) > 0 || d.opener(kind, strings.Fields(x.line)) != "" {
				at = i
				break
			}
		}
	case "interface":
		r := leafRank(s.line)
		for i, x := range *list {
			if leafRank(x.line) > r {
				at = i
				break
			}
		}
	case "":
		f := strings.Fields(s.line)
		best, bestLen := -1, 0
		for i, x := range *list {
			if len(x.children) > 0 {
				continue
			}
			xf := strings.Fields(x.line)
			n := 0
			for n < len(f) && n < len(xf) && n < 2 && f[n] == xf[n] {
				n++
			}
			if n == min(2, len(f)) && n >= bestLen {
				best, bestLen = i, n
			}
		}
		if best >= 0 {
			at = best + 1
		}
	}
	*list = append(*list, nil)
	copy((*list)[at+1:], (*list)[at:])
	(*list)[at] = s
}

// storedNeg reports whether the negated form of text is itself a configuration line.
func (d *dialect) storedNeg(kind, text string) bool {
	for _, n := range d.negLines[kind] {
		if n.text == text {
			return true
		}
	}
	return false
}

// positiveShown reports whether the positive form of a storedNeg line is shown too.
func (d *dialect) positiveShown(kind, text string) bool {
	for _, n := range d.negLines[kind] {
		if n.text == text {
			return n.positiveShown
		}
	}
	return false
}

// check applies semantic checks (interfaces that must exist) and returns an error message.
func (d *dialect) check(c, ref *config, kind string, r resolved) string {
	if kind != "" || r.opens != "interface" || ref == nil {
		return ""
	}
	name := r.body[1]
	exists := find(c.items, "interface "+name) >= 0 || find(ref.items, "interface "+name) >= 0
	if r.neg && !d.creatableIf(name) {
		return "invalid"
	}
	if !r.neg && !exists && !d.creatableIf(name) {
		return "invalid"
	}
	return ""
}

// changedLine records a configuration line that changed the tree while applying text.
type changedLine struct {
	path []string
	line string
}

// applyText interprets configuration text as a configuration file: comments and show
// headers are skipped, indentation closes sub-modes, "end" stops. It returns error lines and
// the lines that changed the tree.
func (d *dialect) applyText(c *config, text string) (errs []string, changed []changedLine) {
	return d.applyTextRef(c, c, text)
}

// applyTextRef is applyText where physical interfaces must exist in ref (nil: any).
func (d *dialect) applyTextRef(c, ref *config, text string) (errs []string, changed []changedLine) {
	var path []string
	iw := len(d.indent)
	for raw := range strings.SplitSeq(strings.ReplaceAll(text, "\r", ""), "\n") {
		trimmed := strings.TrimSpace(raw)
		if trimmed == "" || strings.HasPrefix(trimmed, "!") || isShowHeader(trimmed) {
			continue
		}
		lead := len(raw) - len(strings.TrimLeft(raw, " \t"))
		if lead == 0 && trimmed == "end" {
			break
		}
		if level := lead / iw; level < len(path) {
			path = path[:level]
		}
		r := d.applyRef(c, ref, path, trimmed)
		if r.errMsg != "" {
			errs = append(errs, trimmed)
			continue
		}
		if r.changed {
			changed = append(changed, changedLine{path: append([]string(nil), path...), line: trimmed})
		}
		if r.exit {
			path = nil
			continue
		}
		path = r.path
	}
	return errs, changed
}

func isShowHeader(l string) bool {
	return strings.HasPrefix(l, "Building configuration") ||
		strings.HasPrefix(l, "Current configuration") ||
		(strings.HasPrefix(l, "Using ") && strings.Contains(l, " out of ")) ||
		l == "[OK]"
}

// parseConfig builds a fresh tree from configuration text, keeping physical interfaces of
// keep that the text omits (they cannot disappear from a device).
func (d *dialect) parseConfig(text string, keep *config) (*config, []string) {
	c := &config{}
	errs, _ := d.applyTextRef(c, keep, text)
	if keep != nil {
		for _, s := range keep.items {
			if strings.HasPrefix(s.line, "interface ") && !d.creatableIf(strings.TrimPrefix(s.line, "interface ")) &&
				find(c.items, s.line) < 0 {
				insertBlock(&c.items, &stanza{line: s.line})
			}
		}
	}
	return c, errs
}

// renderBody renders the tree the way the platform prints it, with "end" last.
func (d *dialect) renderBody(c *config) string {
	var b strings.Builder
	prevBlock := false
	for i, s := range c.items {
		isBlock := len(s.children) > 0 || d.opener("", strings.Fields(s.line)) != ""
		if isBlock && i > 0 && !prevBlock {
			b.WriteString("!\n")
		}
		b.WriteString(s.line)
		b.WriteByte('\n')
		d.renderChildren(&b, s.children, 1)
		if isBlock {
			b.WriteString("!\n")
		}
		prevBlock = isBlock
	}
	if !prevBlock {
		b.WriteString("!\n")
	}
	b.WriteString("end\n")
	return b.String()
}

func (d *dialect) renderChildren(b *strings.Builder, list []*stanza, depth int) {
	ind := strings.Repeat(d.indent, depth)
	for _, s := range list {
		if len(s.children) > 0 {
			b.WriteString(ind)
			b.WriteString("!\n")
		}
		b.WriteString(ind)
		b.WriteString(s.line)
		b.WriteByte('\n')
		d.renderChildren(b, s.children, depth+1)
	}
}

// contextualDiff renders IOS "show archive config differences" output: lines of b missing
// from a with "+", lines of a missing from b with "-", context lines for changed blocks.
func (d *dialect) contextualDiff(a, b *config) string {
	var out strings.Builder
	d.diffLists(&out, a.items, b.items, 0)
	if out.Len() == 0 {
		return "!No changes were found\n"
	}
	return "!Contextual Config Diffs:\n" + out.String()
}

func (d *dialect) diffLists(out *strings.Builder, a, b []*stanza, depth int) {
	ind := strings.Repeat(d.indent, depth)
	for _, s := range b {
		i := find(a, s.line)
		if i < 0 {
			writeTree(out, s, depth, "+", d.indent)
			continue
		}
		var sub strings.Builder
		d.diffLists(&sub, a[i].children, s.children, depth+1)
		if sub.Len() > 0 {
			out.WriteString(ind + s.line + "\n" + sub.String())
		}
	}
	for _, s := range a {
		if find(b, s.line) < 0 {
			writeTree(out, s, depth, "-", d.indent)
		}
	}
}

func writeTree(out *strings.Builder, s *stanza, depth int, sign, indent string) {
	out.WriteString(strings.Repeat(indent, depth) + sign + s.line + "\n")
	for _, c := range s.children {
		writeTree(out, c, depth+1, sign, indent)
	}
}

// incrementalDiff renders IOS "show archive config incremental-diffs" output for the lines of
// a merge file that would change the running configuration.
func (d *dialect) incrementalDiff(running *config, file string) string {
	work := running.clone()
	_, changed := d.applyText(work, file)
	if len(changed) == 0 {
		return "!List of Commands:\nend\n!No changes were found\n"
	}
	var b strings.Builder
	b.WriteString("!List of Commands:\n")
	var last []string
	for _, cl := range changed {
		common := 0
		for common < len(last) && common < len(cl.path) && last[common] == cl.path[common] {
			common++
		}
		for i := common; i < len(cl.path); i++ {
			b.WriteString(strings.Repeat(d.indent, i) + cl.path[i] + "\n")
		}
		b.WriteString(strings.Repeat(d.indent, len(cl.path)) + cl.line + "\n")
		last = cl.path
		if d.opener(d.kindAt(cl.path), strings.Fields(cl.line)) != "" {
			last = append(append([]string(nil), cl.path...), cl.line)
		}
	}
	b.WriteString("end\n")
	return b.String()
}

// ifaceInfo is what show commands need to know about one interface.
type ifaceInfo struct {
	name        string
	description string
	shutdown    bool
	switchport  bool
	addr        string // dotted IPv4 or ""
	plen        int
	mtu         int
}

// interfaces extracts interface facts from the tree in configuration order.
func (d *dialect) interfaces(c *config) []ifaceInfo {
	var out []ifaceInfo
	for _, s := range c.items {
		name, ok := strings.CutPrefix(s.line, "interface ")
		if !ok {
			continue
		}
		in := ifaceInfo{name: name, mtu: 1500, switchport: d.defaultSwitchport(name)}
		if strings.HasPrefix(name, "Loopback") {
			in.mtu = d.loopbackMTU
		}
		for _, ch := range s.children {
			f := strings.Fields(ch.line)
			switch {
			case f[0] == "description":
				in.description = strings.TrimSpace(strings.TrimPrefix(ch.line, "description"))
			case ch.line == "shutdown":
				in.shutdown = true
			case ch.line == "no switchport":
				in.switchport = false
			case f[0] == "mtu" && len(f) == 2:
				if n, err := strconv.Atoi(f[1]); err == nil {
					in.mtu = n
				}
			case len(f) >= 3 && f[0] == "ip" && f[1] == "address" && in.addr == "":
				in.addr, in.plen = parseAddr(f[2:])
			}
		}
		out = append(out, in)
	}
	slices.SortStableFunc(out, func(a, b ifaceInfo) int { return d.compareIf(a.name, b.name) })
	return out
}

// compareIf orders interface names by type (platform order) then numerically.
func (d *dialect) compareIf(a, b string) int {
	ta, na := d.typeIndex(a)
	tb, nb := d.typeIndex(b)
	if ta != tb {
		return ta - tb
	}
	pa, pb := strings.FieldsFunc(na, isSep), strings.FieldsFunc(nb, isSep)
	for i := 0; i < len(pa) && i < len(pb); i++ {
		x, _ := strconv.Atoi(pa[i])
		y, _ := strconv.Atoi(pb[i])
		if x != y {
			return x - y
		}
	}
	return len(pa) - len(pb)
}

func isSep(r rune) bool { return r == '/' || r == '.' || r == ':' }

func (d *dialect) typeIndex(name string) (int, string) {
	alpha, num := splitIf(name)
	for i, t := range d.ifTypes {
		if t.long == alpha {
			return i, num
		}
	}
	return len(d.ifTypes), num
}

// parseAddr parses "A.B.C.D M.M.M.M" or "A.B.C.D/N".
func parseAddr(f []string) (string, int) {
	if a, n, ok := strings.Cut(f[0], "/"); ok {
		p, err := strconv.Atoi(n)
		if err != nil {
			return "", 0
		}
		return a, p
	}
	if len(f) < 2 {
		return "", 0
	}
	m := ipv4(f[1])
	if m == nil {
		return "", 0
	}
	p := 0
	for _, o := range m {
		for o&0x80 != 0 {
			p++
			o <<= 1
		}
	}
	return f[0], p
}

// ipv4 parses a dotted quad.
func ipv4(s string) []byte {
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return nil
	}
	out := make([]byte, 4)
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 255 {
			return nil
		}
		out[i] = byte(n)
	}
	return out
}

// networkOf returns the network address of addr/plen.
func networkOf(addr string, plen int) string {
	b := ipv4(addr)
	if b == nil {
		return addr
	}
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	if plen > 0 {
		v &= ^uint32(0) << (32 - plen)
	} else {
		v = 0
	}
	return dotted(v)
}

func dotted(v uint32) string {
	return strconv.Itoa(int(v>>24)) + "." + strconv.Itoa(int(v>>16&255)) + "." + strconv.Itoa(int(v>>8&255)) + "." + strconv.Itoa(int(v&255))
}
