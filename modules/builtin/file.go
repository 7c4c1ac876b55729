package builtin

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/internal/pyhash"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// fileFunctions is the POSIX part of Salt's file module
// (salt/modules/file.py) that does not need the file server.
func fileFunctions() []modules.Function {
	p := func(names ...any) modules.Spec {
		// names: a string is a required parameter, a [2]any an optional
		// one with its default.
		var s modules.Spec
		for _, n := range names {
			switch x := n.(type) {
			case string:
				s.Params = append(s.Params, req(x))
			case [2]any:
				s.Params = append(s.Params, opt(x[0].(string), x[1]))
			}
		}
		return s
	}
	d := func(name string, def any) [2]any { return [2]any{name, def} }
	varKw := func(s modules.Spec) modules.Spec { s.Varargs, s.Kwargs = true, true; return s }
	ownerGetter := func(key string, missing any) modules.Func {
		return func(_ context.Context, c *modules.Call) (any, error) {
			st, err := fileStats(fileExpand(c.Args.Str("path")), "", payload.Truthy(c.Args.Get("follow_symlinks")))
			if err != nil {
				return nil, err
			}
			if v, ok := st.Get(key); ok {
				return v, nil
			}
			return missing, nil
		}
	}
	return []modules.Function{
		{Name: "file.read", Doc: "Return the content of the file.\n\nCLI Example:\n\n    salt '*' file.read /path/to/file",
			Spec: p("path", d("binary", false)), Fn: fileRead},
		{Name: "file.write", Doc: "Write text to a file, overwriting any existing contents.\n\nCLI Example:\n\n    salt '*' file.write /etc/motd \"With all thine offerings thou shalt offer salt.\"",
			Spec: varKw(p("path")), Fn: fileWrite},
		{Name: "file.append", Doc: "Append text to the end of a file\n\nCLI Example:\n\n    salt '*' file.append /etc/motd \"line one\" \"line two\"",
			Spec: varKw(p("path")), Fn: fileAppend},
		{Name: "file.prepend", Doc: "Prepend text to the beginning of a file\n\nCLI Example:\n\n    salt '*' file.prepend /etc/motd \"line one\" \"line two\"",
			Spec: varKw(p("path")), Fn: filePrepend},
		{Name: "file.touch", Doc: "Just like the touch command, create a file if it doesn't exist or simply\nupdate the atime and mtime if it already does.\n\nCLI Example:\n\n    salt '*' file.touch /var/log/emptyfile",
			Spec: p("name", d("atime", nil), d("mtime", nil)), Fn: fileTouch},
		{Name: "file.stats", Doc: "Return a dict containing the stats for a given file\n\nCLI Example:\n\n    salt '*' file.stats /etc/passwd",
			Spec: p("path", d("hash_type", nil), d("follow_symlinks", true)),
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				ht := ""
				if v := c.Args.Get("hash_type"); payload.Truthy(v) {
					ht = pyfmt.Str(v)
				}
				return fileStats(fileExpand(c.Args.Str("path")), ht, payload.Truthy(c.Args.Get("follow_symlinks")))
			}},
		{Name: "file.get_hash", Doc: "Get the hash sum of a file\n\nCLI Example:\n\n    salt '*' file.get_hash /etc/shadow",
			Spec: p("path", d("form", "sha256"), d("chunk_size", int64(65536))),
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return fileHash(fileExpand(c.Args.Str("path")), pyfmt.Str(c.Args.Get("form")))
			}},
		{Name: "file.get_sum", Doc: "Return the checksum for the given file.\n\nCLI Example:\n\n    salt '*' file.get_sum /etc/passwd sha512",
			Spec: p("path", d("form", "sha256")),
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				path := fileExpand(c.Args.Str("path"))
				if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
					return "File not found", nil
				}
				return fileHash(path, pyfmt.Str(c.Args.Get("form")))
			}},
		{Name: "file.contains", Doc: "Return True if the file at path contains text\n\nCLI Example:\n\n    salt '*' file.contains /etc/crontab 'mymaintenance.sh'",
			Spec: p("path", "text"), Fn: fileContains},
		{Name: "file.copy", Doc: "Copy a file or directory from source to dst\n\nCLI Example:\n\n    salt '*' file.copy /path/to/src /path/to/dst\n    salt '*' file.copy /path/to/src_dir /path/to/dst_dir recurse=True",
			Spec: p("src", "dst", d("recurse", false), d("remove_existing", false)), Fn: fileCopy},
		{Name: "file.rename", Doc: "Rename a file or directory\n\nCLI Example:\n\n    salt '*' file.rename /path/to/src /path/to/dst",
			Spec: p("src", "dst"),
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				src, dst := fileExpand(c.Args.Str("src")), fileExpand(c.Args.Str("dst"))
				if !filepath.IsAbs(src) {
					return nil, fmt.Errorf("%w: File path must be absolute.", modules.ErrInvocation)
				}
				if err := os.Rename(src, dst); err != nil {
					return nil, fmt.Errorf("%w: Could not rename '%s' to '%s'", modules.ErrExecution, src, dst)
				}
				return true, nil
			}},
		{Name: "file.symlink", Doc: "Create a symbolic link (symlink, soft link) to a file\n\nCLI Example:\n\n    salt '*' file.symlink /path/to/file /path/to/link",
			Spec: p("src", "path", d("force", false), d("atomic", false)), Fn: fileSymlink},
		{Name: "file.readlink", Doc: "Return the path that a symlink points to\n\nCLI Example:\n\n    salt '*' file.readlink /path/to/link",
			Spec: p("path", d("canonicalize", false)),
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				path := fileExpandVars(fileExpand(c.Args.Str("path")))
				if !filepath.IsAbs(path) {
					return nil, fmt.Errorf("%w: Path to link must be absolute: %s", modules.ErrInvocation, path)
				}
				if fi, err := os.Lstat(path); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
					return nil, fmt.Errorf("%w: A valid link was not specified: %s", modules.ErrInvocation, path)
				}
				if payload.Truthy(c.Args.Get("canonicalize")) {
					return fileRealpath(path), nil
				}
				t, err := os.Readlink(path)
				if err != nil {
					if errors.Is(err, syscall.EINVAL) {
						return nil, fmt.Errorf("%w: Not a symbolic link: %s", modules.ErrExecution, path)
					}
					return nil, fmt.Errorf("%w: %s", modules.ErrExecution, cmdPyOSError(err))
				}
				return t, nil
			}},
		{Name: "file.is_link", Doc: "Check if the path is a symbolic link\n\nCLI Example:\n\n    salt '*' file.is_link /path/to/link",
			Spec: p("path"),
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				fi, err := os.Lstat(fileExpand(c.Args.Str("path")))
				return err == nil && fi.Mode()&fs.ModeSymlink != 0, nil
			}},
		{Name: "file.get_mode", Doc: "Return the mode of a file\n\nCLI Example:\n\n    salt '*' file.get_mode /etc/passwd",
			Spec: p("path", d("follow_symlinks", true)), Fn: ownerGetter("mode", "")},
		{Name: "file.get_user", Doc: "Return the user that owns a given file\n\nCLI Example:\n\n    salt '*' file.get_user /etc/passwd",
			Spec: p("path", d("follow_symlinks", true)), Fn: ownerGetter("user", false)},
		{Name: "file.get_group", Doc: "Return the group that owns a given file\n\nCLI Example:\n\n    salt '*' file.get_group /etc/passwd",
			Spec: p("path", d("follow_symlinks", true)), Fn: ownerGetter("group", false)},
		{Name: "file.get_uid", Doc: "Return the id of the user that owns a given file\n\nCLI Example:\n\n    salt '*' file.get_uid /etc/passwd",
			Spec: p("path", d("follow_symlinks", true)), Fn: ownerGetter("uid", int64(-1))},
		{Name: "file.get_gid", Doc: "Return the id of the group that owns a given file\n\nCLI Example:\n\n    salt '*' file.get_gid /etc/passwd",
			Spec: p("path", d("follow_symlinks", true)), Fn: ownerGetter("gid", int64(-1))},
		{Name: "file.chown", Doc: "Chown a file, pass the file the desired user and group\n\nCLI Example:\n\n    salt '*' file.chown /etc/passwd root root",
			Spec: p("path", "user", "group"),
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return fileChown(fileExpand(c.Args.Str("path")), c.Args.Get("user"), c.Args.Get("group"))
			}},
		{Name: "file.chgrp", Doc: "Change the group of a file\n\nCLI Example:\n\n    salt '*' file.chgrp /etc/passwd root",
			Spec: p("path", "group"),
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				path := fileExpand(c.Args.Str("path"))
				st, err := fileStats(path, "", true)
				if err != nil {
					return nil, err
				}
				owner, _ := st.Get("user")
				return fileChown(path, owner, c.Args.Get("group"))
			}},
		{Name: "file.set_mode", Doc: "Set the mode of a file\n\nCLI Example:\n\n    salt '*' file.set_mode /etc/passwd 0644",
			Spec: p("path", "mode"),
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return fileSetMode(fileExpand(c.Args.Str("path")), c.Args.Get("mode"))
			}},
		{Name: "file.mkdir", Doc: "Ensure that a directory is available.\n\nCLI Example:\n\n    salt '*' file.mkdir /opt/jetty/context",
			Spec: p("dir_path", d("user", nil), d("group", nil), d("mode", nil)),
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				a := c.Args
				if err := fileMkdir(fileExpand(a.Str("dir_path")), a.Get("user"), a.Get("group"), a.Get("mode")); err != nil {
					return nil, err
				}
				return true, nil
			}},
		{Name: "file.makedirs", Doc: "Ensure that the directory containing this path is available. The path\nmust end with a slash for the last component to be created too.\n\nCLI Example:\n\n    salt '*' file.makedirs /opt/code/",
			Spec: p("path", d("user", nil), d("group", nil), d("mode", nil)), Fn: fileMakedirs},
		{Name: "file.remove", Doc: "Remove the named file. If a directory is supplied, it will be recursively\ndeleted.\n\nCLI Example:\n\n    salt '*' file.remove /tmp/foo",
			Spec: modules.Spec{Params: []modules.Param{req("path")}, Kwargs: true},
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return fileRemove(fileExpand(c.Args.Str("path")))
			}},
		{Name: "file.directory_exists", Doc: "Tests to see if path is a valid directory.  Returns True/False.\n\nCLI Example:\n\n    salt '*' file.directory_exists /etc",
			Spec: p("path"),
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				fi, err := os.Stat(fileExpand(c.Args.Str("path")))
				return err == nil && fi.IsDir(), nil
			}},
		{Name: "file.file_exists", Doc: "Tests to see if path is a valid file.  Returns True/False.\n\nCLI Example:\n\n    salt '*' file.file_exists /etc/passwd",
			Spec: p("path"),
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				fi, err := os.Stat(fileExpand(c.Args.Str("path")))
				return err == nil && fi.Mode().IsRegular(), nil
			}},
		{Name: "file.lstat", Doc: "Returns the lstat attributes for the given file or dir. Does not support\nsymbolic links.\n\nCLI Example:\n\n    salt '*' file.lstat /path/to/file",
			Spec: p("path"),
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				path := fileExpand(c.Args.Str("path"))
				if !filepath.IsAbs(path) {
					return nil, fmt.Errorf("%w: Path to file must be absolute.", modules.ErrInvocation)
				}
				var st syscall.Stat_t
				if err := syscall.Lstat(path, &st); err != nil {
					return &payload.Map{}, nil
				}
				return payload.NewMap("st_atime", fileTime(st.Atim), "st_ctime", fileTime(st.Ctim), "st_gid", int64(st.Gid),
					"st_mode", int64(st.Mode), "st_mtime", fileTime(st.Mtim), "st_nlink", int64(st.Nlink),
					"st_size", st.Size, "st_uid", int64(st.Uid)), nil
			}},
		{Name: "file.access", Doc: "Test whether the Salt process has the specified access to the file. One of\nthe modes f, r, w, x must be specified.\n\nCLI Example:\n\n    salt '*' file.access /path/to/file f",
			Spec: p("path", "mode"),
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				path := fileExpand(c.Args.Str("path"))
				if !filepath.IsAbs(path) {
					return nil, fmt.Errorf("%w: Path to link must be absolute.", modules.ErrInvocation)
				}
				modes := map[string]uint32{"f": 0, "r": 4, "w": 2, "x": 1}
				var m uint32
				switch v := c.Args.Get("mode").(type) {
				case string:
					n, ok := modes[v]
					if !ok {
						return nil, fmt.Errorf("%w: Invalid mode specified.", modules.ErrInvocation)
					}
					m = n
				case int64:
					if v != 0 && v != 1 && v != 2 && v != 4 {
						return nil, fmt.Errorf("%w: Invalid mode specified.", modules.ErrInvocation)
					}
					m = uint32(v)
				default:
					return nil, fmt.Errorf("%w: Invalid mode specified.", modules.ErrInvocation)
				}
				return syscall.Access(path, m) == nil, nil
			}},
		{Name: "file.readdir", Doc: "Return a list containing the contents of a directory\n\nCLI Example:\n\n    salt '*' file.readdir /path/to/dir/",
			Spec: p("path"),
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				path := fileExpand(c.Args.Str("path"))
				if !filepath.IsAbs(path) {
					return nil, fmt.Errorf("%w: Dir path must be absolute.", modules.ErrInvocation)
				}
				if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
					return nil, fmt.Errorf("%w: A valid directory was not specified.", modules.ErrInvocation)
				}
				f, err := os.Open(path)
				if err != nil {
					return nil, filePyError(err)
				}
				defer f.Close()
				names, err := f.Readdirnames(-1)
				if err != nil {
					return nil, filePyError(err)
				}
				out := []any{".", ".."}
				for _, n := range names {
					out = append(out, n)
				}
				return out, nil
			}},
		{Name: "file.uid_to_user", Doc: "Convert a uid to a user name\n\nCLI Example:\n\n    salt '*' file.uid_to_user 0",
			Spec: p("uid"),
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				uid, ok := payload.AsInt(c.Args.Get("uid"))
				if !ok {
					return nil, fmt.Errorf("TypeError: 'uid' must be an integer, not %s", payload.TypeName(c.Args.Get("uid")))
				}
				return fileUIDToUser(uid), nil
			}},
		{Name: "file.user_to_uid", Doc: "Convert user name to a uid\n\nCLI Example:\n\n    salt '*' file.user_to_uid root",
			Spec: p("user"),
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return fileUserToUID(c.Args.Get("user")), nil
			}},
		{Name: "file.gid_to_group", Doc: "Convert the group id to the group name on this system\n\nCLI Example:\n\n    salt '*' file.gid_to_group 0",
			Spec: p("gid"),
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				v := c.Args.Get("gid")
				gid, ok := cmdPyInt(v)
				if !ok {
					g := fileGroupToGID(v)
					if g == "" {
						return "", nil
					}
					gid, _ = payload.AsInt(g)
				}
				return fileGIDToGroup(gid), nil
			}},
		{Name: "file.group_to_gid", Doc: "Convert the group to the gid on this system\n\nCLI Example:\n\n    salt '*' file.group_to_gid root",
			Spec: p("group"),
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return fileGroupToGID(c.Args.Get("group")), nil
			}},
	}
}

