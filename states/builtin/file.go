package builtin

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// fileServiceName is the modules.Env service the file states fetch salt://
// files through: the minion's file client (modules/builtin.SaltFileClient).
// Without it they fall back to Call.Files for caching.
const fileServiceName = "files"

// fileCacher fetches salt:// files into the minion cache (cp.cache_file).
type fileCacher interface {
	CacheFile(ctx context.Context, src, saltenv string) (string, error)
}

// fileHasher returns {"hsum", "hash_type"} of a salt:// file on the file
// server, or "" when it does not exist (cp.hash_file).
type fileHasher interface {
	HashFile(ctx context.Context, path, saltenv string) (any, error)
}

// fileLister lists the file server's files under a prefix (cp.list_master).
type fileLister interface {
	FileList(ctx context.Context, saltenv, prefix string) (any, error)
}

// fileDirLister lists the file server's directories (cp.list_master_dirs);
// optional: without it directories are derived from the file list, so
// empty directories are not seen.
type fileDirLister interface {
	DirList(ctx context.Context, saltenv, prefix string) (any, error)
}

// fileStates returns Salt's file state functions (salt/states/file.py):
// managed, directory, recurse, absent, exists, missing, touch, symlink,
// append, line, replace and blockreplace. file has no mod_watch in Salt.
func fileStates() []states.Function {
	p := func(name string, def any) modules.Param { return modules.Param{Name: name, Default: def} }
	name := modules.Param{Name: "name", Required: true}
	withKw := func(ps ...modules.Param) modules.Spec { return modules.Spec{Params: ps, Kwargs: true} }
	plain := func(ps ...modules.Param) modules.Spec { return modules.Spec{Params: ps} }
	return []states.Function{
		{Name: "file.managed", Fn: fileManagedState, Spec: fileManagedSpec()},
		// file.managed runs its own check_cmd on the new file; that
		// file has this function (with managed's check_cmd parameter)
		// is what keeps the state compiler's global check_cmd away
		{Name: "file.mod_run_check_cmd", Fn: fileModRunCheckCmdState, Spec: withKw(
			modules.Param{Name: "cmd", Required: true}, modules.Param{Name: "filename", Required: true})},
		{Name: "file.directory", Fn: fileDirectoryState, Spec: withKw(name,
			p("user", nil), p("group", nil), p("recurse", nil), p("max_depth", nil), p("dir_mode", nil),
			p("file_mode", nil), p("makedirs", false), p("clean", false), p("require", nil),
			p("exclude_pat", nil), p("follow_symlinks", false), p("force", false), p("backupname", nil),
			p("allow_symlink", true), p("children_only", false), p("win_owner", nil), p("win_perms", nil),
			p("win_deny_perms", nil), p("win_inheritance", true), p("win_perms_reset", false))},
		{Name: "file.recurse", Fn: fileRecurseState, Spec: withKw(name,
			modules.Param{Name: "source", Required: true}, p("keep_source", true), p("clean", false),
			p("require", nil), p("user", nil), p("group", nil), p("dir_mode", nil), p("file_mode", nil),
			p("sym_mode", nil), p("template", nil), p("context", nil), p("replace", true),
			p("defaults", nil), p("include_empty", false), p("backup", ""), p("include_pat", nil),
			p("exclude_pat", nil), p("maxdepth", nil), p("keep_symlinks", false),
			p("force_symlinks", false), p("win_owner", nil), p("win_perms", nil),
			p("win_deny_perms", nil), p("win_inheritance", true))},
		{Name: "file.absent", Fn: fileAbsentState, Spec: withKw(name)},
		{Name: "file.exists", Fn: fileExistsState, Spec: withKw(name)},
		{Name: "file.missing", Fn: fileMissingState, Spec: withKw(name)},
		{Name: "file.touch", Fn: fileTouchState, Spec: plain(name,
			p("atime", nil), p("mtime", nil), p("makedirs", false))},
		{Name: "file.symlink", Fn: fileSymlinkState, Spec: withKw(name,
			modules.Param{Name: "target", Required: true}, p("force", false), p("backupname", nil),
			p("makedirs", false), p("user", nil), p("group", nil), p("mode", nil), p("win_owner", nil),
			p("win_perms", nil), p("win_deny_perms", nil), p("win_inheritance", nil), p("atomic", false),
			p("disallow_copy_and_unlink", false), p("inherit_user_and_group", false))},
		{Name: "file.append", Fn: fileAppendState, Spec: plain(name,
			p("text", nil), p("makedirs", false), p("source", nil), p("source_hash", nil),
			p("template", "jinja"), p("sources", nil), p("source_hashes", nil), p("defaults", nil),
			p("context", nil), p("ignore_whitespace", true))},
		{Name: "file.line", Fn: fileLineState, Spec: plain(name,
			p("content", nil), p("match", nil), p("mode", nil), p("location", nil), p("before", nil),
			p("after", nil), p("show_changes", true), p("backup", false), p("quiet", false),
			p("indent", true), p("create", false), p("user", nil), p("group", nil), p("file_mode", nil))},
		{Name: "file.replace", Fn: fileReplaceState, Spec: plain(name,
			modules.Param{Name: "pattern", Required: true}, modules.Param{Name: "repl", Required: true},
			p("count", int64(0)), p("flags", int64(8)), p("bufsize", int64(1)),
			p("append_if_not_found", false), p("prepend_if_not_found", false),
			p("not_found_content", nil), p("backup", ".bak"), p("show_changes", true),
			p("ignore_if_missing", false), p("backslash_literal", false))},
		{Name: "file.blockreplace", Fn: fileBlockreplaceState, Spec: plain(name,
			p("marker_start", "#-- start managed zone --"), p("marker_end", "#-- end managed zone --"),
			p("source", nil), p("source_hash", nil), p("template", "jinja"), p("sources", nil),
			p("source_hashes", nil), p("defaults", nil), p("context", nil), p("content", ""),
			p("append_if_not_found", false), p("prepend_if_not_found", false), p("backup", ".bak"),
			p("show_changes", true), p("append_newline", nil), p("insert_before_match", nil),
			p("insert_after_match", nil))},
	}
}

