package devsim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// IOS XR's two-stage configuration model.
//
// "configure" (or "configure exclusive", which also takes the device's configuration lock)
// opens a target configuration private to the CLI session. Lines typed in configuration
// mode are checked for syntax at once ("% Invalid input detected at '^' marker.") and
// recorded with their mode path; nothing reaches the running configuration until "commit",
// which replays the recorded lines onto the current running configuration ("commit replace"
// replays them onto an empty one, keeping the physical interfaces). A commit whose result
// fails the semantic checks (malformed IPv4 addresses and netmasks) is refused as a whole
// and explained by "show configuration failed". Every commit gets an id (1000000001, ...)
// and keeps the configuration it replaced, so "rollback configuration last N" and
// "rollback configuration to ID" can restore it; "commit confirmed N" applies the target
// and rolls it back after N seconds unless a plain "commit" (from any configuration
// session, even with an empty target) confirms it first. "end" and "exit" ask
// "Uncommitted changes found, commit them before exiting(yes/no/cancel)? [cancel]:" when
// the target is not empty; "abort" discards it and returns to exec mode.
//
// Deviations from real devices, kept on purpose: "commit confirmed" accepts 1..65535
// seconds (IOS XR requires at least 30) so tests can wait for a revert; the lock of a
// session left with Ctrl-Z is released at its next exec command; a pending trial commit is
// shown as a "Trial:" line of "show configuration commit list detail".

const (
	// xrMaxCommits bounds the commit history (and the configurations it keeps) per device.
	xrMaxCommits = 20
	// xrMaxTargetLines bounds the lines of one target configuration.
	xrMaxTargetLines = 20000
	// xrFirstCommitID is the id of a device's first commit.
	xrFirstCommitID = 1000000001
)

const xrConfigHeader = "Building configuration...\n!! IOS XR Configuration " + xrVersion + "\n"

// xrTarget is the target configuration of one configuration session.
type xrTarget struct {
	exclusive bool
	merged    *config  // running configuration at entry plus the lines typed (mode tracking)
	lines     []xrLine // accepted lines with their mode paths, in order
	size      int      // bytes of lines
}

// xrLine is one recorded configuration line.
type xrLine struct {
	path []string
	line string
}

// reset empties the target after a commit, basing it on running.
func (t *xrTarget) reset(running *config) {
	t.lines, t.size = nil, 0
	t.merged = running.clone()
}

// xrDevice is the IOS XR configuration state of a device: commit history, lock, trial.
type xrDevice struct {
	commits []xrCommitRec // oldest first
	nextID  int
	lock    *xrLock
	trial   *xrTrial
}

// xrLock is the exclusive configuration lock.
type xrLock struct {
	s *shell
	t *xrTarget
}

// xrCommitRec is one entry of the commit history.
type xrCommitRec struct {
	id                           int
	user, client, comment, label string
	at                           time.Time
	before                       *config // running configuration the commit replaced
}

// xrTrial is a commit confirmed waiting for its confirmation.
type xrTrial struct {
	id       int
	before   *config
	deadline time.Time
	timer    *time.Timer
}

// xrDev returns the device's IOS XR state, allocating it on first use. d.mu must be held.
func (st *devState) xrDev() *xrDevice {
	if st.xr == nil {
		st.xr = &xrDevice{nextID: xrFirstCommitID}
	}
	return st.xr
}

// lockedFor reports whether another live session holds the exclusive lock. d.mu held.
func (xd *xrDevice) lockedFor(s *shell) bool {
	l := xd.lock
	if l == nil || l.s == s {
		return false
	}
	select {
	case <-l.s.done: // the owner's connection is gone
		xd.lock = nil
		return false
	default:
		return true
	}
}