// fileExpand is os.path.expanduser.
func fileExpand(p string) string {
	if !strings.HasPrefix(p, "~") {
		return p
	}
	name, rest, _ := strings.Cut(p[1:], "/")
	var home string
	if name == "" {
		home = os.Getenv("HOME")
		if home == "" {
			u, err := user.Current()
			if err != nil {
				return p
			}
			home = u.HomeDir
		}
	} else {
		u, err := user.Lookup(name)
		if err != nil {
			return p
		}
		home = u.HomeDir
	}
	home = strings.TrimRight(home, "/")
	if home == "" {
		home = "/"
	}
	if !strings.Contains(p, "/") {
		return home
	}
	if home == "/" {
		return "/" + rest
	}
	return home + "/" + rest
}

// fileExpandVars is os.path.expandvars: $name and ${name} are replaced when
// the variable is set and left alone otherwise.
func fileExpandVars(p string) string {
	if !strings.Contains(p, "$") {
		return p
	}
	var b strings.Builder
	isWord := func(c byte) bool {
		return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
	}
	for i := 0; i < len(p); {
		if p[i] != '$' {
			b.WriteByte(p[i])
			i++
			continue
		}
		if i+1 < len(p) && p[i+1] == '{' {
			if end := strings.IndexByte(p[i+2:], '}'); end >= 0 {
				name := p[i+2 : i+2+end]
				if v, ok := os.LookupEnv(name); ok {
					b.WriteString(v)
				} else {
					b.WriteString(p[i : i+3+end])
				}
				i += 3 + end
				continue
			}
			b.WriteByte('$')
			i++
			continue
		}
		j := i + 1
		for j < len(p) && isWord(p[j]) {
			j++
		}
		if j == i+1 {
			b.WriteByte('$')
			i++
			continue
		}
		if v, ok := os.LookupEnv(p[i+1 : j]); ok {
			b.WriteString(v)
		} else {
			b.WriteString(p[i:j])
		}
		i = j
	}
	return b.String()
}