// fileRun is one file state invocation with the minion facilities it uses.
type fileRun struct {
	ctx  context.Context
	c    *states.Call
	test bool
	// listCache holds cp.list_master results per saltenv.
	listCache map[string][]string
}

func fileNewRun(ctx context.Context, c *states.Call) *fileRun {
	return &fileRun{ctx: ctx, c: c, test: c.Test}
}

// opt returns a minion option.
func (r *fileRun) opt(key string) (any, bool) {
	if r.c.Env == nil || r.c.Env.Opts == nil {
		return nil, false
	}
	return r.c.Env.Opts.Get(key)
}

// optStr returns a minion option as text, def when unset or None.
func (r *fileRun) optStr(key, def string) string {
	v, ok := r.opt(key)
	if !ok || v == nil {
		return def
	}
	return payload.Text(v)
}

// hashType is the minion's hash_type (sha256 by default).
func (r *fileRun) hashType() string { return r.optStr("hash_type", "sha256") }

// obfuscate reports the obfuscate_templates option.
func (r *fileRun) obfuscate() bool {
	v, _ := r.opt("obfuscate_templates")
	return modules.IsTrue(v)
}

// saltenv is the state's saltenv (__env__), "base" by default.
func (r *fileRun) saltenv() string {
	if r.c.Saltenv != "" {
		return r.c.Saltenv
	}
	return "base"
}

// service returns the "files" service as T, falling back to Call.Files.
func fileService[T any](r *fileRun) (T, bool) {
	if v, ok := modules.Service[T](r.c.Env, fileServiceName); ok {
		return v, true
	}
	if r.c.Files != nil {
		if v, ok := r.c.Files.(T); ok {
			return v, true
		}
	}
	var zero T
	return zero, false
}

// fileSplitSaltURL is salt.utils.url.parse: the path and saltenv of a
// salt:// URL ("" when not given); other URLs are returned as they are.
func fileSplitSaltURL(u string) (string, string) {
	if !strings.HasPrefix(u, "salt://") {
		return u, ""
	}
	res := u[len("salt://"):]
	if i := strings.Index(res, "?env="); i >= 0 {
		return res[:i], ""
	}
	if i := strings.Index(res, "?saltenv="); i >= 0 {
		return res[:i], res[i+len("?saltenv="):]
	}
	return res, ""
}

