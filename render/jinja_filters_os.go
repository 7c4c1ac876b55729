package render

import (
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/gsalt/gsalt/render/jinja"
	"github.com/gsalt/gsalt/wire/payload"
)

// osFilters are Salt's filters that look at the minion's system: which
// (salt.utils.path.which), get_uid (salt.utils.user.get_uid), list_files
// (salt.utils.files.list_files), file_hashsum (salt.utils.hashutils.get_hash),
// and mysql_to_dict (salt.utils.data.mysql_to_dict), a text parser kept here
// with them.
func osFilters() map[string]jinja.FilterFunc {
	return map[string]jinja.FilterFunc{
		"which":         filterWhich,
		"get_uid":       filterGetUID,
		"list_files":    filterListFiles,
		"file_hashsum":  filterFileHashsum,
		"mysql_to_dict": filterMySQLToDict,
	}
}

// whichExtraDirs are the directories salt.utils.path.which searches after
// PATH on POSIX systems.
var whichExtraDirs = []string{"/sbin", "/bin", "/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"}

func isExecutableFile(p string) bool {
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	return syscall.Access(p, 1) == nil // X_OK
}

func filterWhich(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
	if _, err := jinja.Bind("which", args, kw, nil); err != nil {
		return nil, err
	}
	if ok, err := jinja.Truthy(v); err != nil || !ok {
		return nil, err
	}
	exe, ok := v.(string)
	if !ok {
		return nil, pyErr("TypeError", "stat: path should be string, bytes, os.PathLike or integer, not %s", jinja.TypeName(v))
	}
	if isExecutableFile(exe) {
		return exe, nil
	}
	dirs := strings.Split(os.Getenv("PATH"), string(os.PathListSeparator))
	seen := map[string]bool{}
	for _, d := range dirs {
		seen[d] = true
	}
	for _, d := range whichExtraDirs {
		if !seen[d] {
			dirs = append(dirs, d)
		}
	}
	for _, d := range dirs {
		p := filepath.Join(d, exe)
		if d == "" {
			p = exe
		}
		if isExecutableFile(p) {
			return p, nil
		}
	}
	return nil, nil
}

func filterGetUID(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
	if _, err := jinja.Bind("get_uid", args, kw, nil); err != nil {
		return nil, err
	}
	if v == nil {
		return int64(os.Geteuid()), nil
	}
	name, ok := v.(string)
	if !ok {
		return nil, pyErr("TypeError", "getpwnam() argument must be str, not %s", jinja.TypeName(v))
	}
	if strings.IndexByte(name, 0) >= 0 {
		return nil, pyErr("ValueError", "embedded null character")
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, nil
	}
	uid, err := strconv.ParseInt(u.Uid, 10, 64)
	if err != nil {
		return nil, nil
	}
	return uid, nil
}

// filterListFiles is list(set) of the directory and everything under it.
// Python's set order is its hash table's; gsalt lists the directory first,
// then the walk's order.
func filterListFiles(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
	if _, err := jinja.Bind("list_files", args, kw, nil); err != nil {
		return nil, err
	}
	dir, ok := v.(string)
	if !ok {
		return nil, pyErr("TypeError", "listdir: path should be string, bytes, os.PathLike, integer or None, not %s", jinja.TypeName(v))
	}
	out := jinja.NewList(dir)
	const maxFiles = 1 << 20
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return filepath.SkipDir
			}
			return nil
		}
		if p != dir {
			out.Items = append(out.Items, p)
		}
		if len(out.Items) > maxFiles {
			return filepath.SkipAll
		}
		return nil
	})
	return out, nil
}

func filterFileHashsum(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
	a, err := jinja.Bind("get_hash", args, kw, []string{"form", "chunk_size"}, "sha256", int64(65536))
	if err != nil {
		return nil, err
	}
	form, _ := a[0].(string)
	h := newHash(form)
	if h == nil {
		s, _ := jinja.Str(a[0])
		return nil, pyErr("ValueError", "Invalid hash type: %s", s)
	}
	path, ok := v.(string)
	if !ok {
		return nil, pyErr("TypeError", "expected str, bytes or os.PathLike object, not %s", jinja.TypeName(v))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, pyOSError(err, path)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, pyErr("IsADirectoryError", "[Errno 21] Is a directory: %s", jinja.Repr(path))
	}
	if _, err := io.Copy(h, f); err != nil {
		return nil, pyOSError(err, path)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// pyOSError is Python's OSError text for a failed open of path.
func pyOSError(err error, path string) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		kind := "OSError"
		switch errno {
		case syscall.ENOENT:
			kind = "FileNotFoundError"
		case syscall.EACCES, syscall.EPERM:
			kind = "PermissionError"
		case syscall.EISDIR:
			kind = "IsADirectoryError"
		}
		msg := errno.Error()
		if msg != "" {
			msg = strings.ToUpper(msg[:1]) + msg[1:]
		}
		return pyErr(kind, "[Errno %d] %s: %s", int(errno), msg, jinja.Repr(path))
	}
	return pyErr("OSError", "%s", err.Error())
}

// filterMySQLToDict parses MySQL's table output: the first row names the
// columns, every later row becomes a dict (values through to_num) keyed
// by its key column.
func filterMySQLToDict(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
	if err := missingArgs("mysql_to_dict", []string{"key"}, args, kw); err != nil {
		return nil, err
	}
	a, err := jinja.Bind("mysql_to_dict", args, kw, []string{"key"})
	if err != nil {
		return nil, err
	}
	key := a[0]
	lines, err := jinja.Iterate(v)
	if err != nil {
		return nil, err
	}
	ret := payload.NewMap()
	headers := []string{""}
	for _, l := range lines {
		ok, err := jinja.Truthy(l)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		line, isStr := l.(string)
		if !isStr {
			return nil, pyErr("AttributeError", "'%s' object has no attribute 'startswith'", jinja.TypeName(l))
		}
		if strings.HasPrefix(line, "+") {
			continue
		}
		comps := strings.Split(line, "|")
		for i, c := range comps {
			comps[i] = strings.TrimSpace(c)
		}
		if len(headers) <= 1 {
			headers = comps
			continue
		}
		row := payload.NewMap()
		for field := 1; field < len(headers)-1; field++ {
			if field >= len(comps) {
				return nil, pyErr("IndexError", "list index out of range")
			}
			row.SetKey(headers[field], strToNum(comps[field]))
		}
		k, ok := row.GetKey(key)
		if !ok {
			return nil, pyErr("KeyError", "%s", jinja.Repr(key))
		}
		ret.SetKey(k, row)
	}
	return ret, nil
}

// strToNum is salt.utils.stringutils.to_num: int, else float, else the text.
func strToNum(s string) any {
	if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil && !strings.Contains(s, "_") {
		return n
	}
	if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil && !strings.ContainsAny(s, "_xX") {
		return f
	}
	return s
}
