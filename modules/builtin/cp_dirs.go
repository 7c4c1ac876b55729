package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file holds the directory, cache and template functions of Salt's
// cp module (get_dir, cache_dir, cache_master, list_minion, cache_dest,
// cache_local_file, stat_file, get_template) and the file client methods
// behind them (salt.fileclient.Client).

func (r remoteFileServer) fileListEmptydirs(ctx context.Context, saltenv, prefix string) (any, error) {
	return r.ch.SendMaster(ctx, payload.NewMap("saltenv", saltenv, "prefix", prefix, "cmd", "_file_list_emptydirs"))
}

func (r remoteFileServer) fileFind(ctx context.Context, rel, saltenv string) (any, error) {
	return r.ch.SendMaster(ctx, payload.NewMap("path", rel, "saltenv", saltenv, "cmd", "_file_find"))
}

func (l localFileServer) fileListEmptydirs(ctx context.Context, saltenv, prefix string) (any, error) {
	return l.fs.Handle(ctx, "_file_list_emptydirs", payload.NewMap("saltenv", saltenv, "prefix", prefix, "cmd", "_file_list_emptydirs"))
}

func (l localFileServer) fileFind(ctx context.Context, rel, saltenv string) (any, error) {
	return l.fs.Handle(ctx, "_file_find", payload.NewMap("path", rel, "saltenv", saltenv, "cmd", "_file_find"))
}

// textList is a file server list reply as strings (anything else is
// an empty list, as Salt iterates nothing useful out of it).
func textList(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		out = append(out, payload.Text(x))
	}
	return out
}

// saltURL is salt.utils.url.create without a saltenv.
func saltURL(p string) string { return "salt://" + strings.ReplaceAll(p, "\\", "/") }

// GetDir is Client.get_dir: every file below salt://path is copied to
// dest/<last component of path>/..., the empty directories below it are
// made, and the sorted local paths are returned.
func (f *SaltFileClient) GetDir(ctx context.Context, p, dest, saltenv string, gz int) ([]any, error) {
	if !strings.HasPrefix(p, "salt://") {
		return nil, errUnsupportedPath(p)
	}
	p, _ = splitEnv(p)
	p = strings.TrimRight(p[len("salt://"):], "/")
	prefix := ""
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		prefix = p[:i]
	}
	// below: fn is inside p; a name climbing out of the file root (from
	// a misbehaving master) is skipped.
	below := func(fn string) bool {
		_, ok := cleanRel(fn)
		return ok && len(fn) > len(p) && fn[len(p)] == '/'
	}
	rel := func(fn string) string { return dest + "/" + strings.TrimLeft(fn[len(prefix):], "/") }
	files, err := f.server.fileList(ctx, saltenv, p)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	var ret []string
	for _, fn := range textList(files) {
		if !below(fn) {
			continue
		}
		got, err := f.GetFile(ctx, saltURL(fn), rel(fn), true, saltenv, gz)
		if err != nil {
			return nil, err
		}
		ret = append(ret, got)
	}
	dirs, err := f.server.fileListEmptydirs(ctx, saltenv, p)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	for _, fn := range textList(dirs) {
		if !below(fn) {
			continue
		}
		d := rel(fn)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
		ret = append(ret, d)
	}
	sort.Strings(ret)
	return toAnyList(ret), nil
}

// errUnsupportedPath is the MinionError Salt's file client raises for a
// path that is not salt://.
func errUnsupportedPath(p string) error {
	return &modules.PyException{Class: "salt.exceptions.MinionError", Message: "Unsupported path: " + p}
}