// fileScheme returns the URL scheme of a source the way urlparse does
// ("" for plain paths).
func fileScheme(src string) string {
	i := strings.Index(src, "://")
	if i <= 0 {
		if j := strings.IndexByte(src, ':'); j > 0 && !strings.ContainsAny(src[:j], "/") {
			return strings.ToLower(src[:j])
		}
		return ""
	}
	return strings.ToLower(src[:i])
}

// cacheFile is cp.cache_file: salt:// files are fetched into the cache,
// local paths (plain or file://) returned when they exist; "" otherwise.
func (r *fileRun) cacheFile(src string) (string, error) {
	switch fileScheme(src) {
	case "":
		if fileExists(src) {
			return src, nil
		}
		return "", nil
	case "file":
		p := strings.TrimPrefix(src, "file://")
		if fileExists(p) {
			return p, nil
		}
		return "", nil
	}
	c, ok := fileService[fileCacher](r)
	if !ok {
		return "", fmt.Errorf("no file client available to fetch %s", src)
	}
	p, err := c.CacheFile(r.ctx, src, r.saltenv())
	if err != nil {
		return "", err
	}
	return p, nil
}

// hashSaltFile is cp.hash_file for a salt:// URL: the hash and its type,
// ok false when the file server does not have the file.
func (r *fileRun) hashSaltFile(src string) (hsum, htype string, ok bool, err error) {
	if h, has := fileService[fileHasher](r); has {
		v, err := h.HashFile(r.ctx, src, r.saltenv())
		if err != nil {
			return "", "", false, err
		}
		m, isMap := v.(*payload.Map)
		if !isMap || m.Str("hsum") == "" {
			return "", "", false, nil
		}
		return m.Str("hsum"), m.Str("hash_type"), true, nil
	}
	// No hasher: fetch the file and hash the copy.
	p, err := r.cacheFile(src)
	if err != nil || p == "" {
		return "", "", false, err
	}
	sum, err := fileHashFile(p, r.hashType())
	if err != nil {
		return "", "", false, err
	}
	return sum, r.hashType(), true, nil
}

// masterFiles is cp.list_master(saltenv, prefix).
func (r *fileRun) masterFiles(saltenv, prefix string) ([]string, error) {
	l, ok := fileService[fileLister](r)
	if !ok {
		return nil, fmt.Errorf("no file client available to list the file server")
	}
	v, err := l.FileList(r.ctx, saltenv, prefix)
	if err != nil {
		return nil, err
	}
	var out []string
	if list, ok := v.([]any); ok {
		for _, e := range list {
			out = append(out, payload.Text(e))
		}
	}
	return out, nil
}

// masterDirs is cp.list_master_dirs(saltenv, prefix): the DirList service
// when available, else the parent directories of the listed files.
func (r *fileRun) masterDirs(saltenv, prefix string) ([]string, error) {
	if d, ok := fileService[fileDirLister](r); ok {
		v, err := d.DirList(r.ctx, saltenv, prefix)
		if err != nil {
			return nil, err
		}
		var out []string
		if list, ok := v.([]any); ok {
			for _, e := range list {
				out = append(out, payload.Text(e))
			}
		}
		return out, nil
	}
	files, err := r.masterFiles(saltenv, "")
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, f := range files {
		for d := filepath.ToSlash(filepath.Dir(f)); d != "." && d != "/" && d != ""; d = filepath.ToSlash(filepath.Dir(d)) {
			seen[d] = true
		}
	}
	var out []string
	for d := range seen {
		if strings.HasPrefix(d, prefix) {
			out = append(out, d)
		}
	}
	sort.Strings(out)
	return out, nil
}

