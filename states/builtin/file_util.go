package builtin

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/internal/pyhash"
	"github.com/gsalt/gsalt/wire/payload"
)

// fileStatInfo is salt.modules.file.stats for one path.
type fileStatInfo struct {
	uid, gid int
	// user and group are the names, or the numeric id (int) when the id has
	// no name, like Salt's uid_to_user.
	user, group any
	// mode is the normalised permission string ("0644").
	mode string
	// typ is "file", "dir", "link", "char", "block", "pipe" or "socket".
	typ  string
	size int64
	info fs.FileInfo
	// isLink says the path itself is a symlink (whatever follow chose).
	isLink bool
}

// errFilePathNotFound mirrors Salt's "Path not found: <path>" error of stats.
var errFilePathNotFound = errors.New("Path not found")

// fileStatPath is file.stats: follow selects stat over lstat; a broken symlink is
// always lstat'ed.
func fileStatPath(p string, follow bool) (*fileStatInfo, error) {
	return fileStatPathNames(p, follow, true)
}

// fileStatPathNames is fileStatPath; with names false the user and group
// names are not looked up (nil), for callers that only need ids and mode.
func fileStatPathNames(p string, follow, names bool) (*fileStatInfo, error) {
	// lstat first: for anything but a symlink it is the stat too, so the
	// common case takes one system call; a link is stat'ed through when
	// following and it is not broken.
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", errFilePathNotFound, p)
	}
	isLink := fi.Mode()&fs.ModeSymlink != 0
	if isLink && follow {
		if sfi, e := os.Stat(p); e == nil {
			fi = sfi
		}
	}
	st := &fileStatInfo{info: fi, size: fi.Size(), uid: -1, gid: -1, isLink: isLink}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.uid, st.gid = int(sys.Uid), int(sys.Gid)
	}
	if names {
		st.user, st.group = fileUIDToUser(st.uid), fileGIDToGroup(st.gid)
	}
	st.mode = fileNormalizeModeString(strconv.FormatUint(uint64(fileUnixPerm(fi.Mode())), 8))
	m := fi.Mode()
	switch {
	case m&fs.ModeSymlink != 0:
		st.typ = "link"
	case m.IsDir():
		st.typ = "dir"
	case m&fs.ModeCharDevice != 0:
		st.typ = "char"
	case m&fs.ModeDevice != 0:
		st.typ = "block"
	case m&fs.ModeNamedPipe != 0:
		st.typ = "pipe"
	case m&fs.ModeSocket != 0:
		st.typ = "socket"
	default:
		st.typ = "file"
	}
	return st, nil
}

// fileUnixPerm returns the permission bits including setuid, setgid and sticky.
func fileUnixPerm(m fs.FileMode) uint32 {
	p := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		p |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		p |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		p |= 0o1000
	}
	return p
}

// fileGoMode converts unix permission bits to an fs.FileMode for os.Chmod.
func fileGoMode(p uint32) fs.FileMode {
	m := fs.FileMode(p & 0o777)
	if p&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if p&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if p&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// fileNormalizeMode is salt.utils.files.normalize_mode: nil stays absent ("",
// false); anything else becomes a string with at least four digits.
func fileNormalizeMode(v any) (string, bool) {
	if v == nil {
		return "", false
	}
	return fileNormalizeModeString(pyfmt.Str(v)), true
}

func fileNormalizeModeString(s string) string {
	s = strings.ReplaceAll(s, "0o", "0")
	s = strings.Trim(s, `"`)
	s = strings.Trim(s, `'`)
	s = strings.TrimLeft(s, "0")
	for len(s) < 4 {
		s = "0" + s
	}
	return s
}

// fileParseMode is set_mode's int(mode, 8) after stripping "0Oo".
func fileParseMode(mode string) (uint32, bool) {
	s := strings.TrimLeft(mode, "0Oo")
	if s == "" {
		s = "0"
	}
	n, err := strconv.ParseUint(s, 8, 32)
	if err != nil || n > 0o7777 {
		return 0, false
	}
	return uint32(n), true
}

// fileUIDToUser returns the user name of uid, or uid itself when unknown.
func fileUIDToUser(uid int) any {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return u.Username
	}
	return int64(uid)
}