// record appends a commit to the history and returns its id. d.mu held.
func (xd *xrDevice) record(user, client, comment, label string, at time.Time, before *config) int {
	id := xd.nextID
	xd.nextID++
	if len(xd.commits) >= xrMaxCommits {
		xd.commits = slices.Delete(xd.commits, 0, len(xd.commits)-xrMaxCommits+1)
	}
	xd.commits = append(xd.commits, xrCommitRec{id: id, user: user, client: client, comment: comment,
		label: label, at: at, before: before})
	return id
}

// xrSync releases the configuration session of a shell that left configuration mode
// without the IOS XR commands (Ctrl-Z).
func xrSync(s *shell) {
	if s.mode == modeConfig || s.xr == nil || s.xr.cfg == nil {
		return
	}
	xrRelease(s)
}

// xrRelease drops the shell's target configuration and its lock.
func xrRelease(s *shell) {
	s.dev.mu.Lock()
	if xd := s.dev.state().xr; xd != nil && xd.lock != nil && xd.lock.s == s {
		xd.lock = nil
	}
	s.dev.mu.Unlock()
	s.xrs().cfg = nil
}

// xrExit leaves configuration mode, discarding the target configuration.
func xrExit(s *shell) {
	xrRelease(s)
	s.leaveConfig()
}

func xrConfigure(s *shell, exclusive bool) string {
	xrSync(s)
	s.dev.mu.Lock()
	st := s.dev.state()
	xd := st.xrDev()
	if exclusive && xd.lockedFor(s) {
		s.dev.mu.Unlock()
		return "% Failed to lock the configuration: it is locked exclusively by another session\n"
	}
	t := &xrTarget{exclusive: exclusive, merged: st.running.clone()}
	if exclusive {
		xd.lock = &xrLock{s: s, t: t}
	}
	s.dev.mu.Unlock()
	s.xrs().cfg = t
	s.mode = modeConfig
	s.path = nil
	s.sess = ""
	return ""
}

// untokenize rebuilds a command line from its words, at their original offsets.
func untokenize(toks []tok) string {
	if len(toks) == 0 {
		return ""
	}
	last := toks[len(toks)-1]
	b := []byte(strings.Repeat(" ", last.off+len(last.text)))
	for _, t := range toks {
		copy(b[t.off:], t.text)
	}
	return string(b)
}

// isWord reports whether w abbreviates full with at least min letters.
func isWord(w, full string, min int) bool {
	return len(w) >= min && strings.HasPrefix(full, w)
}

// xrConfigLine handles every line typed in IOS XR configuration mode.
func xrConfigLine(s *shell, toks []tok) (string, bool) {
	line := untokenize(toks)
	t := s.xrs().cfg
	if t == nil { // configuration mode without "configure": cannot happen, recover
		s.leaveConfig()
		return "", true
	}
	w0 := strings.ToLower(toks[0].text)
	n := len(toks)
	switch {
	case w0 == "!" && n == 1: // closes a block of pasted configuration
		if len(s.path) > 0 {
			s.path = s.path[:len(s.path)-1]
		}
		return "", true
	case strings.HasPrefix(w0, "!"):
		return "", true
	case n == 1 && w0 == "end":
		return xrLeave(s), true
	case n == 1 && w0 == "exit":
		if len(s.path) == 0 {
			return xrLeave(s), true
		}
		s.path = s.path[:len(s.path)-1]
		return "", true
	case n == 1 && w0 == "root":
		s.path = nil
		return "", true
	case n == 1 && w0 == "abort":
		xrExit(s)
		return "", true
	case n == 1 && w0 == "clear":
		s.dev.mu.Lock()
		t.reset(s.dev.state().running)
		s.dev.mu.Unlock()
		return "", true
	case isWord(w0, "commit", 4):
		return xrCommitCmd(s, line, toks[1:]), true
	case isWord(w0, "show", 3):
		out, _ := s.execLine(line)
		return out, true
	}
	return xrApplyLine(s, line), true
}

// xrSplit returns the number of leading words of body that open a block in mode kind when
// more words follow (IOS XR's one-line hierarchical commands), or 0.
func xrSplit(d *dialect, kind string, body []string) int {
	for k := 1; k < len(body); k++ {
		if d.opener(kind, body[:k]) != "" {
			return k
		}
	}
	return 0
}

