package builtin

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/gsalt/gsalt/beacons"
	"github.com/gsalt/gsalt/wire/payload"
)

// Inotify is the inotify beacon (salt/beacons/inotify.py), built on
// fsnotify. Configuration:
//
//	beacons:
//	  inotify:
//	    - files:
//	        /path/to/file/or/dir:
//	          mask: [create, modify, delete]   # the default
//	          recurse: True
//	          auto_add: True
//	          exclude:
//	            - /path/to/file/or/dir/exclude1
//	            - /path/to/file/or/dir/*.tmp
//	            - /path/to/file/or/dir/regex[a-m]*$: {regex: True}
//	    - coalesce: True
//
// Each change yields {"path": <path>, "change": <pyinotify mask name>}
// tagged with the watched path (so tags read salt/beacon/<id>/inotify//dir),
// as Salt's beacon does. The first run only sets the watches up.
//
// fsnotify v1.10.1 reports Create, Write, Remove, Rename and Chmod, so the
// mask names map as: create -> IN_CREATE, modify -> IN_MODIFY, delete ->
// IN_DELETE, delete_self -> IN_DELETE_SELF, moved_from -> IN_MOVED_FROM,
// moved_to -> IN_MOVED_TO (a Create known to come from a rename, or any
// Create when the mask has moved_to but not create), move_self ->
// IN_MOVE_SELF, attrib -> IN_ATTRIB; IN_IGNORED is reported when a watched
// path goes away, and "|IN_ISDIR" is added for directories (from lstat, or
// from what the beacon knew of a removed path). access, open, close_write,
// close_nowrite, unmount, oneshot, onlydir and excl_unlink are accepted
// but produce nothing: fsnotify keeps those operations unexported. A
// watched path that is moved stops being watched (pyinotify follows it);
// it is watched again when it reappears, or re-added by auto_add.
func Inotify() beacons.Module {
	return beacons.Module{
		Name:     "inotify",
		Validate: validateInotify,
		New: func(env *beacons.Env) beacons.Beacon {
			return &inotifyBeacon{env: env}
		},
	}
}

// inotify event bits (Linux's IN_* values, as pyinotify names them).
const (
	inAccess       uint32 = 0x1
	inModify       uint32 = 0x2
	inAttrib       uint32 = 0x4
	inCloseWrite   uint32 = 0x8
	inCloseNowrite uint32 = 0x10
	inOpen         uint32 = 0x20
	inMovedFrom    uint32 = 0x40
	inMovedTo      uint32 = 0x80
	inCreate       uint32 = 0x100
	inDelete       uint32 = 0x200
	inDeleteSelf   uint32 = 0x400
	inMoveSelf     uint32 = 0x800
	inUnmount      uint32 = 0x2000
	inIgnored      uint32 = 0x8000
	inOnlydir      uint32 = 0x1000000
	inExclUnlink   uint32 = 0x4000000
	inIsdir        uint32 = 0x40000000
	inOneshot      uint32 = 0x80000000

	inDefaultMask = inCreate | inDelete | inModify
)

// inotifyMasks are the mask names validate accepts.
var inotifyMasks = map[string]uint32{
	"access": inAccess, "attrib": inAttrib, "close_nowrite": inCloseNowrite,
	"close_write": inCloseWrite, "create": inCreate, "delete": inDelete,
	"delete_self": inDeleteSelf, "excl_unlink": inExclUnlink, "ignored": inIgnored,
	"modify": inModify, "moved_from": inMovedFrom, "moved_to": inMovedTo,
	"move_self": inMoveSelf, "oneshot": inOneshot, "onlydir": inOnlydir,
	"open": inOpen, "unmount": inUnmount,
}

var inotifyNames = map[uint32]string{
	inModify: "IN_MODIFY", inAttrib: "IN_ATTRIB", inMovedFrom: "IN_MOVED_FROM",
	inMovedTo: "IN_MOVED_TO", inCreate: "IN_CREATE", inDelete: "IN_DELETE",
	inDeleteSelf: "IN_DELETE_SELF", inMoveSelf: "IN_MOVE_SELF", inIgnored: "IN_IGNORED",
}

// maskName is pyinotify's maskname.
func maskName(bit uint32, isDir bool) string {
	n := inotifyNames[bit]
	if isDir {
		n += "|IN_ISDIR"
	}
	return n
}

var validMaskOrder = []string{"access", "attrib", "close_nowrite", "close_write", "create", "delete",
	"delete_self", "excl_unlink", "ignored", "modify", "moved_from", "moved_to", "move_self",
	"oneshot", "onlydir", "open", "unmount"}