// fileGIDToGroup returns the group name of gid, or gid itself when unknown.
func fileGIDToGroup(gid int) any {
	if g, err := user.LookupGroupId(strconv.Itoa(gid)); err == nil {
		return g.Name
	}
	return int64(gid)
}

// fileUserToUID is file.user_to_uid: an int is returned as is, a name is looked
// up; ok is false when the user does not exist. nil means the current user.
func fileUserToUID(v any) (int, bool) {
	if n, isInt := v.(int64); isInt {
		return int(n), true
	}
	name := pyfmt.Str(v)
	if v == nil {
		if u, err := user.Current(); err == nil {
			name = u.Username
		}
	}
	u, err := user.Lookup(name)
	if err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(u.Uid)
	return n, err == nil
}

// fileGroupToGID is file.group_to_gid; nil or an unknown group gives false.
func fileGroupToGID(v any) (int, bool) {
	if v == nil {
		return 0, false
	}
	if n, isInt := v.(int64); isInt {
		return int(n), true
	}
	g, err := user.LookupGroup(pyfmt.Str(v))
	if err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(g.Gid)
	return n, err == nil
}

// filePrimaryGroup returns the name of a user's primary group (user.info gid).
func filePrimaryGroup(name any) any {
	u, err := user.Lookup(pyfmt.Str(name))
	if err != nil {
		return fileGIDToGroup(0)
	}
	gid, _ := strconv.Atoi(u.Gid)
	return fileGIDToGroup(gid)
}

// fileSameOwner reports whether a wanted user (or group) equals the current one:
// the wanted value's str() equals the name, or an int wanted value equals the
// numeric id.
func fileSameOwner(want, curName any, curID int) bool {
	if pyfmt.Str(want) == pyfmt.Str(curName) {
		if _, isInt := curName.(int64); !isInt {
			return true
		}
		if _, isInt := want.(int64); !isInt {
			// Python compares "1000" (str) with 1000 (int): not equal.
			return false
		}
	}
	if n, isInt := want.(int64); isInt && int(n) == curID {
		return true
	}
	return false
}

// fileSameOwnerStrict is check_file_meta's comparison, which compares the
// wanted value without str(): a string equals the name, an int the id.
func fileSameOwnerStrict(want, curName any, curID int) bool {
	if n, isInt := want.(int64); isInt {
		if c, ok := curName.(int64); ok && c == n {
			return true
		}
		return int(n) == curID
	}
	if s, isStr := want.(string); isStr {
		c, ok := curName.(string)
		return ok && c == s
	}
	return false
}

// fileChownPath is file.chown / file.lchown: it returns Salt's error text
// ("User does not exist\n", ...) or a system error.
func fileChownPath(p string, userArg, groupArg any, link bool) (string, error) {
	uid, gid := -1, -1
	var msg string
	if n, ok := fileUserToUID(userArg); ok {
		uid = n
	} else if payload.Truthy(userArg) {
		msg += "User does not exist\n"
	}
	if n, ok := fileGroupToGID(groupArg); ok {
		gid = n
	} else if payload.Truthy(groupArg) {
		msg += "Group does not exist\n"
	}
	if link {
		if msg != "" {
			return msg, nil
		}
		return "", os.Lchown(p, uid, gid)
	}
	if _, err := os.Stat(p); err != nil {
		if os.Lchown(p, uid, gid) == nil {
			return "", nil
		}
		msg += "File not found"
	}
	if msg != "" {
		return msg, nil
	}
	return "", os.Chown(p, uid, gid)
}

// fileSetMode is file.set_mode; an invalid mode is ignored (Salt returns
// "Invalid Mode" and the later verification reports the failure).
func fileSetMode(p, mode string) {
	if m, ok := fileParseMode(mode); ok {
		_ = os.Chmod(p, fileGoMode(m))
	}
}

