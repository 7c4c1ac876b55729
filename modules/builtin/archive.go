package builtin

// This file is Salt's archive module (salt/modules/archive.py): tar, gzip,
// gunzip, cmd_zip, cmd_unzip, rar and unrar run the binaries as Salt does;
// zip, unzip, list and is_encrypted, which Salt does with Python's tarfile
// and zipfile, use Go's archive/tar, archive/zip and compress/* (xz through
// the xz binary, PKWARE-encrypted zip members with Salt's password).

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/flate"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/gsalt/gsalt/internal/py"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// archiveMaxMember bounds one extracted zip member read into memory for
// a symlink target.
const archiveMaxMember = 1 << 20

// ErrArchiveRead is a tar archive Go (and the xz fallback) cannot read:
// Python's tarfile.ReadError.
var ErrArchiveRead = errors.New("tar archive not readable")

func archiveFunctions() []modules.Function {
	tmplRun := []modules.Param{opt("template", nil), opt("runas", nil)}
	return []modules.Function{
		{Name: "archive.list", Spec: modules.Spec{Params: []modules.Param{req("name"), opt("archive_format", nil), opt("options", nil),
			opt("strip_components", nil), opt("clean", false), opt("verbose", false), opt("saltenv", "base"), opt("source_hash", nil), opt("use_etag", false)}},
			Doc: "List the files and directories in an tar, zip, or rar archive.\n\nCLI Examples:\n\n    salt '*' archive.list /path/to/myfile.tar.gz\n    salt '*' archive.list /path/to/myfile.tar.gz strip_components=1\n    salt '*' archive.list salt://foo.tar.gz",
			Fn:  archiveList},
		{Name: "archive.is_encrypted", Spec: modules.Spec{Params: []modules.Param{req("name"), opt("clean", false), opt("saltenv", "base"), opt("source_hash", nil), opt("use_etag", false)}},
			Doc: "Returns True if the zip archive is password-protected, False if not.\n\nCLI Examples:\n\n    salt '*' archive.is_encrypted /path/to/myfile.zip\n    salt '*' archive.is_encrypted salt://foo.zip",
			Fn:  archiveIsEncrypted},
		{Name: "archive.tar", Spec: modules.Spec{Params: append([]modules.Param{req("options"), req("tarfile"), opt("sources", nil), opt("dest", nil), opt("cwd", nil)}, tmplRun...)},
			Doc: "Uses the tar command to pack, unpack, etc. tar files\n\nCLI Examples:\n\n    salt '*' archive.tar cjvf /tmp/salt.tar.bz2 {{grains.saltpath}} template=jinja\n    salt '*' archive.tar -cjvf /tmp/tarfile.tar.bz2 /tmp/file_1,/tmp/file_2\n    salt '*' archive.tar xf foo.tar dest=/target/directory",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				if err := archiveWhich("tar"); err != nil {
					return nil, err
				}
				opts := pyfmt.Str(c.Args.Get("options"))
				if !payload.Truthy(c.Args.Get("options")) {
					return nil, fmt.Errorf("%w: Tar options can not be empty", modules.ErrInvocation)
				}
				argv := append([]any{"tar"}, strArgs(strings.Fields(opts))...)
				argv = append(argv, pyfmt.Str(c.Args.Get("tarfile")))
				argv = append(argv, strArgs(archiveExpandSources(c.Args.Get("sources")))...)
				if payload.Truthy(c.Args.Get("dest")) {
					argv = append(argv, "-C", pyfmt.Str(c.Args.Get("dest")))
				}
				return archiveCmdLines(ctx, c, argv, c.Args.Get("cwd"))
			}},
		{Name: "archive.gzip", Spec: modules.Spec{Params: append([]modules.Param{req("sourcefile")}, append(tmplRun, opt("options", nil))...)},
			Doc: "Uses the gzip command to create gzip files\n\nCLI Example:\n\n    salt '*' archive.gzip /tmp/sourcefile.txt\n    salt '*' archive.gzip /tmp/sourcefile.txt options='-9 --verbose'",
			Fn:  archiveGzipCmd("gzip", "sourcefile")},
		{Name: "archive.gunzip", Spec: modules.Spec{Params: append([]modules.Param{req("gzipfile")}, append(tmplRun, opt("options", nil))...)},
			Doc: "Uses the gunzip command to unpack gzip files\n\nCLI Example:\n\n    salt '*' archive.gunzip /tmp/sourcefile.txt.gz\n    salt '*' archive.gunzip /tmp/sourcefile.txt options='--verbose'",
			Fn:  archiveGzipCmd("gunzip", "gzipfile")},
		{Name: "archive.cmd_zip", Spec: modules.Spec{Params: []modules.Param{req("zip_file"), req("sources"), opt("template", nil), opt("cwd", nil), opt("runas", nil)}},
			Doc: "Uses the zip command to create zip files.\n\nCLI Example:\n\n    salt '*' archive.cmd_zip /tmp/zipfile.zip /tmp/sourcefile1,/tmp/sourcefile2",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				if err := archiveWhich("zip"); err != nil {
					return nil, err
				}
				argv := []any{"zip", "-r", pyfmt.Str(c.Args.Get("zip_file"))}
				argv = append(argv, strArgs(archiveExpandSources(c.Args.Get("sources")))...)
				return archiveCmdLines(ctx, c, argv, c.Args.Get("cwd"))
			}},
		{Name: "archive.zip", Spec: modules.Spec{Params: []modules.Param{req("zip_file"), req("sources"), opt("template", nil), opt("cwd", nil), opt("runas", nil), opt("zip64", false)}},
			Doc: "Uses the zipfile Python module to create zip files\n\nCLI Example:\n\n    salt '*' archive.zip /tmp/zipfile.zip /tmp/sourcefile1,/tmp/sourcefile2",
			Fn:  archiveZip},
		{Name: "archive.cmd_unzip", Spec: modules.Spec{Params: []modules.Param{req("zip_file"), req("dest"), opt("excludes", nil), opt("options", nil),
			opt("template", nil), opt("runas", nil), opt("trim_output", false), opt("password", nil)}},
			Doc: "Uses the unzip command to unpack zip files.\n\nCLI Example:\n\n    salt '*' archive.cmd_unzip /tmp/zipfile.zip /home/strongbad/ excludes=file_1,file_2",
			Fn:  archiveCmdUnzip},
		{Name: "archive.unzip", Spec: modules.Spec{Params: []modules.Param{req("zip_file"), req("dest"), opt("excludes", nil), opt("options", nil),
			opt("template", nil), opt("runas", nil), opt("trim_output", false), opt("password", nil), opt("extract_perms", true)}},
			Doc: "Uses the zipfile Python module to unpack zip files\n\nCLI Example:\n\n    salt '*' archive.unzip /tmp/zipfile.zip /home/strongbad/ excludes=file_1,file_2",
			Fn:  archiveUnzip},
		{Name: "archive.rar", Spec: modules.Spec{Params: []modules.Param{req("rarfile"), req("sources"), opt("template", nil), opt("cwd", nil), opt("runas", nil)}},
			Doc: "Uses rar for Linux to create rar files\n\nCLI Example:\n\n    salt '*' archive.rar /tmp/rarfile.rar /tmp/sourcefile1,/tmp/sourcefile2",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				if err := archiveWhich("rar"); err != nil {
					return nil, err
				}
				argv := []any{"rar", "a", "-idp", pyfmt.Str(c.Args.Get("rarfile"))}
				argv = append(argv, strArgs(archiveExpandSources(c.Args.Get("sources")))...)
				return archiveCmdLines(ctx, c, argv, c.Args.Get("cwd"))
			}},
		{Name: "archive.unrar", Spec: modules.Spec{Params: []modules.Param{req("rarfile"), req("dest"), opt("excludes", nil), opt("template", nil), opt("runas", nil), opt("trim_output", false)}},
			Doc: "Uses rar for Linux to unpack rar files\n\nCLI Example:\n\n    salt '*' archive.unrar /tmp/rarfile.rar /home/strongbad/ excludes=file_1,file_2",
			Fn:  archiveUnrar},
	}
}