// filePyError reports an OS error as the Python exception Salt's minion
// would show in its traceback, e.g. "FileNotFoundError: [Errno 2] No such
// file or directory: '/x'".
func filePyError(err error) error {
	return fmt.Errorf("%s: %s", cmdPyExceptionName(err), cmdPyOSError(err))
}

// fileLines renders *args (or an "args" kwarg) as Salt's write/append do.
func fileLines(c *modules.Call) []string {
	args := c.Args.Varargs
	if v, ok := c.Args.Kwargs.Get("args"); ok {
		if l, isList := v.([]any); isList {
			args = l
		} else {
			args = []any{v}
		}
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = pyfmt.Str(a)
	}
	return out
}

func fileRead(_ context.Context, c *modules.Call) (any, error) {
	path := c.Args.Str("path")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, filePyError(err)
	}
	if c.Args.Get("binary") == true {
		return data, nil
	}
	if !utf8.Valid(data) {
		return nil, fileUnicodeError(data)
	}
	return string(data), nil
}

// fileUnicodeError is the UnicodeDecodeError Python raises for data that
// is not UTF-8.
func fileUnicodeError(data []byte) error {
	pos := 0
	for pos < len(data) {
		r, n := utf8.DecodeRune(data[pos:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		pos += n
	}
	b := data[pos]
	reason := "invalid start byte"
	switch {
	case b >= 0xc2 && b <= 0xf4:
		need := 1
		if b >= 0xe0 {
			need = 2
		}
		if b >= 0xf0 {
			need = 3
		}
		reason = "invalid continuation byte"
		if pos+need >= len(data) {
			ok := true
			for _, cb := range data[pos+1:] {
				if cb&0xc0 != 0x80 {
					ok = false
				}
			}
			if ok {
				reason = "unexpected end of data"
			}
		}
	}
	return fmt.Errorf("UnicodeDecodeError: 'utf-8' codec can't decode byte 0x%02x in position %d: %s", b, pos, reason)
}

func fileWrite(_ context.Context, c *modules.Call) (any, error) {
	path := fileExpand(c.Args.Str("path"))
	lines := fileLines(c)
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o666); err != nil {
		return nil, filePyError(err)
	}
	return fmt.Sprintf("Wrote %d lines to \"%s\"", len(lines), path), nil
}

func fileAppend(_ context.Context, c *modules.Call) (any, error) {
	path := fileExpand(c.Args.Str("path"))
	lines := fileLines(c)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, filePyError(err)
	}
	defer f.Close()
	var b strings.Builder
	if size, err := f.Seek(0, io.SeekEnd); err == nil && size > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, size-1); err == nil && last[0] != '\n' {
			b.WriteByte('\n')
		}
	}
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if _, err := f.Write([]byte(b.String())); err != nil {
		return nil, filePyError(err)
	}
	if err := f.Close(); err != nil {
		return nil, filePyError(err)
	}
	return fmt.Sprintf("Wrote %d lines to \"%s\"", len(lines), path), nil
}

