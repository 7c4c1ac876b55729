package builtin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// fileTemplateEngines are the names in Salt's TEMPLATE_REGISTRY; others
// are "not supported".
var fileTemplateEngines = map[string]bool{"jinja": true, "mako": true, "wempy": true, "genshi": true, "cheetah": true, "py": true}

// fileSum is a source's {"hsum", "hash_type"}; nil means {}.
type fileSum struct{ hsum, htype string }

// fileManagedArgs are file.managed's arguments (and what recurse and line
// pass to it).
type fileManagedArgs struct {
	name                               string
	source, sourceHash, sourceHashName any
	keepSource                         bool
	user, group, mode                  any
	template                           string
	makedirs                           bool
	dirMode                            any
	context, defaults                  any
	replace                            bool
	backup                             string
	showChanges, create                bool
	contents                           any
	tmpDir, tmpExt                     string
	contentsPillar, contentsGrains     any
	contentsNewline                    bool
	contentsDelimiter                  string
	encoding                           string
	allowEmpty, follow                 bool
	checkCmd                           any
	skipVerify                         bool
	kwargs                             *payload.Map
}

// fileManagedDefaults returns managed's defaults for name.
func fileManagedDefaults(name string) fileManagedArgs {
	return fileManagedArgs{name: name, sourceHash: "", keepSource: true, replace: true, showChanges: true,
		create: true, contentsNewline: true, contentsDelimiter: ":", follow: true, kwargs: &payload.Map{}}
}

// fileBackupArg reads a backup argument ("" for None/False).
func fileBackupArg(v any) string {
	if !payload.Truthy(v) {
		return ""
	}
	return pyfmt.Str(v)
}

func fileManagedState(ctx context.Context, c *states.Call) (states.Ret, error) {
	a := c.Args
	m := fileManagedArgs{
		name: a.Str("name"), source: a.Get("source"), sourceHash: a.Get("source_hash"),
		sourceHashName: a.Get("source_hash_name"), keepSource: a.Bool("keep_source"),
		user: a.Get("user"), group: a.Get("group"), mode: a.Get("mode"),
		template: a.Str("template"), makedirs: a.Bool("makedirs"), dirMode: a.Get("dir_mode"),
		context: a.Get("context"), replace: a.Bool("replace"), defaults: a.Get("defaults"),
		backup: fileBackupArg(a.Get("backup")), showChanges: a.Bool("show_changes"), create: a.Bool("create"),
		contents: a.Get("contents"), tmpDir: a.Str("tmp_dir"), tmpExt: a.Str("tmp_ext"),
		contentsPillar: a.Get("contents_pillar"), contentsGrains: a.Get("contents_grains"),
		contentsNewline: a.Bool("contents_newline"), contentsDelimiter: a.Str("contents_delimiter"),
		encoding: a.Str("encoding"), allowEmpty: a.Bool("allow_empty"), follow: a.Bool("follow_symlinks"),
		checkCmd: a.Get("check_cmd"), skipVerify: a.Bool("skip_verify"), kwargs: a.CleanKwargs(),
	}
	m.context = fileAccumContext(c, fileExpandUser(m.name), m.context)
	ret, err := fileNewRun(ctx, c).managed(m)
	if err != nil {
		return states.Ret{}, err
	}
	return *ret, nil
}

// filePyTypeName is the Python type name of payload data.
func filePyTypeName(v any) string {
	if v == nil {
		return "NoneType"
	}
	return payload.TypeName(v)
}