// strArgs turns strings into a []any command line.
func strArgs(s []string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

// archiveWhich is @salt.utils.decorators.path.which(exe).
func archiveWhich(exe string) error {
	if _, err := exec.LookPath(exe); err != nil {
		return fmt.Errorf("%w: The '%s' binary was not found in $PATH.", modules.ErrCommandNotFound, exe)
	}
	return nil
}

// archiveGlob is _glob: the matches of a pattern with wildcards, else the
// path itself.
func archiveGlob(p string) []string {
	if !strings.ContainsAny(p, "*?[") {
		return []string{p}
	}
	m, _ := filepath.Glob(p)
	return m
}

// archiveExpandSources is _expand_sources: a comma-separated string or a
// list, each entry glob-expanded.
func archiveExpandSources(v any) []string {
	var raw []string
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		for _, s := range strings.Split(x, ",") {
			raw = append(raw, strings.TrimSpace(s))
		}
	case []any:
		for _, s := range x {
			raw = append(raw, pyfmt.Str(s))
		}
	default:
		raw = []string{pyfmt.Str(x)}
	}
	var out []string
	for _, s := range raw {
		out = append(out, archiveGlob(s)...)
	}
	return out
}

// archiveCmdLines is __salt__["cmd.run"](cmd, python_shell=False, ...).splitlines().
func archiveCmdLines(ctx context.Context, c *modules.Call, argv []any, cwd any) (any, error) {
	kw := payload.NewMap("cwd", cwd, "template", c.Args.Get("template"), "runas", c.Args.Get("runas"), "python_shell", false)
	out, err := callFunction(ctx, c, "cmd.run", []any{argv}, kw)
	if err != nil {
		return nil, err
	}
	return archiveSplitLines(payload.Text(out)), nil
}

// archiveSplitLines is str.splitlines() as a list.
func archiveSplitLines(s string) []any {
	out := []any{}
	for _, l := range py.SplitLines(s, false) {
		out = append(out, l)
	}
	return out
}

func archiveGzipCmd(exe, arg string) modules.Func {
	return func(ctx context.Context, c *modules.Call) (any, error) {
		if err := archiveWhich(exe); err != nil {
			return nil, err
		}
		argv := []any{exe}
		if payload.Truthy(c.Args.Get("options")) {
			argv = append(argv, pyfmt.Str(c.Args.Get("options")))
		}
		argv = append(argv, pyfmt.Str(c.Args.Get(arg)))
		return archiveCmdLines(ctx, c, argv, nil)
	}
}

// archiveTrim is _trim_files.
func archiveTrim(files []any, trim any) []any {
	count := 100
	b, isBool := trim.(bool)
	if !isBool {
		if n, ok := cmdPyInt(trim); ok {
			count = int(n)
		}
	}
	if !(isBool && !b) && trim != nil && len(files) > count {
		files = append(files[:count:count], fmt.Sprintf("List trimmed after %d files.", count))
	}
	return files
}

