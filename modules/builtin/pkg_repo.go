package builtin

// This file is the repository part of Salt's aptpkg module
// (salt/modules/aptpkg.py): pkg.list_repos, pkg.get_repo, pkg.mod_repo,
// pkg.del_repo and pkg.expand_repo_def over sources.list and
// sources.list.d/*.list, read and written as python-apt's aptsources
// does (the one-line format; signed-by kept in the line as Salt keeps
// it). The apt configuration directory is the option aptpkg.etc_dir
// (default /etc/apt/, apt's Dir::Etc), so tests work on a temporary
// tree. Keys: key_url (salt:// or a local file) into the signed-by
// directory, de-armored with gpg like Salt; keyserver lookups and
// apt-key are not done (no network).

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// aptSource is aptsources.sourceslist.SourceEntry (one-line format).
type aptSource struct {
	invalid, disabled bool
	typ               string
	architectures     []string
	trusted           *bool
	uri, dist         string
	comps             []string
	comment           string
	line              string
	file              string
}

// aptMysplit is SourceEntry.mysplit: whitespace split keeping [...] blocks.
func aptMysplit(line string) []string {
	line = strings.TrimSpace(line)
	var pieces []string
	tmp := ""
	pFound, spaceFound := false, false
	for _, ch := range line {
		isSpace := cmdPyIsSpace(ch)
		switch {
		case ch == '[':
			if spaceFound {
				spaceFound, pFound = false, true
				pieces = append(pieces, tmp)
				tmp = string(ch)
			} else {
				pFound = true
				tmp += string(ch)
			}
		case ch == ']':
			pFound = false
			tmp += string(ch)
		case spaceFound && !isSpace:
			spaceFound = false
			pieces = append(pieces, tmp)
			tmp = string(ch)
		case isSpace && !pFound:
			spaceFound = true
		default:
			tmp += string(ch)
		}
	}
	if tmp != "" {
		pieces = append(pieces, tmp)
	}
	return pieces
}

func aptIsType(t string) bool { return t == "deb" || t == "deb-src" || t == "rpm" || t == "rpm-src" }

// newAptSource is SourceEntry(line, file).
func newAptSource(line, file string) *aptSource {
	s := &aptSource{line: line, file: file, architectures: []string{}, comps: []string{}}
	s.parse(line)
	return s
}

func (s *aptSource) parse(line string) {
	s.line = line
	line = strings.TrimSpace(line)
	if line == "" || line == "#" {
		s.invalid = true
		return
	}
	if line[0] == '#' {
		s.disabled = true
		pieces := strings.Fields(strings.TrimSpace(line[1:]))
		if len(pieces) == 0 || !aptIsType(pieces[0]) {
			s.invalid = true
			return
		}
		line = line[1:]
	}
	if i := strings.Index(line, "#"); i > 0 {
		s.comment = line[i+1:]
		line = line[:i]
	}
	pieces := aptMysplit(line)
	if len(pieces) < 3 {
		s.invalid = true
		return
	}
	s.typ = strings.TrimSpace(pieces[0])
	if !aptIsType(s.typ) {
		s.invalid = true
		return
	}
	if strings.HasPrefix(strings.TrimSpace(pieces[1]), "[") {
		opts := strings.Fields(strings.Trim(pieces[1], "[]"))
		pieces = append(pieces[:1], pieces[2:]...)
		for _, o := range opts {
			k, v, ok := strings.Cut(o, "=")
			switch {
			case !ok:
				s.invalid = true
			case k == "arch":
				s.architectures = strings.Split(v, ",")
			case k == "trusted":
				b := v == "yes" || v == "true" || v == "with-meaning" || v == "1" || v == "on" || v == "enable"
				s.trusted = &b
			default:
				s.invalid = true
			}
		}
	}
	if len(pieces) < 2 {
		s.invalid = true
		return
	}
	s.uri = strings.TrimSpace(pieces[1])
	if s.uri == "" {
		s.invalid = true
	}
	if len(pieces) > 2 {
		s.dist = strings.TrimSpace(pieces[2])
	}
	if len(pieces) > 3 {
		s.comps = append([]string{}, pieces[3:]...)
	} else {
		s.comps = []string{}
	}
}