// filePyOSError formats an error like Python's OSError str():
// "[Errno 2] No such file or directory: '/x'".
func filePyOSError(err error) string {
	var pe *fs.PathError
	var le *os.LinkError
	var errno syscall.Errno
	switch {
	case errors.As(err, &pe) && errors.As(pe.Err, &errno):
		return fmt.Sprintf("[Errno %d] %s: %s", int(errno), fileStrerror(errno), pyfmt.Repr(pe.Path))
	case errors.As(err, &le) && errors.As(le.Err, &errno):
		return fmt.Sprintf("[Errno %d] %s: %s -> %s", int(errno), fileStrerror(errno), pyfmt.Repr(le.Old), pyfmt.Repr(le.New))
	case errors.As(err, &errno):
		return fmt.Sprintf("[Errno %d] %s", int(errno), fileStrerror(errno))
	}
	return err.Error()
}

// fileStrerror capitalises Go's errno text the way C's fileStrerror spells it.
func fileStrerror(e syscall.Errno) string {
	s := e.Error()
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// fileNewHash returns a hash by Salt's name.
func fileNewHash(form string) (hash.Hash, bool) {
	form = strings.ToLower(form)
	if form == "" {
		form = "sha256"
	}
	return pyhash.NewCommon(form)
}

// fileHashLen maps hex digest lengths to hash names (salt's HASHES_REVMAP).
var fileHashLen = map[int]string{32: "md5", 40: "sha1", 56: "sha224", 64: "sha256", 96: "sha384", 128: "sha512"}

// fileHashFile is file.get_hash.
func fileHashFile(p, form string) (string, error) {
	h, ok := fileNewHash(form)
	if !ok {
		return "", fmt.Errorf("Invalid hash type %s", form)
	}
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// fileCurrentUmask reads the process umask from /proc/self/status (022 when
// unavailable): changing it to read it would race other goroutines.
func fileCurrentUmask() uint32 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0o022
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Umask:"); ok {
			if n, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
				return uint32(n)
			}
		}
	}
	return 0o022
}

// fileMkstemp creates an empty 0600 file like tempfile.mkstemp.
func fileMkstemp(dir, prefix, suffix string) (string, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	f, err := os.CreateTemp(dir, strings.ReplaceAll(prefix, "*", "")+"*"+strings.ReplaceAll(suffix, "*", ""))
	if err != nil {
		return "", err
	}
	name := f.Name()
	if err := f.Close(); err != nil {
		return "", err
	}
	return name, nil
}

// fileTempPrefix is salt.utils.files.TEMPFILE_PREFIX.
const fileTempPrefix = "__salt.tmp."

// fileCopyFileAtomic is salt.utils.files.copyfile: source is copied next to dest
// and renamed over it; an existing dest keeps its owner and mode and is
// first backed up under cachedir/file_backup when backupMode is "minion"
// (or "both").
func fileCopyFileAtomic(source, dest, backupMode, cachedir string) error {
	if st, err := os.Stat(source); err != nil || !st.Mode().IsRegular() {
		return fmt.Errorf("[Errno 2] No such file or directory: %s", source)
	}
	if st, err := os.Stat(filepath.Dir(dest)); err != nil || !st.IsDir() {
		return fmt.Errorf("[Errno 2] No such file or directory: %s", dest)
	}
	abs, err := filepath.Abs(dest)
	if err != nil {
		return err
	}
	tgt, err := fileMkstemp(filepath.Dir(abs), filepath.Base(dest), "")
	if err != nil {
		return err
	}
	defer os.Remove(tgt)
	if err := fileCopyContents(source, tgt); err != nil {
		return err
	}
	if (backupMode == "minion" || backupMode == "both") && cachedir != "" {
		if _, err := os.Stat(dest); err == nil {
			if err := fileBackupMinion(dest, filepath.Join(cachedir, "file_backup")); err != nil {
				return err
			}
		}
	}
	fi, statErr := os.Stat(dest)
	if err := os.Rename(tgt, dest); err != nil {
		return err
	}
	if statErr == nil {
		if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
			_ = os.Chown(dest, int(sys.Uid), int(sys.Gid))
		}
		_ = os.Chmod(dest, fileGoMode(fileUnixPerm(fi.Mode())))
	}
	return nil
}