// archiveCache is cp.cache_file for the archive functions.
func archiveCache(ctx context.Context, c *modules.Call) (string, error) {
	name := pyfmt.Str(c.Args.Get("name"))
	cached, err := callFunction(ctx, c, "cp.cache_file", []any{name, c.Args.Get("saltenv")},
		payload.NewMap("source_hash", c.Args.Get("source_hash"), "use_etag", c.Args.Get("use_etag")))
	if err != nil || !payload.Truthy(cached) {
		return "", fmt.Errorf("%w: Failed to cache %s", modules.ErrExecution, name)
	}
	return payload.Text(cached), nil
}

// GuessArchiveType is salt.utils.files.guess_archive_type: tar, zip, rar
// or "" from a file name's extension.
func GuessArchiveType(name string) string {
	name = strings.ToLower(name)
	for _, e := range []string{"tar", "tar.gz", "tgz", "tar.bz2", "tbz2", "tbz", "tar.xz", "txz", "tar.lzma", "tlz"} {
		if strings.HasSuffix(name, "."+e) {
			return "tar"
		}
	}
	for _, e := range []string{"zip", "rar"} {
		if strings.HasSuffix(name, "."+e) {
			return e
		}
	}
	return ""
}

// archiveURLPath is urlparse(name).path or .netloc.
func archiveURLPath(name string) string {
	if i := strings.Index(name, "://"); i > 0 {
		rest := name[i+3:]
		host, p, _ := strings.Cut(rest, "/")
		if p != "" || strings.Contains(rest, "/") {
			p = "/" + p
		}
		if j := strings.IndexAny(p, "?#"); j >= 0 {
			p = p[:j]
		}
		if p != "" {
			return p
		}
		return host
	}
	if j := strings.IndexAny(name, "?#"); j >= 0 {
		return name[:j]
	}
	return name
}

// archiveListing is what _list_tar/_list_zip return.
type archiveListing struct{ dirs, files, links []string }

// TarReader opens a tar archive the way tarfile.open(mode="r") does:
// plain, gzip or bzip2 natively, xz (and lzma) through the xz binary.
// The returned closer releases the file and any helper process.
func TarReader(ctx context.Context, p string) (*tar.Reader, io.Closer, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, nil, err
	}
	br := bufio.NewReader(f)
	magic, _ := br.Peek(6)
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("%w: %v", ErrArchiveRead, err)
		}
		return tar.NewReader(zr), f, nil
	case bytes.HasPrefix(magic, []byte("BZh")):
		return tar.NewReader(bzip2.NewReader(br)), f, nil
	case bytes.HasPrefix(magic, []byte{0xfd, '7', 'z', 'X', 'Z', 0}) || bytes.HasPrefix(magic, []byte{0x5d, 0, 0}):
		f.Close()
		if _, err := exec.LookPath("xz"); err != nil {
			return nil, nil, fmt.Errorf("%w: xz not installed", ErrArchiveRead)
		}
		cmd := exec.CommandContext(ctx, "xz", "--decompress", "--stdout", p)
		out, err := cmd.StdoutPipe()
		if err != nil {
			return nil, nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, nil, fmt.Errorf("%w: %v", ErrArchiveRead, err)
		}
		return tar.NewReader(out), procCloser{cmd}, nil
	}
	return tar.NewReader(br), f, nil
}

type procCloser struct{ cmd *exec.Cmd }

func (p procCloser) Close() error {
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
	return nil
}

// TarMemberName is TarInfo.name: directories lose trailing slashes.
func TarMemberName(h *tar.Header) string {
	if h.Typeflag == tar.TypeDir {
		return strings.TrimRight(h.Name, "/")
	}
	return h.Name
}

func archiveListTar(ctx context.Context, name, cached string) (*archiveListing, error) {
	tr, closer, err := TarReader(ctx, cached)
	if err == nil {
		defer closer.Close()
		l := &archiveListing{}
		n := 0
		for {
			h, err := tr.Next()
			if err == io.EOF {
				if n == 0 {
					break
				}
				return l, nil
			}
			if err != nil {
				break
			}
			n++
			m := TarMemberName(h)
			switch h.Typeflag {
			case tar.TypeSymlink:
				l.links = append(l.links, m)
			case tar.TypeDir:
				l.dirs = append(l.dirs, m+"/")
			default:
				l.files = append(l.files, m)
			}
		}
	} else if !errors.Is(err, ErrArchiveRead) {
		return nil, err
	}
	return nil, fmt.Errorf("%w: Unable to list contents of %s. If this is an XZ-compressed tar archive, install XZ Utils to enable listing its contents. If it is compressed using something other than XZ, it may be necessary to specify CLI options to decompress the archive. See the documentation for details.", modules.ErrExecution, name)
}

func archiveListZip(name, cached string) (*archiveListing, error) {
	zr, err := zip.OpenReader(cached)
	if err != nil {
		if errors.Is(err, zip.ErrFormat) {
			return nil, fmt.Errorf("%w: %s is not a ZIP file", modules.ErrExecution, name)
		}
		return nil, err
	}
	defer zr.Close()
	dirs := map[string]bool{}
	var files, links []string
	for _, f := range zr.File {
		mode := f.ExternalAttrs >> 16
		switch mode & syscall.S_IFMT {
		case syscall.S_IFLNK:
			links = append(links, f.Name)
		case syscall.S_IFDIR:
			dirs[f.Name] = true
		default:
			files = append(files, f.Name)
		}
	}
	for _, p := range append([]string(nil), files...) {
		if i := strings.LastIndexByte(p, '/'); i >= 0 {
			d := p[:i+1]
			dirs[d] = true
			for j, x := range files {
				if x == d {
					files = append(files[:j], files[j+1:]...)
					break
				}
			}
		}
	}
	l := &archiveListing{files: files, links: links}
	for d := range dirs {
		l.dirs = append(l.dirs, d)
	}
	return l, nil
}

