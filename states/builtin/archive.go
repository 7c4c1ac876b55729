package builtin

// This file is Salt's archive state module (salt/states/archive.py):
// archive.extracted, with Salt's checks, comments and change keys. Tar
// archives are extracted in Go as Python's tarfile does (or with the tar
// binary when options are given), zip archives through archive.unzip or
// archive.cmd_unzip, rar through archive.unrar.

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gsalt/gsalt/internal/py"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	mbuiltin "github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

func archiveStates() []states.Function {
	return []states.Function{
		{Name: "archive.extracted", Fn: archiveExtractedState, Spec: modules.Spec{Kwargs: true, Params: []modules.Param{
			sbReq("name"), sbReq("source"), sbOpt("source_hash", nil), sbOpt("source_hash_name", nil), sbOpt("source_hash_update", false),
			sbOpt("skip_files_list_verify", false), sbOpt("skip_verify", false), sbOpt("password", nil), sbOpt("options", nil),
			sbOpt("list_options", nil), sbOpt("force", false), sbOpt("overwrite", false), sbOpt("clean", false), sbOpt("clean_parent", false),
			sbOpt("user", nil), sbOpt("group", nil), sbOpt("if_missing", nil), sbOpt("trim_output", false), sbOpt("use_cmd_unzip", nil),
			sbOpt("extract_perms", true), sbOpt("enforce_toplevel", true), sbOpt("enforce_ownership_on", nil), sbOpt("archive_format", nil),
			sbOpt("use_etag", false)}}},
	}
}

// archiveURL is what urlparse returns that the state uses.
type archiveURL struct{ scheme, netloc, path string }

var archiveSchemeRe = regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9+.\-]*):`)

// archiveParseURL is urllib.parse.urlparse (scheme, netloc, path).
func archiveParseURL(s string) archiveURL {
	var u archiveURL
	if m := archiveSchemeRe.FindStringSubmatch(s); m != nil {
		u.scheme = strings.ToLower(m[1])
		s = s[len(m[0]):]
	}
	if strings.HasPrefix(s, "//") {
		s = s[2:]
		i := strings.IndexAny(s, "/?#")
		if i < 0 {
			u.netloc, s = s, ""
		} else {
			u.netloc, s = s[:i], s[i:]
		}
	}
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i]
	}
	u.path = s
	return u
}

// fileRealpath is os.path.realpath: symlinks resolved as far as they exist.
func fileRealpath(p string) string {
	if !filepath.IsAbs(p) {
		if wd, err := os.Getwd(); err == nil {
			p = filepath.Join(wd, p)
		}
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	dir, base := filepath.Split(filepath.Clean(p))
	if dir == "/" || dir == "" {
		return filepath.Clean(p)
	}
	return filepath.Join(fileRealpath(strings.TrimSuffix(dir, "/")), base)
}

// archiveRedact is salt.utils.url.redact_http_basic_auth.
func archiveRedact(s string) string {
	return regexp.MustCompile(`^(https?://)[^:@/]+(:[^@/]*)?@`).ReplaceAllString(s, "${1}<redacted>@")
}

var archiveStripRe = regexp.MustCompile(`--strip(?:-components)?(?:\s+|=)["']?(\d+)["']?`)

// archiveRun holds one archive.extracted call.
type archiveRun struct {
	ctx context.Context
	c   *states.Call
	r   *fileRun
	ret states.Ret
}

func (a *archiveRun) fail(msg string) (states.Ret, error) {
	a.ret.Result = states.False
	a.ret.Comment = msg
	return a.ret, nil
}

func (a *archiveRun) warn(msg string) { a.ret.Warnings = append(a.ret.Warnings, msg) }

// archiveHashFile is _checksum_file_path.
func (a *archiveRun) hashFile(p string) string {
	cachedir := a.r.optStr("cachedir", "/var/cache/salt/minion")
	rel, err := filepath.Rel(cachedir, p)
	if err != nil || strings.HasPrefix(rel, "../") || rel == ".." {
		rel = filepath.Join("local", strings.TrimLeft(p, "/"))
	} else {
		rel += ".hash"
	}
	return filepath.Join(cachedir, "archive_hash", rel)
}

// readCachedChecksum is _read_cached_checksum: {hash_type, hsum} or nil.
func (a *archiveRun) readCachedChecksum(p, form string) *payload.Map {
	if form == "" {
		form = a.r.hashType()
	}
	b, err := os.ReadFile(a.hashFile(p))
	if err != nil {
		return nil
	}
	for _, line := range strings.SplitAfter(string(b), "\n") {
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			continue
		}
		t, h, ok := strings.Cut(line, ":")
		if !ok {
			return nil
		}
		if t == form {
			return payload.NewMap("hash_type", t, "hsum", h)
		}
	}
	return nil
}