func validateInotify(config any) (bool, string) {
	if !isList(config) {
		return false, "Configuration for inotify beacon must be a list."
	}
	cfg := beacons.ListToDict(config)
	fv, ok := cfg.Get("files")
	if !ok {
		return false, "Configuration for inotify beacon must include files."
	}
	files, ok := fv.(*payload.Map)
	if !ok {
		return false, "Configuration for inotify beacon invalid, files must be a dict."
	}
	for _, it := range files.Items() {
		pc, ok := it.Value.(*payload.Map)
		if !ok {
			return false, "Configuration for inotify beacon must be a list of dictionaries."
		}
		if !pc.Has("mask") && !pc.Has("recurse") && !pc.Has("auto_add") {
			return false, "Configuration for inotify beacon must contain mask, recurse or auto_add items."
		}
		if v, ok := pc.Get("auto_add"); ok && !isBool(v) {
			return false, "Configuration for inotify beacon auto_add must be boolean."
		}
		if v, ok := pc.Get("recurse"); ok && !isBool(v) {
			return false, "Configuration for inotify beacon recurse must be boolean."
		}
		if v, ok := pc.Get("mask"); ok {
			masks, ok := v.([]any)
			if !ok {
				return false, "Configuration for inotify beacon mask must be list."
			}
			for _, m := range masks {
				if s, ok := m.(string); !ok || inotifyMasks[s] == 0 {
					return false, fmt.Sprintf("Configuration for inotify beacon invalid mask option %s.", payload.Text(m))
				}
			}
		}
	}
	return true, "Valid beacon configuration"
}

// Bounds on what one beacon keeps and reads per run.
const (
	maxInotifyBatch = 8192   // events read per run
	maxKnownDirs    = 100000 // directory names remembered for IN_ISDIR
	drainWait       = 2 * time.Millisecond
)

// inoWatch is one path the beacon watches (a configured path, or a
// directory below it added by recurse or auto_add).
type inoWatch struct {
	path    string
	root    string // the configured path it belongs to
	isDir   bool
	mask    uint32
	autoAdd bool
	exclude *excludeFilter
	// movedTo is where a watched path renamed from its parent went.
	movedTo    string
	movePaired bool
}

type inotifyBeacon struct {
	env     *beacons.Env
	w       *fsnotify.Watcher
	watches map[string]*inoWatch
	dirs    map[string]bool
	synth   []fsnotify.Event
}

// inoEvent is one change before exclusion.
type inoEvent struct {
	tag, path, change string
}

// inotifySettings are a configured path's options.
type inotifySettings struct {
	mask         uint32
	rec, autoAdd bool
	exclude      *excludeFilter
	excludes     []any
}

func parseInotifySettings(v any) (inotifySettings, error) {
	s := inotifySettings{mask: inDefaultMask}
	pc, ok := v.(*payload.Map)
	if !ok {
		return s, nil
	}
	if m, ok := pc.Get("mask"); ok {
		s.mask = 0
		switch x := m.(type) {
		case []any:
			for _, n := range x {
				s.mask |= inotifyMasks[payload.Text(n)]
			}
		case string:
			s.mask = inotifyMasks[x]
		default:
			if n, ok := payload.AsInt(x); ok {
				s.mask = uint32(n)
			}
		}
	}
	s.rec = payload.Truthy(configValue(pc, "recurse"))
	s.autoAdd = payload.Truthy(configValue(pc, "auto_add"))
	if ex, ok := pc.Get("exclude"); ok {
		if list, ok := ex.([]any); ok {
			s.excludes = list
			var pats []string
			for _, e := range list {
				if m, ok := e.(*payload.Map); ok {
					if m.Len() > 0 {
						pats = append(pats, payload.KeyString(m.Items()[0].Key))
					}
				} else {
					pats = append(pats, payload.Text(e))
				}
			}
			f, err := newExcludeFilter(pats)
			if err != nil {
				return s, err
			}
			s.exclude = f
		}
	}
	return s, nil
}

func configValue(m *payload.Map, key string) any {
	v, _ := m.Get(key)
	return v
}

// excludeFilter is pyinotify's ExcludeFilter: regular expressions matched
// from the start of a path about to be watched.
type excludeFilter struct {
	res []*regexp.Regexp
}

func newExcludeFilter(pats []string) (*excludeFilter, error) {
	f := &excludeFilter{}
	for _, p := range pats {
		re, err := regexp.Compile(`^(?:` + p + `)`)
		if err != nil {
			return nil, fmt.Errorf("inotify: exclude %q: %w", p, err)
		}
		f.res = append(f.res, re)
	}
	return f, nil
}

