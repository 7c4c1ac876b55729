package devsim

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/template"
	"time"
)

// platform bundles a dialect with the exec commands and texts of one device family, as
// platforms/<name>/platform.yaml defines it. It is built once per fleet and shared read-only.
type platform struct {
	name           string
	d              *dialect
	def            *platformDef
	tmpl           *template.Template // the platform folder's *.tmpl files
	exec           []*cmdSpec
	filters        []string
	banner         string
	defaultTermLen int
	maxTermWidth   int
	minTermWidth   int
	noHostname     string
	mgmtPort       string
	nextPort       string
	prevPort       string
	sparePort      string
	errIncomplete  string
	errUnconverted string
	badSecret      string
	// configPrompt names the configuration mode in the prompt ("config-if", ...).
	configPrompt func(s *shell) string
	// configSpecial handles configuration-mode commands that are not configuration lines.
	configSpecial func(s *shell, toks []tok) (string, bool)
	// execInConfig reports whether an exec command may be typed in configuration mode.
	execInConfig func(word string) bool
	// renderBody, when set, renders a configuration tree instead of dialect.renderBody.
	renderBody func(c *config) string
	// loginMode is the mode a login lands in (NX-OS: privileged exec).
	loginMode mode
	// rawExec, when set, handles SSH exec requests that are not CLI commands (NX-OS scp).
	rawExec rawExecFunc
}

// errInvalidAt renders the platform's invalid-input error for the word at byte offset off.
func (p *platform) errInvalidAt(s *shell, line string, off int) string {
	if !p.def.InvalidCaret {
		return p.errText("invalid")
	}
	col := len(s.prompt()) + min(max(off, 0), len(line))
	return strings.Repeat(" ", col) + "^\n" + p.errText("invalid")
}

// errInvalid renders the invalid-input error for token index tokIdx of line.
func (p *platform) errInvalid(s *shell, line string, tokIdx int) string {
	toks := tokenize(line)
	off := 0
	if tokIdx < len(toks) {
		off = toks[tokIdx].off
	} else if len(toks) > 0 {
		off = len(line)
	}
	return p.errInvalidAt(s, line, off)
}

func (p *platform) errAmbiguous(line string) string {
	return p.errText("ambiguous", "line", strings.TrimSpace(line))
}

// configFile renders a configuration tree as the device writes it to a file.
func (p *platform) configFile(d *Device, c *config, t time.Time) string {
	if p.renderBody != nil {
		return p.configFileHeader(d, t) + p.renderBody(c)
	}
	return p.configFileHeader(d, t) + p.d.renderBody(c)
}

// lastArgOff returns the byte offset of the last word of the current command line.
func (s *shell) lastArgOff() int {
	return s.curToks[len(s.curToks)-1].off
}

// invalidLast reports invalid input at the last word of the current line.
func (s *shell) invalidLast() string {
	return s.p.errInvalidAt(s, s.curLine, s.lastArgOff())
}

// invalidArg reports invalid input at the word equal to arg (the last one if absent).
func (s *shell) invalidArg(arg string) string {
	for _, t := range s.curToks {
		if t.text == arg {
			return s.p.errInvalidAt(s, s.curLine, t.off)
		}
	}
	return s.invalidLast()
}

// ---- commands shared by both platforms ----

func cmdEnable(s *shell, _ []string) string {
	if s.mode != modeUser {
		return ""
	}
	secret := s.dev.fleet.opts.Secret
	if secret == "" {
		s.mode = modeEnable
		return ""
	}
	tries := 0
	var ask pendingFunc
	ask = func(s *shell, ans string) string {
		if ans == secret {
			s.mode = modeEnable
			return ""
		}
		tries++
		if tries >= s.p.def.Terminal.EnableTries {
			return s.p.badSecret
		}
		s.pending, s.noEcho = ask, true
		return "Password: "
	}
	s.pending, s.noEcho = ask, true
	return "Password: "
}