func archiveListRar(ctx context.Context, c *modules.Call, name string) (*archiveListing, error) {
	if _, err := exec.LookPath("rar"); err != nil {
		return nil, fmt.Errorf("%w: rar command not available, is it installed?", modules.ErrExecution)
	}
	out, err := callFunction(ctx, c, "cmd.run", []any{[]any{"rar", "lt", name}}, payload.NewMap("python_shell", false, "ignore_retcode", false))
	if err != nil {
		return nil, err
	}
	l := &archiveListing{}
	for _, m := range regexp.MustCompile(`Name:\s*([^\n]+)\s*Type:\s*([^\n]+)`).FindAllStringSubmatch(payload.Text(out), -1) {
		if m[2] == "Directory" {
			l.dirs = append(l.dirs, m[1]+"/")
		} else {
			l.files = append(l.files, m[1])
		}
	}
	if len(l.dirs) == 0 && len(l.files) == 0 {
		return nil, &ExecInfoError{Message: fmt.Sprintf("Failed to list %s, is it a rar file? If so, the installed version of rar may be too old to list data in a parsable format. Installing the rarfile Python module may be an easier workaround if newer rar is not readily available.", name),
			Info: payload.NewMap("error", out)}
	}
	return l, nil
}

// archiveWithLocation re-raises err with "archive location" in its info.
func archiveWithLocation(err error, cached string) error {
	var ie *ExecInfoError
	if errors.As(err, &ie) {
		info := ie.Info.Clone()
		info.Set("archive location", cached)
		return &ExecInfoError{Message: ie.Message, Info: info}
	}
	msg := err.Error()
	if errors.Is(err, modules.ErrExecution) {
		msg = strings.TrimPrefix(msg, modules.ErrExecution.Error()+": ")
	}
	return &ExecInfoError{Message: msg, Info: payload.NewMap("archive location", cached)}
}

func archiveList(ctx context.Context, c *modules.Call) (any, error) {
	name := pyfmt.Str(c.Args.Get("name"))
	cached, err := archiveCache(ctx, c)
	if err != nil {
		return nil, err
	}
	l, err := archiveListCached(ctx, c, name, cached)
	if err != nil {
		return nil, err
	}
	if c.Args.Bool("clean") {
		if err := os.Remove(cached); err != nil && !errors.Is(err, fs.ErrNotExist) {
			c.Log().Warn("Failed to clean cached archive", "path", cached, "error", err)
		}
	}
	return l, nil
}

// archiveListCached is the body of archive.list once the archive is cached.
func archiveListCached(ctx context.Context, c *modules.Call, name, cached string) (any, error) {
	strip := 0
	if sc := c.Args.Get("strip_components"); payload.Truthy(sc) {
		n, ok := cmdPyInt(sc)
		if s, isStr := sc.(string); isStr {
			if _, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
				return nil, fmt.Errorf("%w: '<=' not supported between instances of 'str' and 'int'", modules.ErrArguments)
			}
			n, ok = -1, true
		}
		if !ok || n <= 0 {
			return nil, archiveWithLocation(fmt.Errorf("%w: 'strip_components' must be a positive integer", modules.ErrExecution), cached)
		}
		strip = int(n)
	}
	format := pyfmt.Str(c.Args.Get("archive_format"))
	if !payload.Truthy(c.Args.Get("archive_format")) {
		format = GuessArchiveType(archiveURLPath(name))
		if format == "" {
			return nil, archiveWithLocation(fmt.Errorf("%w: Unable to guess archive format, please pass an 'archive_format' argument.", modules.ErrExecution), cached)
		}
	}
	var l *archiveListing
	var err error
	switch format {
	case "tar":
		l, err = archiveListTar(ctx, name, cached)
	case "zip":
		l, err = archiveListZip(name, cached)
	case "rar":
		l, err = archiveListRar(ctx, c, name)
	default:
		return nil, archiveWithLocation(fmt.Errorf("%w: Unsupported archive format '%s'", modules.ErrExecution, format), cached)
	}
	if err != nil {
		if !errors.Is(err, modules.ErrExecution) {
			err = fmt.Errorf("%w: Failed to list contents of %s: %s", modules.ErrExecution, name, cmdPyOSError(err))
		}
		return nil, archiveWithLocation(err, cached)
	}
	if strip > 0 {
		for _, item := range []*[]string{&l.dirs, &l.files, &l.links} {
			var kept []string
			for _, p := range *item {
				parts := strings.SplitN(p, "/", strip+1)
				if len(parts) > strip && parts[strip] != "" {
					kept = append(kept, parts[strip])
				}
			}
			sort.Strings(kept)
			*item = kept
		}
	}
	if !c.Args.Bool("verbose") {
		all := append(append(append([]string{}, l.dirs...), l.files...), l.links...)
		sort.Strings(all)
		return grainsStrList(all), nil
	}
	sort.Strings(l.dirs)
	sort.Strings(l.files)
	sort.Strings(l.links)
	top := []string{}
	for _, d := range l.dirs {
		if strings.Count(d, "/") == 1 {
			top = append(top, d)
		}
	}
	if cp := archiveCommonPrefix(l.dirs); strings.Contains(cp, "/") {
		cp = cp[:strings.IndexByte(cp, '/')+1]
		if !containsStr(top, cp) {
			top = append(top, cp)
		}
	}
	topOf := func(l []string) []any {
		out := []any{}
		for _, x := range l {
			if !strings.Contains(x, "/") {
				out = append(out, x)
			}
		}
		return out
	}
	return payload.NewMap("dirs", grainsStrList(l.dirs), "files", grainsStrList(l.files), "links", grainsStrList(l.links),
		"top_level_dirs", grainsStrList(top), "top_level_files", topOf(l.files), "top_level_links", topOf(l.links)), nil
}

