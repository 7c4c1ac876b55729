package builtin

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gsalt/gsalt/beacons"
	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/wire/payload"
)

// Inotify is the inotify beacon (salt/beacons/inotify.py), reading Linux
// inotify directly the way pyinotify does. Configuration:
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
// tagged with the path of the watch that saw it (so tags read
// salt/beacon/<id>/inotify//dir), as Salt's beacon does. The first run
// only sets the watches up; later runs report what the kernel queued
// since, then add watches for configured paths that have appeared.
//
// The configured mask goes to inotify_add_watch(2) as is, so every mask
// Salt accepts works: access, attrib, close_nowrite, close_write, create,
// delete, delete_self, modify, moved_from, moved_to, move_self, open,
// and the options excl_unlink, oneshot and onlydir. The kernel's
// IN_IGNORED (a watch went away) and IN_UNMOUNT are always reported, and
// "|IN_ISDIR" is added when the kernel flags a directory. Editors and
// renderers that write a file in place end with close_write; those that
// write a temporary file and rename it over the target produce moved_to.
//
// pyinotify's bookkeeping is reproduced: auto_add watches also ask for
// IN_CREATE (and report it) until Salt's next run re-applies the
// configured mask (Salt compares the watch's mask with the configured
// one, which differ when create is not configured); a new directory under
// an auto_add watch is watched and what is already inside it reported as
// created; a directory moved in from elsewhere is watched recursively;
// a watch whose path is renamed between watched directories follows it
// (its events then carry the new path) and one renamed elsewhere gets the
// suffix "-unknown-path". A kernel queue overflow is logged (Salt's
// beacon fails on it) and the lost events are not reported.
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
	inQOverflow    uint32 = 0x4000
	inIgnored      uint32 = 0x8000
	inOnlydir      uint32 = 0x1000000
	inDontFollow   uint32 = 0x2000000
	inExclUnlink   uint32 = 0x4000000
	inMaskAdd      uint32 = 0x20000000
	inIsdir        uint32 = 0x40000000
	inOneshot      uint32 = 0x80000000

	inAllEvents   = 0xfff
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

// maskBit is Salt's _get_mask: every pyinotify IN_* name, lower case
// without the prefix, or 0.
func maskBit(name string) uint32 {
	if b, ok := inotifyMasks[name]; ok {
		return b
	}
	switch name {
	case "q_overflow":
		return inQOverflow
	case "dont_follow":
		return inDontFollow
	case "mask_add":
		return inMaskAdd
	case "isdir":
		return inIsdir
	case "all_events":
		return inAllEvents
	}
	return 0
}

// inotifyNames are pyinotify's names of single event bits.
var inotifyNames = map[uint32]string{
	inAccess: "IN_ACCESS", inModify: "IN_MODIFY", inAttrib: "IN_ATTRIB",
	inCloseWrite: "IN_CLOSE_WRITE", inCloseNowrite: "IN_CLOSE_NOWRITE", inOpen: "IN_OPEN",
	inMovedFrom: "IN_MOVED_FROM", inMovedTo: "IN_MOVED_TO", inCreate: "IN_CREATE",
	inDelete: "IN_DELETE", inDeleteSelf: "IN_DELETE_SELF", inMoveSelf: "IN_MOVE_SELF",
	inUnmount: "IN_UNMOUNT", inQOverflow: "IN_Q_OVERFLOW", inIgnored: "IN_IGNORED",
	inOnlydir: "IN_ONLYDIR", inDontFollow: "IN_DONT_FOLLOW", inExclUnlink: "IN_EXCL_UNLINK",
	inMaskAdd: "IN_MASK_ADD", inIsdir: "IN_ISDIR", inOneshot: "IN_ONESHOT",
	inAllEvents: "ALL_EVENTS",
}