func cmdDisable(s *shell, _ []string) string {
	s.mode = modeUser
	return ""
}

func cmdExit(s *shell, _ []string) string {
	s.closed = true
	return ""
}

func cmdTermLength(s *shell, args []string) string {
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 0 || n > s.p.maxTermWidth {
		return s.invalidLast()
	}
	s.termLen = n
	return ""
}

func cmdTermWidth(s *shell, args []string) string {
	n, err := strconv.Atoi(args[0])
	if err != nil || n < s.p.minTermWidth || n > s.p.maxTermWidth {
		return s.invalidLast()
	}
	s.termWidth = n
	return ""
}

func cmdNoop(*shell, []string) string { return "" }

func cmdConfigureTerminal(s *shell, _ []string) string {
	s.mode = modeConfig
	s.path = nil
	s.sess = ""
	return s.p.msg("configure_terminal")
}

func cmdWriteMemory(s *shell, _ []string) string {
	s.dev.mu.Lock()
	st := s.dev.state()
	st.startup = st.running.clone()
	st.startupTime = s.dev.fleet.opts.Now()
	s.dev.mu.Unlock()
	return s.p.msg("write_memory")
}

func cmdShowRunning(s *shell, args []string) string {
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	st := s.dev.state()
	if s.p.feature("sanitized_running") && len(args) > 0 && strings.EqualFold(args[len(args)-1], "sanitized") {
		if rest := args[:len(args)-1]; len(rest) == 0 || (len(rest) == 1 && strings.EqualFold(rest[0], "all")) {
			return eosSanitized(s.p.showRunning(s.dev, st))
		}
	}
	if len(args) == 0 || (len(args) == 1 && strings.EqualFold(args[0], "all")) {
		return s.p.showRunning(s.dev, st)
	}
	if _, ok := expandWord(args[0], []string{"interface", "interfaces"}); ok && len(args) >= 2 {
		name, ok := s.p.d.canonIf(strings.Join(args[1:], ""))
		blk, found := st.running.block("interface " + name)
		if !ok || !found {
			// The prompt in the error takes d.mu: release it first (it deadlocked before).
			s.dev.mu.Unlock()
			defer s.dev.mu.Lock()
			return s.invalidLast()
		}
		var b strings.Builder
		b.WriteString(blk.line + "\n")
		s.p.d.renderChildren(&b, blk.children, 1)
		if s.p.feature("config_preamble") {
			body := "!\n" + b.String() + "end\n"
			return "Building configuration...\n\nCurrent configuration : " + strconv.Itoa(len(body)) + " bytes\n" + body
		}
		return b.String()
	}
	s.dev.mu.Unlock() // the prompt in the error takes d.mu
	defer s.dev.mu.Lock()
	return s.invalidArg(args[0])
}

var (
	eosSanCommunity = regexp.MustCompile(`(?m)^(snmp-server community) \S+`)
	eosSanSecret    = regexp.MustCompile(`(?m)((?:secret|password|key)(?: sha512| \d+)?) \S+`)
)

// eosSanitized is EOS's "show running-config sanitized": community
// strings, secrets, passwords and keys replaced by <removed>.
func eosSanitized(text string) string {
	text = eosSanCommunity.ReplaceAllString(text, "${1} <removed>")
	return eosSanSecret.ReplaceAllString(text, "${1} <removed>")
}

// showRunning renders "show running-config". d.mu must be held.
func (p *platform) showRunning(d *Device, st *devState) string {
	file := p.configFile(d, st.running, st.lastChange)
	if !p.feature("config_preamble") {
		return file
	}
	return "Building configuration...\n\nCurrent configuration : " + strconv.Itoa(len(file)) + " bytes\n" + file
}

func cmdShowStartup(s *shell, _ []string) string {
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	st := s.dev.state()
	file := s.p.configFile(s.dev, st.startup, st.startupTime)
	if !s.p.feature("config_preamble") {
		return file
	}
	return "Using " + strconv.Itoa(len(file)) + " out of 33554432 bytes\n" + file
}

