package devsim

import (
	"io"
	"strings"
	"time"
)

type mode int

const (
	modeUser mode = iota
	modeEnable
	modeConfig
	modeTcl
	modeXML // the IOS XR XML agent (iosxr_xml.go)
)

// pendingFunc answers an interactive question (password, confirmation, file name).
type pendingFunc func(s *shell, answer string) string

// tclWrite is an IOS tclsh "puts [open FILE w+] {...}" waiting for its closing brace.
type tclWrite struct {
	file  string
	depth int
	lines []string
	size  int
}

// shell is one interactive CLI session on a device.
type shell struct {
	dev       *Device
	p         *platform
	user      string
	out       io.Writer
	done      <-chan struct{}
	closeConn func()

	mode mode
	path []string // configuration sub-mode path
	sess string   // EOS configuration session in use

	tcl *tclWrite

	line    []byte
	lastCR  bool
	esc     int
	noEcho  bool
	pending pendingFunc
	more    []string // paged output not yet shown
	closed  bool

	termLen   int
	termWidth int

	curLine string // exec line being run, for error carets
	curToks []tok

	xr *xrShell   // IOS-XR per-session state (target configuration, options), nil elsewhere
	nx *nxosShell // NX-OS per-session state (terminal dont-ask), nil until first needed
}

func newShell(d *Device, user string, out io.Writer, done <-chan struct{}, closeConn func()) *shell {
	s := &shell{dev: d, p: d.fleet.plat, user: user, out: out, done: done, closeConn: closeConn,
		termLen: d.fleet.plat.defaultTermLen, termWidth: 80, mode: d.fleet.plat.loginMode}
	return s
}

// run serves the shell until the user logs out (true) or the input ends (false).
func (s *shell) run(r io.Reader) bool {
	s.write(s.p.banner + s.prompt())
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		if n > 0 && s.feed(buf[:n]) {
			return true
		}
		if err != nil {
			return false
		}
	}
}

// runExec runs one command for an SSH "exec" request in privileged mode.
func (s *shell) runExec(cmd string) {
	s.mode = modeEnable
	s.termLen = 0
	out, faulty := s.execute(cmd)
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	s.closed = true // emit then writes the output without a prompt
	s.pending = nil
	s.emit(out, faulty)
}

func (s *shell) write(text string) {
	if text == "" {
		return
	}
	_, _ = io.WriteString(s.out, strings.ReplaceAll(text, "\n", "\r\n"))
}

// feed consumes client bytes; it returns true when the session ended. A "\n" right after a
// "\r" in the same read completes one CRLF; a "\n" arriving in a later read is a new Enter.
func (s *shell) feed(b []byte) bool {
	defer func() { s.lastCR = false }()
	for _, c := range b {
		if s.closed {
			return true
		}
		if s.more != nil {
			if c == '\n' && s.lastCR {
				s.lastCR = false
				continue
			}
			s.lastCR = c == '\r'
			s.page(c)
			continue
		}
		switch {
		case s.esc == 1:
			s.esc = 0
			if c == '[' || c == 'O' {
				s.esc = 2
			}
			continue
		case s.esc == 2:
			if c >= 0x40 && c <= 0x7e {
				s.esc = 0
			}
			continue
		}
		switch c {
		case '\r':
			s.lastCR = true
			s.enter()
			continue
		case '\n':
			if s.lastCR {
				s.lastCR = false
				continue
			}
			s.enter()
			continue
		}
		s.lastCR = false
		switch c {
		case 0x1b:
			s.esc = 1
		case 0x7f, 0x08:
			if len(s.line) > 0 {
				s.line = s.line[:len(s.line)-1]
				if !s.noEcho {
					s.write("\b \b")
				}
			}
		case 0x03: // Ctrl-C
			s.line = s.line[:0]
			s.pending, s.noEcho = nil, false
			s.write("^C\n" + s.prompt())
		case 0x1a: // Ctrl-Z
			s.line = s.line[:0]
			if s.mode == modeConfig {
				s.write("^Z\n")
				s.leaveConfig()
			} else {
				s.write("\n")
			}
			s.write(s.prompt())
		case 0x15: // Ctrl-U
			s.line = s.line[:0]
		default:
			if c < 0x20 || len(s.line) >= maxLineLen {
				continue
			}
			s.line = append(s.line, c)
			if !s.noEcho {
				s.out.Write([]byte{c}) //nolint:errcheck // the read side notices a dead channel
			}
		}
	}
	return s.closed
}

// enter handles a completed input line.
func (s *shell) enter() {
	line := string(s.line)
	s.line = s.line[:0]
	s.write("\n")
	out, faulty := s.execute(line)
	s.emit(out, faulty)
}