// xrApplyLine checks a configuration line against the target and records it.
func xrApplyLine(s *shell, line string) string {
	d := s.p.d
	t := s.xr.cfg
	toks := strings.Fields(line)
	neg := len(toks) > 1 && strings.EqualFold(toks[0], "no")
	start := 0
	if neg {
		start = 1
	}
	body := slices.Clone(toks[start:])
	joinAt := -1 // body index whose word absorbed the next one ("interface GigabitEthernet 0/0/0/5")
	if len(s.path) == 0 {
		if w, ok := expandWord(body[0], d.topWords); ok {
			body[0] = w
		}
		if body[0] == "interface" && len(body) >= 3 && strings.Trim(body[1], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-") == "" &&
			body[2][0] >= '0' && body[2][0] <= '9' {
			body = append([]string{"interface", body[1] + body[2]}, body[3:]...)
			joinAt = 1
		}
	}
	orig := func(bodyIdx int) int { // token index of a body word in the typed line
		i := start + bodyIdx
		if joinAt >= 0 && bodyIdx > joinAt {
			i++
		}
		return min(i, len(toks)-1)
	}
	caret := func(tokIdx int) string {
		offs := tokenize(line)
		off := len(line)
		if tokIdx < len(offs) {
			off = offs[tokIdx].off
		}
		return s.p.errInvalidAt(s, line, off)
	}

	// The error texts need the prompt, which takes d.mu: build them after unlocking.
	badTok, msg := xrApplyLocked(s, t, neg, body, orig)
	switch {
	case msg != "":
		return msg
	case badTok >= 0:
		return caret(badTok)
	}
	return ""
}

// xrApplyLocked applies the (possibly one-line hierarchical) command body to the target. It
// returns the token index of an invalid word (-1 when none) or an error message.
func xrApplyLocked(s *shell, t *xrTarget, neg bool, body []string, orig func(int) int) (int, string) {
	d := s.p.d
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	run := s.dev.state().running
	work := t.merged
	path := s.path
	kind := d.kindAt(path)
	var recs []xrLine
	consumed := 0
	for len(body) > 1 {
		k := xrSplit(d, kind, body)
		if k == 0 {
			break
		}
		if work == t.merged {
			work = t.merged.clone() // a later piece may fail: keep the target intact
		}
		op := strings.Join(body[:k], " ")
		r := d.applyRef(work, run, path, op)
		if r.errMsg == "full" {
			return -1, "% Error: configuration too large (simulator limit)"
		}
		if r.errMsg != "" {
			return orig(consumed + r.badTok), ""
		}
		recs = append(recs, xrLine{path: slices.Clone(path), line: op})
		path = r.path
		kind = d.kindAt(path)
		consumed += k
		body = body[k:]
	}
	final := strings.Join(body, " ")
	if neg {
		final = "no " + final
	}
	r := d.applyRef(work, run, path, final)
	if r.errMsg == "full" {
		return -1, "% Error: configuration too large (simulator limit)"
	}
	if r.errMsg != "" {
		idx := r.badTok
		if neg {
			idx = max(idx-1, 0)
		}
		if neg && r.badTok == 0 {
			return 0, ""
		}
		return orig(consumed + idx), ""
	}
	if r.exit {
		return -1, ""
	}
	recs = append(recs, xrLine{path: slices.Clone(path), line: final})
	size := 0
	for _, x := range recs {
		size += len(x.line)
	}
	if len(t.lines)+len(recs) > xrMaxTargetLines || t.size+size > maxFileSize {
		return -1, "% Error: target configuration too large (simulator limit)"
	}
	t.merged = work
	t.lines = append(t.lines, recs...)
	t.size += size
	if len(recs) == 1 || len(r.path) > len(path) {
		s.path = r.path
	}
	return -1, ""
}

// xrLeave handles "end" and a top-level "exit".
func xrLeave(s *shell) string {
	if len(s.xr.cfg.lines) == 0 {
		xrExit(s)
		return ""
	}
	s.pending = func(s *shell, ans string) string {
		switch strings.ToLower(strings.TrimSpace(ans)) {
		case "yes", "y":
			out, ok := xrDoCommit(s, xrCommitOpts{})
			if ok {
				xrExit(s)
			}
			return out
		case "no", "n":
			xrExit(s)
		}
		return ""
	}
	return "Uncommitted changes found, commit them before exiting(yes/no/cancel)? [cancel]:"
}

// xrCommitOpts are the options of one commit.
type xrCommitOpts struct {
	replace        bool
	confirm        int // seconds, 0 for a plain commit
	comment, label string
}

// xrCommitCmd parses "commit [replace] [confirmed [N | minutes M]] [label L] [comment TEXT]".
func xrCommitCmd(s *shell, line string, args []tok) string {
	var o xrCommitOpts
	bad := func(t tok) string { return s.p.errInvalidAt(s, line, t.off) }
	for i := 0; i < len(args); i++ {
		w := strings.ToLower(args[i].text)
		switch {
		case isWord(w, "replace", 3):
			o.replace = true
		case isWord(w, "confirmed", 4):
			o.confirm = 30
			if i+1 >= len(args) {
				continue
			}
			next := strings.ToLower(args[i+1].text)
			if n, err := strconv.Atoi(next); err == nil {
				if n < 1 || n > 65535 {
					return bad(args[i+1])
				}
				o.confirm = n
				i++
			} else if isWord(next, "minutes", 3) {
				if i+2 >= len(args) {
					return s.p.errIncomplete
				}
				m, err := strconv.Atoi(args[i+2].text)
				if err != nil || m < 1 || m > 1092 {
					return bad(args[i+2])
				}
				o.confirm = 60 * m
				i += 2
			}
		case isWord(w, "comment", 4):
			if i+1 >= len(args) {
				return s.p.errIncomplete
			}
			o.comment = strings.TrimSpace(line[args[i+1].off:])
			i = len(args)
		case isWord(w, "label", 3):
			if i+1 >= len(args) {
				return s.p.errIncomplete
			}
			o.label = args[i+1].text
			i++
		case isWord(w, "best-effort", 4), isWord(w, "force", 3), isWord(w, "show-error", 4):
		default:
			return bad(args[i])
		}
	}
	if o.replace {
		s.pending = func(s *shell, ans string) string {
			if a := strings.ToLower(strings.TrimSpace(ans)); a != "yes" && a != "y" {
				return ""
			}
			out, _ := xrDoCommit(s, o)
			return out
		}
		return "This commit will replace or remove the entire running configuration. This\n" +
			"operation can be service affecting.\nDo you wish to proceed? [no]: "
	}
	out, _ := xrDoCommit(s, o)
	return out
}

const xrCommitFailed = "\n% Failed to commit one or more configuration items during a pseudo-atomic operation. " +
	"All changes made have been reverted. Please issue 'show configuration failed [inheritance]' " +
	"from this session to view the errors\n"

// xrDoCommit commits the shell's target configuration; ok reports success.
func xrDoCommit(s *shell, o xrCommitOpts) (string, bool) {
	d := s.p.d
	t := s.xr.cfg
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	st := s.dev.state()
	xd := st.xrDev()
	if xd.lockedFor(s) {
		return "% Failed to commit: the configuration is locked exclusively by another session\n", false
	}
	var next *config
	if o.replace {
		next = xrReplaceTree(d, st.running, t.lines)
	} else {
		next = xrReplay(d, st.running, t.lines)
	}
	changed := xrRender(d, next) != xrRender(d, st.running)
	if xd.trial != nil {
		if o.confirm > 0 {
			return "% A commit confirmed is already pending: confirm it with 'commit' or wait for its rollback\n", false
		}
		xd.trial.timer.Stop()
		xd.trial = nil
		if !changed {
			t.reset(st.running)
			return "", true
		}
	}
	if !changed {
		t.reset(st.running)
		return "% No configuration changes to commit.\n", true
	}
	if report := xrSemantic(d, next); report != "" {
		s.xr.failed = report
		return xrCommitFailed, false
	}
	s.xr.failed = ""
	now := s.dev.fleet.opts.Now()
	prev := st.running
	id := xd.record(s.user, "CLI", o.comment, o.label, now, prev)
	st.running = next
	s.dev.touch(s.user)
	if o.confirm > 0 {
		tr := &xrTrial{id: id, before: prev, deadline: now.Add(time.Duration(o.confirm) * time.Second)}
		dev := s.dev
		tr.timer = time.AfterFunc(time.Duration(o.confirm)*time.Second, func() { dev.xrTrialExpired(tr) })
		xd.trial = tr
	}
	t.reset(next)
	return "", true
}

// xrTrialExpired rolls a commit confirmed back when nobody confirmed it in time.
func (d *Device) xrTrialExpired(tr *xrTrial) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fleet.ctx.Err() != nil || d.st == nil || d.st.xr == nil || d.st.xr.trial != tr {
		return
	}
	st := d.st
	st.xr.trial = nil
	st.xr.record("system", "Rollback", "automatic rollback of commit confirmed "+strconv.Itoa(tr.id), "",
		d.fleet.opts.Now(), st.running)
	st.running = tr.before.clone()
	d.touch("system")
}