// ---- locations and files ----

type locKind int

const (
	locBad locKind = iota
	locRunning
	locStartup
	locFile
	locNull
	locClean
)

// parseLoc parses a copy/replace/diff argument.
func (p *platform) parseLoc(arg string) (locKind, string) {
	a := strings.ToLower(arg)
	switch a {
	case "running-config", "system:running-config", "system:/running-config":
		return locRunning, ""
	case "startup-config", "nvram:startup-config", "nvram:/startup-config":
		return locStartup, ""
	case "null:":
		return locNull, ""
	}
	if p.feature("clean_config") && a == "clean-config" {
		return locClean, ""
	}
	if w, ok := expandWord(a, []string{"running-config", "startup-config"}); ok && len(a) >= 3 {
		if w == "running-config" {
			return locRunning, ""
		}
		return locStartup, ""
	}
	if name, ok := p.flashName(arg); ok {
		return locFile, name
	}
	return locBad, ""
}

// flashName returns the file name of a flash path ("flash:x", "flash:/x", "bootflash:x").
func (p *platform) flashName(arg string) (string, bool) {
	fs, name, ok := strings.Cut(arg, ":")
	if !ok {
		return "", false
	}
	fs = strings.ToLower(fs)
	if !slices.Contains(p.def.Filesystems, fs) {
		return "", false
	}
	name = strings.TrimPrefix(name, "/")
	if name == "" || len(name) > 80 || strings.ContainsAny(name, "/\\ \t\"") {
		return "", false
	}
	return name, true
}

// locText returns the configuration text of a location. d.mu must be held.
func (s *shell) locText(k locKind, name string) (string, bool) {
	st := s.dev.state()
	switch k {
	case locRunning:
		return s.p.configFile(s.dev, st.running, st.lastChange), true
	case locStartup:
		return s.p.configFile(s.dev, st.startup, st.startupTime), true
	case locFile:
		f, ok := st.files[name]
		return f.data, ok
	case locNull, locClean:
		return "", true
	}
	return "", false
}

func (p *platform) errNoFile(path string) string {
	return p.errText("no_file", "path", path)
}

// writeFile stores a flash file; display is the path to show in errors ("" for flash:NAME).
func (s *shell) writeFile(name, data, display string) string {
	if display == "" {
		display = "flash:" + name
	}
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	st := s.dev.state()
	if _, exists := st.files[name]; (!exists && len(st.files) >= maxFiles) || len(data) > maxFileSize {
		return s.p.errText("no_space", "path", display)
	}
	st.files[name] = flashFile{data: data, mtime: s.dev.fleet.opts.Now()}
	return ""
}

// filePromptMode returns the IOS "file prompt" setting: alert, noisy or quiet. d.mu held.
func (s *shell) filePromptMode() string {
	if l := s.dev.state().running.top("file", "prompt"); l != "" {
		return strings.Fields(l)[2]
	}
	return "alert"
}

func bytesCopied(n int) string {
	return fmt.Sprintf("%d bytes copied in 0.012 secs (%d bytes/sec)", n, n*1000/12)
}