// maskName is pyinotify's EventsCodes.maskname; ok is false for a mask
// pyinotify has no name for.
func maskName(mask uint32) (name string, ok bool) {
	bits, suffix := mask, ""
	if mask&inIsdir != 0 {
		bits, suffix = mask&^inIsdir, "|IN_ISDIR"
	}
	n, ok := inotifyNames[bits]
	return n + suffix, ok
}

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
	// maxInotifyBatch is how many kernel events one run reads at most
	// (the rest stay queued in the kernel for the next run); one read
	// buffer's worth may come on top.
	maxInotifyBatch = 8192
	// maxInotifyQueue bounds the events waiting in one run, simulated
	// creations included.
	maxInotifyQueue = 4 * maxInotifyBatch
	// maxInotifyWatches bounds the watches one beacon holds.
	maxInotifyWatches = 1 << 16
	// maxMoveRecords bounds the rename records kept to follow moves.
	maxMoveRecords = 4096
	// moveRecordTTL is how long a rename record is kept (pyinotify's
	// cleanup after a minute).
	moveRecordTTL = time.Minute
	// inotifyReadBuf is the read buffer: whole events, at most 16 bytes
	// and NAME_MAX+1 of name each.
	inotifyReadBuf = 64 << 10
)

// inoWatch is pyinotify's Watch: one kernel watch descriptor and what
// the beacon knows about it.
type inoWatch struct {
	wd   int32
	path string
	// mask is the mask the watch was added with (IN_CREATE included
	// for auto_add); re-applying the configured mask does not change it,
	// as in pyinotify.
	mask    uint32
	autoAdd bool
	exclude *excludeFilter
}

// rawEvent is one inotify_event as read (or simulated for auto_add).
type rawEvent struct {
	wd     int32
	mask   uint32
	cookie uint32
	name   string
}

// moveRecord is a rename source or destination with when it was seen.
type moveRecord struct {
	path string
	at   time.Time
}

// inotifyBeacon holds the inotify descriptor and pyinotify's watch
// manager and notifier state. The Manager calls Beacon and Close from
// one goroutine at a time; the beacon starts no goroutine of its own.
type inotifyBeacon struct {
	env      *beacons.Env
	fd       int
	open     bool
	coalesce bool
	watches  map[int32]*inoWatch
	queue    []rawEvent
	seen     map[rawEvent]struct{}
	mvCookie map[uint32]moveRecord // rename cookie -> source path
	mv       map[string]moveRecord // source path -> destination path
	buf      []byte
}

// inoEvent is one change before exclusion.
type inoEvent struct {
	tag, path, change string
}

// start opens the inotify descriptor (Salt's _get_notifier).
func (b *inotifyBeacon) start(cfg *payload.Map) error {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return fmt.Errorf("inotify: init: %w", err)
	}
	co, _ := cfg.Get("coalesce")
	*b = inotifyBeacon{
		env:      b.env,
		fd:       fd,
		open:     true,
		coalesce: co == true,
		watches:  map[int32]*inoWatch{},
		seen:     map[rawEvent]struct{}{},
		mvCookie: map[uint32]moveRecord{},
		mv:       map[string]moveRecord{},
		buf:      make([]byte, inotifyReadBuf),
	}
	return nil
}

// Close closes the inotify descriptor; the next run starts afresh.
func (b *inotifyBeacon) Close() error {
	if !b.open {
		return nil
	}
	err := unix.Close(b.fd)
	*b = inotifyBeacon{env: b.env}
	if err != nil {
		return fmt.Errorf("inotify: close: %w", err)
	}
	return nil
}

func (b *inotifyBeacon) Beacon(_ context.Context, req *beacons.Request) ([]*payload.Map, error) {
	cfg := beacons.ListToDict(req.Config)
	files, _ := cfg.Get("files")
	fm, _ := files.(*payload.Map)
	if fm == nil {
		fm = &payload.Map{}
	}
	if !b.open {
		if err := b.start(cfg); err != nil {
			return nil, err
		}
	}
	// The configured paths, cleaned, with their original keys.
	roots := map[string]string{}
	for _, k := range fm.Keys() {
		roots[filepath.Clean(k)] = k
	}

	if err := b.read(); err != nil {
		return nil, err
	}
	var ret []*payload.Map
	for _, e := range b.process() {
		if excluded(e, roots, fm) {
			logOf(b.env).Info("excluding path from inotify event", "path", e.path)
			continue
		}
		ret = append(ret, payload.NewMap("tag", e.tag, "path", e.path, "change", e.change))
	}

	// Update the watches of the configured paths, add the missing ones.
	current := map[string]bool{}
	for _, w := range b.watches {
		current[w.path] = true
	}
	for _, key := range fm.Keys() {
		pv, _ := fm.Get(key)
		st, err := parseInotifySettings(pv)
		if err != nil {
			return ret, err
		}
		path := filepath.Clean(key)
		if current[path] {
			for _, wd := range b.sortedWds() {
				w := b.watches[wd]
				if w != nil && w.path == path && (w.mask != st.mask || w.autoAdd != st.autoAdd) {
					b.updateWatch(wd, st.mask, st.rec, st.autoAdd)
				}
			}
			continue
		}
		if _, err := os.Stat(path); err != nil {
			continue
		}
		b.addWatch(path, st.mask, st.rec, st.autoAdd, st.exclude)
	}
	return ret, nil
}