// str is SourceEntry.str().
func (s *aptSource) str() string {
	if s.invalid {
		return s.line
	}
	line := ""
	if s.disabled {
		line = "# "
	}
	line += s.typ
	yn := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	switch {
	case len(s.architectures) > 0 && s.trusted != nil:
		line += fmt.Sprintf(" [arch=%s trusted=%s]", strings.Join(s.architectures, ","), yn(*s.trusted))
	case s.trusted != nil:
		line += fmt.Sprintf(" [trusted=%s]", yn(*s.trusted))
	case len(s.architectures) > 0:
		line += fmt.Sprintf(" [arch=%s]", strings.Join(s.architectures, ","))
	}
	line += fmt.Sprintf(" %s %s", s.uri, s.dist)
	if len(s.comps) > 0 {
		line += " " + strings.Join(s.comps, " ")
	}
	if s.comment != "" {
		line += " #" + s.comment
	}
	return line + "\n"
}

// setEnabled is SourceEntry.set_enabled.
func (s *aptSource) setEnabled(v bool) {
	s.disabled = !v
	if v {
		s.line = strings.TrimLeft(strings.TrimLeftFunc(s.line, cmdPyIsSpace), "#")
	} else if t := strings.TrimSpace(s.line); t == "" || t[0] != '#' {
		s.line = "#" + s.line
	}
}

// aptInvalid is aptpkg._invalid (signed-by allowed).
func aptInvalid(line string) bool {
	line = strings.TrimSpace(line)
	if line == "" {
		return true
	}
	line = strings.TrimPrefix(line, "#")
	if i := strings.Index(line, "#"); i > 0 {
		line = line[:i]
	}
	var parts []string
	if m := regexp.MustCompile(`(.*)(cdrom:.*/)(.*)`).FindStringSubmatch(strings.TrimSpace(line)); m != nil {
		parts = append(append(strings.Fields(m[1]), strings.TrimSpace(m[2])), strings.Fields(m[3])...)
	} else {
		parts = strings.Fields(line)
	}
	if len(parts) < 3 || (parts[0] != "deb" && parts[0] != "deb-src" && parts[0] != "rpm" && parts[0] != "rpm-src") {
		return true
	}
	if strings.HasPrefix(parts[1], "[") {
		for _, x := range parts[1:] {
			if strings.HasSuffix(x, "]") {
				return false
			}
		}
		return true
	}
	return false
}

// aptOpt is one option of _get_opts.
type aptOpt struct {
	key, full string
	value     any
	index     int
}

// aptGetOpts is aptpkg._get_opts: the [...] options of a line, in order
// (arch and signedby always present).
func aptGetOpts(line string) []aptOpt {
	out := []aptOpt{{key: "arch", value: ""}, {key: "signedby", value: ""}}
	m := regexp.MustCompile(`\[(.*=.*)\]`).FindString(line)
	if m == "" {
		return out
	}
	var archs []string
	for idx, o := range strings.Fields(strings.Trim(m, "[]")) {
		k, v, _ := strings.Cut(o, "=")
		switch {
		case strings.HasPrefix(o, "arch"):
			archs = append(archs, strings.Split(v, ",")...)
			out[0] = aptOpt{key: "arch", full: o, value: archs, index: idx}
		case strings.HasPrefix(o, "signed-by"):
			out[1] = aptOpt{key: "signedby", full: o, value: v, index: idx}
		default:
			found := false
			for i := range out {
				if out[i].key == k {
					out[i] = aptOpt{key: k, full: o, value: v, index: idx}
					found = true
				}
			}
			if !found {
				out = append(out, aptOpt{key: k, full: o, value: v, index: idx})
			}
		}
	}
	return out
}