// doCopy performs a copy once all questions are answered.
func (s *shell) doCopy(sk locKind, sn string, dk locKind, dn string) string {
	s.dev.mu.Lock()
	text, ok := s.locText(sk, sn)
	if !ok {
		s.dev.mu.Unlock()
		return s.p.errNoFile("flash:" + sn)
	}
	st := s.dev.state()
	switch dk {
	case locRunning:
		errs, changed := s.p.d.applyText(st.running, text)
		if len(changed) > 0 {
			s.dev.touch(s.user)
		}
		s.dev.mu.Unlock()
		var b strings.Builder
		for _, e := range errs {
			b.WriteString(s.p.errText("copy_line", "line", e))
		}
		if done := s.p.msg("copy_done"); done != "" {
			if len(errs) == 0 {
				b.WriteString(done)
			}
			return b.String()
		}
		return b.String() + bytesCopied(len(text))
	case locStartup:
		if sk == locRunning {
			st.startup = st.running.clone()
		} else {
			st.startup, _ = s.p.d.parseConfig(text, st.running)
		}
		st.startupTime = s.dev.fleet.opts.Now()
		s.dev.mu.Unlock()
		if done := s.p.msg("copy_done"); done != "" {
			return done
		}
		if sk == locRunning {
			return "Building configuration...\n[OK]"
		}
		return "[OK]"
	case locFile:
		s.dev.mu.Unlock()
		if msg := s.writeFile(dn, text, ""); msg != "" {
			return msg
		}
		if done := s.p.msg("copy_done"); done != "" {
			return done
		}
		return bytesCopied(len(text))
	case locNull:
		s.dev.mu.Unlock()
		return ""
	}
	s.dev.mu.Unlock()
	return ""
}

func cmdCopy(s *shell, args []string) string {
	sk, sn := s.p.parseLoc(args[0])
	if sk == locBad || sk == locClean {
		return s.invalidArg(args[0])
	}
	dk, dn := s.p.parseLoc(args[1])
	if dk == locBad || dk == locClean || (dk == locNull && sk != locNull) {
		return s.invalidLast()
	}
	s.dev.mu.Lock()
	_, exists := s.locText(sk, sn)
	mode := s.filePromptMode()
	s.dev.mu.Unlock()
	if !exists {
		return s.p.errNoFile(args[0])
	}
	if !s.p.feature("file_prompts") || mode == "quiet" {
		return s.doCopy(sk, sn, dk, dn)
	}
	dstName := dn
	switch dk {
	case locRunning:
		dstName = "running-config"
	case locStartup:
		dstName = "startup-config"
	}
	askDst := func(*shell, string) string {
		s.pending = func(*shell, string) string { return s.doCopy(sk, sn, dk, dn) }
		return "Destination filename [" + dstName + "]? "
	}
	if mode == "noisy" {
		srcName := sn
		if sk != locFile {
			srcName = strings.ToLower(args[0])
		}
		s.pending = askDst
		return "Source filename [" + srcName + "]? "
	}
	return askDst(s, "")
}

func cmdDelete(s *shell, args []string) string {
	force := false
	var path string
	for _, a := range args {
		switch strings.ToLower(a) {
		case "/force":
			force = true
		case "/recursive":
		default:
			path = a
		}
	}
	name, ok := s.p.flashName(path)
	if !ok {
		return s.invalidLast()
	}
	del := func() string {
		s.dev.mu.Lock()
		defer s.dev.mu.Unlock()
		st := s.dev.state()
		if _, ok := st.files[name]; !ok {
			return s.p.errText("delete_missing", "path", path, "name", name)
		}
		delete(st.files, name)
		return ""
	}
	if !s.p.feature("file_prompts") || force {
		return del()
	}
	s.dev.mu.Lock()
	mode := s.filePromptMode()
	s.dev.mu.Unlock()
	confirm := func(*shell, string) string {
		s.pending = func(_ *shell, ans string) string {
			if a := strings.ToLower(strings.TrimSpace(ans)); a != "" && a[0] != 'y' {
				return ""
			}
			return del()
		}
		return "Delete flash:/" + name + "? [confirm]"
	}
	if mode == "quiet" {
		return confirm(s, "")
	}
	s.pending = confirm
	return "Delete filename [" + name + "]? "
}

func cmdMore(s *shell, args []string) string {
	k, n := s.p.parseLoc(args[0])
	if k == locBad || k == locNull || k == locClean {
		return s.invalidLast()
	}
	s.dev.mu.Lock()
	text, ok := s.locText(k, n)
	s.dev.mu.Unlock()
	if !ok {
		return s.p.errNoFile(args[0])
	}
	return text
}