func (f *excludeFilter) match(path string) bool {
	if f == nil {
		return false
	}
	for _, re := range f.res {
		if re.MatchString(path) {
			return true
		}
	}
	return false
}

func (b *inotifyBeacon) Close() error {
	var err error
	if b.w != nil {
		err = b.w.Close()
	}
	b.w, b.watches, b.dirs, b.synth = nil, nil, nil, nil
	return err
}

func (b *inotifyBeacon) Beacon(_ context.Context, req *beacons.Request) ([]*payload.Map, error) {
	cfg := beacons.ListToDict(req.Config)
	files, _ := cfg.Get("files")
	fm, _ := files.(*payload.Map)
	if fm == nil {
		fm = &payload.Map{}
	}
	if b.w == nil {
		w, err := fsnotify.NewWatcher()
		if err != nil {
			return nil, fmt.Errorf("inotify: %w", err)
		}
		b.w, b.watches, b.dirs = w, map[string]*inoWatch{}, map[string]bool{}
	}
	// The configured paths, cleaned, with their original keys.
	roots := map[string]string{}
	for _, k := range fm.Keys() {
		roots[filepath.Clean(k)] = k
	}
	coalesce, _ := cfg.Get("coalesce")

	var evs []inoEvent
	raws := b.drain()
	for i := 0; i < len(raws); i++ {
		// A Write or Chmod on a path watched both itself and through its
		// directory comes twice in a row: the directory's copy, then the
		// path's own.
		paired := i+1 < len(raws) && raws[i+1].Name == raws[i].Name && raws[i+1].Op == raws[i].Op
		out, both := b.translate(raws[i], false, paired)
		evs = append(evs, out...)
		if both {
			i++
		}
	}
	for len(b.synth) > 0 {
		raw := b.synth[0]
		b.synth = b.synth[1:]
		out, _ := b.translate(raw, true, false)
		evs = append(evs, out...)
	}
	var ret []*payload.Map
	seen := map[inoEvent]bool{}
	for _, e := range evs {
		if coalesce == true {
			if seen[e] {
				continue
			}
			seen[e] = true
		}
		if excluded(e, roots, fm) {
			logOf(b.env).Info("excluding path from inotify event", "path", e.path)
			continue
		}
		ret = append(ret, payload.NewMap("tag", e.tag, "path", e.path, "change", e.change))
	}

	// Add or update the watches of the configured paths.
	for _, key := range fm.Keys() {
		pv, _ := fm.Get(key)
		st, err := parseInotifySettings(pv)
		if err != nil {
			return ret, err
		}
		path := filepath.Clean(key)
		if w := b.watches[path]; w != nil {
			if w.mask != st.mask || w.autoAdd != st.autoAdd {
				for p, ww := range b.watches {
					if p == path || (st.rec && strings.HasPrefix(p, path+"/")) {
						ww.mask, ww.autoAdd = st.mask, st.autoAdd
					}
				}
			}
			continue
		}
		if _, err := os.Stat(path); err != nil {
			continue
		}
		b.addWatch(path, path, st.mask, st.rec, st.autoAdd, st.exclude)
	}
	return ret, nil
}

// drain reads the events fsnotify has ready (pyinotify's check_events with
// a short timeout), at most maxInotifyBatch.
func (b *inotifyBeacon) drain() []fsnotify.Event {
	var out []fsnotify.Event
	timer := time.NewTimer(drainWait)
	defer timer.Stop()
	for len(out) < maxInotifyBatch {
		select {
		case ev, ok := <-b.w.Events:
			if !ok {
				return out
			}
			out = append(out, ev)
		case err, ok := <-b.w.Errors:
			if ok && err != nil {
				logOf(b.env).Warn("inotify error", "err", err)
			}
		case <-timer.C:
			return out
		}
	}
	return out
}

// addWatch is WatchManager.add_watch: the path, and with rec every
// directory below it (symlinks not followed), unless excluded.
func (b *inotifyBeacon) addWatch(path, root string, mask uint32, rec, autoAdd bool, ex *excludeFilter) {
	add := func(p string, isDir bool) {
		if ex.match(p) || b.watches[p] != nil {
			return
		}
		if err := b.w.Add(p); err != nil {
			logOf(b.env).Warn("inotify: cannot watch", "path", p, "err", err)
			return
		}
		b.watches[p] = &inoWatch{path: p, root: root, isDir: isDir, mask: mask, autoAdd: autoAdd, exclude: ex}
		if isDir {
			b.rememberDir(p)
			b.rememberChildren(p)
		}
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return
	}
	if !rec || fi.Mode()&os.ModeSymlink != 0 || !fi.IsDir() {
		isDir := fi.IsDir()
		if fi.Mode()&os.ModeSymlink != 0 {
			if st, err := os.Stat(path); err == nil {
				isDir = st.IsDir()
			}
		}
		add(path, isDir)
		return
	}
	_ = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			add(p, true)
		}
		return nil
	})
}