func filePrepend(_ context.Context, c *modules.Call) (any, error) {
	path := fileExpand(c.Args.Str("path"))
	lines := fileLines(c)
	old, err := os.ReadFile(path)
	if err != nil {
		old = nil
	}
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	b.Write(old)
	if err := os.WriteFile(path, b.Bytes(), 0o666); err != nil {
		return nil, filePyError(err)
	}
	return fmt.Sprintf("Prepended %d lines to \"%s\"", len(lines), path), nil
}

func fileTouch(_ context.Context, c *modules.Call) (any, error) {
	name := fileExpand(c.Args.Str("name"))
	conv := func(v any) (any, error) {
		if s, ok := v.(string); ok && s != "" {
			digits := true
			for _, r := range s {
				if r < '0' || r > '9' {
					digits = false
				}
			}
			if !digits {
				return nil, fmt.Errorf("%w: atime and mtime must be integers", modules.ErrInvocation)
			}
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%w: atime and mtime must be integers", modules.ErrInvocation)
			}
			return n, nil
		}
		switch v.(type) {
		case nil, int64, float64, bool:
			return v, nil
		}
		return nil, fmt.Errorf("%w: atime and mtime must be integers", modules.ErrInvocation)
	}
	atime, err := conv(c.Args.Get("atime"))
	if err != nil {
		return nil, err
	}
	mtime, err := conv(c.Args.Get("mtime"))
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(name); err != nil {
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o666)
		if err != nil {
			return nil, fmt.Errorf("%w: %s", modules.ErrExecution, fileStrerror(err))
		}
		f.Close()
	}
	now := time.Now()
	toTime := func(v any) time.Time {
		switch x := v.(type) {
		case nil:
			return now
		case float64:
			sec := int64(x)
			return time.Unix(sec, int64((x-float64(sec))*1e9))
		case bool:
			if x {
				return time.Unix(1, 0)
			}
			return time.Unix(0, 0)
		}
		n, _ := payload.AsInt(v)
		return time.Unix(n, 0)
	}
	if err := os.Chtimes(name, toTime(atime), toTime(mtime)); err != nil {
		return nil, fmt.Errorf("%w: %s", modules.ErrExecution, fileStrerror(err))
	}
	_, err = os.Stat(name)
	return err == nil, nil
}