const (
	flashTotal = 7897796608
	flashUsed  = 1610866688
)

// dirView is the data of a platform's dir.tmpl.
type dirView struct {
	Only        string
	Files       []fileView
	Total, Free int
}

// fileView is one flash file.
type fileView struct {
	Name  string
	Size  int
	MTime time.Time
}

func cmdDir(s *shell, args []string) string {
	only := ""
	if len(args) > 0 {
		a := args[0]
		if slices.Contains(s.p.def.Filesystems, strings.ToLower(strings.TrimSuffix(strings.TrimSuffix(a, "/"), ":"))) {
			only = ""
		} else if name, ok := s.p.flashName(a); ok {
			only = name
		} else {
			return s.invalidLast()
		}
	}
	s.dev.mu.Lock()
	st := s.dev.state()
	names := make([]string, 0, len(st.files))
	used := 0
	for n, f := range st.files {
		names = append(names, n)
		used += len(f.data)
	}
	sort.Strings(names)
	if only != "" {
		if _, ok := st.files[only]; !ok {
			s.dev.mu.Unlock()
			return s.p.errText("dir_missing", "name", only)
		}
		names = []string{only}
	}
	v := dirView{Only: only, Total: flashTotal, Free: flashTotal - flashUsed - used}
	for _, n := range names {
		v.Files = append(v.Files, fileView{Name: n, Size: len(st.files[n].data), MTime: st.files[n].mtime})
	}
	s.dev.mu.Unlock()
	return s.renderData("dir.tmpl", args, v)
}

// ---- derived operational data ----

// operUp reports whether an interface is operationally up (assuming it is not shut down).
func (s *shell) operUp(name string) bool {
	p := s.p
	f := s.dev.fleet
	if !p.d.hasMAC(name) && !strings.HasPrefix(name, "Port-") {
		return true // loopbacks, tunnels
	}
	base, _, _ := strings.Cut(name, ".")
	if base == p.mgmtPort {
		return true
	}
	if p.d.creatableIf(base) {
		return !strings.HasPrefix(base, "Port-")
	}
	for _, n := range f.neighbors(s.dev.index) {
		if n.localPort == base {
			return true
		}
	}
	return base == p.def.Interfaces.HostPort // a host is cabled to it
}

// ifState returns (admin enabled, oper up) for an interface.
func (s *shell) ifState(in ifaceInfo) (bool, bool) {
	if in.shutdown {
		return false, false
	}
	return true, s.operUp(in.name)
}

// arpEntry is one ARP table row.
type arpEntry struct {
	ip, mac, iface string
	own            bool
	age            int // seconds
}

// arpTable derives the ARP table from interfaces and neighbors. d.mu must be held.
func (s *shell) arpTable() []arpEntry {
	f := s.dev.fleet
	ifs := s.p.d.interfaces(s.dev.state().running)
	var out []arpEntry
	for _, in := range ifs {
		admin, up := s.ifState(in)
		if !admin || !up || in.addr == "" || !s.p.d.hasMAC(in.name) {
			continue
		}
		out = append(out, arpEntry{ip: in.addr, mac: f.macOf(s.dev.index, portNumber(in.name)), iface: in.name, own: true})
		if in.name == s.p.mgmtPort && networkOf(mgmtGateway, in.plen) == networkOf(in.addr, in.plen) {
			out = append(out, arpEntry{ip: mgmtGateway, mac: f.macOf(0xffff, 0xfe), iface: in.name, age: 70})
		}
		for _, n := range f.neighbors(s.dev.index) {
			if n.localPort == in.name && networkOf(n.remoteIP, in.plen) == networkOf(in.addr, in.plen) && n.remoteIP != in.addr {
				out = append(out, arpEntry{ip: n.remoteIP, mac: f.macOf(n.index, portNumber(n.remotePort)), iface: in.name, age: 42 + n.index%60})
			}
		}
	}
	slices.SortFunc(out, func(a, b arpEntry) int { return ipCompare(a.ip, b.ip) })
	return out
}

