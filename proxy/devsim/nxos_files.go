package devsim

import (
	"crypto/md5" //nolint:gosec // NX-OS "show file ... md5sum" is MD5 by definition
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// NX-OS bootflash files, checkpoints, rollback and the rollback-patch diff.

const (
	nxosNoFile  = "No such file or directory"
	nxosNoSpace = "No space left on device"
)

// nxosPath parses a bootflash path: "bootflash:NAME", "bootflash:/NAME", "bootflash:///NAME"
// or a bare NAME (relative to bootflash:, the current directory).
func nxosPath(arg string) (string, bool) {
	name := arg
	if fs, rest, ok := strings.Cut(arg, ":"); ok {
		if !strings.EqualFold(fs, "bootflash") {
			return "", false
		}
		name = strings.TrimLeft(rest, "/")
	}
	if name == "" || len(name) > 80 || strings.ContainsAny(name, "/\\ \t\"':;|") {
		return "", false
	}
	return name, true
}

// nxosLoc parses a copy/diff location: running-config, startup-config or a bootflash file.
func nxosLoc(arg string) (locKind, string) {
	a := strings.ToLower(arg)
	switch a {
	case "running-config", "system:running-config":
		return locRunning, ""
	case "startup-config", "nvram:startup-config":
		return locStartup, ""
	}
	if w, ok := expandWord(a, []string{"running-config", "startup-config"}); ok && len(a) >= 3 {
		if w == "running-config" {
			return locRunning, ""
		}
		return locStartup, ""
	}
	if name, ok := nxosPath(arg); ok {
		return locFile, name
	}
	return locBad, ""
}

// nxosPut stores a bootflash file and returns an error message or "". d.mu must be held.
func (s *shell) nxosPut(name, data string) string {
	st := s.dev.state()
	if _, exists := st.files[name]; (!exists && len(st.files) >= maxFiles) || len(data) > maxFileSize {
		return nxosNoSpace
	}
	st.files[name] = flashFile{data: data, mtime: s.dev.fleet.opts.Now()}
	return ""
}

const nxosCopyDone = "[########################################] 100%\nCopy complete, now saving to disk (please wait)...\nCopy complete."

func nxosCopy(s *shell, args []string) string {
	sk, sn := nxosLoc(args[0])
	if sk == locBad {
		return s.invalidArg(args[0])
	}
	dk, dn := nxosLoc(args[1])
	if dk == locBad || (sk == dk && sn == dn) {
		return s.invalidLast()
	}
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	st := s.dev.state()
	text, ok := s.locText(sk, sn)
	if !ok {
		return nxosNoFile
	}
	switch dk {
	case locRunning:
		errs, changed := s.p.d.applyText(st.running, text)
		if len(changed) > 0 {
			s.dev.touch(s.user)
		}
		var b strings.Builder
		for _, e := range errs {
			b.WriteString(e + "\n% Invalid command at '^' marker.\n")
		}
		return b.String() + "Copy complete."
	case locStartup:
		if sk == locRunning {
			st.startup = st.running.clone()
		} else {
			st.startup, _ = s.p.d.parseConfig(text, st.running)
		}
		st.startupTime = s.dev.fleet.opts.Now()
		return nxosCopyDone
	}
	if msg := s.nxosPut(dn, text); msg != "" {
		return msg
	}
	return "Copy complete."
}

func nxosDelete(s *shell, args []string) string {
	var path string
	noPrompt := false
	for _, a := range args {
		if strings.EqualFold(a, "no-prompt") {
			noPrompt = true
			continue
		}
		if path != "" {
			return s.invalidArg(a)
		}
		path = a
	}
	name, ok := nxosPath(path)
	if !ok {
		return s.invalidArg(path)
	}
	s.dev.mu.Lock()
	_, exists := s.dev.state().files[name]
	s.dev.mu.Unlock()
	if !exists {
		return nxosNoFile
	}
	del := func() string {
		s.dev.mu.Lock()
		delete(s.dev.state().files, name)
		s.dev.mu.Unlock()
		return ""
	}
	if noPrompt || s.nxosSess().dontAsk {
		return del()
	}
	s.pending = func(_ *shell, ans string) string {
		switch strings.ToLower(strings.TrimSpace(ans)) {
		case "", "y", "yes":
			return del()
		}
		return ""
	}
	return "Do you want to delete \"/" + name + "\" ? (yes/no/abort)   [y] "
}

const (
	nxosFlashTotal = 4389928960
	nxosFlashUsed  = 1610866688
)

func nxosDir(s *shell, args []string) string {
	only := ""
	if len(args) > 1 {
		return s.invalidArg(args[1])
	}
	if len(args) == 1 {
		a := strings.TrimRight(strings.ToLower(args[0]), "/")
		if a != "bootflash:" {
			name, ok := nxosPath(args[0])
			if !ok {
				return s.invalidArg(args[0])
			}
			only = name
		}
	}
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	st := s.dev.state()
	used := 0
	for _, f := range st.files {
		used += len(f.data)
	}
	names := slices.Sorted(maps.Keys(st.files))
	if only != "" {
		if _, ok := st.files[only]; !ok {
			return nxosNoFile
		}
		names = []string{only}
	}
	var b strings.Builder
	if only == "" {
		fmt.Fprintf(&b, "%12d    %s  %s\n", 4096, nxosMTime(s.dev.fleet.bootTime(s.dev.index)), ".rpmstore/")
	}
	for _, n := range names {
		f := st.files[n]
		fmt.Fprintf(&b, "%12d    %s  %s\n", len(f.data), nxosMTime(f.mtime), n)
	}
	b.WriteString("\nUsage for bootflash://sup-local\n")
	fmt.Fprintf(&b, "%11d bytes used\n%11d bytes free\n%11d bytes total\n",
		nxosFlashUsed+used, nxosFlashTotal-nxosFlashUsed-used, nxosFlashTotal)
	return b.String()
}

func nxosShowFile(s *shell, args []string) string {
	if len(args) > 2 {
		return s.invalidArg(args[2])
	}
	name, ok := nxosPath(args[0])
	if !ok {
		return s.invalidArg(args[0])
	}
	sum := false
	if len(args) == 2 {
		if w, _ := expandWord(args[1], []string{"md5sum"}); w != "md5sum" {
			return s.invalidArg(args[1])
		}
		sum = true
	}
	s.dev.mu.Lock()
	f, ok := s.dev.state().files[name]
	s.dev.mu.Unlock()
	if !ok {
		return "/bootflash/" + name + ": " + nxosNoFile
	}
	if sum {
		h := md5.Sum([]byte(f.data)) //nolint:gosec // see import
		return hex.EncodeToString(h[:])
	}
	return f.data
}

// ---- checkpoints ----

func nxosCheckpoint(s *shell, args []string) string {
	if strings.EqualFold(args[0], "file") {
		if len(args) != 2 {
			return s.invalidLast()
		}
		name, ok := nxosPath(args[1])
		if !ok {
			return s.invalidArg(args[1])
		}
		s.dev.mu.Lock()
		defer s.dev.mu.Unlock()
		st := s.dev.state()
		if msg := s.nxosPut(name, s.p.configFile(s.dev, st.running, st.lastChange)); msg != "" {
			return msg
		}
		return "...........Done"
	}
	name := args[0]
	if len(args) > 1 && !strings.EqualFold(args[1], "description") {
		return s.invalidArg(args[1])
	}
	if len(name) > 32 || strings.ContainsAny(name, "/\\:\"'") {
		return s.invalidArg(name)
	}
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	st := s.dev.state()
	nx := s.dev.nxosDev()
	if _, exists := nx.checkpoints[name]; exists {
		return "ERROR: Checkpoint name \"" + name + "\" is already in use"
	}
	if len(nx.checkpoints) >= nxosMaxCheckpoints {
		return "ERROR: Maximum number of checkpoints reached"
	}
	nx.checkpoints[name] = flashFile{data: s.p.configFile(s.dev, st.running, st.lastChange), mtime: s.dev.fleet.opts.Now()}
	return "...........Done"
}

func nxosNoCheckpoint(s *shell, args []string) string {
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	nx := s.dev.nxosDev()
	if _, ok := nx.checkpoints[args[0]]; !ok {
		return "ERROR: No checkpoint named \"" + args[0] + "\""
	}
	delete(nx.checkpoints, args[0])
	return ""
}

func nxosShowCheckpoints(s *shell, _ []string) string {
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	nx := s.dev.nxosDev()
	var b strings.Builder
	b.WriteString("User Checkpoint Summary\n--------------------------------------------------------------------------------\n")
	for i, n := range slices.Sorted(maps.Keys(nx.checkpoints)) {
		c := nx.checkpoints[n]
		fmt.Fprintf(&b, "%d) %s:\nCreated by %s\nCreated at %s\nSize is %d bytes\nDescription: None\n\n",
			i+1, n, s.user, c.mtime.UTC().Format(nxosTimeFmt), len(c.data))
	}
	return b.String()
}

// nxosSource reads a "file PATH", "checkpoint NAME", "running-config" or "startup-config"
// source at args[i:] and returns its text, the words it used and an error message. d.mu held.
func (s *shell) nxosSource(args []string, i int) (text string, used int, errMsg string) {
	if i >= len(args) {
		return "", 0, s.p.errIncomplete
	}
	w, _ := expandWord(args[i], []string{"file", "checkpoint", "running-config", "startup-config"})
	switch w {
	case "running-config", "startup-config":
		k := locRunning
		if w == "startup-config" {
			k = locStartup
		}
		t, _ := s.locText(k, "")
		return t, 1, ""
	case "file":
		if i+1 >= len(args) {
			return "", 0, s.p.errIncomplete
		}
		name, ok := nxosPath(args[i+1])
		if !ok {
			return "", 0, "Invalid file name " + args[i+1]
		}
		f, ok := s.dev.state().files[name]
		if !ok {
			return "", 0, "ERROR: bootflash:" + name + ": " + nxosNoFile
		}
		return f.data, 2, ""
	case "checkpoint":
		if i+1 >= len(args) {
			return "", 0, s.p.errIncomplete
		}
		c, ok := s.dev.nxosDev().checkpoints[args[i+1]]
		if !ok {
			return "", 0, "ERROR: No checkpoint named \"" + args[i+1] + "\""
		}
		return c.data, 2, ""
	}
	return "", 0, "bad"
}

// nxosErrLines renders rejected configuration lines as the rollback engine reports them.
func nxosErrLines(errs []string) string {
	var b strings.Builder
	for _, e := range errs {
		b.WriteString("Syntax error while parsing '" + e + "'\n")
	}
	return b.String()
}

func nxosRollback(s *shell, args []string) string {
	if w, _ := expandWord(args[0], []string{"file", "checkpoint"}); w == "" {
		return s.invalidArg(args[0])
	}
	if len(args) < 2 {
		return s.p.errIncomplete
	}
	mode := "atomic"
	for _, a := range args[2:] {
		w, ok := expandWord(a, []string{"atomic", "best-effort", "stop-at-first-failure", "verbose"})
		if !ok {
			return s.invalidArg(a)
		}
		if w != "verbose" {
			mode = w
		}
	}
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	text, _, msg := s.nxosSource(args, 0)
	if msg != "" {
		return msg
	}
	st := s.dev.state()
	c, errs := s.p.d.parseConfig(text, st.running)
	var b strings.Builder
	b.WriteString("Note: Applying config parallelly may fail Rollback verification\n")
	b.WriteString("Collecting Running-Config\n#Generating Rollback Patch\nExecuting Rollback Patch\n")
	if len(errs) > 0 && mode != "best-effort" {
		// atomic and stop-at-first-failure both leave the running configuration unchanged.
		b.WriteString(nxosErrLines(errs))
		b.WriteString("\nRollback failed.")
		return b.String()
	}
	st.running = c
	s.dev.touch(s.user)
	b.WriteString(nxosErrLines(errs))
	b.WriteString("Generating Running-config for verification\nGenerating Patch for verification\n")
	if len(errs) > 0 {
		b.WriteString("Verification failed, Rollback verification is not Successful.\n\nRollback completed with errors.")
		return b.String()
	}
	b.WriteString("Verification is Successful.\n\nRollback completed successfully.")
	return b.String()
}

func nxosShowDiff(s *shell, args []string) string {
	s.dev.mu.Lock()
	a, ua, msg := s.nxosSource(args, 0)
	var b string
	ub := 0
	if msg == "" {
		b, ub, msg = s.nxosSource(args, ua)
	}
	if msg == "" && ua+ub != len(args) {
		msg = "bad"
	}
	if msg == "bad" {
		s.dev.mu.Unlock()
		return s.invalidLast()
	}
	if msg != "" {
		s.dev.mu.Unlock()
		return msg
	}
	run := s.dev.state().running
	ca, _ := s.p.d.parseConfig(a, run)
	cb, errs := s.p.d.parseConfig(b, run)
	s.dev.mu.Unlock()
	var out strings.Builder
	if strings.Contains(strings.Join(args, " "), "running-config") {
		out.WriteString("Collecting Running-Config\n")
	}
	out.WriteString("#Generating Rollback Patch\n")
	patch := nxosPatch(s.p.d, ca.items, cb.items, "")
	patch = append(patch, errs...)
	if len(patch) == 0 {
		out.WriteString("Rollback Patch is Empty\n")
		return out.String()
	}
	out.WriteString("!!\n")
	for _, l := range patch {
		out.WriteString(l + "\n")
	}
	return out.String()
}

// nxosNegate returns the command that undoes a configuration line.
func nxosNegate(line string) string {
	if rest, ok := strings.CutPrefix(line, "no "); ok {
		return rest
	}
	return "no " + line
}

// nxosPatch returns the commands that turn the list a (in mode kind) into b: removals first,
// then changes inside common blocks and additions, each sub-mode entered by its line.
func nxosPatch(d *dialect, a, b []*stanza, kind string) []string {
	var out []string
	for _, s := range a {
		if find(b, s.line) >= 0 {
			continue
		}
		f := strings.Fields(s.line)
		isBlock := len(s.children) > 0 || d.opener(kind, f) != ""
		switch {
		case isBlock:
			out = append(out, "no "+s.line)
		case find(b, nxosNegate(s.line)) >= 0:
			// The opposite line is added below.
		case replacedSingle(d, kind, f, b):
			// A new value of the same setting is added below.
		default:
			out = append(out, nxosNegate(s.line))
		}
	}
	for _, s := range b {
		i := find(a, s.line)
		if i < 0 {
			out = append(out, s.line)
			out = append(out, indentAll(subtreeLines(s.children), "  ")...)
			continue
		}
		sub := nxosPatch(d, a[i].children, s.children, kindOf(d, kind, s.line))
		if len(sub) > 0 {
			out = append(out, s.line)
			out = append(out, indentAll(sub, "  ")...)
		}
	}
	return out
}

// kindOf returns the mode kind a block line opens inside kind.
func kindOf(d *dialect, kind, line string) string {
	if k := d.opener(kind, strings.Fields(line)); k != "" {
		return k
	}
	return "generic"
}

// replacedSingle reports whether b sets another value of the single-valued setting f.
func replacedSingle(d *dialect, kind string, f []string, b []*stanza) bool {
	n := d.singleKey(kind, f)
	if n == 0 {
		return false
	}
	for _, s := range b {
		if hasWords(s.line, f[:n]) && d.singleKey(kind, strings.Fields(s.line)) == n {
			return true
		}
	}
	return false
}

func subtreeLines(list []*stanza) []string {
	var out []string
	for _, s := range list {
		out = append(out, s.line)
		out = append(out, indentAll(subtreeLines(s.children), "  ")...)
	}
	return out
}

func indentAll(lines []string, ind string) []string {
	for i, l := range lines {
		lines[i] = ind + l
	}
	return lines
}