// archiveCommonPrefix is os.path.commonprefix (character-wise).
func archiveCommonPrefix(l []string) string {
	if len(l) == 0 {
		return ""
	}
	p := l[0]
	for _, s := range l[1:] {
		i := 0
		for i < len(p) && i < len(s) && p[i] == s[i] {
			i++
		}
		p = p[:i]
	}
	return p
}

func archiveIsEncrypted(ctx context.Context, c *modules.Call) (any, error) {
	name := pyfmt.Str(c.Args.Get("name"))
	cached, err := archiveCache(ctx, c)
	if err != nil {
		return nil, err
	}
	enc, err := ZipEncrypted(cached)
	if err != nil {
		if errors.Is(err, zip.ErrFormat) {
			return nil, archiveWithLocation(fmt.Errorf("%w: %s is not a ZIP file", modules.ErrExecution, name), cached)
		}
		return nil, archiveWithLocation(fmt.Errorf("%w: %s", modules.ErrExecution, cmdPyOSError(err)), cached)
	}
	if c.Args.Bool("clean") {
		if err := os.Remove(cached); err != nil && !errors.Is(err, fs.ErrNotExist) {
			c.Log().Warn("Failed to clean cached archive", "path", cached, "error", err)
		}
	}
	return enc, nil
}

// ZipEncrypted reports whether a zip archive has an encrypted member
// (what ZipFile.testzip's RuntimeError tells Salt).
func ZipEncrypted(p string) (bool, error) {
	zr, err := zip.OpenReader(p)
	if err != nil {
		return false, err
	}
	defer zr.Close()
	for _, f := range zr.File {
		if f.Flags&0x1 != 0 {
			return true, nil
		}
	}
	return false, nil
}

// archiveZipArcName is ZipInfo.from_file's arcname normalization.
func archiveZipArcName(arc string, dir bool) string {
	arc = path.Clean(arc)
	arc = strings.TrimLeft(arc, "/")
	if dir {
		arc += "/"
	}
	return arc
}

// archivePyRelpath is os.path.relpath(p, start) for absolute paths.
func archivePyRelpath(p, start string) string {
	r, err := filepath.Rel(start, p)
	if err != nil {
		return p
	}
	return r
}