func ipCompare(a, b string) int {
	x, y := ipv4(a), ipv4(b)
	for i := range 4 {
		if x == nil || y == nil {
			return strings.Compare(a, b)
		}
		if x[i] != y[i] {
			return int(x[i]) - int(y[i])
		}
	}
	return 0
}

// lldpEntry is one LLDP neighbor.
type lldpEntry struct {
	local, remote, system, chassis, mgmt, remoteDescr string
	remoteIndex                                       int
}

// lldpTable lists LLDP neighbors on interfaces that are not shut down. d.mu must be held.
func (s *shell) lldpTable() []lldpEntry {
	f := s.dev.fleet
	ifs := s.p.d.interfaces(s.dev.state().running)
	shut := map[string]bool{}
	for _, in := range ifs {
		shut[in.name] = in.shutdown
	}
	var out []lldpEntry
	for _, n := range f.neighbors(s.dev.index) {
		if shut[n.localPort] {
			continue
		}
		out = append(out, lldpEntry{local: n.localPort, remote: n.remotePort, system: f.hostnameOf(n.index),
			chassis: f.macOf(n.index, 0), mgmt: mgmtIP(n.index), remoteIndex: n.index,
			remoteDescr: "to " + f.hostnameOf(s.dev.index) + " " + n.localPort})
	}
	slices.SortFunc(out, func(a, b lldpEntry) int { return portNumber(a.local) - portNumber(b.local) })
	return out
}

// ntpPeer is one configured NTP server.
type ntpPeer struct {
	addr   string
	synced bool
}

// ntpPeers lists configured NTP servers; the management gateway answers. d.mu must be held.
func (s *shell) ntpPeers() []ntpPeer {
	var out []ntpPeer
	for _, st := range s.dev.state().running.items {
		f := strings.Fields(st.line)
		if len(f) >= 3 && f[0] == "ntp" && f[1] == "server" {
			addr := f[2]
			if addr == "vrf" && len(f) >= 5 {
				addr = f[4]
			}
			out = append(out, ntpPeer{addr: addr, synced: addr == mgmtGateway})
		}
	}
	return out
}

// bgpPeer is one configured BGP neighbor.
type bgpPeer struct {
	addr, asn   string
	established bool
	rcvd, sent  int
	remoteID    string // the peer's router id (its loopback), "" when unknown
	descr       string // "neighbor ADDR description TEXT"
}

// runningIfs returns the interfaces of the running configuration and the
// one args name in only ("" without args); ok is false when args name no
// interface (the show commands answer invalidArg(args[0]) then).
func (s *shell) runningIfs(args []string) (ifs []ifaceInfo, only string, ok bool) {
	s.dev.mu.Lock()
	ifs = s.p.d.interfaces(s.dev.state().running)
	s.dev.mu.Unlock()
	if len(args) == 0 {
		return ifs, "", true
	}
	only, ok = s.p.d.canonIf(strings.Join(args, ""))
	return ifs, only, ok
}

// bgpProcess finds "router bgp ASN" in the running configuration: its
// block (nil without one), the AS, the default router id (the device's
// loopback) and which interfaces are up by ifState. d.mu must be held.
func (s *shell) bgpProcess(ifState func(ifaceInfo) (bool, bool)) (blk *stanza, asn, rid string, up map[string]bool) {
	run := s.dev.state().running
	for _, st := range run.items {
		if strings.HasPrefix(st.line, "router bgp ") {
			blk = st
			break
		}
	}
	if blk == nil {
		return nil, "", "", nil
	}
	up = map[string]bool{}
	for _, in := range s.p.d.interfaces(run) {
		a, o := ifState(in)
		up[in.name] = a && o
	}
	return blk, strings.Fields(blk.line)[2], loopbackIP(s.dev.index), up
}