// updateChecksum is _update_checksum.
func (a *archiveRun) updateChecksum(p string) {
	f := a.hashFile(p)
	if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
		sbLog(a.c).Warn("Failed to update checksum", "path", p, "error", err)
		return
	}
	htype := a.r.hashType()
	hsum, err := fileHashFile(p, htype)
	if err != nil {
		sbLog(a.c).Warn("Failed to update checksum", "path", p, "error", err)
		return
	}
	var lines [][2]string
	if b, err := os.ReadFile(f); err == nil {
		for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			t, h, _ := strings.Cut(l, ":")
			lines = append(lines, [2]string{t, h})
		}
	}
	var out strings.Builder
	found := false
	for _, l := range lines {
		if l[0] == htype {
			l[1], found = hsum, true
		}
		out.WriteString(l[0] + ":" + l[1] + "\n")
	}
	if !found {
		out.WriteString(htype + ":" + hsum + "\n")
	}
	if err := os.WriteFile(f, []byte(out.String()), 0o644); err != nil {
		sbLog(a.c).Warn("Failed to update checksum", "path", p, "error", err)
	}
}

// archiveContents is archive.list's verbose return.
type archiveContents struct {
	dirs, files, links, topDirs, topFiles, topLinks []string
}

func archiveStrings(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		out = append(out, pyfmt.Str(x))
	}
	return out
}