// onMaster reports whether a salt:// path is a file or directory of the
// file server in saltenv (file.source_list's test).
func (r *fileRun) onMaster(p, saltenv string) (bool, error) {
	if r.listCache == nil {
		r.listCache = map[string][]string{}
	}
	files, ok := r.listCache[saltenv]
	if !ok {
		var err error
		files, err = r.masterFiles(saltenv, "")
		if err != nil {
			return false, err
		}
		dirs, err := r.masterDirs(saltenv, "")
		if err != nil {
			return false, err
		}
		files = append(files, dirs...)
		r.listCache[saltenv] = files
	}
	for _, f := range files {
		if f == p {
			return true, nil
		}
	}
	return false, nil
}

// sourceList is file.source_list: for a list of sources the first that
// exists (strings, or {source: hash} maps), else the source as given.
func (r *fileRun) sourceList(source, sourceHash any) (string, any, error) {
	list, isList := source.([]any)
	if !isList {
		if source == nil {
			return "", sourceHash, nil
		}
		return pyfmt.Str(source), sourceHash, nil
	}
	for _, single := range list {
		src, hsh := "", sourceHash
		if m, isMap := single.(*payload.Map); isMap {
			if m.Len() != 1 {
				continue
			}
			it := m.Items()[0]
			src = payload.KeyString(it.Key)
			if payload.Truthy(it.Value) {
				hsh = it.Value
			}
		} else {
			src = pyfmt.Str(single)
		}
		switch fileScheme(src) {
		case "salt":
			p, senv := fileSplitSaltURL(src)
			if senv == "" {
				senv = r.saltenv()
			}
			found, err := r.onMaster(p, senv)
			if err != nil {
				return "", nil, err
			}
			if found {
				return src, hsh, nil
			}
		case "file":
			if fileExists(strings.TrimPrefix(src, "file://")) {
				return src, hsh, nil
			}
		case "":
			if strings.HasPrefix(src, "/") && fileExists(src) {
				return src, hsh, nil
			}
		}
	}
	return "", nil, fmt.Errorf("none of the specified sources were found")
}

// fileCleanTmp is salt.modules.file.__clean_tmp: it removes our own temp
// files (rendered templates, contents) and nothing else.
func fileCleanTmp(p string) {
	if p != "" && strings.HasPrefix(p, filepath.Join(os.TempDir(), fileTempPrefix)) {
		_ = os.Remove(p)
	}
}

// fileError sets a False result with a comment (states.file._error).
func fileError(ret *states.Ret, msg string) (states.Ret, error) {
	ret.Result = states.False
	ret.Comment = msg
	return *ret, nil
}

// fileNewRet returns {name, changes: {}, result: True, comment: ""}.
func fileNewRet(name string) *states.Ret {
	return &states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}}
}

// fileStrList is states.file._validate_str_list: a string becomes a
// one-item list, a list its items' str(), anything else [str(v)].
func fileStrList(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []byte:
		return []string{string(x)}
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			out = append(out, pyfmt.Str(e))
		}
		return out
	case nil:
		return []string{"None"}
	}
	return []string{pyfmt.Str(v)}
}

// fileTestOwner is states.file._test_owner: "owner" stands in for user.
func fileTestOwner(kwargs *payload.Map, userArg any) any {
	if payload.Truthy(userArg) {
		return userArg
	}
	if kwargs != nil {
		if v, ok := kwargs.Get("owner"); ok {
			return v
		}
	}
	return userArg
}

// checkUser is states.file._check_user; in test mode problems are only
// logged.
func (r *fileRun) checkUser(userArg, groupArg any) string {
	var msg string
	if payload.Truthy(userArg) {
		if _, ok := fileUserToUID(userArg); !ok {
			msg += fmt.Sprintf("User %s is not available ", pyfmt.Str(userArg))
		}
	}
	if payload.Truthy(groupArg) {
		if _, ok := fileGroupToGID(groupArg); !ok {
			msg += fmt.Sprintf("Group %s is not available", pyfmt.Str(groupArg))
		}
	}
	if msg != "" && r.test {
		r.log().Warn(msg)
		return ""
	}
	return msg
}

func (r *fileRun) log() *slog.Logger {
	if r.c.Env != nil && r.c.Env.Log != nil {
		return r.c.Env.Log
	}
	return slog.Default()
}