// fileStrerror is an OSError's strerror ("No such file or directory").
func fileStrerror(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return cmdStrerror(errno)
	}
	return err.Error()
}

// fileTime is a stat timestamp as Python's float st_*time.
func fileTime(ts syscall.Timespec) float64 {
	return float64(ts.Sec) + float64(ts.Nsec)*1e-9
}

// fileStats is file.stats.
func fileStats(path, hashType string, follow bool) (*payload.Map, error) {
	var st syscall.Stat_t
	if _, err := os.Stat(path); err != nil {
		if err := syscall.Lstat(path, &st); err != nil {
			return nil, fmt.Errorf("%w: Path not found: %s", modules.ErrExecution, path)
		}
	} else if follow {
		if err := syscall.Stat(path, &st); err != nil {
			return nil, fmt.Errorf("%w: Path not found: %s", modules.ErrExecution, path)
		}
	} else if err := syscall.Lstat(path, &st); err != nil {
		return nil, fmt.Errorf("%w: Path not found: %s", modules.ErrExecution, path)
	}
	ret := payload.NewMap(
		"inode", int64(st.Ino),
		"uid", int64(st.Uid),
		"gid", int64(st.Gid),
		"group", fileGIDToGroup(int64(st.Gid)),
		"user", fileUIDToUser(int64(st.Uid)),
		"atime", fileTime(st.Atim),
		"mtime", fileTime(st.Mtim),
		"ctime", fileTime(st.Ctim),
		"size", st.Size,
		"mode", fileNormalizeMode(fmt.Sprintf("0o%o", st.Mode&0o7777)),
	)
	if hashType != "" {
		sum, err := fileHash(path, hashType)
		if err != nil {
			return nil, err
		}
		ret.Set("sum", sum)
	}
	typ := "file"
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		typ = "dir"
	case syscall.S_IFCHR:
		typ = "char"
	case syscall.S_IFBLK:
		typ = "block"
	case syscall.S_IFLNK:
		typ = "link"
	case syscall.S_IFIFO:
		typ = "pipe"
	case syscall.S_IFSOCK:
		typ = "socket"
	}
	ret.Set("type", typ)
	ret.Set("target", fileRealpath(path))
	return ret, nil
}

// fileNormalizeMode is salt.utils.files.normalize_mode: a mode as a string
// with a leading zero, at least four digits ("0644").
func fileNormalizeMode(v any) any {
	if v == nil {
		return nil
	}
	s := strings.ReplaceAll(pyfmt.Str(v), "0o", "0")
	s = strings.TrimLeft(strings.Trim(strings.Trim(s, `"`), "'"), "0")
	sign := ""
	if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
		sign, s = s[:1], s[1:]
	}
	for len(sign)+len(s) < 4 {
		s = "0" + s
	}
	return sign + s
}

// fileUIDToUser is uid_to_user: the name, or the uid when unknown.
func fileUIDToUser(uid int64) any {
	if u, err := user.LookupId(strconv.FormatInt(uid, 10)); err == nil {
		return u.Username
	}
	return uid
}

// fileGIDToGroup is gid_to_group for a numeric gid: the name, or the gid.
func fileGIDToGroup(gid int64) any {
	if g, err := user.LookupGroupId(strconv.FormatInt(gid, 10)); err == nil {
		return g.Name
	}
	return gid
}