// read moves the events the kernel has queued into b.queue (pyinotify's
// read_events), stopping once maxInotifyBatch are waiting.
func (b *inotifyBeacon) read() error {
	for len(b.queue) < maxInotifyBatch {
		n, err := unix.Read(b.fd, b.buf)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN):
			return nil
		case err != nil:
			return fmt.Errorf("inotify: read: %w", err)
		case n <= 0:
			return nil
		}
		b.parse(b.buf[:n])
	}
	return nil
}

// parse splits one read into events; with coalesce, an event equal to
// one already waiting is dropped.
func (b *inotifyBeacon) parse(p []byte) {
	const hdr = unix.SizeofInotifyEvent
	for len(p) >= hdr {
		ev := rawEvent{
			wd:     int32(binary.NativeEndian.Uint32(p[0:4])),
			mask:   binary.NativeEndian.Uint32(p[4:8]),
			cookie: binary.NativeEndian.Uint32(p[8:12]),
		}
		n := int(binary.NativeEndian.Uint32(p[12:16]))
		if n > len(p)-hdr {
			logOf(b.env).Warn("inotify: truncated event", "len", n)
			return
		}
		ev.name = strings.TrimRight(string(p[hdr:hdr+n]), "\x00")
		p = p[hdr+n:]
		if b.coalesce {
			if _, dup := b.seen[ev]; dup {
				continue
			}
			b.seen[ev] = struct{}{}
		}
		b.queue = append(b.queue, ev)
	}
}

// process is pyinotify's process_events with Salt's _enqueue: each
// waiting event (and each creation simulated on the way) becomes the
// beacon's {tag, path, change}, after the watch manager's own handling.
func (b *inotifyBeacon) process() []inoEvent {
	var out []inoEvent
	for i := 0; i < len(b.queue); i++ {
		raw := b.queue[i]
		if raw.mask&inQOverflow != 0 {
			logOf(b.env).Warn("inotify: event queue overflowed, events were lost")
			continue
		}
		w := b.watches[raw.wd]
		if w == nil {
			if raw.mask&inIgnored == 0 {
				logOf(b.env).Debug("inotify: event for an unknown watch", "wd", raw.wd, "mask", raw.mask)
			}
			continue
		}
		change, ok := maskName(raw.mask)
		if !ok {
			logOf(b.env).Warn("inotify: unknown event mask", "mask", raw.mask)
			continue
		}
		switch raw.mask &^ inIsdir {
		case inCreate:
			b.created(w, raw)
		case inMovedFrom:
			b.recordCookie(raw.cookie, filepath.Join(w.path, raw.name))
		case inMovedTo:
			b.movedTo(w, raw)
		case inMoveSelf:
			b.movedSelf(w)
		}
		if w = b.watches[raw.wd]; w == nil {
			continue
		}
		pathname := w.path
		if raw.name != "" {
			pathname = filepath.Join(w.path, raw.name)
		}
		if abs, err := filepath.Abs(pathname); err == nil {
			pathname = abs
		}
		out = append(out, inoEvent{tag: w.path, path: pathname, change: change})
		if raw.mask&inIgnored != 0 {
			delete(b.watches, raw.wd)
		}
	}
	clear(b.queue)
	b.queue = b.queue[:0]
	clear(b.seen)
	b.expireMoves(time.Now())
	return out
}