func aptSignedBy(line string) string {
	for _, o := range aptGetOpts(line) {
		if o.key == "signedby" {
			if s, ok := o.value.(string); ok {
				return s
			}
		}
	}
	return ""
}

// aptSources is aptsources.sourceslist.SourcesList.
type aptSources struct {
	etc  string
	list []*aptSource
}

// aptEtcDir is the apt configuration directory (Dir::Etc).
func aptEtcDir(c *modules.Call) string {
	if v, ok := optGet(c, "aptpkg.etc_dir"); ok && v != nil {
		return strings.TrimRight(payload.Text(v), "/") + "/"
	}
	return "/etc/apt/"
}

func (l *aptSources) mainFile() string { return l.etc + "sources.list" }

// loadAptSources is SourcesList(): sources.list, then the .list files
// of sources.list.d in directory order.
func loadAptSources(etc string) *aptSources {
	l := &aptSources{etc: etc}
	l.load(l.mainFile())
	parts := etc + "sources.list.d/"
	if d, err := os.Open(parts); err == nil {
		names, _ := d.Readdirnames(-1)
		d.Close()
		for _, n := range names {
			if strings.HasSuffix(n, ".list") {
				l.load(pyJoin(strings.TrimSuffix(parts, "/"), n))
			}
		}
	}
	return l
}

func (l *aptSources) load(file string) {
	b, err := os.ReadFile(file)
	if err != nil {
		return
	}
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if line == "" {
			continue
		}
		l.list = append(l.list, newAptSource(line, file))
	}
}