// emit writes command output (paging it if needed) followed by the prompt.
func (s *shell) emit(out string, faulty bool) {
	if out != "" && !strings.HasSuffix(out, "\n") && s.pending == nil {
		out += "\n"
	}
	if faulty && (s.dev.Fault() == FaultHang || s.dev.Fault() == FaultDrop) && len(out) > 1 {
		half := out[:len(out)/2]
		if i := strings.LastIndexByte(half, '\n'); i > 0 {
			half = half[:i+1]
		}
		s.write(half)
		if s.dev.Fault() == FaultDrop {
			s.closeConn()
		} else {
			<-s.done
		}
		s.closed = true
		return
	}
	if s.closed {
		s.write(out)
		return
	}
	if s.pending != nil {
		s.write(out)
		return
	}
	if s.termLen > 0 && out != "" {
		lines := strings.SplitAfter(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) >= s.termLen {
			s.write(strings.Join(lines[:s.termLen-1], ""))
			s.more = lines[s.termLen-1:]
			s.write(" --More-- ")
			return
		}
	}
	s.write(out + s.prompt())
}

const moreErase = "\b\b\b\b\b\b\b\b\b\b          \b\b\b\b\b\b\b\b\b\b"

// page handles a key typed at a --More-- prompt.
func (s *shell) page(c byte) {
	n := 0
	switch c {
	case ' ':
		n = max(s.termLen-1, 1)
	case '\r', '\n':
		n = 1
	default:
		s.more = nil
		s.write(moreErase + "\n" + s.prompt())
		return
	}
	n = min(n, len(s.more))
	s.write(moreErase + strings.Join(s.more[:n], ""))
	s.more = s.more[n:]
	if len(s.more) == 0 {
		s.more = nil
		s.write("\n" + s.prompt())
		return
	}
	s.write(" --More-- ")
}

// prompt returns the current prompt.
func (s *shell) prompt() string {
	s.dev.mu.Lock()
	h := s.p.def.Prompts.Prefix + s.dev.hostname()
	s.dev.mu.Unlock()
	switch s.mode {
	case modeUser:
		return h + s.p.def.Prompts.User
	case modeTcl:
		if s.tcl != nil {
			return "+>"
		}
		return h + "(tcl)#"
	case modeConfig:
		return h + "(" + s.p.configPrompt(s) + ")#"
	case modeXML:
		return "XML> "
	}
	return h + "#"
}

// sleep waits for d or until the connection ends; it reports whether the connection is alive.
func (s *shell) sleep(d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.done:
		return false
	}
}

// execute runs one input line and returns its output and whether it is subject to the
// hang/drop faults.
func (s *shell) execute(line string) (string, bool) {
	if s.pending != nil {
		h := s.pending
		s.pending, s.noEcho = nil, false
		return h(s, line), false
	}
	if s.mode == modeTcl {
		return s.tclLine(line), false
	}
	if s.mode == modeXML {
		if strings.TrimSpace(line) == "" {
			return "", false
		}
		return s.xrXMLLine(line), true
	}
	if strings.TrimSpace(line) == "" {
		return "", false
	}
	if !s.sleep(s.dev.fleet.opts.Latency) {
		s.closed = true
		return "", false
	}
	if s.mode == modeConfig {
		return s.configLine(line)
	}
	return s.execLine(line)
}

// leaveConfig returns from configuration mode to privileged exec.
func (s *shell) leaveConfig() {
	s.mode = modeEnable
	s.path = nil
	s.sess = ""
}

// target returns the configuration tree edited by configuration mode. d.mu must be held.
func (s *shell) target() *config {
	st := s.dev.state()
	if s.sess != "" {
		if c, ok := st.sessions[s.sess]; ok {
			return c
		}
	}
	return st.running
}

// configLine handles a line typed in configuration mode.
func (s *shell) configLine(line string) (string, bool) {
	toks := tokenize(line)
	first := strings.ToLower(toks[0].text)
	if first == "do" && len(toks) > 1 {
		return s.execLine(line[toks[1].off:])
	}
	if out, handled := s.p.configSpecial(s, toks); handled {
		return out, false
	}
	if s.p.execInConfig(first) {
		return s.execLine(line)
	}
	s.dev.mu.Lock()
	if s.sess != "" {
		if _, ok := s.dev.state().sessions[s.sess]; !ok {
			// The session was committed or aborted elsewhere.
			s.dev.mu.Unlock()
			s.leaveConfig()
			return s.p.errInvalid(s, line, 0), false
		}
	}
	tgt := s.target()
	r := s.p.d.applyRef(tgt, s.dev.state().running, s.path, line)
	if r.changed && s.sess == "" {
		s.dev.touch(s.user)
	}
	s.dev.mu.Unlock()
	if r.errMsg == "full" {
		return "% Error: configuration too large (simulator limit)", false
	}
	if r.errMsg != "" {
		return s.p.errInvalid(s, line, r.badTok), false
	}
	if r.exit {
		s.leaveConfig()
		return "", false
	}
	s.path = r.path
	return "", false
}