// created is pyinotify's process_IN_CREATE: a new directory under an
// auto_add watch is watched with the same settings, and what is already
// in it is queued as created.
func (b *inotifyBeacon) created(w *inoWatch, raw rawEvent) {
	if raw.mask&inIsdir == 0 {
		return
	}
	dir := filepath.Join(w.path, raw.name)
	if !w.autoAdd || w.exclude.match(dir) {
		return
	}
	wd, ok := b.addWatch(dir, w.mask, false, w.autoAdd, w.exclude)[dir]
	if !ok || wd <= 0 {
		return
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return
	}
	names, err := listDir(dir)
	if err != nil {
		logOf(b.env).Debug("inotify: cannot list new directory", "path", dir, "err", err)
		return
	}
	watched := make(map[string]bool, len(b.watches))
	for _, o := range b.watches {
		watched[o.path] = true
	}
	for _, name := range names {
		inner := filepath.Join(dir, name)
		if watched[inner] {
			continue
		}
		fi, err := os.Stat(inner)
		if err != nil {
			continue
		}
		var flags uint32
		switch {
		case fi.Mode().IsRegular():
			flags = inCreate
		case fi.IsDir():
			flags = inCreate | inIsdir
		default:
			continue
		}
		if len(b.queue) >= maxInotifyQueue {
			logOf(b.env).Warn("inotify: too many events, simulated creations dropped", "path", dir)
			return
		}
		b.queue = append(b.queue, rawEvent{wd: wd, mask: flags, name: name})
	}
}

// movedTo is pyinotify's process_IN_MOVED_TO: pair the rename with its
// source, or watch a directory moved in from elsewhere under an
// auto_add watch (recursively, without simulated events).
func (b *inotifyBeacon) movedTo(w *inoWatch, raw rawEvent) {
	dst := filepath.Join(w.path, raw.name)
	if src, ok := b.mvCookie[raw.cookie]; ok {
		b.recordMove(src.path, dst)
		return
	}
	if raw.mask&inIsdir != 0 && w.autoAdd && !w.exclude.match(dst) {
		b.addWatch(dst, w.mask, true, true, w.exclude)
	}
}

// movedSelf is pyinotify's process_IN_MOVE_SELF: a watch renamed within
// watched directories takes its new path (with every watch below it);
// otherwise its path is marked unknown.
func (b *inotifyBeacon) movedSelf(w *inoWatch) {
	src := w.path
	dst, ok := b.mv[src]
	if !ok {
		logOf(b.env).Error("inotify: watched path was moved out of the watched directories, its path cannot be trusted",
			"path", src, "watch_parent", filepath.Dir(src))
		if !strings.HasSuffix(w.path, "-unknown-path") {
			w.path += "-unknown-path"
		}
		return
	}
	w.path = dst.path
	prefix := src + string(filepath.Separator)
	for _, o := range b.watches {
		if strings.HasPrefix(o.path, prefix) {
			o.path = filepath.Join(dst.path, o.path[len(prefix):])
		}
	}
}

// recordCookie remembers a rename's source by its cookie, within
// maxMoveRecords.
func (b *inotifyBeacon) recordCookie(cookie uint32, src string) {
	if len(b.mvCookie) < maxMoveRecords {
		b.mvCookie[cookie] = moveRecord{path: src, at: time.Now()}
	}
}

// recordMove remembers where a path was renamed to, within
// maxMoveRecords.
func (b *inotifyBeacon) recordMove(src, dst string) {
	if len(b.mv) < maxMoveRecords {
		b.mv[src] = moveRecord{path: dst, at: time.Now()}
	}
}

// expireMoves drops rename records older than moveRecordTTL.
func (b *inotifyBeacon) expireMoves(now time.Time) {
	for k, r := range b.mvCookie {
		if now.Sub(r.at) > moveRecordTTL {
			delete(b.mvCookie, k)
		}
	}
	for k, r := range b.mv {
		if now.Sub(r.at) > moveRecordTTL {
			delete(b.mv, k)
		}
	}
}

// addWatch is pyinotify's WatchManager.add_watch: path, and with rec the
// directories below it in os.walk order (symlinks not followed), each
// unless excluded. It returns the watch descriptor of each path tried
// (-2 excluded, -1 failed).
func (b *inotifyBeacon) addWatch(path string, mask uint32, rec, autoAdd bool, ex *excludeFilter) map[string]int32 {
	ret := map[string]int32{}
	add := func(p string) {
		if ex.match(p) {
			ret[p] = -2
			return
		}
		ret[p] = b.addOne(p, mask, autoAdd, ex)
	}
	fi, err := os.Lstat(path)
	if !rec || (err == nil && fi.Mode()&os.ModeSymlink != 0) || !isDir(path) {
		add(path)
		return ret
	}
	walkTopDown(path, add)
	return ret
}