func archiveExtractedState(ctx context.Context, c *states.Call) (states.Ret, error) {
	a := &archiveRun{ctx: ctx, c: c, r: fileNewRun(ctx, c)}
	args := c.Args
	name := pyfmt.Str(args.Get("name"))
	if args.Get("name") == nil {
		name = ""
	}
	a.ret = states.Ret{Name: name, Result: states.False, Changes: &payload.Map{}}
	test := c.Test
	kw := args.CleanKwargs()
	skipVerify := args.Bool("skip_verify")
	skipFilesListVerify := args.Bool("skip_files_list_verify")
	if skipFilesListVerify && skipVerify {
		return a.fail(`Only one of "skip_files_list_verify" and "skip_verify" can be set to True`)
	}
	keepSource := true
	ks, hasKS := kw.Get("keep_source")
	k, hasK := kw.Get("keep")
	switch {
	case hasKS && hasK:
		a.warn("Both 'keep_source' and 'keep' were used. Since these both do the same thing, 'keep' was ignored.")
		keepSource = payload.Truthy(ks)
	case hasKS:
		keepSource = payload.Truthy(ks)
	case hasK:
		keepSource = payload.Truthy(k)
	}
	kw.Delete("keep_source")
	kw.Delete("keep")
	if !filepath.IsAbs(name) {
		return a.fail(name + " is not an absolute path")
	}
	name = strings.TrimRight(name, "/")
	if fileIsFile(name) {
		return a.fail(name + " exists and is not a directory")
	}
	name += "/"
	absOrNil := func(v any) bool {
		if v == nil {
			return true
		}
		s, ok := v.(string)
		return ok && filepath.IsAbs(s)
	}
	ifMissingV := args.Get("if_missing")
	if !absOrNil(ifMissingV) {
		return a.fail("Value for 'if_missing' is not an absolute path")
	}
	ifMissing, _ := ifMissingV.(string)
	eoV := args.Get("enforce_ownership_on")
	if !absOrNil(eoV) {
		return a.fail("Value for 'enforce_ownership_on' is not an absolute path")
	}
	enforceOn, _ := eoV.(string)
	if eoV != nil {
		rel, err := filepath.Rel(name, enforceOn)
		if err != nil || strings.HasPrefix(rel, "../") {
			return a.fail("Value for 'enforce_ownership_on' must be within " + name)
		}
	}
	if ifMissing != "" && fileExists(ifMissing) {
		a.ret.Result = states.True
		a.ret.Comment = fmt.Sprintf("Path %s exists", ifMissing)
		return a.ret, nil
	}
	user, group := args.Get("user"), args.Get("group")
	uid, gid := -1, -1
	if payload.Truthy(user) {
		n, ok := fileUserToUID(user)
		if !ok {
			return a.fail(fmt.Sprintf("User %s does not exist", pyfmt.Str(user)))
		}
		uid = n
	}
	if payload.Truthy(group) {
		n, ok := fileGroupToGID(group)
		if !ok {
			return a.fail(fmt.Sprintf("Group %s does not exist", pyfmt.Str(group)))
		}
		gid = n
	}
	sourceHash := args.Get("source_hash")
	if args.Bool("source_hash_update") && !payload.Truthy(sourceHash) {
		a.warn("The 'source_hash_update' argument is ignored when 'source_hash' is not also specified.")
	}
	sourceMatch, sh, err := a.sourceList(args.Get("source"), sourceHash)
	if err != nil {
		return a.fail(err.Error())
	}
	sourceHash = sh
	if sourceMatch == "" {
		return a.fail(fmt.Sprintf(`Invalid source "%s"`, pyfmt.Str(args.Get("source"))))
	}
	u := archiveParseURL(sourceMatch)
	scheme := u.scheme
	upath := strings.TrimRight(pyJoinPath(u.netloc, u.path), "/")
	if len(scheme) == 1 {
		upath = scheme + ":" + upath
		scheme = "file"
	}
	hashBasename := upath
	if hashBasename == "" {
		hashBasename = u.netloc
	}
	local := scheme == "" || scheme == "file"
	if local {
		sourceMatch = fileRealpath(fileExpandUser(upath))
		if !fileIsFile(sourceMatch) {
			return a.fail(fmt.Sprintf("Source file '%s' does not exist", archiveRedact(sourceMatch)))
		}
	}
	format := ""
	if fv := args.Get("archive_format"); payload.Truthy(fv) {
		format = strings.ToLower(pyfmt.Str(fv))
	} else {
		format = mbuiltin.GuessArchiveType(hashBasename)
		if format == "" {
			return a.fail("Could not guess archive_format from the value of the 'source' argument. Please set this archive_format to one of the following: tar, rar, zip")
		}
	}
	if format != "tar" && format != "rar" && format != "zip" {
		return a.fail(fmt.Sprintf("Invalid archive_format '%s'. Either set it to a supported value (tar, rar, zip) or remove this argument and the archive format will be guessed based on file extension.", format))
	}
	optionsV := args.Get("options")
	options := ""
	if optionsV != nil {
		options = pyfmt.Str(optionsV)
	}
	var stripComponents any
	if options != "" && format == "tar" {
		if m := archiveStripRe.FindStringSubmatch(options); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil {
				stripComponents = int64(n)
			}
		}
	}
	useCmdUnzip := args.Get("use_cmd_unzip")
	password := args.Get("password")
	if format == "zip" {
		if options != "" {
			if useCmdUnzip == nil {
				sbLog(c).Info("Presence of CLI options in archive.extracted state implies that use_cmd_unzip is set to True.", "name", name)
				useCmdUnzip = true
			} else if !payload.Truthy(useCmdUnzip) {
				return a.fail("'use_cmd_unzip' cannot be set to False if CLI options are being specified (via the 'options' argument). Either remove 'use_cmd_unzip', or set it to True.")
			}
			if payload.Truthy(useCmdUnzip) {
				if _, err := exec.LookPath("unzip"); err != nil {
					return a.fail("archive.cmd_unzip function not available, unzip might not be installed on minion")
				}
			}
		}
		if payload.Truthy(password) {
			if useCmdUnzip == nil {
				useCmdUnzip = false
			} else if payload.Truthy(useCmdUnzip) {
				a.warn("Using a password in combination with setting 'use_cmd_unzip' to True is considered insecure. It is recommended to remove the 'use_cmd_unzip' argument (or set it to False) and allow Salt to extract the archive using Python's built-in ZIP file support.")
			}
		}
	} else if payload.Truthy(password) {
		return a.fail("The 'password' argument is only supported for zip archives")
	}
	if options != "" && format != "tar" && format != "zip" {
		return a.fail("The 'options' argument is only compatible with the following archive formats: tar, zip")
	}
	trimOutput := args.Get("trim_output")
	trimN := 0
	if payload.Truthy(trimOutput) {
		switch t := trimOutput.(type) {
		case bool:
			trimOutput, trimN = int64(100), 100
		case int64:
			trimN = int(t)
		default:
			n, err := strconv.Atoi(strings.TrimSpace(pyfmt.Str(t)))
			if err != nil {
				return a.fail("Invalid value for trim_output, must be True/False or an integer")
			}
			trimOutput, trimN = int64(n), n
		}
	}
	var sourceSum *fileSum
	if payload.Truthy(sourceHash) {
		s, err := a.r.sourceSum(sourceMatch, sourceMatch, sourceHash, args.Get("source_hash_name"))
		if pe := (*modules.PyException)(nil); errors.As(err, &pe) {
			// Salt catches only CommandExecutionError here: the file
			// client's MinionError (a remote hash file it cannot fetch)
			// is the state's exception
			return a.ret, err
		}
		if err != nil {
			return a.fail(sbErrText(err))
		}
		sourceSum = s
	}
	saltenv := a.r.saltenv()
	if skipFilesListVerify {
		cached := ""
		if local {
			cached = sourceMatch
		} else if v, err := sbExec(ctx, c, "cp.is_cached", []any{sourceMatch}, payload.NewMap("saltenv", saltenv)); err == nil && payload.Truthy(v) {
			cached = payload.Text(v)
		}
		var existing *payload.Map
		if cached != "" {
			existing = a.readCachedChecksum(cached, "")
		} else {
			pu := archiveParseURL(sourceMatch)
			existing = a.readCachedChecksum(filepath.Join(a.r.optStr("cachedir", "/var/cache/salt/minion"), "extrn_files", saltenv, pu.netloc, pu.path), "")
		}
		if sourceSum != nil && existing != nil && existing.Str("hsum") == sourceSum.hsum {
			a.ret.Result = states.True
			if test {
				a.ret.Result = states.None
			}
			a.ret.Comment = fmt.Sprintf("Archive %s existing source sum is the same as the expected one and skip_files_list_verify argument was set to True. Extraction is not needed", archiveRedact(sourceMatch))
			return a.ret, nil
		}
	}
	cached := sourceMatch
	if !local {
		if test {
			a.ret.Result = states.None
			a.ret.Comment = fmt.Sprintf("Archive %s would be cached (if necessary) and checked to discover if extraction is needed", archiveRedact(sourceMatch))
			return a.ret, nil
		}
		res, err := fileCached(ctx, c, states.Ret{Name: sourceMatch, Result: states.False, Changes: &payload.Map{}}, sourceMatch, sourceHash,
			args.Get("source_hash_name"), skipVerify, args.Bool("use_etag"), saltenv)
		if err != nil {
			return a.fail(fmt.Sprintf("Failed to cache %s: %s", archiveRedact(sourceMatch), sbErrText(err)))
		}
		if res.Result != states.True {
			res.Warnings = append(a.ret.Warnings, res.Warnings...)
			return res, nil
		}
		v, _ := sbExec(ctx, c, "cp.is_cached", []any{sourceMatch}, payload.NewMap("saltenv", saltenv))
		cached = payload.Text(v)
	}
	existingSum := a.readCachedChecksum(cached, "")
	if payload.Truthy(sourceHash) && args.Bool("source_hash_update") && !skipVerify {
		a.updateChecksum(cached)
	}
	if format == "zip" && !payload.Truthy(password) {
		if enc, err := mbuiltin.ZipEncrypted(cached); err == nil && enc {
			return a.fail(fmt.Sprintf("Archive %s is password-protected, but no password was specified. Please set the 'password' argument.", archiveRedact(sourceMatch)))
		}
	}
	var contents *archiveContents
	lv, err := sbExec(ctx, c, "archive.list", []any{cached}, payload.NewMap("archive_format", format, "options", args.Get("list_options"),
		"strip_components", stripComponents, "clean", false, "verbose", true, "use_etag", args.Get("use_etag")))
	if err != nil {
		var errs []string
		if ifMissing == "" {
			errs = append(errs, "'if_missing' must be set")
		}
		if enforceOn == "" && (payload.Truthy(user) || payload.Truthy(group)) {
			errs = append(errs, "Ownership cannot be managed without setting 'enforce_ownership_on'.")
		}
		msg := sbErrText(err)
		if len(errs) > 0 {
			msg += "\n\n"
			if format == "tar" {
				msg += "If the source archive is a tar archive compressed using a compression type not natively supported by the tar command, then setting the 'list_options' argument may allow the contents to be listed. Otherwise, if Salt is unable to determine the files/directories in the archive, the following workaround(s) would need to be used for this state to proceed"
			} else {
				msg += "The following workarounds must be used for this state to proceed"
			}
			msg += fmt.Sprintf(" (assuming the source file is a valid %s archive):\n", format)
			for _, e := range errs {
				msg += "\n- " + e
			}
		}
		return a.fail(msg)
	}
	if m, ok := lv.(*payload.Map); ok {
		get := func(k string) []string { v, _ := m.Get(k); return archiveStrings(v) }
		contents = &archiveContents{dirs: get("dirs"), files: get("files"), links: get("links"),
			topDirs: get("top_level_dirs"), topFiles: get("top_level_files"), topLinks: get("top_level_links")}
	}
	if args.Bool("enforce_toplevel") && contents != nil && (len(contents.topDirs) > 1 || len(contents.topFiles) > 0) {
		return a.fail(fmt.Sprintf("Archive does not have a single top-level directory. To allow this archive to be extracted, set 'enforce_toplevel' to False. To avoid a '%s-bomb' it may also be advisable to set a top-level directory by adding it to the 'name' value (for example, setting 'name' to %s instead of %s).",
			format, pyJoinPath(name, "some_dir"), name))
	}
	clean, cleanParent := args.Bool("clean"), args.Bool("clean_parent")
	if clean && cleanParent {
		return a.fail("Only one of 'clean' and 'clean_parent' can be set to True")
	}
	extractionNeeded := args.Bool("overwrite")
	contentsMissing := false
	ifMissingExists := ifMissing != "" && fileExists(ifMissing)
	if !ifMissingExists {
		if contents == nil {
			if _, err := os.Lstat(ifMissing); err != nil {
				extractionNeeded = true
			} else {
				extractionNeeded = false
			}
		} else {
			var incorrect []string
			check := func(list []string, ok func(fs.FileMode) bool) string {
				for _, p := range list {
					fi, err := os.Lstat(strings.TrimRight(pyJoinPath(name, p), "/"))
					if err != nil {
						if errors.Is(err, syscall.ENOENT) {
							extractionNeeded, contentsMissing = true, true
						} else if !errors.Is(err, syscall.ENOTDIR) {
							return filePyOSError(err)
						}
						continue
					}
					if !ok(fi.Mode()) {
						incorrect = append(incorrect, p)
					}
				}
				return ""
			}
			for _, chk := range []struct {
				l  []string
				ok func(fs.FileMode) bool
			}{
				{contents.dirs, func(m fs.FileMode) bool { return m.IsDir() }},
				{contents.files, func(m fs.FileMode) bool { return m&fs.ModeSymlink == 0 && !m.IsDir() }},
				{contents.links, func(m fs.FileMode) bool { return m&fs.ModeSymlink != 0 }},
			} {
				if msg := check(chk.l, chk.ok); msg != "" {
					return a.fail(msg)
				}
			}
			if len(incorrect) > 0 {
				var paths strings.Builder
				paths.WriteString("\n\n")
				for i, p := range incorrect {
					if i > 0 {
						paths.WriteString("\n")
					}
					paths.WriteString("- " + p)
				}
				a.ret.Comment = fmt.Sprintf("The below paths (relative to %s) exist, but are the incorrect type (file instead of directory, symlink instead of file, etc.).", name)
				if test && clean {
					a.ret.Result = states.None
					a.ret.Comment += " Since the 'clean' option is enabled, the destination paths would be cleared and the archive would be extracted." + paths.String()
					return a.ret, nil
				}
				if test && cleanParent {
					a.ret.Result = states.None
					a.ret.Comment += " Since the 'clean_parent' option is enabled, the destination parent directory would be removed first and then re-created and the archive would be extracted"
					return a.ret, nil
				}
				if !clean {
					if !args.Bool("force") {
						a.ret.Comment += " To proceed with extraction, set 'force' to True. Note that this will remove these paths before extracting." + paths.String()
						return a.ret, nil
					}
					var errs []string
					var removed []any
					for _, p := range incorrect {
						full := pyJoinPath(name, p)
						if err := os.RemoveAll(strings.TrimRight(full, "/")); err != nil {
							errs = append(errs, filePyOSError(err))
							continue
						}
						removed = append(removed, full)
						extractionNeeded = true
					}
					if len(removed) > 0 {
						a.ret.Changes.Set("removed", removed)
					}
					if len(errs) > 0 {
						msg := "One or more paths existed by were the incorrect type (i.e. file instead of directory or vice-versa), but could not be removed. The following errors were observed:\n"
						for _, e := range errs {
							msg += "\n- " + e
						}
						return a.fail(msg)
					}
				}
			}
		}
	}
	sourceHashTrigger := false
	if !extractionNeeded && args.Bool("source_hash_update") && existingSum != nil {
		if cur := a.readCachedChecksum(cached, existingSum.Str("hash_type")); cur == nil || !pyfmt.Equal(cur, existingSum) {
			extractionNeeded, sourceHashTrigger = true, true
		}
	}
	explain := func() {
		if sourceHashTrigger {
			a.ret.Comment += ", due to source_hash update"
		} else if contentsMissing {
			a.ret.Comment += ", due to absence of one or more files/dirs"
		}
	}
	createdDestdir := false
	var files any
	if extractionNeeded {
		if local && sourceSum != nil && !skipVerify {
			h, err := fileHashFile(sourceMatch, sourceSum.htype)
			if err != nil || h != sourceSum.hsum {
				return a.fail(fmt.Sprintf("%s does not match the desired source_hash %s", archiveRedact(sourceMatch), sourceSum.hsum))
			}
		}
		if test {
			a.ret.Result = states.None
			a.ret.Comment = fmt.Sprintf("Archive %s would be extracted to %s", archiveRedact(sourceMatch), name)
			if clean && contents != nil {
				a.ret.Comment += ", after cleaning destination path(s)"
			}
			explain()
			return a.ret, nil
		}
		if cleanParent && contents != nil {
			if err := os.RemoveAll(strings.TrimRight(name, "/")); err != nil {
				return a.fail(fmt.Sprintf("Unable to remove the directory %s. The following errors were observed:\n\n- %s", name, filePyOSError(err)))
			}
			if !a.ret.Changes.Has("removed") {
				a.ret.Changes.Set("removed", fmt.Sprintf("Directory %s was removed prior to the extraction", name))
			}
		}
		if clean && contents != nil {
			var errs []string
			removed, _ := a.ret.Changes.Get("removed")
			rl, _ := removed.([]any)
			for _, p := range append(append([]string{}, contents.topDirs...), contents.topFiles...) {
				full := pyJoinPath(name, p)
				if err := os.RemoveAll(strings.TrimRight(full, "/")); err != nil {
					errs = append(errs, filePyOSError(err))
					continue
				}
				rl = append(rl, full)
			}
			if rl != nil {
				a.ret.Changes.Set("removed", rl)
			}
			if len(errs) > 0 {
				msg := "One or more paths could not be cleaned. The following errors were observed:\n"
				for _, e := range errs {
					msg += "\n- " + e
				}
				return a.fail(msg)
			}
		}
		if !fileIsDir(name) {
			if _, err := a.r.directory(fileDirectoryArgs{name: name, user: user, makedirs: true, allowSymlink: true, maxDepth: -1, kwargs: &payload.Map{}}); err != nil {
				return a.fail(sbErrText(err))
			}
			createdDestdir = true
		}
		var stop bool
		files, stop, err = a.extract(format, cached, name, options, useCmdUnzip, password, trimOutput, trimN, createdDestdir, kw)
		if err != nil {
			return a.fail(sbErrText(err))
		}
		if stop {
			return a.ret, nil
		}
	}
	var enforceMissing, enforceFailed []string
	if payload.Truthy(user) || payload.Truthy(group) {
		var eDirs, eFiles, eLinks []string
		if enforceOn != "" {
			if fileIsDir(enforceOn) {
				eDirs = []string{enforceOn}
			} else {
				eFiles = []string{enforceOn}
			}
		} else if contents != nil {
			eDirs, eFiles, eLinks = contents.topDirs, contents.topFiles, contents.topLinks
		}
		var recurse []any
		if payload.Truthy(user) {
			recurse = append(recurse, "user")
		}
		if payload.Truthy(group) {
			recurse = append(recurse, "group")
		}
		for _, d := range eDirs {
			full := pyJoinPath(name, d)
			if !fileIsDir(full) {
				if !test {
					enforceMissing = append(enforceMissing, full)
				}
				continue
			}
			dr, err := a.r.directory(fileDirectoryArgs{name: full, user: user, group: group, recurse: recurse, allowSymlink: true, maxDepth: -1, kwargs: &payload.Map{}})
			if err != nil || dr == nil {
				enforceFailed = append(enforceFailed, full)
				continue
			}
			if dr.Changes != nil && dr.Changes.Len() > 0 {
				a.ret.Changes.Set("updated ownership", true)
			}
			if dr.Result == states.False {
				enforceFailed = append(enforceFailed, full)
			}
		}
		for _, f := range append(append([]string{}, eFiles...), eLinks...) {
			full := pyJoinPath(name, f)
			fi, err := os.Lstat(full)
			if err != nil {
				if !test {
					if errors.Is(err, fs.ErrNotExist) {
						enforceMissing = append(enforceMissing, full)
					}
					enforceFailed = append(enforceFailed, full)
				}
				continue
			}
			st := fi.Sys().(*syscall.Stat_t)
			if (uid != -1 && uint32(uid) != st.Uid) || (gid != -1 && uint32(gid) != st.Gid) {
				if test {
					a.ret.Changes.Set("updated ownership", true)
				} else if err := os.Lchown(full, uid, gid); err != nil {
					enforceFailed = append(enforceFailed, f)
				} else {
					a.ret.Changes.Set("updated ownership", true)
				}
			}
		}
	}
	if extractionNeeded {
		n := 0
		switch x := files.(type) {
		case []any:
			n = len(x)
		case string:
			n = len(x)
		}
		if n > 0 {
			if createdDestdir {
				a.ret.Changes.Set("directories_created", []any{name})
			}
			a.ret.Changes.Set("extracted_files", files)
			a.ret.Comment = fmt.Sprintf("%s extracted to %s", archiveRedact(sourceMatch), name)
			explain()
			a.ret.Comment += fmt.Sprintf(". Output was trimmed to %s number of lines", pyfmt.Str(trimOutput))
			a.ret.Result = states.True
		} else {
			a.ret.Result = states.False
			a.ret.Comment = "No files were extracted from " + archiveRedact(sourceMatch)
		}
	} else {
		a.ret.Result = states.True
		if ifMissingExists {
			a.ret.Comment = ifMissing + " exists"
		} else {
			a.ret.Comment = "All files in archive are already present"
		}
		if test {
			if v, _ := a.ret.Changes.Get("updated ownership"); payload.Truthy(v) {
				a.ret.Result = states.None
				a.ret.Comment += ". Ownership would be updated on one or more files/directories."
			}
		}
	}
	if len(enforceMissing) > 0 {
		if ifMissing == "" {
			a.ret.Result = states.False
		}
		a.ret.Comment += "\n\nWhile trying to enforce user/group ownership, the following paths were missing:\n"
		for _, p := range enforceMissing {
			a.ret.Comment += "\n- " + p
		}
	}
	if len(enforceFailed) > 0 {
		a.ret.Result = states.False
		a.ret.Comment += "\n\nWhile trying to enforce user/group ownership, Salt was unable to change ownership on the following paths:\n"
		for _, p := range enforceFailed {
			a.ret.Comment += "\n- " + p
		}
	}
	if !local && !keepSource {
		res, _ := fileNotCached(ctx, c, states.Ret{Name: sourceMatch, Result: states.False, Changes: &payload.Map{}}, sourceMatch, saltenv)
		if res.Result != states.True {
			a.warn(res.Comment)
		}
	}
	return a.ret, nil
}