// fileUserToUID is user_to_uid: None means the minion's user, unknown
// names give "".
func fileUserToUID(v any) any {
	if v == nil {
		u, err := user.Current()
		if err != nil {
			return ""
		}
		v = u.Username
	}
	if n, ok := v.(int64); ok {
		return n
	}
	u, err := user.Lookup(pyfmt.Str(v))
	if err != nil {
		return ""
	}
	n, err := strconv.ParseInt(u.Uid, 10, 64)
	if err != nil {
		return ""
	}
	return n
}

// fileGroupToGID is group_to_gid: None and unknown names give "".
func fileGroupToGID(v any) any {
	if v == nil {
		return ""
	}
	if n, ok := v.(int64); ok {
		return n
	}
	g, err := user.LookupGroup(pyfmt.Str(v))
	if err != nil {
		return ""
	}
	n, err := strconv.ParseInt(g.Gid, 10, 64)
	if err != nil {
		return ""
	}
	return n
}

// fileHash is salt.utils.hashutils.get_hash.
func fileHash(path, form string) (any, error) {
	h, ok := pyhash.New(form) // the hashlib constructor get_hash uses
	if !ok {
		return nil, fmt.Errorf("ValueError: Invalid hash type: %s", form)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, filePyError(err)
	}
	defer f.Close()
	if _, err := io.Copy(h, f); err != nil {
		return nil, filePyError(err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func fileContains(_ context.Context, c *modules.Call) (any, error) {
	path := fileExpand(c.Args.Str("path"))
	f, err := os.Open(path)
	if err != nil {
		return false, nil
	}
	defer f.Close()
	needle := []byte(strings.TrimFunc(pyfmt.Str(c.Args.Get("text")), cmdPyIsSpace))
	if len(needle) == 0 {
		return true, nil
	}
	const chunk = 256 << 10
	buf := make([]byte, 0, chunk+len(needle))
	tmp := make([]byte, chunk)
	for {
		n, err := f.Read(tmp)
		buf = append(buf, tmp[:n]...)
		if bytes.Contains(buf, needle) {
			return true, nil
		}
		if keep := len(needle) - 1; len(buf) > keep {
			buf = append(buf[:0], buf[len(buf)-keep:]...)
		}
		if err != nil {
			return false, nil
		}
	}
}

// fileRealpath is os.path.realpath (non-strict): symlinks are resolved
// component by component, missing components are kept as they are.
func fileRealpath(p string) string {
	if !filepath.IsAbs(p) {
		if wd, err := os.Getwd(); err == nil {
			p = wd + "/" + p
		}
	}
	todo := strings.Split(p, "/")
	resolved := "/"
	links := 0
	for len(todo) > 0 {
		comp := todo[0]
		todo = todo[1:]
		switch comp {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, comp)
		fi, err := os.Lstat(next)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		links++
		t, err := os.Readlink(next)
		if err != nil || links > 40 {
			// unreadable link or a loop: keep the rest unresolved
			return filepath.Join(append([]string{next}, todo...)...)
		}
		if strings.HasPrefix(t, "/") {
			resolved = "/"
		}
		todo = append(strings.Split(t, "/"), todo...)
	}
	return resolved
}

// filePySplit is os.path.split.
func filePySplit(p string) (head, tail string) {
	i := strings.LastIndexByte(p, '/') + 1
	head, tail = p[:i], p[i:]
	if head != "" && strings.Trim(head, "/") != "" {
		head = strings.TrimRight(head, "/")
	}
	return head, tail
}

// filePyDirname is os.path.dirname.
func filePyDirname(p string) string {
	head, _ := filePySplit(p)
	return head
}

func fileCopy(_ context.Context, c *modules.Call) (any, error) {
	src, dst := fileExpand(c.Args.Str("src")), fileExpand(c.Args.Str("dst"))
	if !filepath.IsAbs(src) {
		return nil, fmt.Errorf("%w: File path must be absolute.", modules.ErrInvocation)
	}
	srcInfo, err := os.Stat(src)
	if err != nil {
		return nil, fmt.Errorf("%w: No such file or directory '%s'", modules.ErrExecution, src)
	}
	var st syscall.Stat_t
	_ = syscall.Stat(src, &st)
	dstInfo, dstErr := os.Stat(dst)
	failed := fmt.Errorf("%w: Could not copy '%s' to '%s'", modules.ErrExecution, src, dst)
	if (dstErr == nil && dstInfo.IsDir()) || srcInfo.IsDir() {
		if !payload.Truthy(c.Args.Get("recurse")) {
			return nil, fmt.Errorf("%w: Cannot copy overwriting a directory without recurse flag set to true!", modules.ErrInvocation)
		}
		if payload.Truthy(c.Args.Get("remove_existing")) {
			if dstErr == nil {
				if err := os.RemoveAll(dst); err != nil {
					return nil, failed
				}
			}
			if err := fileCopyTree(src, dst); err != nil {
				return nil, failed
			}
		} else if err := fileRecursiveCopy(src, dst); err != nil {
			return nil, failed
		}
	} else if err := cmdCopyFile(src, dst); err != nil {
		return nil, failed
	}
	// check_perms(dst, None, pre_user, pre_group, pre_mode): best effort.
	_ = os.Chown(dst, int(st.Uid), int(st.Gid))
	_ = os.Chmod(dst, fs.FileMode(st.Mode&0o777)|fileSpecialBits(st.Mode))
	return true, nil
}

// fileSpecialBits turns setuid/setgid/sticky bits of a raw mode into Go's.
func fileSpecialBits(mode uint32) fs.FileMode {
	var m fs.FileMode
	if mode&syscall.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if mode&syscall.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if mode&syscall.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// fileRecursiveCopy is salt.utils.files.recursive_copy (cp -r into dst,
// keeping what src does not overwrite; symlinked directories are skipped
// like os.walk does).
func fileRecursiveCopy(src, dst string) error {
	fi, err := os.Stat(src)
	if err != nil || !fi.IsDir() {
		return nil // os.walk of a file yields nothing
	}
	if _, err := os.Stat(dst); err != nil {
		if err := os.MkdirAll(dst, 0o777); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		s, d := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())
		if e.IsDir() {
			if err := fileRecursiveCopy(s, d); err != nil {
				return err
			}
			continue
		}
		if e.Type()&fs.ModeSymlink != 0 {
			if ti, err := os.Stat(s); err == nil && ti.IsDir() {
				continue
			}
		}
		if err := cmdCopyFile(s, d); err != nil {
			return err
		}
	}
	return nil
}

// fileCopyTree is shutil.copytree with copy2 (content, mode and times;
// symlinks followed).
func fileCopyTree(src, dst string) error {
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return &os.PathError{Op: "copytree", Path: src, Err: syscall.ENOTDIR}
	}
	if err := os.MkdirAll(dst, 0o777); err != nil {
		return err
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		s, d := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())
		ei, err := os.Stat(s)
		if err != nil {
			return err
		}
		if ei.IsDir() {
			if err := fileCopyTree(s, d); err != nil {
				return err
			}
			continue
		}
		if err := cmdCopyFile(s, d); err != nil {
			return err
		}
		_ = os.Chmod(d, ei.Mode().Perm()|ei.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky))
		_ = os.Chtimes(d, ei.ModTime(), ei.ModTime())
	}
	_ = os.Chmod(dst, fi.Mode().Perm())
	_ = os.Chtimes(dst, fi.ModTime(), fi.ModTime())
	return nil
}