// save is SourcesList.save.
func (l *aptSources) save() error {
	if len(l.list) == 0 {
		return os.WriteFile(l.mainFile(), []byte("## See sources.list(5) for more information, especialy\n# Remember that you can only use http, ftp or file URIs\n# CDROMs are managed through the apt-cdrom tool.\n"), 0o644)
	}
	var order []string
	bodies := map[string]*strings.Builder{}
	for _, s := range l.list {
		b, ok := bodies[s.file]
		if !ok {
			b = &strings.Builder{}
			bodies[s.file] = b
			order = append(order, s.file)
		}
		b.WriteString(s.str())
	}
	for _, f := range order {
		if err := os.WriteFile(f, []byte(bodies[f].String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func sameStringSet(a, b []string) bool {
	m := map[string]bool{}
	for _, x := range a {
		m[x] = true
	}
	n := map[string]bool{}
	for _, x := range b {
		n[x] = true
	}
	if len(m) != len(n) {
		return false
	}
	for k := range m {
		if !n[k] {
			return false
		}
	}
	return true
}

// add is SourcesList.add (one-line entries).
func (l *aptSources) add(typ, uri, dist string, origComps []string, archs []string) *aptSource {
	typ = strings.TrimSpace(typ)
	disabled := strings.HasPrefix(typ, "#")
	if disabled {
		typ = strings.TrimLeft(typ[1:], " \t")
	}
	comps := append([]string{}, origComps...)
	match := func(s *aptSource) bool {
		return !s.invalid && s.typ == typ && s.dist == dist && sameStringSet(s.architectures, archs) &&
			(uri == "" || s.uri == "" || strings.TrimRight(uri, "/") == strings.TrimRight(s.uri, "/"))
	}
	for _, s := range l.list {
		if !match(s) || s.disabled != disabled {
			continue
		}
		for _, nc := range append([]string{}, comps...) {
			if containsStr(s.comps, nc) {
				for i, c := range comps {
					if c == nc {
						comps = append(comps[:i], comps[i+1:]...)
						break
					}
				}
				if len(comps) == 0 {
					return s
				}
			}
		}
	}
	for _, s := range l.list {
		if !match(s) {
			continue
		}
		if s.disabled == disabled {
			if !sameStringSet(s.comps, comps) {
				s.comps = uniqStrings(append(append([]string{}, s.comps...), comps...))
			}
			return s
		} else if s.disabled && !disabled {
			if sameStringSet(s.comps, comps) {
				s.disabled = false
				return s
			}
		}
	}
	var parts []string
	if disabled {
		parts = append(parts, "#")
	}
	parts = append(parts, typ)
	if len(archs) > 0 {
		parts = append(parts, "[arch="+strings.Join(archs, ",")+"]")
	}
	parts = append(parts, uri, dist)
	parts = append(parts, comps...)
	var nonEmpty []string
	for _, p := range parts {
		if p != "" {
			nonEmpty = append(nonEmpty, p)
		}
	}
	e := newAptSource(strings.Join(nonEmpty, " ")+"\n", l.mainFile())
	l.list = append(l.list, e)
	return e
}

func uniqStrings(l []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range l {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// aptSplitRepo is _split_repo_str.
func aptSplitRepo(repo string, etc string) (typ string, archs []string, uri, dist string, comps []string, signedby string) {
	s := newAptSource(repo, etc+"sources.list")
	return s.typ, s.architectures, s.uri, s.dist, s.comps, aptSignedBy(repo)
}

// aptSkip is _skip_source.
func aptSkip(s *aptSource) bool {
	if !s.invalid {
		return false
	}
	if s.uri != "" && aptIsType(s.typ) {
		p := aptMysplit(s.line)
		if len(p) > 1 && strings.HasPrefix(strings.TrimSpace(p[1]), "[") {
			if len(strings.Fields(strings.Trim(p[1], "[]"))) > 0 {
				return false
			}
		}
	}
	return true
}

func aptRepoMap(s *aptSource) *payload.Map {
	return payload.NewMap("file", s.file, "comps", grainsStrList(s.comps), "disabled", s.disabled, "enabled", !s.disabled,
		"dist", s.dist, "type", s.typ, "uri", s.uri, "line", strings.TrimSpace(s.line), "architectures", grainsStrList(s.architectures),
		"signedby", aptSignedBy(s.line))
}

// aptListRepos is list_repos.
func aptListRepos(etc string) *payload.Map {
	repos := &payload.Map{}
	for _, s := range loadAptSources(etc).list {
		if aptSkip(s) {
			continue
		}
		v, _ := repos.Get(s.uri)
		l, _ := v.([]any)
		repos.Set(s.uri, append(l, aptRepoMap(s)))
	}
	return repos
}

// aptGetRepo is get_repo for a full repo line.
func aptGetRepo(etc, repo string) (*payload.Map, error) {
	repos := aptListRepos(etc)
	if repos.Len() == 0 {
		return &payload.Map{}, nil
	}
	typ, _, uri, dist, comps, _ := aptSplitRepo(repo, etc)
	for _, it := range repos.Items() {
		for _, sub := range it.Value.([]any) {
			m := sub.(*payload.Map)
			if m.Str("type") == typ && m.Str("uri") == uri && m.Str("dist") == dist {
				if len(comps) == 0 {
					return m, nil
				}
				have := archiveStringsAny(m, "comps")
				for _, c := range comps {
					if containsStr(have, c) {
						return m, nil
					}
				}
			}
		}
	}
	return &payload.Map{}, nil
}

func archiveStringsAny(m *payload.Map, k string) []string {
	v, _ := m.Get(k)
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		out = append(out, payload.Text(x))
	}
	return out
}

// aptRequireDebian refuses repo management off apt systems.
func aptRepoFunctions() []modules.Function {
	return []modules.Function{
		{Name: "pkg.list_repos", Spec: modules.Spec{Kwargs: true},
			Doc: "Lists all repos in the sources.list (and sources.lists.d) files\n\nCLI Example:\n\n    salt '*' pkg.list_repos\n    salt '*' pkg.list_repos disabled=True",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return aptListRepos(aptEtcDir(c)), nil
			}},
		{Name: "pkg.get_repo", Spec: modules.Spec{Params: []modules.Param{req("repo")}, Kwargs: true},
			Doc: "Display a repo from the sources.list / sources.list.d\n\nThe repo passed in needs to be a complete repo entry.\n\nCLI Examples:\n\n    salt '*' pkg.get_repo \"myrepo definition\"",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return aptGetRepo(aptEtcDir(c), pyfmt.Str(c.Args.Get("repo")))
			}},
		{Name: "pkg.del_repo", Spec: modules.Spec{Params: []modules.Param{req("repo")}, Kwargs: true},
			Doc: "Delete a repo from the sources.list / sources.list.d\n\nCLI Examples:\n\n    salt '*' pkg.del_repo \"myrepo definition\"",
			Fn:  aptDelRepo},
		{Name: "pkg.mod_repo", Spec: modules.Spec{Params: []modules.Param{req("repo"), opt("saltenv", "base"), opt("aptkey", true)}, Kwargs: true},
			Doc: "Modify one or more values for a repo. If the repo does not exist, it will be created, so long as the definition is well formed.\n\nCLI Examples:\n\n    salt '*' pkg.mod_repo 'myrepo definition' uri=http://new/uri\n    salt '*' pkg.mod_repo 'myrepo definition' comps=main,universe",
			Fn:  aptModRepo},
		{Name: "pkg.expand_repo_def", Spec: modules.Spec{Kwargs: true},
			Doc: "Take a repository definition and expand it to the full pkg repository dict that can be used for comparison.\n\nCLI Examples:\n\n    salt '*' pkg.expand_repo_def repo='deb http://example.com stable main'",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return AptExpandRepoDef(aptEtcDir(c), c.Args.CleanKwargs())
			}},
	}
}

func aptRefresh(ctx context.Context, c *modules.Call) error {
	_, err := callFunction(ctx, c, "pkg.refresh_db", nil, nil)
	return err
}

func aptDelRepo(ctx context.Context, c *modules.Call) (any, error) {
	etc := aptEtcDir(c)
	repo := pyfmt.Str(c.Args.Get("repo"))
	l := loadAptSources(etc)
	var valid []*aptSource
	for _, s := range l.list {
		if !s.invalid {
			valid = append(valid, s)
		}
	}
	if len(valid) > 0 {
		typ, archs, uri, dist, comps, _ := aptSplitRepo(repo, etc)
		deleted := map[string]int{}
		var order []string
		for _, s := range valid {
			if s.typ == typ && strings.Join(s.architectures, ",") == strings.Join(archs, ",") && s.uri == uri && s.dist == dist {
				var keep []string
				hit := false
				for _, x := range s.comps {
					if containsStr(comps, x) {
						hit = true
					} else {
						keep = append(keep, x)
					}
				}
				if hit {
					if _, ok := deleted[s.file]; !ok {
						order = append(order, s.file)
					}
					deleted[s.file] = 0
					s.comps = keep
					if len(keep) == 0 {
						for i, x := range l.list {
							if x == s {
								l.list = append(l.list[:i], l.list[i+1:]...)
								break
							}
						}
					}
				}
			}
			if err := l.save(); err != nil {
				return nil, aptPyErr(err)
			}
		}
		if len(deleted) > 0 {
			for _, s := range l.list {
				if _, ok := deleted[s.file]; ok {
					deleted[s.file]++
				}
			}
			var out strings.Builder
			for _, f := range order {
				msg := fmt.Sprintf("Repo '%s' has been removed from %s.\n", repo, f)
				if deleted[f] == 0 && strings.Contains(f, "sources.list.d/") && fileExistsRegular(f) {
					msg = fmt.Sprintf("File %s containing repo '%s' has been removed.", f, repo)
					_ = os.Remove(f)
				}
				out.WriteString(msg)
			}
			if err := aptRefresh(ctx, c); err != nil {
				return nil, err
			}
			return out.String(), nil
		}
	}
	return nil, fmt.Errorf("%w: Repo %s doesn't exist in the sources.list(s)", modules.ErrExecution, repo)
}

// aptDecryptKey is _decrypt_key: an ASCII-armored key de-armored by gpg.
func aptDecryptKey(ctx context.Context, c *modules.Call, key string) (string, bool) {
	b, err := os.ReadFile(key)
	if err != nil || !strings.HasPrefix(strings.TrimLeft(string(b), "-"), "BEGIN PGP") {
		return key, true
	}
	if _, err := exec.LookPath("gpg"); err != nil {
		c.Log().Error("Detected an ASCII armored key and the gpg binary is not available. Not decrypting the key.", "key", key)
		return "", false
	}
	dec := key + ".decrypted"
	res, err := callFunction(ctx, c, "cmd.run_all", []any{[]any{"gpg", "--yes", "--output", dec, "--dearmor", key}}, payload.NewMap("python_shell", false))
	m, ok := res.(*payload.Map)
	rc := any(nil)
	if ok {
		rc, _ = m.Get("retcode")
	}
	if err != nil || !ok || payload.Text(rc) != "0" {
		c.Log().Error("Failed to decrypt the key", "key", key)
	}
	return dec, true
}

func aptModRepo(ctx context.Context, c *modules.Call) (any, error) {
	etc := aptEtcDir(c)
	repo := pyfmt.Str(c.Args.Get("repo"))
	kw := c.Args.CleanKwargs()
	refresh := true
	if v, ok := kw.Get("refresh_db"); ok {
		refresh = payload.Truthy(v)
	} else if v, ok := kw.Get("refresh"); ok {
		refresh = payload.Truthy(v)
	}
	aptkey := c.Args.Bool("aptkey")
	if _, err := exec.LookPath("apt-key"); err != nil {
		aptkey = false
	}
	if strings.HasPrefix(repo, "ppa:") {
		return nil, fmt.Errorf("%w: cannot parse \"ppa:\" style repo definitions: %s", modules.ErrExecution, repo)
	}
	l := loadAptSources(etc)
	var repos []*aptSource
	for _, s := range l.list {
		if !aptInvalid(s.line) {
			repos = append(repos, s)
		}
	}
	typ, archs, uri, dist, comps, signedby := aptSplitRepo(repo, etc)
	full := map[string]bool{}
	for _, x := range comps {
		full[strings.TrimSpace(x)] = true
	}
	if !aptkey && signedby == "" {
		return nil, fmt.Errorf("%w: missing 'signedby' option when apt-key is missing", modules.ErrInvocation)
	}
	if kw.Has("keyid") {
		return nil, fmt.Errorf("%w: keyid/keyserver key retrieval needs the network, which gsalt's apt repo support does not use; use key_url with a salt:// or local key file", modules.ErrExecution)
	}
	if v, ok := kw.Get("key_url"); ok {
		keyURL := pyfmt.Str(v)
		cached, err := callFunction(ctx, c, "cp.cache_file", []any{keyURL, c.Args.Get("saltenv")}, nil)
		if err != nil || !payload.Truthy(cached) {
			return nil, fmt.Errorf("%w: Error: file not found: %s", modules.ErrExecution, keyURL)
		}
		fn := payload.Text(cached)
		if signedby != "" && filepath.Base(fn) != filepath.Base(signedby) {
			np := filepath.Join(filepath.Dir(fn), filepath.Base(signedby))
			if err := os.Rename(fn, np); err != nil {
				return nil, fmt.Errorf("%w: %s", modules.ErrExecution, cmdPyOSError(err))
			}
			fn = np
		}
		if aptkey {
			return nil, fmt.Errorf("%w: apt-key is deprecated and not run by gsalt; set aptkey: False and signed-by", modules.ErrExecution)
		}
		keydir := "/etc/apt/keyrings"
		if signedby != "" {
			keydir = filepath.Dir(signedby)
		}
		if fi, err := os.Stat(keydir); err != nil || !fi.IsDir() {
			c.Log().Error("The directory does not exist. Please create this directory only writable by root", "dir", keydir)
			return false, nil
		}
		key, ok := aptDecryptKey(ctx, c, fn)
		if !ok {
			return false, nil
		}
		name := filepath.Base(key)
		name = strings.TrimSuffix(name, ".decrypted")
		if err := cmdCopyFile(key, filepath.Join(keydir, name)); err != nil {
			return nil, fmt.Errorf("%w: %s", modules.ErrExecution, cmdPyOSError(err))
		}
	} else if kw.Has("key_text") {
		return nil, fmt.Errorf("%w: key_text needs apt-key, which gsalt does not run; use key_url with signed-by", modules.ErrExecution)
	}
	var kwComps, kwArchs []string
	if v, ok := kw.Get("comps"); ok {
		for _, x := range strings.Split(pyfmt.Str(v), ",") {
			kwComps = append(kwComps, strings.TrimSpace(x))
			full[strings.TrimSpace(x)] = true
		}
	} else {
		for k := range full {
			kwComps = append(kwComps, k)
		}
		sort.Strings(kwComps)
	}
	if v, ok := kw.Get("architectures"); ok {
		kwArchs = strings.Split(pyfmt.Str(v), ",")
	} else {
		kwArchs = archs
	}
	var disabled *bool
	if v, ok := kw.Get("disabled"); ok {
		b := modules.IsTrue(v)
		disabled = &b
	} else if v, ok := kw.Get("enabled"); ok {
		b := !modules.IsTrue(v)
		disabled = &b
	}
	kwType, _ := kw.Get("type")
	kwDist, _ := kw.Get("dist")
	var mod *aptSource
	for _, s := range repos {
		repoMatches := s.typ == typ && strings.TrimRight(s.uri, "/") == strings.TrimRight(uri, "/") && s.dist == dist
		kwMatches := pyfmt.Equal(s.dist, kwDist) && pyfmt.Equal(s.typ, kwType)
		if repoMatches || kwMatches {
			for comp := range full {
				if containsStr(s.comps, comp) {
					mod = s
				}
			}
			if len(s.comps) == 0 {
				mod = s
			}
			if strings.Join(kwArchs, "\x00") != strings.Join(s.architectures, "\x00") {
				mod = s
			}
			if mod != nil {
				break
			}
		}
	}
	var comments any
	if v, ok := kw.Get("comments"); ok {
		comments = AptCombineComments(v)
	}
	if mod == nil {
		mod = newAptSource(repo, l.mainFile())
		if comments != nil {
			mod.comment = pyfmt.Str(comments)
		}
		l.list = append(l.list, mod)
	} else if comments != nil {
		mod.comment = pyfmt.Str(comments)
	}
	fresh := newAptSource(repo, l.mainFile())
	if strings.TrimSpace(mod.str()) != strings.TrimSpace(fresh.str()) && strings.Contains(strings.TrimSpace(mod.str()), "signed-by") {
		mod.line = fresh.line
	}
	if !strings.HasSuffix(mod.line, "\n") {
		mod.line += "\n"
	}
	// The _MODIFY_OK keys the state or the caller passed.
	mod.comps = kwComps
	mod.architectures = kwArchs
	if disabled != nil {
		mod.disabled = *disabled
	}
	if v, ok := kw.Get("file"); ok {
		mod.file = pyfmt.Str(v)
	}
	if v, ok := kw.Get("dist"); ok {
		mod.dist = pyfmt.Str(v)
	}
	if v, ok := kw.Get("uri"); ok {
		mod.uri = pyfmt.Str(v)
	}
	if mod.uri != uri {
		mod.uri = uri
		mod.line = mod.str()
	}
	if err := l.save(); err != nil {
		return nil, aptPyErr(err)
	}
	if refresh {
		if err := aptRefresh(ctx, c); err != nil {
			return nil, err
		}
	}
	return payload.NewMap(repo, payload.NewMap("architectures", grainsStrList(mod.architectures), "comps", grainsStrList(mod.comps),
		"disabled", mod.disabled, "file", mod.file, "type", mod.typ, "uri", mod.uri, "line", mod.line, "signedby", signedby)), nil
}

// AptCombineComments is salt.utils.pkg.deb.combine_comments: a comment
// given as a list is joined with spaces (pkgrepo.managed compares with it).
func AptCombineComments(v any) string {
	var l []string
	if x, ok := v.([]any); ok {
		for _, e := range x {
			l = append(l, pyfmt.Str(e))
		}
	} else {
		l = []string{pyfmt.Str(v)}
	}
	return strings.TrimSpace(strings.Join(l, " "))
}

// AptExpandRepoDef is aptpkg._expand_repo_def: the repo dict the
// pkgrepo state compares with get_repo's (kwargs holds repo and the
// state's arguments).
func AptExpandRepoDef(etc string, kwargs *payload.Map) (*payload.Map, error) {
	rv, ok := kwargs.Get("repo")
	if !ok {
		return nil, fmt.Errorf("%w: missing 'repo' argument", modules.ErrInvocation)
	}
	repo := pyfmt.Str(rv)
	se := newAptSource(repo, etc+"sources.list")
	if v, ok := kwargs.Get("architectures"); ok {
		se.architectures = nil
		for _, x := range strings.Split(pyfmt.Str(v), ",") {
			se.architectures = append(se.architectures, strings.TrimSpace(x))
		}
	}
	if v, ok := kwargs.Get("comps"); ok {
		se.comps = nil
		for _, x := range strings.Split(pyfmt.Str(v), ",") {
			se.comps = append(se.comps, strings.TrimSpace(x))
		}
	}
	if v, ok := kwargs.Get("uri"); ok {
		se.uri = pyfmt.Str(v)
	}
	if v, ok := kwargs.Get("dist"); ok {
		se.dist = pyfmt.Str(v)
	}
	if v, ok := kwargs.Get("disabled"); ok {
		se.disabled = payload.Truthy(v)
	}
	l := loadAptSources(etc)
	signedby := aptSignedBy(repo)
	e := l.add(se.typ, se.uri, se.dist, se.comps, se.architectures)
	e.setEnabled(!se.disabled)
	out := payload.NewMap("file", e.file, "comps", grainsStrList(e.comps), "disabled", e.disabled, "dist", e.dist, "type", e.typ,
		"uri", e.uri, "line", strings.TrimSpace(e.line), "architectures", grainsStrList(e.architectures), "signedby", signedby)
	if signedby != "" && !strings.Contains(out.Str("line"), signedby) {
		line := strings.Fields(out.Str("line"))
		opts := aptGetOpts(repo)
		var order []string
		for _, o := range opts {
			if o.full != "" {
				order = append(order, o.key)
			}
		}
		for _, o := range opts {
			if o.full != "" && o.index < len(order) {
				order[o.index] = o.full
			}
		}
		o := "[" + strings.Join(order, " ") + "]"
		if len(line) > 1 && strings.HasPrefix(line[1], "[") {
			line[1] = o
		} else if len(line) > 0 {
			line = append(line[:1], append([]string{o}, line[1:]...)...)
		}
		out.Set("line", strings.Join(line, " "))
	}
	return out, nil
}

// aptPyErr is an OSError raised through: "FileNotFoundError: [Errno 2] ...".
func aptPyErr(err error) error {
	return fmt.Errorf("%s: %s", cmdPyExceptionName(err), cmdPyOSError(err))
}