// execLine dispatches an exec-mode command line (with "| filter" modifiers).
func (s *shell) execLine(line string) (string, bool) {
	cmdPart, filters, hasPipe := strings.Cut(line, "|")
	toks := tokenize(cmdPart)
	if len(toks) == 0 {
		return s.p.errInvalidAt(s, line, 0), false
	}
	s.curLine, s.curToks = line, toks
	priv := s.mode != modeUser
	spec, args, fail, bad := matchCommand(s.p.exec, toks, priv)
	switch fail {
	case failInvalid:
		return s.p.errInvalidAt(s, line, toks[bad].off), false
	case failIncomplete:
		return s.p.errIncomplete, false
	case failAmbiguous:
		return s.p.errAmbiguous(line), false
	}
	if !hasPipe {
		return spec.run(s, args), spec.fault
	}
	chain, ok, asJSON := parseFilters(s.p, filters)
	if !ok {
		return s.p.errInvalidAt(s, line, len(cmdPart)+1), false
	}
	var out string
	if asJSON {
		if spec.json == nil {
			return s.p.errUnconverted, false
		}
		out = spec.json(s, args)
	} else {
		out = spec.run(s, args)
	}
	return applyFilters(chain, out), spec.fault
}

// tok is a word of a command line with its byte offset.
type tok struct {
	text string
	off  int
}

func tokenize(line string) []tok {
	var out []tok
	i := 0
	for i < len(line) {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if i >= len(line) {
			break
		}
		j := i
		for j < len(line) && line[j] != ' ' && line[j] != '\t' {
			j++
		}
		out = append(out, tok{text: line[i:j], off: i})
		i = j
	}
	return out
}

// tclLine handles a line in IOS tclsh: file writes with puts/open, tclquit/exit.
func (s *shell) tclLine(line string) string {
	if w := s.tcl; w != nil {
		d := w.depth + braceDelta(line)
		if d <= 0 {
			// Keep what precedes the closing brace.
			if i := lastUnbalanced(line, w.depth); i >= 0 && strings.TrimSpace(line[:i]) != "" {
				w.lines = append(w.lines, line[:i])
			}
			s.tcl = nil
			if w.size > maxFileSize {
				return "error writing \"" + w.file + "\": no space left on device"
			}
			return s.writeFile(w.file, strings.Join(w.lines, "\n")+"\n", "")
		}
		w.depth = d
		w.size += len(line) + 1
		if w.size <= maxFileSize {
			w.lines = append(w.lines, line)
		}
		return ""
	}
	t := strings.TrimSpace(line)
	switch {
	case t == "":
		return ""
	case t == "tclquit" || t == "exit":
		s.mode = modeEnable
		return ""
	}
	if file, rest, ok := parsePutsOpen(t); ok {
		if name, ok := s.p.flashName(file); ok {
			d := 1 + braceDelta(rest)
			if d <= 0 {
				body := rest
				if i := strings.LastIndexByte(body, '}'); i >= 0 {
					body = body[:i]
				}
				return s.writeFile(name, body+"\n", "")
			}
			w := &tclWrite{file: name, depth: d}
			if strings.TrimSpace(rest) != "" {
				w.lines = append(w.lines, rest)
			}
			s.tcl = w
			return ""
		}
		return "couldn't open \"" + file + "\": no such file or directory"
	}
	word := strings.Fields(t)[0]
	return "invalid command name \"" + word + "\""
}

// parsePutsOpen parses `puts [open "FILE" w+] {REST`.
func parsePutsOpen(t string) (file, rest string, ok bool) {
	after, ok := strings.CutPrefix(t, "puts ")
	if !ok {
		return "", "", false
	}
	after = strings.TrimSpace(after)
	after, ok = strings.CutPrefix(after, "[open ")
	if !ok {
		return "", "", false
	}
	end := strings.IndexByte(after, ']')
	if end < 0 {
		return "", "", false
	}
	args := strings.Fields(after[:end])
	if len(args) != 2 || (args[1] != "w" && args[1] != "w+") {
		return "", "", false
	}
	file = strings.Trim(args[0], `"`)
	rest = strings.TrimSpace(after[end+1:])
	rest, ok = strings.CutPrefix(rest, "{")
	return file, rest, ok
}

func braceDelta(l string) int {
	d := 0
	for i := 0; i < len(l); i++ {
		switch {
		case l[i] == '\\':
			i++
		case l[i] == '{':
			d++
		case l[i] == '}':
			d--
		}
	}
	return d
}

// lastUnbalanced returns the index of the brace that brings depth to zero, or -1.
func lastUnbalanced(l string, depth int) int {
	for i := 0; i < len(l); i++ {
		switch {
		case l[i] == '\\':
			i++
		case l[i] == '{':
			depth++
		case l[i] == '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}