func fileSymlink(_ context.Context, c *modules.Call) (any, error) {
	src := c.Args.Str("src")
	path := fileExpand(c.Args.Str("path"))
	force, atomic := payload.Truthy(c.Args.Get("force")), payload.Truthy(c.Args.Get("atomic"))
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("%w: Link path must be absolute: %s", modules.ErrInvocation, path)
	}
	li, lerr := os.Lstat(path)
	isLink := lerr == nil && li.Mode()&fs.ModeSymlink != 0
	if isLink {
		if t, err := os.Readlink(path); err == nil && filepath.Clean(t) == filepath.Clean(src) {
			return true, nil
		}
		if !force && !atomic {
			return nil, fmt.Errorf("%w: Found existing symlink: %s", modules.ErrExecution, path)
		}
	}
	_, serr := os.Stat(path)
	exists := serr == nil
	if exists && !force && !atomic {
		return nil, fmt.Errorf("%w: Existing path is not a symlink: %s", modules.ErrExecution, path)
	}
	couldNot := fmt.Errorf("%w: Could not create '%s'", modules.ErrExecution, path)
	if atomic {
		dir := filepath.Dir(path)
		var tmp string
		for retry := 0; retry < 5; retry++ {
			tmp = filepath.Join(dir, fmt.Sprintf("tmp%x%d", time.Now().UnixNano(), retry))
			if err := os.Symlink(src, tmp); err == nil {
				break
			}
			tmp = ""
		}
		if tmp == "" {
			return nil, couldNot
		}
		if err := os.Rename(tmp, path); err != nil {
			_ = os.Remove(tmp)
			return nil, couldNot
		}
		return true, nil
	}
	if (isLink || exists) && force {
		if err := syscall.Unlink(path); err != nil {
			return nil, filePyError(&os.PathError{Op: "unlink", Path: path, Err: err})
		}
	}
	if err := os.Symlink(src, path); err != nil {
		return nil, couldNot
	}
	return true, nil
}

// fileChown is file.chown: problems with the names are returned as text,
// success is None.
func fileChown(path string, userArg, groupArg any) (any, error) {
	uid := fileUserToUID(userArg)
	gid := fileGroupToGID(groupArg)
	var msg strings.Builder
	if uid == "" {
		if payload.Truthy(userArg) {
			msg.WriteString("User does not exist\n")
		} else {
			uid = int64(-1)
		}
	}
	if gid == "" {
		if payload.Truthy(groupArg) {
			msg.WriteString("Group does not exist\n")
		} else {
			gid = int64(-1)
		}
	}
	u, uok := uid.(int64)
	g, gok := gid.(int64)
	if _, err := os.Stat(path); err != nil {
		if uok && gok {
			if err := os.Lchown(path, int(u), int(g)); err == nil {
				return nil, nil
			}
		}
		msg.WriteString("File not found")
	}
	if msg.Len() > 0 {
		return msg.String(), nil
	}
	if err := os.Chown(path, int(u), int(g)); err != nil {
		return nil, filePyError(err)
	}
	return nil, nil
}