// xrReplay applies recorded lines to a copy of base.
func xrReplay(d *dialect, base *config, lines []xrLine) *config {
	c := base.clone()
	for _, l := range lines {
		d.applyRef(c, base, l.path, l.line)
	}
	xrSortIfs(d, c)
	return c
}

// xrSortIfs orders the interface blocks the way IOS XR prints them (by type, then number);
// new blocks are appended after the last interface by insertBlock.
func xrSortIfs(d *dialect, c *config) {
	lo, hi := -1, -1
	for i, s := range c.items {
		if strings.HasPrefix(s.line, "interface ") {
			if lo < 0 {
				lo = i
			}
			hi = i + 1
		}
	}
	if lo < 0 {
		return
	}
	slices.SortStableFunc(c.items[lo:hi], func(a, b *stanza) int {
		ai, aok := strings.CutPrefix(a.line, "interface ")
		bi, bok := strings.CutPrefix(b.line, "interface ")
		if !aok || !bok {
			return 0
		}
		return d.compareIf(ai, bi)
	})
}

// xrReplaceTree applies recorded lines to an empty configuration, keeping the physical
// interfaces of running (they cannot disappear from a router).
func xrReplaceTree(d *dialect, running *config, lines []xrLine) *config {
	c := &config{}
	for _, l := range lines {
		d.applyRef(c, running, l.path, l.line)
	}
	for _, s := range running.items {
		if strings.HasPrefix(s.line, "interface ") && !d.creatableIf(strings.TrimPrefix(s.line, "interface ")) &&
			find(c.items, s.line) < 0 {
			insertBlock(&c.items, &stanza{line: s.line})
		}
	}
	xrSortIfs(d, c)
	return c
}