// addOne is pyinotify's __add_watch.
func (b *inotifyBeacon) addOne(path string, mask uint32, autoAdd bool, ex *excludeFilter) int32 {
	path = filepath.Clean(path)
	if autoAdd && mask&inCreate == 0 {
		mask |= inCreate
	}
	if len(b.watches) >= maxInotifyWatches {
		logOf(b.env).Error("inotify: too many watches", "path", path, "max", maxInotifyWatches)
		return -1
	}
	wd, err := unix.InotifyAddWatch(b.fd, path, mask)
	if err != nil {
		logOf(b.env).Error("inotify: cannot watch", "path", path, "err", err)
		return -1
	}
	b.watches[int32(wd)] = &inoWatch{wd: int32(wd), path: path, mask: mask, autoAdd: autoAdd, exclude: ex}
	return int32(wd)
}

// updateWatch is pyinotify's update_watch as Salt calls it: the kernel
// mask of the watch (and with rec of the watches below it) is replaced,
// auto_add can only be turned on, and the recorded mask stays.
func (b *inotifyBeacon) updateWatch(wd int32, mask uint32, rec, autoAdd bool) {
	wds := []int32{wd}
	if rec {
		wds = b.subWatches(wd)
	}
	for _, awd := range wds {
		w := b.watches[awd]
		if w == nil || w.path == "" {
			logOf(b.env).Error("inotify: update of an invalid watch", "wd", awd)
			continue
		}
		if mask != 0 {
			got, err := unix.InotifyAddWatch(b.fd, w.path, mask)
			if err != nil {
				logOf(b.env).Error("inotify: cannot update watch", "path", w.path, "err", err)
				continue
			}
			if int32(got) != awd {
				// The path names another file now; pyinotify fails the
				// run here. Drop the stray kernel watch.
				logOf(b.env).Warn("inotify: watched path was replaced", "path", w.path)
				if b.watches[int32(got)] == nil {
					_, _ = unix.InotifyRmWatch(b.fd, uint32(got))
				}
				continue
			}
		}
		if autoAdd {
			w.autoAdd = true
		}
	}
}

// subWatches is pyinotify's __get_sub_rec: wd and, for a directory, the
// watches whose path is below its path.
func (b *inotifyBeacon) subWatches(wd int32) []int32 {
	w := b.watches[wd]
	if w == nil {
		return nil
	}
	out := []int32{wd}
	if !isDir(w.path) {
		return out
	}
	root := filepath.Clean(w.path)
	for _, id := range b.sortedWds() {
		cur := b.watches[id].path
		if root == "/" || strings.HasPrefix(cur, root+"/") {
			out = append(out, id)
		}
	}
	return out
}

// sortedWds lists the watch descriptors in creation order.
func (b *inotifyBeacon) sortedWds() []int32 {
	out := make([]int32, 0, len(b.watches))
	for wd := range b.watches {
		out = append(out, wd)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// isDir is os.path.isdir (symlinks followed).
func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// listDir is os.listdir: the names in a directory, in directory order.
func listDir(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// walkTopDown is os.walk(top) as pyinotify uses it: a directory's
// entries are read before it is yielded, then its subdirectories are
// walked in directory order; symbolic links are not followed and a
// directory that cannot be read is skipped with what is below it.
func walkTopDown(top string, yield func(string)) {
	f, err := os.Open(top)
	if err != nil {
		return
	}
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return
	}
	yield(top)
	for _, e := range ents {
		if e.IsDir() {
			walkTopDown(filepath.Join(top, e.Name()), yield)
		}
	}
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
				s.mask |= maskBit(payload.Text(n))
			}
		case string:
			s.mask = maskBit(x)
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
				if py.Fnmatch(e.path, x) {
					out = true
				}
			} else if strings.HasPrefix(e.path, x) {
				out = true
			}
		}
	}
	return out
}