// fileTraverse is salt.utils.data.traverse_dict_and_list for pillar.get and
// grains.get with a delimiter.
func fileTraverse(data any, key, delim string) (any, bool) {
	if delim == "" {
		delim = ":"
	}
	cur := data
	for _, part := range strings.Split(key, delim) {
		switch x := cur.(type) {
		case *payload.Map:
			v, ok := x.Get(part)
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			cur = x[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// managed is states.file.managed.
func (r *fileRun) managed(a fileManagedArgs) (*states.Ret, error) {
	name := fileExpandUser(a.name)
	ret := fileNewRet(name)
	if name == "" {
		fileError(ret, "Destination file name is required")
		return ret, nil
	}
	keepMode := false
	if s, ok := a.mode.(string); ok && strings.ToLower(s) == "keep" {
		keepMode, a.mode = true, nil
	}
	mode, _ := fileNormalizeMode(a.mode)
	count := 0
	for _, v := range []any{a.contents, a.contentsPillar, a.contentsGrains} {
		if v != nil {
			count++
		}
	}
	source := a.source
	switch {
	case payload.Truthy(source) && count > 0:
		fileError(ret, "'source' cannot be used in combination with 'contents', 'contents_pillar', or 'contents_grains'")
		return ret, nil
	case keepMode && count > 0:
		fileError(ret, "Mode preservation cannot be used in combination with 'contents', 'contents_pillar', or 'contents_grains'")
		return ret, nil
	case count > 1:
		fileError(ret, "Only one of 'contents', 'contents_pillar', and 'contents_grains' is permitted")
		return ret, nil
	}
	replace := a.replace
	if !payload.Truthy(source) && count == 0 && replace {
		replace = false
	}
	if a.kwargs != nil && a.kwargs.Has("file_mode") {
		ret.Warnings = append(ret.Warnings, "The 'file_mode' argument will be ignored.  Please use 'mode' instead to set file permissions.")
	}

	var useContents any
	hasUse := false
	var pillarData, grainData any
	if r.c.Env != nil {
		pillarData, grainData = r.c.Env.Pillar, r.c.Env.Grains
	}
	fromData := func(data any, arg any, what string) (string, bool, error) {
		if list, ok := arg.([]any); ok {
			parts := make([]string, 0, len(list))
			for _, k := range list {
				v, found := fileTraverse(data, pyfmt.Str(k), a.contentsDelimiter)
				if !found {
					fileError(ret, fmt.Sprintf("%s %s does not exist", what, pyfmt.Str(k)))
					return "", false, nil
				}
				str, isStr := v.(string)
				if !isStr {
					return "", false, fmt.Errorf("sequence item %d: expected str instance, %s found", len(parts), filePyTypeName(v))
				}
				parts = append(parts, str)
			}
			useContents, hasUse = strings.Join(parts, "\n"), true
			return "", true, nil
		}
		v, found := fileTraverse(data, pyfmt.Str(arg), a.contentsDelimiter)
		if !found {
			fileError(ret, fmt.Sprintf("%s %s does not exist", what, pyfmt.Str(arg)))
			return "", false, nil
		}
		useContents, hasUse = v, true
		return "", true, nil
	}
	switch {
	case a.contentsPillar != nil:
		if _, ok, err := fromData(pillarData, a.contentsPillar, "Pillar"); err != nil || !ok {
			return ret, err
		}
	case a.contentsGrains != nil:
		if _, ok, err := fromData(grainData, a.contentsGrains, "Grain"); err != nil || !ok {
			return ret, err
		}
	case a.contents != nil:
		useContents, hasUse = a.contents, true
	}

	var contents []byte
	hasContents := false
	if hasUse {
		if !a.allowEmpty && !payload.Truthy(useContents) {
			id := "'contents'"
			if payload.Truthy(a.contentsPillar) {
				id = "contents_pillar " + pyfmt.Str(a.contentsPillar)
			} else if payload.Truthy(a.contentsGrains) {
				id = "contents_grains " + pyfmt.Str(a.contentsGrains)
			}
			fileError(ret, id+" value would result in empty contents. Set allow_empty to True to allow the managed file to be empty.")
			return ret, nil
		}
		if b, isBytes := useContents.([]byte); isBytes && !utf8.Valid(b) {
			if a.template != "" {
				fileError(ret, "Contents specified by contents/contents_pillar/contents_grains appears to be binary data, and as will not be able to be treated as a Jinja template.")
				return ret, nil
			}
			contents = b
		} else {
			parts := fileStrList(useContents)
			if len(parts) == 0 {
				fileError(ret, "Contents specified by contents/contents_pillar/contents_grains is not a string or list of strings, and is not binary data. SLS is likely malformed.")
				return ret, nil
			}
			var sb strings.Builder
			for _, part := range parts {
				for _, line := range py.SplitLines(part, false) {
					sb.WriteString(strings.TrimRight(strings.TrimRight(line, "\n"), "\r") + "\n")
				}
			}
			s := sb.String()
			if !a.contentsNewline {
				s = strings.TrimRight(strings.TrimRight(s, "\n"), "\r")
			}
			contents = []byte(s)
		}
		hasContents = true
		if a.template != "" {
			out, err := r.renderText(a.template, contents, "", a.defaults, a.context, nil)
			if err != nil {
				fileError(ret, err.Error())
				return ret, nil
			}
			contents = []byte(out)
		}
	}

	userArg := fileTestOwner(a.kwargs, a.user)
	groupArg := a.group
	if !a.create && !fileIsFile(name) {
		ret.Comment = fmt.Sprintf("File %s is not present and is not set for creation", name)
		return ret, nil
	}
	if msg := r.checkUser(userArg, groupArg); msg != "" {
		fileError(ret, msg)
		return ret, nil
	}
	if !filepath.IsAbs(name) {
		fileError(ret, fmt.Sprintf("Specified file %s is not an absolute path", name))
		return ret, nil
	}
	if fileIsDir(name) {
		ret.Comment = fmt.Sprintf("Specified target %s is a directory", name)
		ret.Result = states.False
		return ret, nil
	}
	if a.context != nil {
		if _, ok := a.context.(*payload.Map); !ok {
			fileError(ret, "Context must be formed as a dict")
			return ret, nil
		}
	}
	if payload.Truthy(a.defaults) {
		if _, ok := a.defaults.(*payload.Map); !ok {
			fileError(ret, "Defaults must be formed as a dict")
			return ret, nil
		}
	}

	if !replace && fileExists(name) {
		perms, err := r.checkPerms(ret, name, userArg, groupArg, mode, a.follow)
		if err != nil {
			return nil, err
		}
		if r.test {
			if mode != "" && mode != perms.lmode {
				ret.Comment = fmt.Sprintf("File %s will be updated with permissions %s from its current state of %s", name, mode, perms.lmode)
			} else {
				ret.Comment = fmt.Sprintf("File %s not updated", name)
			}
		} else if ret.Changes.Len() == 0 && ret.Result == states.True {
			ret.Comment = fmt.Sprintf("File %s exists with proper permissions. No changes made.", name)
		}
		return ret, nil
	}

	var contentsPtr *[]byte
	if hasContents {
		contentsPtr = &contents
	}
	if r.test {
		changes, failComment, err := r.checkManagedChanges(name, a, keepMode, userArg, groupArg, mode, contentsPtr)
		if pe := (*modules.PyException)(nil); errors.As(err, &pe) && (pe.Class == fileSaltRenderError || pe.Class == fileMinionError) {
			// only CommandExecutionError is caught around
			// check_managed_changes: a template's error or a remote
			// file that could not be fetched is the state's exception
			return nil, err
		}
		if err != nil {
			ret.Result = states.False
			ret.Comment = "Unable to manage file: " + err.Error()
			return ret, nil
		}
		switch {
		case failComment != nil:
			ret.Result, ret.Comment = states.False, *failComment
		case changes.Len() > 0:
			ret.Changes = changes
			ret.Result = states.None
			ret.Comment = fmt.Sprintf("The file %s is set to be changed", name) +
				"\nNote: No changes made, actual changes may\nbe different due to other states."
			if changes.Has("diff") && !a.showChanges {
				changes.Set("diff", "<show_changes=False>")
			}
		default:
			ret.Result = states.True
			ret.Comment = fmt.Sprintf("The file %s is in the correct state", name)
		}
		return ret, nil
	}

	src, srcHash, err := r.sourceList(source, a.sourceHash)
	if err != nil {
		ret.Result = states.False
		ret.Comment = "Unable to manage file: " + err.Error()
		return ret, nil
	}
	sfn, sum, comment, err := r.getManaged(name, a, src, srcHash, userArg, groupArg, mode)
	if err != nil {
		ret.Changes = &payload.Map{}
		msg := err.Error()
		if pe := (*modules.PyException)(nil); errors.As(err, &pe) {
			msg = pe.Message // str(exc)
		}
		fileError(ret, "Unable to manage file: "+msg)
		return ret, nil
	}
	defer func() { fileCleanTmp(sfn) }()
	mo := fileManageOpts{source: src, sum: sum, user: userArg, group: groupArg, mode: mode,
		backup: a.backup, makedirs: a.makedirs, showChanges: a.showChanges, contents: contentsPtr,
		follow: a.follow, skipVerify: a.skipVerify, keepMode: keepMode, encoding: a.encoding}
	mo.dirMode, _ = fileNormalizeMode(a.dirMode)
	defer func() {
		if !a.keepSource && src != "" && fileScheme(src) == "salt" {
			if p, _ := r.cacheFile(src); p != "" {
				_ = os.Remove(p)
			}
		}
	}()

	var tmpFilename string
	if payload.Truthy(a.checkCmd) {
		tmpFilename, err = fileMkstemp(a.tmpDir, fileTempPrefix, a.tmpExt)
		if err != nil {
			fileError(ret, "Unable to check_cmd file: "+filePyOSError(err))
			return ret, nil
		}
		defer os.Remove(tmpFilename)
		if fileIsFile(name) {
			if err := fileCopyContents(name, tmpFilename); err != nil {
				fileError(ret, fmt.Sprintf("Unable to copy file %s to %s: %s", name, tmpFilename, filePyOSError(err)))
				return ret, nil
			}
		}
		cret, err := r.manageFile(tmpFilename, sfn, ret, mo)
		if err != nil {
			ret.Changes = &payload.Map{}
			fileError(ret, "Unable to check_cmd file: "+err.Error())
			return ret, nil
		}
		if cret.Changes.Len() > 0 {
			ret = fileNewRet(name)
			if msg, ok := r.runCheckCmd(pyfmt.Str(a.checkCmd), tmpFilename); !ok {
				ret.Result = states.False
				ret.Comment = msg
				// as Salt's mod_run_check_cmd result: watchers of a
				// file whose check failed do not fire
				ret.Extra = payload.NewMap("skip_watch", true)
				return ret, nil
			}
			sfn = tmpFilename
		} else {
			ret = fileNewRet(name)
		}
	}
	if comment != "" && !hasContents {
		fileError(ret, comment)
		return ret, nil
	}
	out, err := r.manageFile(name, sfn, ret, mo)
	if err != nil {
		ret.Changes = &payload.Map{}
		fileError(ret, "Unable to manage file: "+err.Error())
		return ret, nil
	}
	return out, nil
}

// fileModRunCheckCmdState is states.file.mod_run_check_cmd called as a
// state function: result False with the check's output when
// "<cmd> <filename>" fails, True otherwise.
func fileModRunCheckCmdState(ctx context.Context, c *states.Call) (states.Ret, error) {
	r := fileNewRun(ctx, c)
	msg, ok := r.runCheckCmd(c.Args.Str("cmd"), c.Args.Str("filename"))
	if !ok {
		return states.Ret{Name: c.Name, Result: states.False, Comment: msg}, nil
	}
	return states.Ret{Name: c.Name, Result: states.True}, nil
}

// runCheckCmd is states.file.mod_run_check_cmd: "<cmd> <file>" without a
// shell; a non-zero exit fails with its output.
func (r *fileRun) runCheckCmd(cmdline, file string) (string, bool) {
	argv := fileShlexSplit(cmdline + " " + file)
	if len(argv) == 0 {
		return "check_cmd execution failed", false
	}
	cmd := exec.CommandContext(r.ctx, argv[0], argv[1:]...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err == nil {
		return "", true
	}
	msg := "check_cmd execution failed"
	if s := strings.TrimRight(stdout.String(), " \t\r\n"); s != "" {
		msg += "\n" + s
	}
	serr := strings.TrimRight(stderr.String(), " \t\r\n")
	var ee *exec.ExitError
	if !errors.As(err, &ee) && serr == "" {
		serr = err.Error()
	}
	if serr != "" {
		msg += "\n" + serr
	}
	return msg, false
}

// fileShlexSplit splits a command line like shlex.split (POSIX).
func fileShlexSplit(s string) []string {
	var out []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\'':
			inWord = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				cur.WriteString(s[i+1:])
				i = len(s)
				break
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case ch == '"':
			inWord = true
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\\\"$`\n", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
		case ch == '\\' && i+1 < len(s):
			inWord = true
			i++
			cur.WriteByte(s[i])
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			inWord = true
			cur.WriteByte(ch)
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out
}

// renderText renders text with a template engine (file.managed template=,
// apply_template_on_contents): defaults, overridden by context, overriding
// the extra variables.
func (r *fileRun) renderText(template string, text []byte, source string, defaults, context any, extra *payload.Map) (string, error) {
	if !fileTemplateEngines[template] {
		return "", fmt.Errorf("Specified template format %s is not supported", template)
	}
	if r.c.Render == nil {
		return "", fmt.Errorf("%w: no template renderer available", render.ErrRenderer)
	}
	rc := r.c.RenderContext()
	rc.Saltenv = r.saltenv()
	if strings.HasPrefix(source, "salt://") {
		rc.Source = source
	}
	vars := &payload.Map{}
	if extra != nil {
		for _, it := range extra.Items() {
			vars.SetKey(it.Key, it.Value)
		}
	}
	for _, m := range []any{defaults, context} {
		if mm, ok := m.(*payload.Map); ok {
			for _, it := range mm.Items() {
				vars.SetKey(it.Key, it.Value)
			}
		}
	}
	if opts, ok := r.optsMap(); ok {
		rc.Opts = opts
	}
	rc.Vars = vars
	return r.c.Render.Text(r.ctx, template, text, rc)
}

// optsMap returns the minion options as a map when the Options value is one.
func (r *fileRun) optsMap() (*payload.Map, bool) {
	if r.c.Env == nil || r.c.Env.Opts == nil {
		return nil, false
	}
	m, ok := r.c.Env.Opts.(*payload.Map)
	return m, ok
}

// sourceSum is file.get_source_sum for hash expressions ("<type>=<hash>",
// a bare hash) and local or salt:// hash files.
func (r *fileRun) sourceSum(name, source string, sourceHash, sourceHashName any) (*fileSum, error) {
	sh := pyfmt.Str(sourceHash)
	invalid := fmt.Errorf("Source hash %s format is invalid. The supported formats are: 1) a hash, 2) an expression in the format <hash_type>=<hash>, or 3) either a path to a local file containing hashes, or a URI of a remote hash file. Supported protocols for remote hash files are: salt, file, http, https, ftp, swift, s3. The hash may also not be of a valid length, the following are supported hash types and lengths: md5 (32), sha1 (40), sha224 (56), sha256 (64), sha384 (96), sha512 (128).", sh)
	hashFn := ""
	if filepath.IsAbs(sh) {
		hashFn = sh
	} else {
		switch proto := fileScheme(sh); proto {
		case "salt", "file", "http", "https", "ftp", "swift", "s3":
			p, err := r.cacheFile(sh)
			if err != nil && errors.Is(err, modules.ErrExecution) && fileRemoteProto(proto) {
				// cp.cache_file raises MinionError ("Error: <reason>
				// reading <path>") for a remote file it could not fetch:
				// get_managed catches only CommandExecutionError
				return nil, &modules.PyException{Class: fileMinionError, Message: sbErrText(err)}
			}
			if err != nil || p == "" {
				return nil, fmt.Errorf("Source hash file %s not found", sh)
			}
			hashFn = p
		case "":
		default:
			if !strings.Contains(sh, "=") {
				return nil, invalid
			}
		}
	}
	if hashFn != "" {
		s := fileExtractHash(hashFn, name, source, pyfmt.Str(sourceHashName), sourceHashName != nil)
		if s == nil {
			return nil, invalid
		}
		return s, nil
	}
	s := &fileSum{}
	if t, h, ok := strings.Cut(sh, "="); ok {
		s.htype, s.hsum = strings.TrimSpace(t), strings.TrimSpace(h)
	} else {
		if !regexp.MustCompile(`^[0-9a-fA-F]+$`).MatchString(sh) {
			return nil, invalid
		}
		s.hsum = sh
		t, known := fileHashLen[len(sh)]
		if !known {
			return nil, invalid
		}
		s.htype = t
	}
	want := map[string]int{"sha512": 128, "sha384": 96, "sha256": 64, "sha224": 56, "sha1": 40, "md5": 32}
	n, known := want[s.htype]
	if !known {
		return nil, fmt.Errorf("Invalid hash type '%s'. Supported hash types are: sha512, sha384, sha256, sha224, sha1, md5. Either remove the hash type and simply use '%s' as the source_hash, or change the hash type to a supported type.", s.htype, s.hsum)
	}
	if t, ok := fileHashLen[len(s.hsum)]; !ok {
		return nil, invalid
	} else if len(s.hsum) != n {
		return nil, fmt.Errorf("Invalid length (%d) for hash type '%s'. Either remove the hash type and simply use '%s' as the source_hash, or change the hash type to '%s'", len(s.hsum), s.htype, s.hsum, t)
	}
	s.hsum = strings.ToLower(s.hsum)
	return s, nil
}

// fileExtractHash is a reduced file.extract_hash: the hash on the line
// naming source_hash_name, else the managed file's or source's base name,
// else the first hash of the file.
func fileExtractHash(hashFn, name, source, hashName string, hasName bool) *fileSum {
	f, err := os.Open(hashFn)
	if err != nil {
		return nil
	}
	defer f.Close()
	re := regexp.MustCompile(`(?i)(?:^|[^a-z0-9])([a-f0-9]{32,128})(?:$|[^a-z0-9])`)
	var partial *fileSum
	found := map[string]*fileSum{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	ends := func(line, base string) bool {
		if base == "" || !strings.HasSuffix(line, base) || len(line) <= len(base) {
			return false
		}
		return strings.ContainsRune(" \t\n\r\v\f\\/*", rune(line[len(line)-len(base)-1]))
	}
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		m := re.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		t, ok := fileHashLen[len(m[1])]
		if !ok {
			continue
		}
		s := &fileSum{hsum: strings.ToLower(m[1]), htype: t}
		if partial == nil {
			partial = s
		}
		if hasName && found["name"] == nil && (ends(line, hashName) || strings.HasPrefix(line, hashName+" ")) {
			found["name"] = s
		}
		if found["file"] == nil && ends(line, filepath.Base(name)) {
			found["file"] = s
		}
		if source != "" && found["source"] == nil && ends(line, filepath.Base(source)) {
			found["source"] = s
		}
	}
	for _, k := range []string{"name", "file", "source"} {
		if found[k] != nil {
			return found[k]
		}
	}
	return partial
}

// getManaged is file.get_managed: the local file to copy (a rendered
// template, a cached remote file, a local source), its hash, and a comment
// describing why there is none. An error is an exception Salt raises.
func (r *fileRun) getManaged(name string, a fileManagedArgs, source string, sourceHash any, userArg, groupArg any, mode string) (string, *fileSum, string, error) {
	if source == "" {
		return "", nil, "", nil
	}
	scheme := fileScheme(source)
	switch scheme {
	case "salt", "file", "http", "https", "ftp", "swift", "s3":
	default:
		scheme = ""
	}
	sfn := ""
	var sum *fileSum
	parsed := source
	switch scheme {
	case "":
		sfn = source
		if !fileExists(sfn) {
			return "", nil, fmt.Sprintf("Local file source %s does not exist", sfn), nil
		}
	case "file":
		parsed = strings.TrimRight(strings.TrimPrefix(source, "file://"), "/")
		sfn = parsed
		if !fileExists(sfn) {
			return "", nil, fmt.Sprintf("Local file source %s does not exist", sfn), nil
		}
	}
	hasHash := payload.Truthy(sourceHash)
	switch {
	case scheme == "salt":
		hsum, htype, ok, err := r.hashSaltFile(source)
		if err != nil {
			return "", nil, "", err
		}
		if !ok {
			return "", nil, fmt.Sprintf("Source file %s not found in saltenv '%s'", source, r.saltenv()), nil
		}
		sum = &fileSum{hsum: hsum, htype: htype}
	case !hasHash && (scheme == "" || scheme == "file"):
		h, err := fileHashFile(parsed, "sha256")
		if err != nil {
			return "", nil, "", err
		}
		sum = &fileSum{hsum: h, htype: "sha256"}
	default:
		if !a.skipVerify {
			if hasHash {
				s, err := r.sourceSum(name, source, sourceHash, a.sourceHashName)
				if pe := (*modules.PyException)(nil); errors.As(err, &pe) {
					return "", nil, "", err
				}
				if err != nil {
					return "", nil, err.Error(), nil
				}
				sum = s
			} else {
				return "", nil, fmt.Sprintf("Unable to verify upstream hash of source file %s, please set source_hash or set skip_verify to True", source), nil
			}
		}
	}
	remote := scheme == "http" || scheme == "https" || scheme == "ftp" || scheme == "swift" || scheme == "s3"
	if a.template != "" || remote {
		if sfn == "" {
			p, err := r.cacheFile(source)
			if err != nil {
				return "", nil, fmt.Sprintf("Failed to cache %s: %s", source, sbErrText(err)), nil
			}
			sfn = p
		}
		if sfn == "" || !fileExists(sfn) {
			return sfn, nil, fmt.Sprintf("Source file '%s' not found", source), nil
		}
		if sfn == name {
			return "", nil, "", errors.New("Source file cannot be the same as destination")
		}
		if a.template != "" {
			if !fileTemplateEngines[a.template] {
				return sfn, nil, fmt.Sprintf("Specified template format %s is not supported", a.template), nil
			}
			data, err := os.ReadFile(sfn)
			if err != nil {
				return "", nil, "", err
			}
			extra := payload.NewMap("name", name, "source", source, "user", userArg, "group", groupArg,
				"mode", fileModeValue(mode), "attrs", nil, "saltenv", r.saltenv())
			// get_managed hands the state's extra keyword arguments to the
			// renderer as variables (defaults and context override them).
			if a.kwargs != nil {
				for _, it := range a.kwargs.Items() {
					if _, dup := extra.GetKey(it.Key); !dup {
						extra.SetKey(it.Key, it.Value)
					}
				}
			}
			out, err := r.renderText(a.template, data, source, a.defaults, a.context, extra)
			if err != nil {
				if rerr := fileRenderError(err); rerr != nil {
					fileCleanTmp(sfn)
					return "", nil, "", rerr
				}
				return sfn, nil, err.Error(), nil
			}
			tmp, err := fileMkstemp("", fileTempPrefix, "")
			if err != nil {
				return "", nil, "", err
			}
			if err := os.WriteFile(tmp, []byte(out), 0o600); err != nil {
				return "", nil, "", err
			}
			h, err := fileHashFile(tmp, "sha256")
			if err != nil {
				return "", nil, "", err
			}
			sfn, sum = tmp, &fileSum{hsum: h, htype: "sha256"}
		}
	}
	return sfn, sum, "", nil
}

// fileSaltRenderError is the class of the exception Salt's template
// renderers raise for a template that fails to render.
const fileSaltRenderError = "salt.exceptions.SaltRenderError"

// fileMinionError is the class of the exception Salt's file client raises
// for a remote (http, https, ftp) file it could not fetch.
const fileMinionError = "salt.exceptions.MinionError"

// fileRemoteProto reports whether Salt's file client fetches proto URLs
// from a remote server (salt.utils.files.REMOTE_PROTOS).
func fileRemoteProto(proto string) bool {
	switch proto {
	case "http", "https", "ftp", "swift", "s3":
		return true
	}
	return false
}

// fileRenderError is the SaltRenderError file.get_managed raises for a
// source template that failed to render (Salt 3006's render_tmpl re-raises
// it instead of returning it as a comment), or nil when err is not a
// render error.
func fileRenderError(err error) error {
	for _, sent := range []error{render.ErrTemplate, render.ErrData, render.ErrNotFound} {
		if errors.Is(err, sent) {
			return &modules.PyException{Class: fileSaltRenderError, Message: states.RenderErrorText(err)}
		}
	}
	return nil
}

// fileModeValue is a normalised mode as payload data (nil for None).
func fileModeValue(mode string) any {
	if mode == "" {
		return nil
	}
	return mode
}

// checkManagedChanges is file.check_managed_changes: the changes test mode
// predicts, or a failure comment.
func (r *fileRun) checkManagedChanges(name string, a fileManagedArgs, keepMode bool, userArg, groupArg any, mode string, contents *[]byte) (*payload.Map, *string, error) {
	source, sourceHash, err := r.sourceList(a.source, a.sourceHash)
	if err != nil {
		return nil, nil, err
	}
	sfn := ""
	var sum *fileSum
	if contents == nil {
		var comment string
		sfn, sum, comment, err = r.getManaged(name, a, source, sourceHash, userArg, groupArg, mode)
		if err != nil {
			return nil, nil, err
		}
		if comment != "" {
			fileCleanTmp(sfn)
			return nil, &comment, nil
		}
		if sfn != "" && source != "" && keepMode {
			if m, ok := r.keepModeOf(source); ok {
				mode = m
			}
		}
	}
	changes := r.checkFileMeta(name, sfn, source, sum, userArg, groupArg, mode, contents, a.follow)
	fileCleanTmp(sfn)
	return changes, nil, nil
}

// cacheSource is where manage_file takes its source before copying it:
// the source is cached when *sfn is empty; when it is not found, or when
// checkWeb is set and the cached file does not match sum, ret fails (the
// mismatch comment names what, then adds suffix) and ok is false. A
// caching error is returned as err (ok false, ret to be dropped).
func (r *fileRun) cacheSource(ret *states.Ret, source string, sfn *string, checkWeb bool, sum *fileSum, what, suffix string) (ok bool, err error) {
	if *sfn == "" {
		p, err := r.cacheFile(source)
		if err != nil {
			return false, err
		}
		*sfn = p
	}
	if *sfn == "" {
		fileError(ret, fmt.Sprintf("Source file '%s' not found", source))
		return false, nil
	}
	if checkWeb && sum != nil {
		dl, _ := fileHashFile(*sfn, sum.htype)
		if dl != sum.hsum {
			ret.Comment = fmt.Sprintf("Specified %s checksum for %s (%s) does not match actual checksum (%s)", sum.htype, what, sum.hsum, dl) + suffix
			ret.Result = states.False
			return false, nil
		}
	}
	return true, nil
}

// keepModeOf is cp.stat_file(source, octal=True): the mode of the cached
// copy of a salt:// or local source.
func (r *fileRun) keepModeOf(source string) (string, bool) {
	p, err := r.cacheFile(source)
	if err != nil || p == "" {
		return "", false
	}
	st, err := os.Stat(p)
	if err != nil {
		return "", false
	}
	return fileNormalizeModeString(strconv.FormatUint(uint64(fileUnixPerm(st.Mode())), 8)), true
}

// checkFileMeta is file.check_file_meta.
func (r *fileRun) checkFileMeta(name, sfn, source string, sum *fileSum, userArg, groupArg any, mode string, contents *[]byte, follow bool) *payload.Map {
	changes := &payload.Map{}
	lstats, err := fileStatPath(name, follow)
	if err != nil {
		changes.Set("newfile", name)
		return changes
	}
	if sum != nil && sum.hsum != "" {
		local, _ := fileHashFile(name, sum.htype)
		if local != sum.hsum {
			if sfn == "" && source != "" {
				sfn, _ = r.cacheFile(source)
			}
			if sfn != "" {
				d, err := fileGetDiff(name, sfn, fileDiffOptions{showChanges: true, template: true, obfuscate: r.obfuscate()})
				if err != nil {
					d = err.Error()
				}
				changes.Set("diff", d)
			} else {
				changes.Set("sum", "Checksum differs")
			}
		}
	}
	if contents != nil {
		tmp, err := fileMkstemp("", fileTempPrefix, "")
		if err == nil {
			var d string
			if err := os.WriteFile(tmp, *contents, 0o600); err != nil {
				// Without the new contents on disk there is nothing to diff
				// against: report why instead of a diff with an empty file.
				d = err.Error()
			} else if d, err = fileGetDiff(name, tmp, fileDiffOptions{showChanges: true}); err != nil {
				d = err.Error()
			}
			_ = os.Remove(tmp)
			if d != "" {
				if r.obfuscate() {
					changes.Set("diff", "<Obfuscated Template>")
				} else {
					changes.Set("diff", d)
				}
			}
		}
	}
	if userArg != nil && !fileSameOwnerStrict(userArg, lstats.user, lstats.uid) {
		changes.Set("user", userArg)
	}
	if groupArg != nil && !fileSameOwnerStrict(groupArg, lstats.group, lstats.gid) {
		changes.Set("group", groupArg)
	}
	if mode != "" && mode != lstats.mode {
		changes.Set("mode", mode)
	}
	return changes
}

// filePerms is check_perms' record of the state before the change.
type filePerms struct {
	lmode string
}

// checkPerms is file.check_perms (without attrs and SELinux): it sets and
// verifies owner, group and mode, adding "user", "group" and "mode" changes
// and failure comments to ret. mode "" is None.
func (r *fileRun) checkPerms(ret *states.Ret, name string, userArg, groupArg any, mode string, follow bool) (*filePerms, error) {
	origComment := ret.Comment
	var comments []string
	// Owner names are compared only when an owner is asked for.
	names := payload.Truthy(userArg) || payload.Truthy(groupArg)
	cur, err := fileStatPathNames(name, follow, names)
	if err != nil {
		return nil, err
	}
	perms := &filePerms{lmode: cur.mode}
	isLink := cur.isLink
	cuser := payload.Truthy(userArg) && !fileSameOwner(userArg, cur.user, cur.uid)
	cgroup := payload.Truthy(groupArg) && !fileSameOwner(groupArg, cur.group, cur.gid)
	if (cuser || cgroup) && !r.test {
		u, g := userArg, groupArg
		if u == nil {
			u = cur.user
		}
		if g == nil {
			g = cur.group
		}
		msg, err := fileChownPath(name, u, g, isLink && !follow)
		switch {
		case msg != "":
			ret.Result = states.False
			comments = append(comments, msg)
		case err != nil:
			ret.Result = states.False
		default:
			fileSetMode(name, cur.mode)
		}
	}
	cmode := false
	if mode != "" && !r.test && !(isLink && !follow) && mode != cur.mode {
		cmode = true
		fileSetMode(name, mode)
	}
	// Nothing changed: the second look Salt takes would see the same.
	post := cur
	if ((cuser || cgroup) && !r.test) || cmode {
		if post, err = fileStatPathNames(name, follow, names); err != nil {
			return nil, err
		}
	}
	if payload.Truthy(userArg) {
		if !fileSameOwner(userArg, post.user, post.uid) {
			if r.test {
				ret.Changes.Set("user", userArg)
			} else {
				ret.Result = states.False
				comments = append(comments, "Failed to change user to "+pyfmt.Str(userArg))
			}
		} else if cuser {
			ret.Changes.Set("user", userArg)
		}
	}
	if payload.Truthy(groupArg) {
		if !fileSameOwner(groupArg, post.group, post.gid) {
			if r.test {
				ret.Changes.Set("group", groupArg)
			} else {
				ret.Result = states.False
				comments = append(comments, "Failed to change group to "+pyfmt.Str(groupArg))
			}
		} else if cgroup {
			ret.Changes.Set("group", groupArg)
		}
	}
	if mode != "" && !(isLink && !follow) {
		if mode != post.mode {
			if r.test {
				ret.Changes.Set("mode", mode)
			} else {
				ret.Result = states.False
				comments = append(comments, "Failed to change mode to "+mode)
			}
		} else if cmode {
			ret.Changes.Set("mode", mode)
		}
	}
	if origComment != "" {
		comments = append([]string{origComment}, comments...)
	}
	ret.Comment = strings.Join(comments, "; ")
	if r.test && ret.Changes.Len() > 0 {
		ret.Result = states.None
	}
	return perms, nil
}

// quietPerms runs check_perms for its side effects (makedirs_perms).
func (r *fileRun) quietPerms(name string, userArg, groupArg any, mode string) {
	_, _ = r.checkPerms(fileNewRet(name), name, userArg, groupArg, mode, false)
}

// mkdirPerms is file.makedirs_perms: name and its missing parents are
// created and given user, group and mode.
func (r *fileRun) mkdirPerms(name string, userArg, groupArg any, mode string) error {
	head, tail := filepath.Split(name)
	head = strings.TrimRight(head, "/")
	if tail == "" {
		head, tail = filepath.Split(head)
		head = strings.TrimRight(head, "/")
	}
	if head != "" && tail != "" && !fileExists(head) {
		if err := r.mkdirPerms(head, userArg, groupArg, mode); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
		if tail == "." {
			return nil
		}
	}
	if err := os.Mkdir(name, 0o777); err != nil {
		return err
	}
	if mode != "" {
		mode = fileNormalizeModeString(strings.TrimLeft(mode, "0"))
	}
	r.quietPerms(name, userArg, groupArg, mode)
	return nil
}

// mkdir is file.mkdir.
func (r *fileRun) mkdir(dir string, userArg, groupArg any, mode string) error {
	d := filepath.Clean(dir)
	if !fileIsDir(d) {
		return r.mkdirPerms(d, userArg, groupArg, mode)
	}
	return nil
}

// makedirs is file.makedirs: the missing parents of path (not path itself
// unless it ends in "/") are created with user, group and mode.
func (r *fileRun) makedirs(path string, userArg, groupArg any, mode string) error {
	if mode != "" {
		mode = fileNormalizeModeString(mode)
	}
	dirname := filepath.Clean(filePyDirname(path))
	if fileIsDir(dirname) || fileExists(dirname) {
		return nil
	}
	var create []string
	for !fileIsDir(dirname) {
		create = append(create, dirname)
		next := filepath.Dir(dirname)
		if next == dirname {
			return fmt.Errorf("Recursive creation for path '%s' would result in an infinite loop. Please use an absolute path.", dirname)
		}
		dirname = next
	}
	for i := len(create) - 1; i >= 0; i-- {
		if err := r.mkdir(create[i], userArg, groupArg, mode); err != nil {
			return err
		}
	}
	return nil
}

// fileManageOpts are manage_file's arguments after name, sfn and ret.
type fileManageOpts struct {
	source                        string
	sum                           *fileSum
	user, group                   any
	mode, dirMode                 string
	backup                        string
	makedirs, showChanges, follow bool
	skipVerify, keepMode          bool
	contents                      *[]byte
	encoding                      string
}

// encodeContents applies encoding= to the contents (UTF-8 family only;
// others are written as UTF-8).
func fileEncodeContents(b []byte, enc string) ([]byte, error) {
	switch strings.ToLower(strings.ReplaceAll(enc, "_", "-")) {
	case "", "utf-8", "utf8", "ascii":
		return b, nil
	case "latin-1", "latin1", "iso-8859-1":
		out := make([]byte, 0, len(b))
		for _, r := range string(b) {
			if r > 0xff {
				return nil, fmt.Errorf("'latin-1' codec can't encode character %q", r)
			}
			out = append(out, byte(r))
		}
		return out, nil
	}
	return nil, fmt.Errorf("encoding %s is not supported by gsalt", enc)
}

// fileHasBytes reports whether the file at p holds exactly b. Salt writes
// the contents to a temporary file and lets get_diff compare the two,
// which finds no difference for equal bytes; checking first skips the
// temporary file when nothing changes. Any error answers false (the
// temporary-file path then reports it as Salt would).
//
// It opens the file once and compares it in bounded chunks through plain
// read(2) calls: a second run of a big SLS calls it once per file, and
// os.ReadFile's stat, poller registration and whole-file buffer were most of
// that run's system time.
func fileHasBytes(p string, b []byte) bool {
	fd, err := syscall.Open(p, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Size != int64(len(b)) {
		return false
	}
	// One byte more than expected so a file that grew since the fstat is
	// seen as different.
	buf := make([]byte, min(len(b), fileCompareChunk)+1)
	off := 0
	for {
		n, err := syscall.Read(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return false
		}
		if n == 0 {
			return off == len(b)
		}
		if off+n > len(b) || !bytes.Equal(buf[:n], b[off:off+n]) {
			return false
		}
		off += n
	}
}

// fileCompareChunk bounds the buffer fileHasBytes reads a file through.
const fileCompareChunk = 1 << 16

// manageFile is file.manage_file.
func (r *fileRun) manageFile(name, sfn string, ret *states.Ret, o fileManageOpts) (*states.Ret, error) {
	name = fileExpandUser(name)
	if ret == nil {
		ret = fileNewRet(name)
	}
	sum := o.sum
	if sum != nil {
		sum.hsum = strings.ToLower(sum.hsum)
	}
	htypeOf := func() string {
		if sum != nil && sum.htype != "" {
			return sum.htype
		}
		return r.hashType()
	}
	checkWeb := o.source != "" && fileScheme(o.source) != "salt" && !o.skipVerify
	mode := o.mode
	source := o.source
	if source != "" {
		if sfn == "" {
			p, err := r.cacheFile(source)
			if err != nil {
				return nil, err
			}
			if p == "" {
				fileError(ret, fmt.Sprintf("Source file '%s' not found", source))
				return ret, nil
			}
			sfn = p
			h, err := fileHashFile(sfn, htypeOf())
			if err != nil {
				return nil, err
			}
			sum = &fileSum{htype: htypeOf(), hsum: h}
		}
		if o.keepMode {
			if m, ok := r.keepModeOf(source); ok {
				mode = m
			}
		}
	}
	var contents []byte
	if o.contents != nil {
		var err error
		contents, err = fileEncodeContents(*o.contents, o.encoding)
		if err != nil {
			return nil, err
		}
	}
	backupMode := o.backup
	if backupMode == "" {
		backupMode = r.optStr("backup_mode", "")
	}
	cachedir := r.optStr("cachedir", "")
	writeTmp := func() (string, error) {
		tmp, err := fileMkstemp("", fileTempPrefix, "")
		if err != nil {
			return "", err
		}
		return tmp, os.WriteFile(tmp, contents, 0o600)
	}

	// One lstat answers both "is it a link" and, for a non-link, "is it a
	// regular file"; only a link needs the stat through it.
	lfi, lerr := os.Lstat(name)
	nameIsLink := lerr == nil && lfi.Mode()&fs.ModeSymlink != 0
	nameIsFile := lerr == nil && lfi.Mode().IsRegular() || nameIsLink && fileIsFile(name)
	if nameIsFile || nameIsLink {
		realName := name
		if nameIsLink && o.follow {
			if p, err := filepath.EvalSymlinks(name); err == nil {
				realName = p
			}
		}
		nameSum, hasNameSum := "", false
		if source != "" && !(!o.follow && fileIsLink(realName)) {
			h, err := fileHashFile(realName, htypeOf())
			if err != nil {
				return nil, err
			}
			nameSum, hasNameSum = h, true
		}
		if source != "" && (!hasNameSum || sum == nil || sum.hsum != nameSum) {
			if ok, err := r.cacheSource(ret, source, &sfn, checkWeb, sum, source, ". If the 'source_hash' value refers to a remote file with multiple possible matches, then it may be necessary to set 'source_hash_name'."); !ok {
				return ret, err
			}
			switch {
			case r.obfuscate():
				ret.Changes.Set("diff", "<Obfuscated Template>")
			case !o.showChanges:
				ret.Changes.Set("diff", "<show_changes=False>")
			default:
				d, err := fileGetDiff(realName, sfn, fileDiffOptions{showChanges: true})
				if err != nil {
					ret.Changes.Set("diff", err.Error())
				} else if d != "" {
					ret.Changes.Set("diff", d)
				}
			}
			if err := fileCopyFileAtomic(sfn, realName, backupMode, cachedir); err != nil {
				fileCleanTmp(sfn)
				fileError(ret, "Failed to commit change: "+filePyOSError(err))
				return ret, nil
			}
		}
		if o.contents != nil && !fileHasBytes(realName, contents) {
			tmp, err := writeTmp()
			if err != nil {
				return nil, err
			}
			d, err := fileGetDiff(realName, tmp, fileDiffOptions{showChanges: o.showChanges, template: true, obfuscate: r.obfuscate()})
			if err != nil {
				ret.Warnings = append(ret.Warnings, "Failed to detect changes to file: "+err.Error())
				d = ""
			}
			if d != "" {
				ret.Changes.Set("diff", d)
				if err := fileCopyFileAtomic(tmp, realName, backupMode, cachedir); err != nil {
					_ = os.Remove(tmp)
					fileError(ret, "Failed to commit change: "+filePyOSError(err))
					return ret, nil
				}
			}
			_ = os.Remove(tmp)
		}
		// Nothing above turns a regular file into a link: only a link
		// needs the second look.
		if nameIsLink && !o.follow && fileIsLink(name) {
			if sfn == "" && source != "" {
				p, err := r.cacheFile(source)
				if err != nil {
					return nil, err
				}
				sfn = p
			}
			if sfn == "" {
				fileError(ret, fmt.Sprintf("Source file '%s' not found", source))
				return ret, nil
			}
			if err := fileCopyFileAtomic(sfn, name, backupMode, cachedir); err != nil {
				fileCleanTmp(sfn)
				fileError(ret, "Failed to commit change: "+filePyOSError(err))
				return ret, nil
			}
			ret.Changes.Set("diff", "Replace symbolic link with regular file")
		}
		if _, err := r.checkPerms(ret, name, o.user, o.group, mode, o.follow); err != nil {
			return nil, err
		}
		if ret.Changes.Len() > 0 {
			ret.Comment = fmt.Sprintf("File %s updated", name)
		} else if ret.Result == states.True {
			ret.Comment = fmt.Sprintf("File %s is in the correct state", name)
		}
		fileCleanTmp(sfn)
		return ret, nil
	}

	// The target does not exist.
	containDir := filePyDirname(name)
	makeDirs := func() error {
		dirMode := o.dirMode
		if dirMode == "" && mode != "" {
			digits := []byte(mode)
			if len(digits) > 3 {
				digits = digits[len(digits)-3:]
			}
			for i, d := range digits {
				if d != '0' && d >= '0' && d <= '9' {
					digits[i] = '0' + ((d - '0') | 1)
				}
			}
			dirMode = string(digits)
		}
		return r.makedirs(name, o.user, o.group, dirMode)
	}
	noParent := func() (*states.Ret, error) {
		fileCleanTmp(sfn)
		ret.Changes.Delete("diff")
		fileError(ret, "Parent directory not present")
		return ret, nil
	}
	if source != "" {
		if ok, err := r.cacheSource(ret, source, &sfn, checkWeb, sum, name, ""); !ok {
			return ret, err
		}
		ret.Changes.Set("diff", "New file")
		if !fileIsDir(containDir) {
			if !o.makedirs {
				return noParent()
			}
			if err := makeDirs(); err != nil {
				return nil, err
			}
		}
	} else {
		if !fileIsDir(containDir) {
			if !o.makedirs {
				return noParent()
			}
			if err := makeDirs(); err != nil {
				return nil, err
			}
		}
		perm := os.FileMode(0o666)
		if mode != "" {
			perm = 0o600
		}
		if !r.test {
			ok := fileTouch(name, perm) == nil && fileExists(name)
			switch {
			case o.contents == nil && ok:
				ret.Changes.Set("new", fmt.Sprintf("file %s created", name))
				ret.Comment = "Empty file"
			case o.contents == nil:
				fileError(ret, fmt.Sprintf("Empty file %s not created", name))
				return ret, nil
			case ok:
				ret.Changes.Set("diff", "New file")
			default:
				fileError(ret, fmt.Sprintf("File %s not created", name))
				return ret, nil
			}
		}
	}
	if o.contents != nil {
		tmp, err := writeTmp()
		if err != nil {
			return nil, err
		}
		err = fileCopyFileAtomic(tmp, name, backupMode, cachedir)
		_ = os.Remove(tmp)
		if err != nil {
			return nil, errors.New(filePyOSError(err))
		}
	} else if sfn != "" {
		if err := fileCopyFileAtomic(sfn, name, backupMode, cachedir); err != nil {
			return nil, errors.New(filePyOSError(err))
		}
		fileCleanTmp(sfn)
	}
	if mode == "" {
		mode = fileNormalizeModeString(strconv.FormatUint(uint64((0o777^fileCurrentUmask())&0o666), 8))
	}
	if _, err := r.checkPerms(ret, name, o.user, o.group, mode, false); err != nil {
		return nil, err
	}
	if ret.Comment == "" {
		ret.Comment = "File " + name + " updated"
	}
	if r.test {
		ret.Comment = "File " + name + " not updated"
	} else if ret.Changes.Len() == 0 && ret.Result == states.True {
		ret.Comment = "File " + name + " is in the correct state"
	}
	fileCleanTmp(sfn)
	return ret, nil
}

// fileTouch creates name if missing (open for append) and sets its times
// to now, like file.touch without atime/mtime.
func fileTouch(name string, perm os.FileMode) error {
	f, err := os.OpenFile(name, os.O_CREATE|os.O_APPEND|os.O_WRONLY, perm)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return nil
}

// fileTouchState is file.touch.
func fileTouchState(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := fileExpandUser(c.Args.Str("name"))
	ret := &states.Ret{Name: name, Changes: &payload.Map{}}
	if name == "" {
		return fileError(ret, "Must provide name to file.touch")
	}
	if !filepath.IsAbs(name) {
		return fileError(ret, fmt.Sprintf("Specified file %s is not an absolute path", name))
	}
	atime, mtime := c.Args.Get("atime"), c.Args.Get("mtime")
	if c.Test {
		fileCheckTouch(ret, name, atime, mtime)
		return *ret, nil
	}
	r := fileNewRun(ctx, c)
	if c.Args.Bool("makedirs") {
		if err := r.makedirs(name, nil, nil, ""); err != nil {
			return states.Ret{}, err
		}
	}
	if !fileIsDir(filepath.Dir(name)) {
		return fileError(ret, fmt.Sprintf("Directory not present to touch file %s", name))
	}
	extant := fileExists(name)
	if err := fileTouchTimes(name, atime, mtime); err != nil {
		return states.Ret{}, err
	}
	ret.Result = states.True
	if !extant {
		ret.Comment = fmt.Sprintf("Created empty file %s", name)
		ret.Changes.Set("new", name)
	} else {
		kind := "file"
		if fileIsDir(name) {
			kind = "directory"
		}
		ret.Comment = fmt.Sprintf("Updated times on %s %s", kind, name)
		ret.Changes.Set("touched", name)
	}
	return *ret, nil
}

// fileCheckTouch is states.file._check_touch.
func fileCheckTouch(ret *states.Ret, name string, atime, mtime any) {
	ret.Result = states.None
	ret.Changes = payload.NewMap("new", name)
	if !fileExists(name) {
		ret.Comment = fmt.Sprintf("File %s is set to be created", name)
		return
	}
	st, err := os.Lstat(name)
	if err != nil {
		return
	}
	mt := float64(st.ModTime().UnixNano()) / 1e9
	at := mt
	if a, ok := fileAtime(st); ok {
		at = a
	}
	if (atime != nil && pyfmt.Str(atime) != pyfmt.Str(at)) || (mtime != nil && pyfmt.Str(mtime) != pyfmt.Str(mt)) {
		ret.Comment = fmt.Sprintf("Times set to be updated on file %s", name)
		ret.Changes = payload.NewMap("touched", name)
		return
	}
	ret.Result = states.True
	ret.Comment = fmt.Sprintf("File %s exists and has the correct times", name)
}

// fileTouchTimes is file.touch: create when missing, then set the times
// (now for the ones not given).
func fileTouchTimes(name string, atime, mtime any) error {
	if err := fileTouch(name, 0o666); err != nil {
		return fmt.Errorf("%w: %s", modules.ErrExecution, filePyOSError(err))
	}
	toTime := func(v any) (float64, bool, error) {
		if v == nil {
			return 0, false, nil
		}
		if n, ok := payload.AsInt(v); ok {
			return float64(n), true, nil
		}
		if s, ok := v.(string); ok {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return float64(n), true, nil
			}
		}
		return 0, false, fmt.Errorf("%w: atime and mtime must be integers", modules.ErrInvocation)
	}
	a, hasA, err := toTime(atime)
	if err != nil {
		return err
	}
	m, hasM, err := toTime(mtime)
	if err != nil {
		return err
	}
	now := float64(fileNow().UnixNano()) / 1e9
	if !hasA {
		a = now
	}
	if !hasM {
		m = now
	}
	return os.Chtimes(name, fileUnixTime(a), fileUnixTime(m))
}