// bgpState returns the local AS, router id and peers, ok false without "router bgp".
func (s *shell) bgpState() (asn, rid string, peers []bgpPeer, ok bool) {
	f := s.dev.fleet
	blk, asn, rid, up := s.bgpProcess(s.ifState)
	if blk == nil {
		return "", "", nil, false
	}
	for _, ch := range blk.children {
		w := strings.Fields(ch.line)
		switch {
		case len(w) == 3 && (w[0] == "router-id" || (w[0] == "bgp" && w[1] == "router-id")):
			rid = w[len(w)-1]
		case (len(w) == 4 && w[0] == "neighbor" && w[2] == "remote-as") || (len(w) == 2 && w[0] == "neighbor"):
			if len(w) == 2 { // NX-OS and IOS XR: a "neighbor ADDR" block with "remote-as N" inside
				for _, c := range ch.children {
					if f := strings.Fields(c.line); len(f) == 2 && f[0] == "remote-as" {
						w = append(w, "remote-as", f[1])
					}
				}
				if len(w) != 4 {
					continue
				}
			}
			p := bgpPeer{addr: w[1], asn: w[3]}
			for _, n := range f.neighbors(s.dev.index) {
				if n.remoteIP == p.addr && up[n.localPort] && asnOf(n.index) == p.asn {
					p.established = true
					p.rcvd, p.sent = 1000+n.index%500, 990+n.index%500
					p.remoteID = loopbackIP(n.index)
				}
			}
			peers = append(peers, p)
		}
	}
	for _, ch := range blk.children {
		w := strings.Fields(ch.line)
		if len(w) >= 4 && w[0] == "neighbor" && w[2] == "description" {
			for i := range peers {
				if peers[i].addr == w[1] {
					peers[i].descr = strings.Join(w[3:], " ")
				}
			}
		}
	}
	return asn, rid, peers, true
}

// staticRoutes returns (prefix, plen, next hop) for each static route. d.mu must be held.
func (s *shell) staticRoutes() [][3]string {
	var out [][3]string
	for _, st := range s.dev.state().running.items {
		f := strings.Fields(st.line)
		if len(f) < 4 || f[0] != "ip" || f[1] != "route" {
			continue
		}
		if a, l, ok := strings.Cut(f[2], "/"); ok {
			out = append(out, [3]string{a, l, f[3]})
		} else if len(f) >= 5 {
			_, plen := parseAddr(f[2:4])
			out = append(out, [3]string{f[2], strconv.Itoa(plen), f[4]})
		}
	}
	return out
}

// uptimeSince formats a BGP-style up/down time: hh:mm:ss below a day, then 1d02h, then 1w2d.
func uptimeSince(d time.Duration) string {
	switch {
	case d < 24*time.Hour:
		sec := int(d / time.Second)
		return fmt.Sprintf("%02d:%02d:%02d", sec/3600, sec/60%60, sec%60)
	case d < 7*24*time.Hour:
		h := int(d / time.Hour)
		return fmt.Sprintf("%dd%02dh", h/24, h%24)
	default:
		dd := int(d / (24 * time.Hour))
		return fmt.Sprintf("%dw%dd", dd/7, dd%7)
	}
}

// counters returns deterministic packet/byte counters for an interface.
// liveCounters is counters for an interface that is up (admin and
// operational), zeros otherwise.
func (s *shell) liveCounters(name string, up bool) (inPk, inB, outPk, outB int) {
	if !up {
		return 0, 0, 0, 0
	}
	return s.counters(name)
}

func (s *shell) counters(name string) (inPk, inB, outPk, outB int) {
	k := s.dev.index*31 + portNumber(name)*7
	inPk = 100000 + k*13
	outPk = 90000 + k*11
	return inPk, inPk * 180, outPk, outPk * 170
}