// xrTargetTree renders the target configuration as "show configuration" shows it: the
// lines typed, grouped by mode, "no" lines included.
func xrTargetTree(d *dialect, lines []xrLine) *config {
	c := &config{}
	for _, l := range lines {
		if strings.HasPrefix(l.line, "no ") {
			list := resolvePath(c, l.path)
			if find(*list, l.line) < 0 {
				*list = append(*list, &stanza{line: l.line})
			}
			continue
		}
		d.applyRef(c, nil, l.path, l.line)
	}
	xrSortIfs(d, c)
	return c
}

// xrSemantic checks a configuration about to be committed and returns the "show
// configuration failed" report, "" when it is fine.
func xrSemantic(d *dialect, c *config) string {
	var b strings.Builder
	for _, it := range c.items {
		if !strings.HasPrefix(it.line, "interface ") {
			continue
		}
		for _, ch := range it.children {
			f := strings.Fields(ch.line)
			if len(f) < 3 || f[0] != "ipv4" || f[1] != "address" {
				continue
			}
			if msg := xrCheckAddr(f[2:]); msg != "" {
				fmt.Fprintf(&b, "%s\n %s\n!!%% %s\n!\n", it.line, ch.line, msg)
			}
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "!! SEMANTIC ERRORS: This configuration was rejected by \n!! the system due to semantic errors. The individual \n" +
		"!! errors with each failed configuration command can be \n!! found below.\n\n\n" + b.String() + "end\n"
}

// xrCheckAddr validates the arguments of "ipv4 address".
func xrCheckAddr(f []string) string {
	a, plen, hasLen := strings.Cut(f[0], "/")
	if ipv4(a) == nil {
		return "Invalid argument or parameter: '" + a + "' is not a valid IPv4 address"
	}
	if hasLen {
		if n, err := strconv.Atoi(plen); err != nil || n < 0 || n > 32 {
			return "Invalid argument or parameter: prefix length '" + plen + "' is out of range"
		}
		return ""
	}
	if len(f) < 2 {
		return "Incomplete command: a netmask or prefix length is required"
	}
	m := ipv4(f[1])
	if m == nil {
		return "Invalid argument or parameter: '" + f[1] + "' is not a valid netmask"
	}
	v := uint32(m[0])<<24 | uint32(m[1])<<16 | uint32(m[2])<<8 | uint32(m[3])
	if v != 0 && (^v)&((^v)+1) != 0 {
		return "Invalid argument or parameter: netmask " + f[1] + " is not contiguous"
	}
	return ""
}

// ---- rendering ----

// xrRender renders a configuration the IOS XR way: every block closed by "!" at its own
// indentation, "end" last.
func xrRender(d *dialect, c *config) string {
	var b strings.Builder
	xrRenderList(&b, d, "", c.items, 0)
	b.WriteString("end\n")
	return b.String()
}

func xrRenderList(b *strings.Builder, d *dialect, kind string, list []*stanza, depth int) {
	ind := strings.Repeat(d.indent, depth)
	for _, s := range list {
		b.WriteString(ind)
		b.WriteString(s.line)
		b.WriteByte('\n')
		if k, block := xrBlockKind(d, kind, s); block {
			xrRenderList(b, d, k, s.children, depth+1)
			b.WriteString(ind + "!\n")
		}
	}
}

// xrBlockKind returns the mode a stanza opens and whether it is a block.
func xrBlockKind(d *dialect, kind string, s *stanza) (string, bool) {
	k := d.opener(kind, strings.Fields(s.line))
	if k == "" && len(s.children) > 0 {
		k = "generic"
	}
	return k, k != ""
}

// xrTreeDiff writes "show commit changes diff" lines: "+  " added, "-  " removed, "   "
// context (the blocks that contain changes and their closing "!").
func xrTreeDiff(b *strings.Builder, d *dialect, kind string, a, c []*stanza, depth int) int {
	ind := strings.Repeat(d.indent, depth)
	n := 0
	for _, s := range c {
		i := find(a, s.line)
		if i < 0 {
			n += xrWriteTree(b, d, kind, s, depth, "+  ")
			continue
		}
		k, block := xrBlockKind(d, kind, s)
		if !block && len(a[i].children) == 0 {
			continue
		}
		var sub strings.Builder
		if m := xrTreeDiff(&sub, d, k, a[i].children, s.children, depth+1); m > 0 {
			n += m
			b.WriteString("   " + ind + s.line + "\n" + sub.String() + "   " + ind + "!\n")
		}
	}
	for _, s := range a {
		if find(c, s.line) < 0 {
			n += xrWriteTree(b, d, kind, s, depth, "-  ")
		}
	}
	return n
}

func xrWriteTree(b *strings.Builder, d *dialect, kind string, s *stanza, depth int, mark string) int {
	ind := strings.Repeat(d.indent, depth)
	b.WriteString(mark + ind + s.line + "\n")
	n := 1
	if k, block := xrBlockKind(d, kind, s); block {
		for _, ch := range s.children {
			n += xrWriteTree(b, d, k, ch, depth+1, mark)
		}
		b.WriteString("   " + ind + "!\n")
	}
	return n
}

// ---- show and rollback commands ----

func xrShowRunning(s *shell, args []string) string {
	d := s.p.d
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	st := s.dev.state()
	if len(args) == 0 {
		return "Building configuration...\n" + s.p.configFile(s.dev, st.running, st.lastChange)
	}
	w0, ok := expandWord(args[0], d.topWords)
	if !ok {
		return "% No such configuration item(s)\n\n"
	}
	var match []*stanza
	if w0 == "interface" && len(args) >= 2 {
		name, ok := d.canonIf(strings.Join(args[1:], ""))
		if blk, found := st.running.block("interface " + name); ok && found {
			match = append(match, blk)
		}
	} else {
		want := append([]string{w0}, args[1:]...)
		for _, it := range st.running.items {
			if hasWords(it.line, want) {
				match = append(match, it)
			}
		}
	}
	if len(match) == 0 {
		return "% No such configuration item(s)\n\n"
	}
	var b strings.Builder
	xrRenderList(&b, d, "", match, 0)
	return b.String()
}

// inConfig reports whether the shell has an open configuration session.
func (s *shell) xrInConfig() bool {
	return s.mode == modeConfig && s.xr != nil && s.xr.cfg != nil
}

func xrShowConfiguration(s *shell, args []string) string {
	d := s.p.d
	if len(args) == 0 {
		if !s.xrInConfig() {
			return s.p.errIncomplete
		}
		return xrConfigHeader + xrRender(d, xrTargetTree(d, s.xr.cfg.lines))
	}
	w, ok := expandWord(args[0], []string{"merge", "failed", "commit"})
	if !ok {
		return s.invalidArg(args[0])
	}
	switch w {
	case "merge":
		if !s.xrInConfig() || len(args) > 1 {
			return s.invalidArg(args[0])
		}
		s.dev.mu.Lock()
		merged := xrReplay(d, s.dev.state().running, s.xr.cfg.lines)
		s.dev.mu.Unlock()
		return xrConfigHeader + xrRender(d, merged)
	case "failed":
		return s.xrs().failed
	}
	if len(args) < 3 {
		if len(args) == 2 {
			if w2, ok := expandWord(args[1], []string{"list"}); ok && w2 == "list" {
				return xrCommitList(s, false)
			}
			return s.invalidArg(args[1])
		}
		return s.p.errIncomplete
	}
	if w2, ok := expandWord(args[1], []string{"list"}); !ok || w2 != "list" {
		return s.invalidArg(args[1])
	}
	if w3, ok := expandWord(args[2], []string{"detail"}); !ok || w3 != "detail" || len(args) > 3 {
		return s.invalidArg(args[2])
	}
	return xrCommitList(s, true)
}

func xrCommitList(s *shell, detail bool) string {
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	xd := s.dev.state().xrDev()
	now := s.dev.fleet.opts.Now()
	stamp := func(t time.Time) string { return t.UTC().Format("Mon Jan _2 15:04:05 2006") }
	var b strings.Builder
	if !detail {
		fmt.Fprintf(&b, "%-4s %-21s %-9s %-20s %-11s %s\n", "SNo.", "Label/ID", "User", "Line", "Client", "Time Stamp")
		fmt.Fprintf(&b, "%-4s %-21s %-9s %-20s %-11s %s\n", "~~~~", "~~~~~~~~", "~~~~", "~~~~", "~~~~~~", "~~~~~~~~~~")
	}
	for i := len(xd.commits) - 1; i >= 0; i-- {
		c := xd.commits[i]
		sno := len(xd.commits) - i
		if !detail {
			id := strconv.Itoa(c.id)
			if c.label != "" {
				id = c.label
			}
			fmt.Fprintf(&b, "%-4d %-21s %-9s %-20s %-11s %s\n", sno, id, c.user, xrTTY, c.client, stamp(c.at))
			continue
		}
		label, comment := c.label, c.comment
		if label == "" {
			label = "NONE"
		}
		if comment == "" {
			comment = "NONE"
		}
		fmt.Fprintf(&b, "\n   %d) CommitId: %-22d Label: %s\n", sno, c.id, label)
		fmt.Fprintf(&b, "      UserId:   %-22s Line:  %s\n", c.user, xrTTY)
		fmt.Fprintf(&b, "      Client:   %-22s Time:  %s\n", c.client, stamp(c.at))
		fmt.Fprintf(&b, "      Comment:  %s\n", comment)
		if xd.trial != nil && xd.trial.id == c.id {
			left := max(int(xd.trial.deadline.Sub(now).Round(time.Second)/time.Second), 0)
			fmt.Fprintf(&b, "      Trial:    pending confirmation, automatic rollback in %d sec\n", left)
		}
	}
	return b.String()
}

func xrShowCommitDiff(s *shell, _ []string) string {
	if !s.xrInConfig() {
		return s.invalidArg("commit")
	}
	d := s.p.d
	s.dev.mu.Lock()
	run := s.dev.state().running
	merged := xrReplay(d, run, s.xr.cfg.lines)
	var b strings.Builder
	b.WriteString(xrConfigHeader)
	xrTreeDiff(&b, d, "", run.items, merged.items, 0)
	s.dev.mu.Unlock()
	b.WriteString("end\n")
	return b.String()
}

func xrRollbackLast(s *shell, args []string) string {
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 1 || n > 100 {
		return s.invalidLast()
	}
	return xrRollback(s, func(xd *xrDevice) (int, string) {
		if n > len(xd.commits) {
			return 0, fmt.Sprintf("%% Cannot roll back %d commit(s): only %d commit(s) can be rolled back\n", n, len(xd.commits))
		}
		return n, ""
	})
}

func xrRollbackTo(s *shell, args []string) string {
	id, err := strconv.Atoi(args[0])
	if err != nil {
		return s.invalidLast()
	}
	return xrRollback(s, func(xd *xrDevice) (int, string) {
		for i, c := range xd.commits {
			if c.id == id {
				if i == len(xd.commits)-1 {
					return 0, "% The configuration is already at commit " + args[0] + "\n"
				}
				return len(xd.commits) - 1 - i, ""
			}
		}
		return 0, "% Commit " + args[0] + " is not in the commit database\n"
	})
}

// xrRollback undoes the last n commits chosen by pick.
func xrRollback(s *shell, pick func(xd *xrDevice) (int, string)) string {
	xrSync(s)
	d := s.p.d
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	st := s.dev.state()
	xd := st.xrDev()
	if xd.lockedFor(s) {
		return "% Failed to roll back: the configuration is locked exclusively by another session\n"
	}
	if xd.trial != nil {
		return "% Cannot roll back while a commit confirmed is pending\n"
	}
	n, msg := pick(xd)
	if msg != "" {
		return msg
	}
	target := xd.commits[len(xd.commits)-n].before.clone()
	var diff strings.Builder
	items := xrTreeDiff(&diff, d, "", st.running.items, target.items, 0)
	xd.record(s.user, "Rollback", "", "", s.dev.fleet.opts.Now(), st.running)
	st.running = target
	s.dev.touch(s.user)
	return fmt.Sprintf("\nLoading Rollback Changes.\nLoaded Rollback Changes in 1 sec \nCommitting.\n"+
		"%d items committed in 1 sec (%d)items/sec\nUpdating.\nUpdated Commit database in 1 sec \n"+
		"Configuration successfully rolled back %d commits.\n", items, items, n)
}