// fileSetMode is file.set_mode.
func fileSetMode(path string, modeArg any) (any, error) {
	mode := strings.TrimLeft(pyfmt.Str(modeArg), "0Oo")
	if mode == "" {
		mode = "0"
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("%w: %s: File not found", modules.ErrExecution, path)
	}
	n, err := strconv.ParseUint(strings.ReplaceAll(mode, "_", ""), 8, 32)
	if err != nil || n > 0o7777 {
		return "Invalid Mode " + mode, nil
	}
	if err := os.Chmod(path, fs.FileMode(n&0o777)|fileSpecialBits(uint32(n))); err != nil {
		return "Invalid Mode " + mode, nil
	}
	st, err := fileStats(path, "", true)
	if err != nil {
		return nil, err
	}
	v, _ := st.Get("mode")
	return v, nil
}

// fileMkdir is file.mkdir (through makedirs_perms).
func fileMkdir(dir string, userArg, groupArg, modeArg any) error {
	dir = filepath.Clean(dir)
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return nil
	}
	return fileMakedirsPerms(dir, userArg, groupArg, modeArg)
}

// fileMakedirsPerms creates name and its missing parents, setting owner
// and mode on each directory it creates (check_perms, best effort).
func fileMakedirsPerms(name string, userArg, groupArg, modeArg any) error {
	head, tail := filePySplit(name)
	if tail == "" {
		head, tail = filePySplit(head)
	}
	if head != "" && tail != "" {
		if _, err := os.Stat(head); err != nil {
			if err := fileMakedirsPerms(head, userArg, groupArg, modeArg); err != nil && !errors.Is(err, fs.ErrExist) {
				return err
			}
			if tail == "." {
				return nil
			}
		}
	}
	if err := os.Mkdir(name, 0o777); err != nil {
		return filePyErrorWrap(err)
	}
	fileCheckPerms(name, userArg, groupArg, modeArg)
	return nil
}

// filePyErrorWrap is filePyError keeping the original error for errors.Is.
func filePyErrorWrap(err error) error {
	return fmt.Errorf("%s: %s%w", cmdPyExceptionName(err), cmdPyOSError(err), fileSilent{err})
}

// fileSilent wraps an error without adding text.
type fileSilent struct{ err error }

func (s fileSilent) Error() string { return "" }
func (s fileSilent) Unwrap() error { return s.err }

// fileCheckPerms applies user, group and mode like check_perms does for a
// new directory, ignoring failures (Salt only reports them in a comment).
func fileCheckPerms(name string, userArg, groupArg, modeArg any) {
	if userArg != nil || groupArg != nil {
		uid, gid := -1, -1
		if n, ok := fileUserToUID(userArg).(int64); ok && userArg != nil {
			uid = int(n)
		}
		if n, ok := fileGroupToGID(groupArg).(int64); ok {
			gid = int(n)
		}
		_ = os.Lchown(name, uid, gid)
	}
	if payload.Truthy(modeArg) {
		m := pyfmt.Str(fileNormalizeMode(modeArg))
		if n, err := strconv.ParseUint(m, 8, 32); err == nil && n <= 0o7777 {
			_ = os.Chmod(name, fs.FileMode(n&0o777)|fileSpecialBits(uint32(n)))
		}
	}
}

func fileMakedirs(_ context.Context, c *modules.Call) (any, error) {
	a := c.Args
	path := fileExpand(a.Str("path"))
	mode := a.Get("mode")
	if payload.Truthy(mode) {
		mode = fileNormalizeMode(mode)
	}
	dir := filepath.Clean(filePyDirname(path))
	if fi, err := os.Stat(dir); err == nil {
		if fi.IsDir() {
			msg := fmt.Sprintf("Directory '%s' already exists", dir)
			c.Log().Debug(msg)
			return msg, nil
		}
		msg := fmt.Sprintf("The path '%s' already exists and is not a directory", dir)
		c.Log().Debug(msg)
		return msg, nil
	}
	var create []string
	for {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			break
		}
		create = append(create, dir)
		cur := dir
		dir = filePyDirname(dir)
		if cur == dir {
			return nil, fmt.Errorf("%w: Recursive creation for path '%s' would result in an infinite loop. Please use an absolute path.", modules.ErrInvocation, dir)
		}
	}
	for i := len(create) - 1; i >= 0; i-- {
		c.Log().Debug("Creating directory: " + create[i])
		if err := fileMkdir(create[i], a.Get("user"), a.Get("group"), mode); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// fileRemove is file.remove.
func fileRemove(path string) (any, error) {
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("%w: File path must be absolute: %s", modules.ErrInvocation, path)
	}
	li, err := os.Lstat(path)
	if err != nil {
		return false, nil
	}
	fail := func(err error) error {
		return fmt.Errorf("%w: Could not remove '%s': %s", modules.ErrExecution, path, cmdPyOSError(err))
	}
	if li.Mode()&fs.ModeSymlink != 0 || !li.IsDir() {
		if err := os.Remove(path); err != nil {
			return nil, fail(err)
		}
		return true, nil
	}
	if err := os.RemoveAll(path); err != nil {
		return nil, fail(err)
	}
	return true, nil
}