// CacheDir is Client.cache_dir: every file below salt://path passing the
// include/exclude patterns is cached; with includeEmpty the empty
// directories below it are made in the cache too.
func (f *SaltFileClient) CacheDir(ctx context.Context, p, saltenv string, includeEmpty bool, include, exclude any) ([]any, error) {
	if !strings.HasPrefix(p, "salt://") {
		return nil, errUnsupportedPath(p)
	}
	p, _ = splitEnv(p)
	p = p[len("salt://"):]
	if !strings.HasSuffix(p, "/") {
		p += "/"
	}
	files, err := f.server.fileList(ctx, saltenv, "")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	ret := []any{}
	for _, fn := range textList(files) {
		if strings.TrimSpace(fn) == "" || !strings.HasPrefix(fn, p) {
			continue
		}
		ok, err := checkIncludeExclude(fn, include, exclude)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		got, err := f.GetURL(ctx, saltURL(fn), "", true, true, saltenv)
		if err != nil {
			return nil, err
		}
		if payload.Truthy(got) {
			ret = append(ret, got)
		}
	}
	if includeEmpty {
		dirs, err := f.server.fileListEmptydirs(ctx, saltenv, "")
		if err != nil {
			return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
		base := filepath.Join(f.cacheDir, "files", saltenv)
		for _, fn := range textList(dirs) {
			if !strings.HasPrefix(fn, p) {
				continue
			}
			d := base + "/" + fn
			if _, ok := cleanRel(fn); !ok {
				return nil, fmt.Errorf("%w: refusing cache path %q", modules.ErrExecution, fn)
			}
			if err := os.MkdirAll(d, 0o700); err != nil {
				return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
			}
			ret = append(ret, d)
		}
	}
	return ret, nil
}

// checkIncludeExclude is salt.utils.stringutils.check_include_exclude:
// glob patterns, or Python regexes searched for when prefixed with "E@";
// a pattern may be a list (any include matches, no exclude matches).
func checkIncludeExclude(s string, include, exclude any) (bool, error) {
	match := func(pat string) (bool, error) {
		if strings.HasPrefix(pat, "E@") {
			re, err := regexp.Compile(pat[2:])
			if err != nil {
				return false, fmt.Errorf("%w: bad regex %q: %w", modules.ErrExecution, pat[2:], err)
			}
			return re.MatchString(s), nil
		}
		return py.Fnmatch(s, pat), nil
	}
	// any reports whether one of the patterns of v matches.
	anyMatch := func(v any) (bool, error) {
		pats := []string{payload.Text(v)}
		if l, ok := v.([]any); ok {
			pats = textList(l)
		}
		for _, pat := range pats {
			if ok, err := match(pat); err != nil || ok {
				return ok, err
			}
		}
		return false, nil
	}
	if payload.Truthy(include) {
		ok, err := anyMatch(include)
		if err != nil || !ok {
			return false, err
		}
	}
	if payload.Truthy(exclude) {
		ok, err := anyMatch(exclude)
		if err != nil || ok {
			return false, err
		}
	}
	return true, nil
}

// CacheMaster is Client.cache_master: every file of saltenv is cached;
// the list has each cached path (or false).
func (f *SaltFileClient) CacheMaster(ctx context.Context, saltenv string) ([]any, error) {
	files, err := f.server.fileList(ctx, saltenv, "")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	ret := []any{}
	for _, fn := range textList(files) {
		got, err := f.GetURL(ctx, saltURL(fn), "", true, true, saltenv)
		if err != nil {
			return nil, err
		}
		ret = append(ret, got)
	}
	return ret, nil
}

// CacheLocalFile is Client.cache_local_file: a copy of the local file p
// at cachedir/localfiles/<p>.
func (f *SaltFileClient) CacheLocalFile(p string) (string, error) {
	dest := filepath.Join(f.cacheDir, "localfiles", strings.TrimLeft(p, "/"))
	root := filepath.Join(f.cacheDir, "localfiles")
	if !strings.HasPrefix(dest, root+string(filepath.Separator)) {
		return "", fmt.Errorf("%w: refusing cache path %q", modules.ErrExecution, p)
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return "", fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	in, err := os.Open(p)
	if err == nil {
		if st, serr := in.Stat(); serr == nil && st.IsDir() {
			in.Close()
			err = &fs.PathError{Op: "open", Path: p, Err: syscall.EISDIR}
		}
	}
	if err != nil {
		// shutil.copyfile's OSError, uncaught in Salt.
		return "", &modules.PyException{Class: cmdPyExceptionName(err), Message: pyOSErrorText(err)}
	}
	defer in.Close()
	out, err := os.OpenFile(dest, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return "", fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return "", fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	if err := out.Close(); err != nil {
		return "", fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	return dest, nil
}

// FileLocalList is Client.file_local_list: the sorted files below
// cachedir/files/<saltenv> and cachedir/localfiles. As in Salt, a
// missing directory is replaced by its parent.
func (f *SaltFileClient) FileLocalList(saltenv string) []any {
	set := map[string]bool{}
	for _, d := range []string{filepath.Join(f.cacheDir, "files", saltenv), filepath.Join(f.cacheDir, "localfiles")} {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			d = filepath.Dir(d)
		}
		walkFilesFollow(d, set, 0)
	}
	return toAnyList(slices.Sorted(maps.Keys(set)))
}

// walkFilesFollow adds the non-directory entries below dir to set,
// following symlinked directories (os.walk(followlinks=True)) up to a
// bounded depth.
func walkFilesFollow(dir string, set map[string]bool, depth int) {
	if depth > 64 {
		return
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		isDir := e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			if st, err := os.Stat(p); err == nil && st.IsDir() {
				isDir = true
			}
		}
		if isDir {
			walkFilesFollow(p, set, depth+1)
		} else {
			set[p] = true
		}
	}
}

// CacheDest is Client.cache_dest: where cp.cache_file would put url (a
// path without a scheme is returned as it is).
func (f *SaltFileClient) CacheDest(u, saltenv string) (string, error) {
	pu, err := url.Parse(u)
	if err != nil || pu.Scheme == "" {
		return u, nil
	}
	if strings.EqualFold(pu.Scheme, "salt") {
		p, senv := splitEnv(u)
		if senv != "" {
			saltenv = senv
		}
		return filepath.Join(f.cacheDir, "files", saltenv, strings.TrimLeft(p[len("salt://"):], "|/")), nil
	}
	return f.extrnPath(pu, saltenv)
}

// StatFile is the mode half of Client.hash_and_stat_file: the file
// server's stat of a salt:// file, or the local file's mode; ok is false
// when there is no such file.
func (f *SaltFileClient) StatFile(ctx context.Context, p, saltenv string) (int64, bool, error) {
	if !strings.HasPrefix(p, "salt://") {
		st, err := os.Stat(p)
		if err != nil || !st.Mode().IsRegular() {
			return 0, false, nil
		}
		sys, ok := st.Sys().(*syscall.Stat_t)
		if !ok {
			return 0, false, nil
		}
		return int64(sys.Mode), true, nil
	}
	p, senv := splitEnv(p)
	if senv != "" {
		saltenv = senv
	}
	fnd, err := f.server.fileFind(ctx, p[len("salt://"):], saltenv)
	if err != nil {
		return 0, false, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	m, ok := fnd.(*payload.Map)
	if !ok {
		return 0, false, nil
	}
	st, _ := m.Get("stat")
	l, ok := st.([]any)
	if !ok || len(l) == 0 {
		return 0, false, nil
	}
	mode, ok := l[0].(int64)
	return mode, ok, nil
}

// octalMode is salt.utils.files.st_mode_to_octal: the last four digits
// of Python's oct(mode).
func octalMode(mode int64) string {
	s := "0o" + fmt.Sprintf("%o", mode)
	if mode < 0 {
		s = "-0o" + fmt.Sprintf("%o", -mode)
	}
	if len(s) > 4 {
		s = s[len(s)-4:]
	}
	return s
}

// cpTemplateAvailable is whether gsalt renders the template engine name
// (Salt's TEMPLATE_REGISTRY holds jinja, mako, wempy, genshi, cheetah
// and py; gsalt has jinja).
func cpTemplateAvailable(name string) bool { return name == "jinja" }

// cpTemplateContext is the render context Salt's template engines get in
// cp: salt, pillar, grains, opts and saltenv, with vars over them.
func cpTemplateContext(c *modules.Call, saltenv string, vars *payload.Map) *render.Context {
	rc := &render.Context{Saltenv: saltenv, Vars: vars, Salt: execCaller{c: c}, Opts: optsMap(c)}
	if c.Env != nil {
		rc.Grains, rc.Pillar, rc.Log = c.Env.Grains, c.Env.Pillar, c.Env.Log
	}
	return rc
}

// renderText renders text with the engine name (jinja).
func renderText(ctx context.Context, name, text string, rc *render.Context) (string, error) {
	rd, ok := render.Default().Lookup(name)
	if !ok {
		return "", fmt.Errorf("renderer %q is not available", name)
	}
	out, err := rd.Render(ctx, text, rc)
	if err != nil {
		return "", err
	}
	return payload.Text(out), nil
}

// cpRenderError is the error of a failed template: Salt's template
// engines raise SaltRenderError out of cp (the "result: False" branch of
// cp is only reached by engines gsalt does not have).
func cpRenderError(err error) error {
	for _, sent := range []error{render.ErrTemplate, render.ErrData, render.ErrNotFound, render.ErrRenderer} {
		if errors.Is(err, sent) {
			return &modules.PyException{Class: "salt.exceptions.SaltRenderError", Message: render.ErrorText(err)}
		}
	}
	return fmt.Errorf("%w: %w", modules.ErrExecution, err)
}

// cpRenderFilenames is cp._render_filenames: with a template engine,
// path and dest are rendered as templates.
func cpRenderFilenames(ctx context.Context, c *modules.Call, p, dest, saltenv string) (string, string, error) {
	tmpl := c.Args.Get("template")
	if !payload.Truthy(tmpl) {
		return p, dest, nil
	}
	name := payload.Text(tmpl)
	if !cpTemplateAvailable(name) {
		return "", "", fmt.Errorf("%w: Attempted to render file paths with unavailable engine %s", modules.ErrExecution, name)
	}
	rc := cpTemplateContext(c, saltenv, payload.NewMap("saltenv", saltenv))
	if fc, err := cpClient(c); err == nil {
		rc.Files = fc
	}
	var out [2]string
	for i, s := range []string{p, dest} {
		r, err := renderText(ctx, name, s, rc)
		if err != nil {
			return "", "", cpRenderError(err)
		}
		out[i] = r
	}
	return out[0], out[1], nil
}

// cpCopy holds the arguments get_file and get_dir share, the file
// names rendered when template is set.
type cpCopy struct {
	fc                  *SaltFileClient
	path, dest, saltenv string
	gzip                int
}

// cpCopyArgs reads path, dest, saltenv, template and gzip.
func cpCopyArgs(ctx context.Context, c *modules.Call) (cpCopy, error) {
	fc, err := cpClient(c)
	if err != nil {
		return cpCopy{}, err
	}
	a := cpCopy{fc: fc, saltenv: cpSaltenv(c)}
	if a.path, a.dest, err = cpRenderFilenames(ctx, c, c.Args.Str("path"), c.Args.Str("dest"), a.saltenv); err != nil {
		return cpCopy{}, err
	}
	if g, err := c.Args.Int("gzip"); err == nil && c.Args.Get("gzip") != nil {
		a.gzip = int(g)
	}
	return a, nil
}

// cpGetTemplate is Client.get_template: the cached salt:// file rendered
// with kwargs into dest (into the extrn_files cache when dest is ""); ""
// when the file is missing, the engine unknown, rendering fails or dest's
// directory is missing without makedirs.
func cpGetTemplate(ctx context.Context, c *modules.Call) (any, error) {
	fc, err := cpClient(c)
	if err != nil {
		return nil, err
	}
	saltenv := cpSaltenv(c)
	u, dest := c.Args.Str("path"), c.Args.Str("dest")
	src, err := fc.GetURL(ctx, u, "", true, true, saltenv)
	if err != nil {
		return nil, err
	}
	sfn, _ := src.(string)
	if sfn == "" {
		return "", nil
	}
	text, err := os.ReadFile(sfn)
	if err != nil {
		return "", nil
	}
	name := c.Args.Str("template")
	if !cpTemplateAvailable(name) {
		c.Log().Error("Attempted to render template with unavailable engine", "engine", name)
		return "", nil
	}
	vars := c.Args.CleanKwargs()
	vars.Delete("env")
	vars.Set("saltenv", saltenv)
	rc := cpTemplateContext(c, saltenv, vars)
	rc.Files, rc.Source, rc.Path = fc, u, sfn
	out, err := renderText(ctx, name, string(text), rc)
	if err != nil {
		return nil, cpRenderError(err)
	}
	makedirs := payload.Truthy(c.Args.Get("makedirs"))
	if dest == "" {
		pu, err := url.Parse(u)
		if err != nil {
			return "", nil
		}
		if dest, err = fc.extrnPath(pu, saltenv); err != nil {
			return nil, err
		}
		makedirs = true
	}
	if st, err := os.Stat(filepath.Dir(dest)); err != nil || !st.IsDir() {
		if !makedirs {
			return "", nil
		}
		if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
			return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
	}
	if err := os.WriteFile(dest, []byte(out), 0o600); err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	return dest, nil
}

// cpDirFunctions are the cp functions of this file.
func cpDirFunctions() []modules.Function {
	return []modules.Function{
		{Name: "cp.get_dir", Spec: modules.Spec{Params: []modules.Param{req("path"), req("dest"), opt("saltenv", nil), opt("template", nil), opt("gzip", nil)}, Kwargs: true},
			Doc: "Used to recursively copy a directory from the salt master\n\nCLI Example:\n\n    salt '*' cp.get_dir salt://path/to/dir/ /minion/dest\n\nget_dir supports the same template and gzip arguments as get_file.",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				a, err := cpCopyArgs(ctx, c)
				if err != nil {
					return nil, err
				}
				return a.fc.GetDir(ctx, a.path, a.dest, a.saltenv, a.gzip)
			}},
		{Name: "cp.cache_dir", Spec: modules.Spec{Params: []modules.Param{req("path"), opt("saltenv", nil), opt("include_empty", false), opt("include_pat", nil), opt("exclude_pat", nil)}},
			Doc: "Download and cache everything under a directory from the master\n\ninclude_pat : None\n    Glob or regex to narrow down the files cached from the given path. If\n    matching with a regex, the regex must be prefixed with ``E@``,\n    otherwise the expression will be interpreted as a glob.\n\nexclude_pat : None\n    Glob or regex to exclude certain files from being cached from the given\n    path. If matching with a regex, the regex must be prefixed with ``E@``,\n    otherwise the expression will be interpreted as a glob.\n\nCLI Examples:\n\n    salt '*' cp.cache_dir salt://path/to/dir\n    salt '*' cp.cache_dir salt://path/to/dir include_pat='E@*.py$'",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				fc, err := cpClient(c)
				if err != nil {
					return nil, err
				}
				return fc.CacheDir(ctx, c.Args.Str("path"), cpSaltenv(c), payload.Truthy(c.Args.Get("include_empty")), c.Args.Get("include_pat"), c.Args.Get("exclude_pat"))
			}},
		{Name: "cp.cache_master", Spec: modules.Spec{Params: []modules.Param{opt("saltenv", nil)}},
			Doc: "Retrieve all of the files on the master and cache them locally\n\nCLI Example:\n\n    salt '*' cp.cache_master",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				fc, err := cpClient(c)
				if err != nil {
					return nil, err
				}
				return fc.CacheMaster(ctx, cpSaltenv(c))
			}},
		{Name: "cp.cache_local_file", Spec: modules.Spec{Params: []modules.Param{req("path")}},
			Doc: "Cache a local file on the minion in the localfiles cache\n\nCLI Example:\n\n    salt '*' cp.cache_local_file /etc/hosts",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				fc, err := cpClient(c)
				if err != nil {
					return nil, err
				}
				p := c.Args.Str("path")
				if _, err := os.Stat(p); err != nil {
					return "", nil
				}
				if cached := fc.IsCached(p, cpSaltenv(c)); cached != "" {
					a, errA := hashLocalFile(p, fc.hashType)
					b, errB := hashLocalFile(cached, fc.hashType)
					if errA == nil && errB == nil && a.Str("hsum") == b.Str("hsum") {
						return cached, nil
					}
				}
				return fc.CacheLocalFile(p)
			}},
		{Name: "cp.list_minion", Spec: modules.Spec{Params: []modules.Param{opt("saltenv", nil)}},
			Doc: "List all of the files cached on the minion\n\nCLI Example:\n\n    salt '*' cp.list_minion",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				fc, err := cpClient(c)
				if err != nil {
					return nil, err
				}
				return fc.FileLocalList(cpSaltenv(c)), nil
			}},
		{Name: "cp.cache_dest", Spec: modules.Spec{Params: []modules.Param{req("url"), opt("saltenv", nil)}},
			Doc: "Returns the expected cache path for the file, if cached using\ncp.cache_file.\n\nThis only returns the _expected_ path, it does not tell you if the URL\nis really cached. To check if the URL is cached, use cp.is_cached instead.\n\nCLI Examples:\n\n    salt '*' cp.cache_dest https://foo.com/bar.rpm\n    salt '*' cp.cache_dest salt://my/file\n    salt '*' cp.cache_dest salt://my/file saltenv=dev",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				fc, err := cpClient(c)
				if err != nil {
					return nil, err
				}
				return fc.CacheDest(c.Args.Str("url"), cpSaltenv(c))
			}},
		{Name: "cp.stat_file", Spec: modules.Spec{Params: []modules.Param{req("path"), opt("saltenv", nil), opt("octal", true)}},
			Doc: "Return the permissions of a file, to get the permissions of a file on the\nsalt master file server prepend the path with salt://<file on server>\notherwise, prepend the file with / for a local file.\n\nCLI Example:\n\n    salt '*' cp.stat_file salt://path/to/file",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				fc, err := cpClient(c)
				if err != nil {
					return nil, err
				}
				mode, ok, err := fc.StatFile(ctx, c.Args.Str("path"), cpSaltenv(c))
				if err != nil || !ok {
					return nil, err
				}
				if b, isBool := c.Args.Get("octal").(bool); isBool && b {
					return octalMode(mode), nil
				}
				return mode, nil
			}},
		{Name: "cp.get_template", Spec: modules.Spec{Params: []modules.Param{req("path"), req("dest"), opt("template", "jinja"), opt("saltenv", nil), opt("makedirs", false)}, Kwargs: true},
			Doc: "Render a file as a template before setting it down.\nWarning, order is not the same as in fileclient.cp for\nnon breaking old API.\n\nCLI Example:\n\n    salt '*' cp.get_template salt://path/to/template /minion/dest",
			Fn:  cpGetTemplate},
	}
}