// pyJoinPath is os.path.join(a, b).
func pyJoinPath(a, b string) string {
	if strings.HasPrefix(b, "/") || a == "" {
		return b
	}
	if strings.HasSuffix(a, "/") {
		return a + b
	}
	return a + "/" + b
}

// sourceList is file.source_list: a string source as given; of a list,
// the first source that exists (salt:// on the file server, local paths
// on disk), its hash from a {source: hash} entry.
func (a *archiveRun) sourceList(src, sourceHash any) (string, any, error) {
	l, isList := src.([]any)
	if !isList {
		if src == nil {
			return "", sourceHash, nil
		}
		return pyfmt.Str(src), sourceHash, nil
	}
	exists := func(s string) bool {
		switch fileScheme(s) {
		case "salt":
			p, env := fileSplitSaltURL(s)
			if env == "" {
				env = a.r.saltenv()
			}
			list, err := a.r.masterFiles(env, "")
			if err != nil {
				return false
			}
			return containsString(list, p)
		case "", "file":
			return fileExists(archiveParseURL(s).path)
		}
		return true
	}
	for _, item := range l {
		if m, ok := item.(*payload.Map); ok {
			for _, it := range m.Items() {
				s := payload.KeyString(it.Key)
				if exists(s) {
					return s, it.Value, nil
				}
			}
			continue
		}
		if s := pyfmt.Str(item); exists(s) {
			return s, sourceHash, nil
		}
	}
	return "", sourceHash, errors.New("none of the specified sources were found")
}