func (b *inotifyBeacon) rememberDir(p string) {
	if len(b.dirs) < maxKnownDirs {
		b.dirs[p] = true
	}
}

// rememberChildren records the subdirectories of a watched directory, so
// that their removal can be reported with IN_ISDIR.
func (b *inotifyBeacon) rememberChildren(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if e.IsDir() {
			b.rememberDir(filepath.Join(dir, e.Name()))
		}
	}
}

// isDirNow tells whether path is a directory now (lstat), or was known to
// be one.
func (b *inotifyBeacon) isDirNow(path string) bool {
	if fi, err := os.Lstat(path); err == nil {
		return fi.IsDir()
	}
	return b.dirs[path]
}

// renamedFrom returns the source of a Create that fsnotify knows came from
// a rename (it keeps the field unexported but prints it).
func renamedFrom(ev fsnotify.Event) string {
	s := ev.String()
	i := strings.Index(s, " ← ")
	if i < 0 {
		return ""
	}
	src, err := strconv.Unquote(strings.TrimSpace(s[i+len(" ← "):]))
	if err != nil {
		return ""
	}
	return src
}

// translate turns one fsnotify event into the pyinotify events Salt's
// beacon would have seen, filtered by the watches' masks (except for the
// synthetic creations of autoAdd, which pyinotify reports whatever the
// mask). paired says the next event is the same; for a Write or Chmod on
// a path watched itself and through its directory, both are then handled
// and both is true.
func (b *inotifyBeacon) translate(ev fsnotify.Event, synthetic, paired bool) (events []inoEvent, both bool) {
	name := filepath.Clean(ev.Name)
	self := b.watches[name]
	parent := b.watches[filepath.Dir(name)]
	if parent != nil && (!parent.isDir || filepath.Dir(name) == name) {
		parent = nil
	}
	var out []inoEvent
	emit := func(w *inoWatch, bit uint32, path string, isDir bool) {
		if w == nil || (bit != inIgnored && !synthetic && w.mask&bit == 0) {
			return
		}
		out = append(out, inoEvent{tag: w.path, path: path, change: maskName(bit, isDir)})
	}
	// Which watches a Write or Chmod came from: with both watches, a pair
	// is the directory's copy then the path's own; a single one is the
	// path's own (a link count change reaches only the inode's watch).
	sources := []*inoWatch{parent}
	if self != nil {
		sources = []*inoWatch{self}
		if parent != nil && paired && ev.Op&(fsnotify.Write|fsnotify.Chmod) != 0 {
			sources, both = []*inoWatch{parent, self}, true
		}
	}

	if ev.Has(fsnotify.Create) && parent != nil {
		isDir := b.isDirNow(name)
		if isDir {
			b.rememberDir(name)
		}
		from := renamedFrom(ev)
		switch {
		case from != "":
			emit(parent, inMovedTo, name, isDir)
			if w := b.watches[from]; w != nil {
				w.movedTo = name
			}
		case synthetic || parent.mask&inCreate != 0:
			emit(parent, inCreate, name, isDir)
		default:
			emit(parent, inMovedTo, name, isDir)
		}
		if isDir && parent.autoAdd && !parent.exclude.match(name) && b.watches[name] == nil {
			b.autoAdd(parent, name)
		}
	}
	for _, source := range sources {
		if ev.Has(fsnotify.Write) {
			emit(source, inModify, name, false)
		}
		if ev.Has(fsnotify.Chmod) {
			emit(source, inAttrib, name, b.isDirNow(name))
		}
	}
	if ev.Has(fsnotify.Remove) {
		wasDir := b.dirs[name] || (self != nil && self.isDir)
		if self != nil {
			emit(self, inDeleteSelf, name, false)
			emit(self, inIgnored, name, false)
			b.dropWatch(name)
		}
		emit(parent, inDelete, name, wasDir)
		delete(b.dirs, name)
	}
	if ev.Has(fsnotify.Rename) {
		wasDir := b.dirs[name] || (self != nil && self.isDir)
		switch {
		case self != nil && parent != nil && !self.movePaired:
			// The parent's IN_MOVED_FROM; the watch's own IN_MOVE_SELF
			// follows.
			self.movePaired = true
			emit(parent, inMovedFrom, name, wasDir)
			delete(b.dirs, name)
		case self != nil:
			path := name
			if self.movedTo != "" {
				path = self.movedTo
			}
			out = append(out, b.moveSelf(self, path)...)
			b.dropWatch(name)
		default:
			emit(parent, inMovedFrom, name, wasDir)
			delete(b.dirs, name)
		}
	}
	return out, both
}