// fileAbsentState is file.absent.
func fileAbsentState(_ context.Context, c *states.Call) (states.Ret, error) {
	name := fileExpandUser(c.Args.Str("name"))
	ret := fileNewRet(name)
	switch {
	case name == "":
		return fileError(ret, "Must provide name to file.absent")
	case !filepath.IsAbs(name):
		return fileError(ret, fmt.Sprintf("Specified file %s is not an absolute path", name))
	case name == "/":
		return fileError(ret, `Refusing to make "/" absent`)
	}
	if fileIsFile(name) || fileIsLink(name) {
		if c.Test {
			ret.Result = states.None
			ret.Changes.Set("removed", name)
			ret.Comment = fmt.Sprintf("File %s is set for removal", name)
			return *ret, nil
		}
		if err := fileRemovePath(name); err != nil {
			return fileError(ret, fmt.Sprintf("Could not remove '%s': %s", name, filePyOSError(err)))
		}
		ret.Comment = fmt.Sprintf("Removed file %s", name)
		ret.Changes.Set("removed", name)
		return *ret, nil
	}
	if fileIsDir(name) {
		if c.Test {
			ret.Result = states.None
			ret.Changes.Set("removed", name)
			ret.Comment = fmt.Sprintf("Directory %s is set for removal", name)
			return *ret, nil
		}
		if err := fileRemovePath(name); err != nil {
			return fileError(ret, fmt.Sprintf("Failed to remove directory %s", name))
		}
		ret.Comment = fmt.Sprintf("Removed directory %s", name)
		ret.Changes.Set("removed", name)
		return *ret, nil
	}
	ret.Comment = fmt.Sprintf("File %s is not present", name)
	return *ret, nil
}

// fileExistsState is file.exists.
func fileExistsState(_ context.Context, c *states.Call) (states.Ret, error) {
	name := fileExpandUser(c.Args.Str("name"))
	ret := fileNewRet(name)
	if name == "" {
		return fileError(ret, "Must provide name to file.exists")
	}
	if !fileExists(name) {
		return fileError(ret, fmt.Sprintf("Specified path %s does not exist", name))
	}
	ret.Comment = fmt.Sprintf("Path %s exists", name)
	return *ret, nil
}

// fileMissingState is file.missing.
func fileMissingState(_ context.Context, c *states.Call) (states.Ret, error) {
	name := fileExpandUser(c.Args.Str("name"))
	ret := fileNewRet(name)
	if name == "" {
		return fileError(ret, "Must provide name to file.missing")
	}
	if fileExists(name) {
		return fileError(ret, fmt.Sprintf("Specified path %s exists", name))
	}
	ret.Comment = fmt.Sprintf("Path %s is missing", name)
	return *ret, nil
}

// fileManagedSpec is file.managed's signature (file.recurse forwards its
// extra keyword arguments to managed, which consumes these).
func fileManagedSpec() modules.Spec {
	p := func(name string, def any) modules.Param { return modules.Param{Name: name, Default: def} }
	return modules.Spec{Kwargs: true, Params: []modules.Param{{Name: "name", Required: true},
		p("source", nil), p("source_hash", ""), p("source_hash_name", nil), p("keep_source", true),
		p("user", nil), p("group", nil), p("mode", nil), p("attrs", nil), p("template", nil),
		p("makedirs", false), p("dir_mode", nil), p("context", nil), p("replace", true),
		p("defaults", nil), p("backup", ""), p("show_changes", true), p("create", true),
		p("contents", nil), p("tmp_dir", ""), p("tmp_ext", ""), p("contents_pillar", nil),
		p("contents_grains", nil), p("contents_newline", true), p("contents_delimiter", ":"),
		p("encoding", nil), p("encoding_errors", "strict"), p("allow_empty", true),
		p("follow_symlinks", true), p("check_cmd", nil), p("skip_verify", false),
		p("selinux", nil), p("win_owner", nil), p("win_perms", nil), p("win_deny_perms", nil),
		p("win_inheritance", true), p("win_perms_reset", false), p("verify_ssl", true),
		p("use_etag", false)}}
}