// extract unpacks the archive; stop means a.ret is final.
func (a *archiveRun) extract(format, cached, name, options string, useCmdUnzip, password, trimOutput any, trimN int, createdDestdir bool, kw *payload.Map) (any, bool, error) {
	switch format {
	case "zip":
		fun := "archive.unzip"
		kwargs := payload.NewMap("options", nilIfEmpty(options), "trim_output", trimOutput, "password", password)
		if payload.Truthy(useCmdUnzip) {
			fun = "archive.cmd_unzip"
		} else {
			kwargs.Set("extract_perms", a.c.Args.Get("extract_perms"))
		}
		for _, it := range kw.Items() {
			kwargs.SetKey(it.Key, it.Value)
		}
		v, err := sbExec(a.ctx, a.c, fun, []any{cached, name}, kwargs)
		if err != nil {
			a.ret.Result = states.False
			a.ret.Comment = sbErrText(err)
			return nil, true, nil
		}
		return v, false, nil
	case "rar":
		kwargs := payload.NewMap("trim_output", trimOutput)
		for _, it := range kw.Items() {
			kwargs.SetKey(it.Key, it.Value)
		}
		v, err := sbExec(a.ctx, a.c, "archive.unrar", []any{cached, name}, kwargs)
		if err != nil {
			a.ret.Result = states.False
			a.ret.Comment = sbErrText(err)
			return nil, true, nil
		}
		return v, false, nil
	}
	if options == "" {
		names, err := TarExtractAll(a.ctx, cached, name)
		if err != nil {
			if createdDestdir {
				_ = os.Remove(name)
			}
			a.ret.Result = states.False
			if _, lerr := exec.LookPath("xz"); lerr != nil {
				a.ret.Comment = "Failed to read from tar archive. If it is XZ-compressed, install xz-utils to attempt extraction."
			} else {
				a.ret.Comment = "Failed to read from tar archive using Python's native tar file support. If archive is compressed using something other than gzip or bzip2, the 'options' argument may be required to pass the correct options to the tar command in order to extract the archive."
			}
			return nil, true, nil
		}
		out := grainsList(names)
		if trimN > 0 && len(out) > trimN {
			out = out[:trimN]
		}
		return out, false, nil
	}
	if _, err := exec.LookPath("tar"); err != nil {
		a.ret.Comment = "tar command not available, it might not be installed on minion"
		return nil, true, nil
	}
	parts, err := py.ShlexSplit(options)
	if err != nil {
		return nil, false, err
	}
	var opts []string
	for _, p := range parts {
		if p != "v" && p != "-v" && p != "--verbose" {
			opts = append(opts, p)
		}
	}
	short := "xv"
	var long []string
	for i, o := range opts {
		if strings.HasPrefix(o, "-") || i > 0 {
			long = append(long, o)
		} else {
			short += strings.ReplaceAll(strings.ReplaceAll(o, "x", ""), "f", "")
		}
	}
	if a.c.Env != nil && a.c.Env.Grains != nil && strings.ToLower(a.c.Env.Grains.Str("os")) == "openbsd" {
		short = "-" + short
	}
	argv := append([]any{"tar", short}, strAny(long)...)
	argv = append(argv, "-f", cached)
	v, err := sbExec(a.ctx, a.c, "cmd.run_all", []any{argv}, payload.NewMap("cwd", name, "python_shell", false))
	if err != nil {
		return nil, false, err
	}
	res, _ := v.(*payload.Map)
	if res == nil {
		return nil, false, errors.New("cmd.run_all returned nothing")
	}
	rcV, _ := res.Get("retcode")
	if rc, _ := rcV.(int64); rc != 0 {
		a.ret.Result = states.False
		a.ret.Changes = res
		return nil, true, nil
	}
	stream := "stdout"
	if ver, err := sbExec(a.ctx, a.c, "cmd.run", []any{[]any{"tar", "--version"}}, payload.NewMap("python_shell", false)); err == nil && strings.Contains(payload.Text(ver), "bsdtar") {
		stream = "stderr"
	}
	lines := []any{}
	for _, l := range py.SplitLines(res.Str(stream), false) {
		lines = append(lines, l)
	}
	if trimN > 0 && len(lines) > trimN {
		lines = lines[:trimN]
	}
	if len(lines) == 0 {
		return "no tar output so far", false, nil
	}
	return lines, false, nil
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func strAny(s []string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

func grainsList(s []string) []any { return strAny(s) }

// archiveSafeJoin joins a member name below dest, dropping leading
// slashes and ".." components (Python 3.11's tarfile would follow them).
func archiveSafeJoin(dest, name string) string {
	var parts []string
	for _, p := range strings.Split(name, "/") {
		if p == "" || p == "." || p == ".." {
			continue
		}
		parts = append(parts, p)
	}
	return filepath.Join(append([]string{dest}, parts...)...)
}

// TarExtractAll is tarfile.extractall(dest) followed by getnames(): every
// member extracted with its mode and mtime (owner too when running as
// root), directories' attributes set last; the member names are returned.
func TarExtractAll(ctx context.Context, archive, dest string) ([]string, error) {
	tr, closer, err := mbuiltin.TarReader(ctx, archive)
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	var names []string
	type dirAttr struct {
		path string
		h    *tar.Header
	}
	var dirs []dirAttr
	root := os.Geteuid() == 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if len(names) == 0 {
				return nil, fmt.Errorf("%w: %v", mbuiltin.ErrArchiveRead, err)
			}
			return names, err
		}
		names = append(names, mbuiltin.TarMemberName(h))
		target := archiveSafeJoin(dest, h.Name)
		if err := os.MkdirAll(filepath.Dir(target), 0o777); err != nil {
			return names, err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.Mkdir(target, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
				return names, err
			}
			dirs = append(dirs, dirAttr{target, h})
			continue
		case tar.TypeSymlink:
			if _, err := os.Lstat(target); err == nil {
				_ = os.Remove(target)
			}
			if err := os.Symlink(h.Linkname, target); err != nil {
				return names, err
			}
		case tar.TypeLink:
			if _, err := os.Lstat(target); err == nil {
				_ = os.Remove(target)
			}
			if err := os.Link(archiveSafeJoin(dest, h.Linkname), target); err != nil {
				return names, err
			}
		case tar.TypeReg, tar.TypeGNUSparse: // the reader reports old TypeRegA entries as TypeReg
			f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
			if err != nil {
				return names, err
			}
			if _, err := io.Copy(f, tr); err != nil {
				f.Close()
				return names, err
			}
			if err := f.Close(); err != nil {
				return names, err
			}
		case tar.TypeFifo:
			_ = syscall.Mkfifo(target, uint32(h.Mode&0o777))
		default:
			// Device nodes and other types: tarfile makes them only as
			// root; skipped here.
			continue
		}
		archiveSetAttrs(target, h, root)
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		archiveSetAttrs(dirs[i].path, dirs[i].h, root)
	}
	return names, nil
}

// archiveSetAttrs is TarFile.chown/chmod/utime for one member.
func archiveSetAttrs(p string, h *tar.Header, root bool) {
	link := h.Typeflag == tar.TypeSymlink
	if root {
		uid, gid := h.Uid, h.Gid
		if h.Uname != "" {
			if n, ok := fileUserToUID(h.Uname); ok {
				uid = n
			}
		}
		if h.Gname != "" {
			if n, ok := fileGroupToGID(h.Gname); ok {
				gid = n
			}
		}
		_ = os.Lchown(p, uid, gid)
	}
	if link {
		return
	}
	_ = os.Chmod(p, fileGoMode(uint32(h.Mode&0o7777)))
	_ = os.Chtimes(p, time.Now(), h.ModTime)
}