// moveSelf is the IN_MOVE_SELF of a watched path, reported under its new
// path as pyinotify does when it knows it.
func (b *inotifyBeacon) moveSelf(w *inoWatch, path string) []inoEvent {
	if w.mask&inMoveSelf == 0 {
		return nil
	}
	return []inoEvent{{tag: path, path: path, change: maskName(inMoveSelf, false)}}
}

// dropWatch forgets a watch fsnotify has removed.
func (b *inotifyBeacon) dropWatch(path string) {
	delete(b.watches, path)
	_ = b.w.Remove(path)
}

// autoAdd is pyinotify's process_IN_CREATE for a new directory under an
// auto_add watch: watch it too and report what is already inside it as
// created (mkdir -p, or files written before the watch was set).
func (b *inotifyBeacon) autoAdd(parent *inoWatch, dir string) {
	b.addWatch(dir, parent.root, parent.mask, false, parent.autoAdd, parent.exclude)
	if b.watches[dir] == nil {
		return
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	for _, n := range names {
		inner := filepath.Join(dir, n)
		if b.watches[inner] != nil {
			continue
		}
		fi, err := os.Stat(inner)
		if err != nil || (!fi.Mode().IsRegular() && !fi.IsDir()) {
			continue
		}
		if len(b.synth) < maxInotifyBatch {
			// Simulated creations are reported whatever the mask, as
			// pyinotify queues them as raw IN_CREATE events.
			b.synth = append(b.synth, fsnotify.Event{Name: inner, Op: fsnotify.Create})
		}
	}
}

// excluded applies the beacon's event-time exclude list of the configured
// path the event belongs to: {pattern: {regex: True}} items are searched
// in the path, strings with "*" are fnmatch patterns, other strings
// prefixes. Dict items without regex exclude nothing here (as in Salt;
// they still keep directories from being watched).
func excluded(e inoEvent, roots map[string]string, files *payload.Map) bool {
	path := e.tag
	var key string
	for {
		if k, ok := roots[path]; ok {
			key = k
			break
		}
		next := filepath.Dir(path)
		if next == path {
			return false
		}
		path = next
	}
	pc, _ := configValue(files, key).(*payload.Map)
	list, _ := configValue(pc, "exclude").([]any)
	out := false
	for _, ex := range list {
		switch x := ex.(type) {
		case *payload.Map:
			if x.Len() == 0 {
				continue
			}
			pat := payload.KeyString(x.Items()[0].Key)
			opts, _ := x.Items()[0].Value.(*payload.Map)
			if opts != nil && payload.Truthy(configValue(opts, "regex")) {
				re, err := regexp.Compile(pat)
				if err != nil {
					continue
				}
				if re.MatchString(e.path) {
					out = true
				}
			}
		case string:
			if strings.Contains(x, "*") {
				if fnmatch(e.path, x) {
					out = true
				}
			} else if strings.HasPrefix(e.path, x) {
				out = true
			}
		}
	}
	return out
}

// fnmatch is Python's fnmatch.fnmatch on POSIX: "*" and "?" match any
// character, "/" included; [seq] and [!seq] sets.
func fnmatch(name, pat string) bool {
	re, err := regexp.Compile(fnmatchTranslate(pat))
	if err != nil {
		return false
	}
	return re.MatchString(name)
}

// fnmatchTranslate is fnmatch.translate.
func fnmatchTranslate(pat string) string {
	var b strings.Builder
	b.WriteString(`(?s:`)
	for i := 0; i < len(pat); {
		c := pat[i]
		i++
		switch c {
		case '*':
			for i < len(pat) && pat[i] == '*' {
				i++
			}
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		case '[':
			j := i
			if j < len(pat) && pat[j] == '!' {
				j++
			}
			if j < len(pat) && pat[j] == ']' {
				j++
			}
			for j < len(pat) && pat[j] != ']' {
				j++
			}
			if j >= len(pat) {
				b.WriteString(`\[`)
				continue
			}
			stuff := pat[i:j]
			i = j + 1
			stuff = strings.ReplaceAll(stuff, `\`, `\\`)
			if strings.HasPrefix(stuff, "!") {
				stuff = "^" + stuff[1:]
			} else if strings.HasPrefix(stuff, "^") {
				stuff = `\` + stuff
			}
			b.WriteString("[" + stuff + "]")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`)\z`)
	return "^" + b.String()
}