func archiveZip(ctx context.Context, c *modules.Call) (any, error) {
	if runas := c.Args.Get("runas"); payload.Truthy(runas) {
		if info, err := callFunction(ctx, c, "user.info", []any{runas}, nil); err != nil || !payload.Truthy(info) {
			return nil, fmt.Errorf("%w: User '%s' does not exist", modules.ErrInvocation, pyfmt.Str(runas))
		}
		if os.Geteuid() != 0 {
			return nil, fmt.Errorf("%w: runas needs root", modules.ErrExecution)
		}
	}
	if payload.Truthy(c.Args.Get("template")) {
		return nil, fmt.Errorf("%w: Attempted to render file paths with unavailable engine %s", modules.ErrExecution, pyfmt.Str(c.Args.Get("template")))
	}
	zipFile := pyfmt.Str(c.Args.Get("zip_file"))
	sources := archiveExpandSources(c.Args.Get("sources"))
	cwdV := c.Args.Get("cwd")
	cwd := ""
	if !payload.Truthy(cwdV) {
		for _, s := range sources {
			if !filepath.IsAbs(s) {
				return nil, fmt.Errorf("%w: Relative paths require the 'cwd' parameter", modules.ErrInvocation)
			}
		}
	} else {
		s, ok := cwdV.(string)
		if !ok || !filepath.IsAbs(s) {
			return nil, fmt.Errorf("%w: cwd must be absolute", modules.ErrInvocation)
		}
		cwd = s
	}
	archived := []any{}
	err := func() error {
		out, err := os.OpenFile(zipFile, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
		if err != nil {
			return err
		}
		zw := zip.NewWriter(out)
		add := func(src, arc string, fi fs.FileInfo) error {
			h, err := zip.FileInfoHeader(fi)
			if err != nil {
				return err
			}
			h.Name = archiveZipArcName(arc, fi.IsDir())
			h.Method = zip.Deflate
			if fi.IsDir() {
				h.Method = zip.Store
			}
			w, err := zw.CreateHeader(h)
			if err != nil || fi.IsDir() {
				return err
			}
			f, err := os.Open(src)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = io.Copy(w, f)
			return err
		}
		for _, src := range sources {
			if cwd != "" {
				src = pyJoin(cwd, src)
			}
			fi, err := os.Stat(src)
			if err != nil {
				continue
			}
			relRoot := "/"
			if !filepath.IsAbs(src) && cwd != "" {
				relRoot = cwd
			}
			if !fi.IsDir() {
				arc := archivePyRelpath(src, relRoot)
				if cwd != "" && strings.HasPrefix(src, cwd) {
					arc = archivePyRelpath(src, cwd)
				}
				archived = append(archived, arc)
				if err := add(src, arc, fi); err != nil {
					return err
				}
				continue
			}
			err = archiveWalk(src, func(dir string, sub []fs.FileInfo) error {
				arcDir := archivePyRelpath(dir, relRoot)
				if cwd != "" && strings.HasPrefix(dir, cwd) {
					arcDir = archivePyRelpath(dir, cwd)
				}
				if dfi, err := os.Stat(dir); err == nil {
					archived = append(archived, arcDir+"/")
					if err := add(dir, arcDir, dfi); err != nil {
						return err
					}
				}
				for _, f := range sub {
					if f.IsDir() {
						continue
					}
					abs := pyJoin(dir, f.Name())
					arc := pyJoin(arcDir, f.Name())
					archived = append(archived, arc)
					ffi, err := os.Stat(abs)
					if err != nil {
						return err
					}
					if err := add(abs, arc, ffi); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		if err := zw.Close(); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	}()
	if err != nil {
		// Salt 3006 loses the exception (Python unbinds it after the
		// except block) and fails on the name instead.
		c.Log().Error("archive.zip failed", "error", err)
		return nil, errors.New("UnboundLocalError: cannot access local variable 'exc' where it is not associated with a value")
	}
	return archived, nil
}

// pyJoin is os.path.join for two parts.
func pyJoin(a, b string) string {
	if strings.HasPrefix(b, "/") || a == "" {
		return b
	}
	if strings.HasSuffix(a, "/") {
		return a + b
	}
	return a + "/" + b
}

// archiveWalk is os.walk top-down (directory order), following neither
// symlinked directories nor errors.
func archiveWalk(top string, fn func(dir string, entries []fs.FileInfo) error) error {
	d, err := os.Open(top)
	if err != nil {
		return nil
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil
	}
	var infos []fs.FileInfo
	var subdirs []string
	for _, n := range names {
		fi, err := os.Lstat(pyJoin(top, n))
		if err != nil {
			continue
		}
		if fi.IsDir() {
			subdirs = append(subdirs, n)
		}
		infos = append(infos, fi)
	}
	if err := fn(top, infos); err != nil {
		return err
	}
	for _, s := range subdirs {
		if err := archiveWalk(pyJoin(top, s), fn); err != nil {
			return err
		}
	}
	return nil
}

func archiveCmdUnzip(ctx context.Context, c *modules.Call) (any, error) {
	if err := archiveWhich("unzip"); err != nil {
		return nil, err
	}
	var excludes []string
	hasEx := false
	switch x := c.Args.Get("excludes").(type) {
	case nil:
	case string:
		hasEx = true
		for _, s := range strings.Split(x, ",") {
			excludes = append(excludes, strings.TrimSpace(s))
		}
	case []any:
		hasEx = true
		for _, s := range x {
			excludes = append(excludes, pyfmt.Str(s))
		}
	default:
		hasEx = true
		excludes = []string{pyfmt.Str(x)}
	}
	argv := []any{"unzip"}
	if pw := c.Args.Get("password"); payload.Truthy(pw) {
		argv = append(argv, "-P", pyfmt.Str(pw))
	}
	if o := c.Args.Get("options"); payload.Truthy(o) {
		parts, err := py.ShlexSplit(pyfmt.Str(o))
		if err != nil {
			return nil, err
		}
		argv = append(argv, strArgs(parts)...)
	}
	argv = append(argv, pyfmt.Str(c.Args.Get("zip_file")), "-d", pyfmt.Str(c.Args.Get("dest")))
	if hasEx {
		argv = append(argv, "-x")
		argv = append(argv, strArgs(excludes)...)
	}
	level := "debug"
	if payload.Truthy(c.Args.Get("password")) {
		level = "quiet"
	}
	res, err := callFunction(ctx, c, "cmd.run_all", []any{argv}, payload.NewMap("template", c.Args.Get("template"), "runas", c.Args.Get("runas"),
		"python_shell", false, "redirect_stderr", true, "output_loglevel", level))
	if err != nil {
		return nil, err
	}
	m, _ := res.(*payload.Map)
	if m == nil {
		return nil, fmt.Errorf("%w: unzip returned nothing", modules.ErrExecution)
	}
	rcV, _ := m.Get("retcode")
	if rc, _ := cmdPyInt(rcV); rc != 0 {
		return nil, fmt.Errorf("%w: %s", modules.ErrExecution, m.Str("stdout"))
	}
	return archiveTrim(archiveSplitLines(m.Str("stdout")), c.Args.Get("trim_output")), nil
}

func archiveUnrar(ctx context.Context, c *modules.Call) (any, error) {
	exe := ""
	for _, e := range []string{"unrar", "rar"} {
		if p, err := exec.LookPath(e); err == nil {
			exe = p
			break
		}
	}
	if exe == "" {
		return nil, fmt.Errorf("%w: None of provided binaries(['unrar', 'rar']) were found in $PATH.", modules.ErrCommandNotFound)
	}
	argv := []any{exe, "x", "-idp", pyfmt.Str(c.Args.Get("rarfile"))}
	switch x := c.Args.Get("excludes").(type) {
	case nil:
	case string:
		for _, s := range strings.Split(x, ",") {
			argv = append(argv, "-x", strings.TrimSpace(s))
		}
	case []any:
		for _, s := range x {
			argv = append(argv, "-x", pyfmt.Str(s))
		}
	}
	argv = append(argv, pyfmt.Str(c.Args.Get("dest")))
	out, err := archiveCmdLines(ctx, c, argv, nil)
	if err != nil {
		return nil, err
	}
	return archiveTrim(out.([]any), c.Args.Get("trim_output")), nil
}

// archiveUmask is the process umask.
func archiveUmask() uint32 {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return uint32(m)
}

// archiveExtractPath is ZipFile._extract_member's target path: leading
// slashes, "." and ".." components dropped.
func archiveExtractPath(dest, name string) string {
	var parts []string
	for _, p := range strings.Split(name, "/") {
		if p == "" || p == "." || p == ".." {
			continue
		}
		parts = append(parts, p)
	}
	return filepath.Join(append([]string{dest}, parts...)...)
}

func archiveUnzip(ctx context.Context, c *modules.Call) (any, error) {
	if runas := c.Args.Get("runas"); payload.Truthy(runas) {
		if info, err := callFunction(ctx, c, "user.info", []any{runas}, nil); err != nil || !payload.Truthy(info) {
			return nil, fmt.Errorf("%w: User '%s' does not exist", modules.ErrInvocation, pyfmt.Str(runas))
		}
	}
	if payload.Truthy(c.Args.Get("template")) {
		return nil, fmt.Errorf("%w: Attempted to render file paths with unavailable engine %s", modules.ErrExecution, pyfmt.Str(c.Args.Get("template")))
	}
	excludes := map[string]bool{}
	switch x := c.Args.Get("excludes").(type) {
	case nil:
	case string:
		for _, s := range strings.Split(x, ",") {
			excludes[strings.TrimSpace(s)] = true
		}
	case []any:
		for _, s := range x {
			excludes[pyfmt.Str(s)] = true
		}
	default:
		excludes[pyfmt.Str(x)] = true
	}
	var password []byte
	if pw := c.Args.Get("password"); payload.Truthy(pw) {
		password = []byte(pyfmt.Str(pw))
	}
	dest := pyfmt.Str(c.Args.Get("dest"))
	cleaned := []any{}
	err := func() error {
		zr, err := zip.OpenReader(pyfmt.Str(c.Args.Get("zip_file")))
		if err != nil {
			if errors.Is(err, zip.ErrFormat) {
				return errors.New("File is not a zip file")
			}
			return errors.New(cmdPyOSError(err))
		}
		defer zr.Close()
		var members []*zip.File
		for _, f := range zr.File {
			if !excludes[f.Name] {
				members = append(members, f)
				cleaned = append(cleaned, f.Name)
			}
		}
		for _, f := range members {
			target := archiveExtractPath(dest, f.Name)
			perm := f.ExternalAttrs >> 16
			if perm&syscall.S_IFMT == syscall.S_IFLNK {
				b, err := zipMemberBytes(f, password)
				if err != nil {
					return err
				}
				link := pyJoin(dest, f.Name)
				if err := os.Symlink(string(b), link); err != nil {
					return fmt.Errorf("[Errno %d] %s: '%s' -> '%s'", archiveErrno(err), archiveStrerror(err), string(b), link)
				}
				continue
			}
			if strings.HasSuffix(f.Name, "/") {
				if err := os.MkdirAll(target, 0o777); err != nil {
					return errors.New(cmdPyOSError(err))
				}
			} else {
				if err := os.MkdirAll(filepath.Dir(target), 0o777); err != nil {
					return errors.New(cmdPyOSError(err))
				}
				if err := zipExtractFile(f, password, target); err != nil {
					return err
				}
			}
			if payload.Truthy(c.Args.Get("extract_perms")) {
				if perm == 0 {
					if strings.HasSuffix(f.Name, "/") {
						perm = 0o777 &^ archiveUmask()
					} else {
						perm = 0o666 &^ archiveUmask()
					}
				}
				if err := os.Chmod(pyJoin(dest, f.Name), fs.FileMode(perm&0o777)|archiveSpecialBits(perm)); err != nil {
					return errors.New(cmdPyOSError(err))
				}
			}
		}
		return nil
	}()
	if err != nil {
		return nil, fmt.Errorf("%w: Exception encountered unpacking zipfile: %s", modules.ErrExecution, err)
	}
	return archiveTrim(cleaned, c.Args.Get("trim_output")), nil
}

// archiveSpecialBits maps setuid/setgid/sticky bits of a Unix mode.
func archiveSpecialBits(m uint32) fs.FileMode {
	var out fs.FileMode
	if m&syscall.S_ISUID != 0 {
		out |= fs.ModeSetuid
	}
	if m&syscall.S_ISGID != 0 {
		out |= fs.ModeSetgid
	}
	if m&syscall.S_ISVTX != 0 {
		out |= fs.ModeSticky
	}
	return out
}

func archiveErrno(err error) int {
	var e syscall.Errno
	if errors.As(err, &e) {
		return int(e)
	}
	return 0
}

func archiveStrerror(err error) string {
	var e syscall.Errno
	if errors.As(err, &e) {
		return cmdStrerror(e)
	}
	return err.Error()
}

// zipOpenMember opens a member, decrypting PKWARE (ZipCrypto) encryption
// with password as Python's zipfile does; the errors are zipfile's.
func zipOpenMember(f *zip.File, password []byte) (io.ReadCloser, error) {
	if f.Flags&0x1 == 0 {
		return f.Open()
	}
	if password == nil {
		return nil, fmt.Errorf("File %s is encrypted, password required for extraction", zipInfoRepr(f))
	}
	raw, err := f.OpenRaw()
	if err != nil {
		return nil, err
	}
	var keys zipCryptoKeys
	keys.init(password)
	head := make([]byte, 12)
	if _, err := io.ReadFull(raw, head); err != nil {
		return nil, err
	}
	for i := range head {
		head[i] = keys.decrypt(head[i])
	}
	check := byte(f.CRC32 >> 24)
	if f.Flags&0x8 != 0 {
		check = byte(f.ModifiedTime >> 8)
	}
	if head[11] != check {
		return nil, fmt.Errorf("Bad password for file %s", pyfmt.Repr(f.Name))
	}
	dec := &zipCryptoReader{r: raw, keys: &keys}
	var body io.Reader = io.LimitReader(dec, int64(f.CompressedSize64)-12)
	var rc io.ReadCloser
	switch f.Method {
	case zip.Store:
		rc = io.NopCloser(body)
	case zip.Deflate:
		rc = flate.NewReader(body)
	default:
		return nil, fmt.Errorf("That compression method is not supported")
	}
	return &zipCRCReader{rc: rc, want: f.CRC32, name: f.Name, h: crc32.NewIEEE()}, nil
}

type zipCRCReader struct {
	rc   io.ReadCloser
	want uint32
	name string
	h    interface {
		io.Writer
		Sum32() uint32
	}
}

func (z *zipCRCReader) Read(p []byte) (int, error) {
	n, err := z.rc.Read(p)
	z.h.Write(p[:n])
	if err == io.EOF && z.h.Sum32() != z.want {
		return n, fmt.Errorf("Bad CRC-32 for file %s", pyfmt.Repr(z.name))
	}
	return n, err
}

func (z *zipCRCReader) Close() error { return z.rc.Close() }

// zipCryptoKeys is the traditional PKWARE stream cipher state.
type zipCryptoKeys struct{ k0, k1, k2 uint32 }

func (k *zipCryptoKeys) init(pw []byte) {
	k.k0, k.k1, k.k2 = 0x12345678, 0x23456789, 0x34567890
	for _, b := range pw {
		k.update(b)
	}
}

func (k *zipCryptoKeys) update(b byte) {
	k.k0 = crc32.IEEETable[byte(k.k0)^b] ^ (k.k0 >> 8)
	k.k1 = (k.k1+(k.k0&0xff))*134775813 + 1
	k.k2 = crc32.IEEETable[byte(k.k2)^byte(k.k1>>24)] ^ (k.k2 >> 8)
}

func (k *zipCryptoKeys) decrypt(c byte) byte {
	t := uint16(k.k2) | 2
	p := c ^ byte((uint32(t)*uint32(t^1))>>8)
	k.update(p)
	return p
}

type zipCryptoReader struct {
	r    io.Reader
	keys *zipCryptoKeys
}

func (z *zipCryptoReader) Read(p []byte) (int, error) {
	n, err := z.r.Read(p)
	for i := 0; i < n; i++ {
		p[i] = z.keys.decrypt(p[i])
	}
	return n, err
}

func zipMemberBytes(f *zip.File, password []byte) ([]byte, error) {
	rc, err := zipOpenMember(f, password)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(io.LimitReader(rc, archiveMaxMember))
}

func zipExtractFile(f *zip.File, password []byte, target string) error {
	rc, err := zipOpenMember(f, password)
	if err != nil {
		return err
	}
	defer rc.Close()
	out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return errors.New(cmdPyOSError(err))
	}
	if _, err := io.Copy(out, rc); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// zipInfoRepr is repr(ZipInfo) as Python's zipfile prints it.
func zipInfoRepr(f *zip.File) string {
	var b strings.Builder
	b.WriteString("<ZipInfo filename=" + pyfmt.Repr(f.Name))
	if f.Method != zip.Store {
		names := map[uint16]string{8: "deflate", 12: "bzip2", 14: "lzma"}
		if n, ok := names[f.Method]; ok {
			b.WriteString(" compress_type=" + n)
		} else {
			fmt.Fprintf(&b, " compress_type=%d", f.Method)
		}
	}
	hi, lo := f.ExternalAttrs>>16, f.ExternalAttrs&0xffff
	if hi != 0 {
		b.WriteString(" filemode=" + pyfmt.Repr(PyFilemode(hi)))
	}
	if lo != 0 {
		fmt.Fprintf(&b, " external_attr=%#x", lo)
	}
	isdir := strings.HasSuffix(f.Name, "/")
	if !isdir || f.UncompressedSize64 != 0 {
		fmt.Fprintf(&b, " file_size=%d", f.UncompressedSize64)
	}
	if (!isdir || f.CompressedSize64 != 0) && (f.Method != zip.Store || f.UncompressedSize64 != f.CompressedSize64) {
		fmt.Fprintf(&b, " compress_size=%d", f.CompressedSize64)
	}
	b.WriteString(">")
	return b.String()
}

// PyFilemode is Python's stat.filemode: "-rw-r--r--" from a Unix mode.
func PyFilemode(m uint32) string {
	var b [10]byte
	switch m & syscall.S_IFMT {
	case syscall.S_IFLNK:
		b[0] = 'l'
	case syscall.S_IFSOCK:
		b[0] = 's'
	case syscall.S_IFREG:
		b[0] = '-'
	case syscall.S_IFBLK:
		b[0] = 'b'
	case syscall.S_IFDIR:
		b[0] = 'd'
	case syscall.S_IFCHR:
		b[0] = 'c'
	case syscall.S_IFIFO:
		b[0] = 'p'
	default:
		b[0] = '?'
	}
	rwx := "rwxrwxrwx"
	for i := 0; i < 9; i++ {
		if m&(1<<(8-i)) != 0 {
			b[i+1] = rwx[i]
		} else {
			b[i+1] = '-'
		}
	}
	special := func(bit uint32, pos int, set, unset byte) {
		if m&bit != 0 {
			if b[pos] == '-' {
				b[pos] = unset
			} else {
				b[pos] = set
			}
		}
	}
	special(syscall.S_ISUID, 3, 's', 'S')
	special(syscall.S_ISGID, 6, 's', 'S')
	special(syscall.S_ISVTX, 9, 't', 'T')
	return string(b[:])
}