// fileCopyContents is shutil.copyfile (contents only; dst is created 0644 or
// keeps its mode).
func fileCopyContents(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// fileBackupMinion is salt.utils.files.backup_minion: a copy named
// <bkroot>/<dir without leading slash>/<base>_<Day_Mon_DD_HH:MM:SS_usecs_YYYY>
// keeping owner and mode.
func fileBackupMinion(p, bkroot string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	dir, base := filepath.Split(p)
	dir = strings.TrimSuffix(dir, "/")
	now := time.Now()
	usecs := strconv.FormatInt(now.UnixMicro(), 10)
	if len(usecs) > 6 {
		usecs = usecs[len(usecs)-6:]
	}
	stamp := now.Format("Mon_Jan_02_15:04:05_") + usecs + "_" + now.Format("2006")
	bk := filepath.Join(bkroot, strings.TrimPrefix(dir, "/"), base+"_"+stamp)
	if err := os.MkdirAll(filepath.Dir(bk), 0o777); err != nil {
		return err
	}
	if err := fileCopyContents(p, bk); err != nil {
		return err
	}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		_ = os.Chown(bk, int(sys.Uid), int(sys.Gid))
	}
	return os.Chmod(bk, fileGoMode(fileUnixPerm(fi.Mode())))
}

// fileExpandUser is os.path.expanduser.
func fileExpandUser(p string) string {
	if !strings.HasPrefix(p, "~") {
		return p
	}
	rest := p[1:]
	i := strings.IndexByte(rest, '/')
	name, tail := rest, ""
	if i >= 0 {
		name, tail = rest[:i], rest[i:]
	}
	var home string
	if name == "" {
		home = os.Getenv("HOME")
		if home == "" {
			if u, err := user.Current(); err == nil {
				home = u.HomeDir
			}
		}
	} else if u, err := user.Lookup(name); err == nil {
		home = u.HomeDir
	} else {
		return p
	}
	if home == "" {
		return p
	}
	return strings.TrimSuffix(home, "/") + tail
}

// filePyDirname is os.path.dirname (no cleaning: "/a/b/" gives "/a/b").
func filePyDirname(p string) string {
	i := strings.LastIndexByte(p, '/') + 1
	head := p[:i]
	if head != "" && strings.Trim(head, "/") != "" {
		head = strings.TrimRight(head, "/")
	}
	return head
}

// filePyBasename is os.path.basename.
func filePyBasename(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

// filePyJoin is os.path.join for two POSIX parts.
func filePyJoin(a, b string) string {
	if strings.HasPrefix(b, "/") || a == "" {
		return b
	}
	if strings.HasSuffix(a, "/") {
		return a + b
	}
	return a + "/" + b
}

// fileIsFile, fileIsDir, fileIsLink and fileExists are os.path's predicates.
func fileIsFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func fileIsDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

func fileIsLink(p string) bool {
	st, err := os.Lstat(p)
	return err == nil && st.Mode()&fs.ModeSymlink != 0
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func fileLexists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// fileRemovePath is file.remove: a file or link is unlinked, a directory
// removed recursively.
func fileRemovePath(p string) error {
	if fileIsLink(p) || (fileExists(p) && !fileIsDir(p)) {
		return os.Remove(p)
	}
	if fileIsDir(p) {
		return os.RemoveAll(p)
	}
	return nil
}

// fileSplitBinaryLines is bytes.readlines(): lines end at \n only.
func fileSplitBinaryLines(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// fileAtime returns a file's access time in seconds.
func fileAtime(fi fs.FileInfo) (float64, bool) {
	sys, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return float64(sys.Atim.Sec) + float64(sys.Atim.Nsec)/1e9, true
}

// fileNow is the current time.
func fileNow() time.Time { return time.Now() }

// fileUnixTime converts seconds since the epoch to a time.
func fileUnixTime(f float64) time.Time {
	sec := int64(f)
	return time.Unix(sec, int64((f-float64(sec))*1e9))
}
