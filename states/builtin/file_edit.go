package builtin

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// fileCheckFile is states.file._check_file.
func fileCheckFile(name string) (bool, string) {
	if !filepath.IsAbs(name) {
		return false, fmt.Sprintf("Specified file %s is not an absolute path", name)
	}
	if !fileExists(name) {
		return false, fmt.Sprintf("%s: file not found", name)
	}
	return true, ""
}

// fileWriteKeep writes data to path through a temp file and rename,
// keeping the file's owner and mode (salt.utils.atomicfile).
func fileWriteKeep(path string, data []byte) error {
	fi, statErr := os.Stat(path)
	tmp, err := fileMkstemp(filepath.Dir(path), "."+filepath.Base(path)+".", "")
	if err != nil {
		return err
	}
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if statErr == nil {
		if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
			_ = os.Chown(tmp, int(sys.Uid), int(sys.Gid))
		}
		_ = os.Chmod(tmp, fileGoMode(fileUnixPerm(fi.Mode())))
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

// fileCopyWithMeta is shutil.copy2 plus the owner (for backups).
func fileCopyWithMeta(src, dst string) error {
	if err := fileCopyContents(src, dst); err != nil {
		return err
	}
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	_ = os.Chmod(dst, fileGoMode(fileUnixPerm(fi.Mode())))
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		_ = os.Chown(dst, int(sys.Uid), int(sys.Gid))
	}
	return os.Chtimes(dst, fi.ModTime(), fi.ModTime())
}

// ---- file.line ----

// fileGetEOL is salt.modules.file._get_eol.
func fileGetEOL(line string) string {
	switch {
	case strings.HasSuffix(line, "\r\n"):
		return "\r\n"
	case strings.HasSuffix(line, "\n"):
		return "\n"
	case strings.HasSuffix(line, "\r"):
		return "\r"
	}
	return ""
}

// fileSetLineEOL is _set_line_eol: the line stripped, with src's ending.
func fileSetLineEOL(src, line string) string {
	eol := fileGetEOL(src)
	if eol == "" {
		eol = "\n"
	}
	return strings.TrimRightFunc(line, unicode.IsSpace) + eol
}

// fileSetLineIndent is _set_line_indent: src's leading blanks on line.
func fileSetLineIndent(src, line string, indent bool) string {
	if !indent {
		return line
	}
	i := 0
	for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	return src[:i] + strings.TrimLeftFunc(line, unicode.IsSpace)
}

// fileRegexToStatic is _regex_to_static: the lines a regex (DOTALL) finds
// or that contain it literally; nil means None.
func fileRegexToStatic(src []string, regex *string) ([]string, error) {
	if len(src) == 0 || regex == nil || *regex == "" {
		return nil, nil
	}
	re, err := filePyRegexp(*regex, filePyReS)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: '%s'", modules.ErrExecution, err, *regex)
	}
	out := []string{}
	for _, l := range src {
		if re.MatchString(l) || strings.Contains(l, *regex) {
			out = append(out, l)
		}
	}
	return out, nil
}

// fileAssertOccurrence is _assert_occurrence with amount 1.
func fileAssertOccurrence(probe []string, target string) error {
	msg := ""
	switch {
	case len(probe) > 1:
		msg = "more than"
	case len(probe) < 1:
		msg = "less than"
	}
	if msg != "" {
		return fmt.Errorf(`%w: Found %s expected occurrences in "%s" expression`, modules.ErrExecution, msg, target)
	}
	return nil
}

func fileIndex(lines []string, s string) int {
	for i, l := range lines {
		if l == s {
			return i
		}
	}
	return -1
}

func fileInsert(lines []string, idx int, s string) []string {
	if idx > len(lines) {
		idx = len(lines)
	}
	if idx < 0 {
		idx += len(lines)
		if idx < 0 {
			idx = 0
		}
	}
	lines = append(lines, "")
	copy(lines[idx+1:], lines[idx:])
	lines[idx] = s
	return lines
}

// fileSetLine is salt.modules.file._set_line.
func fileSetLine(lines []string, content *string, match, mode, location string, before, after *string, indent bool) ([]string, error) {
	cexec := func(msg string) error { return fmt.Errorf("%w: %s", modules.ErrExecution, msg) }
	switch mode {
	case "insert", "ensure", "delete", "replace":
	case "":
		return nil, cexec("Mode was not defined. How to process the file?")
	default:
		return nil, cexec("Unknown mode: " + mode)
	}
	if mode != "delete" && content == nil {
		return nil, cexec("Content can only be empty if mode is delete")
	}
	var matchP *string
	if match != "" {
		matchP = &match
	} else if before == nil && after == nil {
		matchP = content
	}
	afterL, err := fileRegexToStatic(lines, after)
	if err != nil {
		return nil, err
	}
	beforeL, err := fileRegexToStatic(lines, before)
	if err != nil {
		return nil, err
	}
	matchL, err := fileRegexToStatic(lines, matchP)
	if err != nil {
		return nil, err
	}
	c := ""
	if content != nil {
		c = *content
	}
	trimNL := func(s string) string { return strings.TrimRight(s, "\r\n") }
	switch {
	case len(lines) == 0 && (mode == "delete" || mode == "replace"):
		return []string{}, nil
	case mode == "delete" && len(matchL) > 0:
		out := lines[:0:0]
		for _, l := range lines {
			if l != matchL[0] {
				out = append(out, l)
			}
		}
		return out, nil
	case mode == "replace" && len(matchL) > 0:
		idx := fileIndex(lines, matchL[0])
		lines[idx] = fileSetLineIndent(lines[idx], c, indent)
		return lines, nil
	case mode == "insert":
		if before == nil && after == nil && location == "" {
			return nil, cexec(`On insert either "location" or "before/after" conditions are required.`)
		}
		if location != "" {
			switch location {
			case "end":
				if len(lines) > 0 {
					lines = append(lines, fileSetLineIndent(lines[len(lines)-1], c, indent))
				} else {
					lines = append(lines, c)
				}
			case "start":
				if len(lines) > 0 {
					lines = fileInsert(lines, 0, fileSetLineEOL(lines[0], c))
				} else {
					lines = []string{c + "\n"}
				}
			}
			return lines, nil
		}
		switch {
		case len(beforeL) > 0 && len(afterL) > 0:
			if err := fileAssertOccurrence(beforeL, "before"); err != nil {
				return nil, err
			}
			if err := fileAssertOccurrence(afterL, "after"); err != nil {
				return nil, err
			}
			last := fileIndex(lines, beforeL[0])
			lines = fileInsert(lines, last, fileSetLineIndent(lines[last], c, indent))
		case len(afterL) > 0:
			if err := fileAssertOccurrence(afterL, "after"); err != nil {
				return nil, err
			}
			idx := fileIndex(lines, afterL[0])
			if idx+1 >= len(lines) || trimNL(lines[idx+1]) != trimNL(c) {
				lines = fileInsert(lines, idx+1, fileSetLineIndent(lines[idx], c, indent))
			}
		case len(beforeL) > 0:
			if err := fileAssertOccurrence(beforeL, "before"); err != nil {
				return nil, err
			}
			idx := fileIndex(lines, beforeL[0])
			prev := lines[(idx-1+len(lines))%len(lines)]
			if trimNL(prev) != trimNL(c) {
				lines = fileInsert(lines, idx, fileSetLineIndent(lines[idx], c, indent))
			}
		default:
			return nil, cexec("Neither before or after was found in file")
		}
		return lines, nil
	case mode == "ensure":
		switch {
		case len(beforeL) > 0 && len(afterL) > 0:
			if err := fileAssertOccurrence(afterL, "after"); err != nil {
				return nil, err
			}
			if err := fileAssertOccurrence(beforeL, "before"); err != nil {
				return nil, err
			}
			ai, bi := fileIndex(lines, afterL[0]), fileIndex(lines, beforeL[0])
			there := false
			for _, l := range lines {
				if strings.TrimLeftFunc(l, unicode.IsSpace) == c {
					there = true
				}
			}
			if !there {
				switch {
				case ai+1 == bi:
					lines = fileInsert(lines, ai+1, fileSetLineIndent(lines[ai], c, indent))
				case ai+2 == bi:
					lines[ai+1] = fileSetLineIndent(lines[ai], c, indent)
				default:
					return nil, cexec(`Found more than one line between boundaries "before" and "after".`)
				}
			}
		case len(beforeL) > 0:
			if err := fileAssertOccurrence(beforeL, "before"); err != nil {
				return nil, err
			}
			bi := fileIndex(lines, beforeL[0])
			if bi == 0 || trimNL(lines[bi-1]) != trimNL(c) {
				lines = fileInsert(lines, bi, fileSetLineIndent(lines[(bi-1+len(lines))%len(lines)], c, indent))
			}
		case len(afterL) > 0:
			if err := fileAssertOccurrence(afterL, "after"); err != nil {
				return nil, err
			}
			ai := fileIndex(lines, afterL[0])
			if ai+1 >= len(lines) || trimNL(lines[ai+1]) != trimNL(c) {
				lines = fileInsert(lines, ai+1, fileSetLineIndent(lines[ai], c, indent))
			}
		default:
			return nil, cexec("Wrong conditions? Unable to ensure line without knowing where to put it before and/or after.")
		}
	}
	return lines, nil
}

// fileLineArgs are file.line's arguments (the execution function's).
type fileLineArgs struct {
	content               *string
	match, mode, location string
	before, after         *string
	showChanges, backup   bool
	indent                bool
}

// lineExec is salt.modules.file.line: the diff (or whether the file
// changed) of putting a line into path.
func (r *fileRun) lineExec(path string, a fileLineArgs) (any, error) {
	if p, err := filepath.EvalSymlinks(fileExpandUser(path)); err == nil {
		path = p
	}
	if !fileIsFile(path) {
		return nil, fmt.Errorf(`%w: File "%s" does not exists or is not a file.`, modules.ErrExecution, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	body := py.FileLines(fileDecodeText(data))
	before := sha256.Sum256([]byte(strings.Join(body, "")))
	if len(body) > 0 && fileGetEOL(body[len(body)-1]) != "" {
		body = append(body, "")
	}
	if len(data) == 0 && (a.mode == "delete" || a.mode == "replace") {
		body = []string{}
	}
	body, err = fileSetLine(body, a.content, a.match, a.mode, a.location, a.before, a.after, a.indent)
	if err != nil {
		return nil, err
	}
	if len(body) > 0 {
		for idx, line := range body {
			if fileGetEOL(line) == "" && idx+1 < len(body) {
				// Python's "idx and idx - 1 or 1": 1 whenever idx-1 is 0.
				prev := idx - 1
				if prev <= 0 {
					prev = 1
				}
				body[idx] = fileSetLineEOL(body[prev], line)
			}
		}
		if body[len(body)-1] == "" {
			body = body[:len(body)-1]
		}
	}
	newText := strings.Join(body, "")
	changed := before != sha256.Sum256([]byte(newText))
	if a.backup && changed && !r.test {
		bk := fmt.Sprintf("%s.%s", path, time.Now().Format("2006-01-02-15-04-05"))
		if err := fileCopyWithMeta(path, bk); err != nil {
			return nil, fmt.Errorf("%w: Unable to create the backup file of %s. Exception: %s", modules.ErrExecution, path, filePyOSError(err))
		}
	}
	diff := ""
	if changed {
		if a.showChanges {
			diff = fileSaltDiff(py.SplitLines(fileDecodeText(data), true), body)
		}
		if !r.test {
			if err := fileWriteKeep(path, []byte(newText)); err != nil {
				return nil, err
			}
		}
	}
	if a.showChanges && diff != "" {
		return diff, nil
	}
	return changed, nil
}

// fileDecodeText decodes file data (UTF-8, else Latin-1 per Salt's decode).
func fileDecodeText(b []byte) string { return fileDecodeLine(string(b)) }

// fileSameLines compares two line lists.
func fileSameLines(x, y []string) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

// fileOptStr reads an optional string argument (nil for None).
func fileOptStr(v any) *string {
	if v == nil {
		return nil
	}
	s := pyfmt.Str(v)
	return &s
}

// fileLineState is file.line.
func fileLineState(ctx context.Context, c *states.Call) (states.Ret, error) {
	r := fileNewRun(ctx, c)
	a := c.Args
	name := fileExpandUser(a.Str("name"))
	ret := fileNewRet(name)
	if name == "" {
		return fileError(ret, "Must provide name to file.line")
	}
	m := fileManagedDefaults(name)
	m.create, m.user, m.group, m.mode, m.replace = a.Bool("create"), a.Get("user"), a.Get("group"), a.Get("file_mode"), false
	if _, err := r.managed(m); err != nil {
		return states.Ret{}, err
	}
	if ok, msg := fileCheckFile(name); !ok {
		return fileError(ret, msg)
	}
	mode := strings.ToLower(a.Str("mode"))
	if a.Get("mode") == nil {
		return fileError(ret, "Mode was not defined. How to process the file?")
	}
	content := fileOptStr(a.Get("content"))
	if mode != "delete" && content == nil {
		return fileError(ret, "Content can only be empty if mode is ['delete']")
	}
	changes, err := r.lineExec(name, fileLineArgs{content: content, match: a.Str("match"), mode: mode,
		location: a.Str("location"), before: fileOptStr(a.Get("before")), after: fileOptStr(a.Get("after")),
		showChanges: a.Bool("show_changes"), backup: a.Bool("backup"), indent: a.Bool("indent")})
	if err != nil {
		return states.Ret{}, err
	}
	return fileDiffOutcome(ret, changes, r.test, "Changes would be made"), nil
}

// ---- file.replace ----

// fileReplaceArgs are salt.modules.file.replace's arguments.
type fileReplaceArgs struct {
	pattern, repl                   string
	count                           int
	flags                           any
	appendIf, prependIf             bool
	notFound                        *string
	backup                          string
	dryRun, searchOnly, showChanges bool
	ignoreIfMissing                 bool
	backslashLiteral                bool
}

// replaceExec is salt.modules.file.replace: the diff (show_changes), or
// whether the file changed; for search_only whether the pattern matches.
func (r *fileRun) replaceExec(path string, a fileReplaceArgs) (any, error) {
	given := fileExpandUser(path)
	symlink, targetPath := false, ""
	if fileIsLink(given) {
		symlink = true
		targetPath, _ = os.Readlink(given)
	}
	if p, err := filepath.EvalSymlinks(given); err == nil {
		path = p
	} else {
		path = given
	}
	if !fileExists(path) {
		if a.ignoreIfMissing {
			return false, nil
		}
		return nil, fmt.Errorf("%w: File not found: %s", modules.ErrInvocation, path)
	}
	if !fileIsTextFile(path) {
		return nil, fmt.Errorf("%w: Cannot perform string replacements on a binary file: %s", modules.ErrInvocation, path)
	}
	if a.searchOnly && (a.appendIf || a.prependIf) {
		return nil, fmt.Errorf("%w: search_only cannot be used with append/prepend_if_not_found", modules.ErrInvocation)
	}
	if a.appendIf && a.prependIf {
		return nil, fmt.Errorf("%w: Only one of append and prepend_if_not_found is permitted", modules.ErrInvocation)
	}
	flags, err := filePyFlags(a.flags)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", modules.ErrExecution, err)
	}
	re, err := filePyRegexp(a.pattern, flags)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", modules.ErrExecution, err)
	}
	pre, err := fileStatPath(path, true)
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: Unable to open file '%s'. Exception: %s", modules.ErrExecution, path, filePyOSError(err))
	}
	data := string(raw)
	if a.searchOnly {
		return re.MatchString(data), nil
	}
	repl := a.repl
	if a.backslashLiteral {
		repl = strings.ReplaceAll(repl, `\`, `\\`)
	}
	content := a.repl
	if a.notFound != nil && *a.notFound != "" && (a.prependIf || a.appendIf) {
		content = *a.notFound
	}
	result, nrepl, err := filePySubn(re, repl, data, a.count)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", modules.ErrExecution, err)
	}
	found, hasChanges := false, false
	if nrepl > 0 {
		found, hasChanges = true, true
	}
	if a.prependIf || a.appendIf {
		esc := filePyEscape(content)
		var expr string
		if flags&filePyReM != 0 {
			expr = "^" + esc + `(?:$|\r\n)`
		} else {
			expr = `\A` + esc + `(?:\z|\n\z|\r\n)`
		}
		if cre, err := filePyRegexp(expr, flags); err == nil && cre.MatchString(data) {
			found = true
		}
	}
	origFile := py.FileLines(data)
	newFile := py.FileLines(result)
	if fileSameLines(origFile, newFile) {
		hasChanges = false
	}
	var backupCopy []byte
	if hasChanges && !a.dryRun {
		backupCopy = raw
		if err := os.WriteFile(path, []byte(result), 0o666); err != nil {
			return nil, fmt.Errorf("%w: Exception: %s", modules.ErrExecution, filePyOSError(err))
		}
	}
	if !found && (a.appendIf || a.prependIf) {
		nfc := a.repl
		if a.notFound != nil {
			nfc = *a.notFound
		}
		if a.prependIf {
			newFile = append([]string{nfc + "\n"}, newFile...)
		} else {
			if len(newFile) > 0 && !strings.HasSuffix(newFile[len(newFile)-1], "\n") {
				newFile[len(newFile)-1] += "\n"
			}
			newFile = append(newFile, nfc+"\n")
		}
		hasChanges = true
		if !a.dryRun {
			cur, _ := os.ReadFile(path)
			backupCopy = cur
			if err := fileWriteKeep(path, []byte(strings.Join(newFile, ""))); err != nil {
				return nil, fmt.Errorf("%w: Exception: %s", modules.ErrExecution, filePyOSError(err))
			}
		}
	}
	if a.backup != "" && hasChanges && !a.dryRun && backupCopy != nil {
		bk := path + a.backup
		if err := os.WriteFile(bk, backupCopy, fileGoMode(fileUnixPerm(pre.info.Mode()))); err != nil {
			return nil, fmt.Errorf("%w: Unable to move the temp file '%s' to the backup file '%s'. Exception: %s", modules.ErrExecution, path, bk, filePyOSError(err))
		}
		_ = os.Chmod(bk, fileGoMode(fileUnixPerm(pre.info.Mode())))
		if symlink {
			linkBk, targetBk := given+a.backup, targetPath+a.backup
			if err := os.Symlink(targetBk, linkBk); err != nil {
				_ = os.Remove(linkBk)
				_ = os.Symlink(targetBk, linkBk)
			}
		}
	}
	if !a.dryRun {
		r.quietPerms(path, pre.user, pre.group, pre.mode)
	}
	diff := fileSaltDiff(origFile, newFile)
	if a.showChanges {
		return diff, nil
	}
	if diff == "" {
		hasChanges = false
	}
	return hasChanges, nil
}

// fileReplaceState is file.replace.
func fileReplaceState(ctx context.Context, c *states.Call) (states.Ret, error) {
	r := fileNewRun(ctx, c)
	a := c.Args
	name := fileExpandUser(a.Str("name"))
	ret := fileNewRet(name)
	if name == "" {
		return fileError(ret, "Must provide name to file.replace")
	}
	if ok, msg := fileCheckFile(name); !ok {
		if a.Bool("ignore_if_missing") && strings.Contains(msg, "file not found") {
			ret.Comment = "No changes needed to be made"
			return *ret, nil
		}
		return fileError(ret, msg)
	}
	count, err := a.Int("count")
	if err != nil {
		return states.Ret{}, err
	}
	var notFound *string
	if v := a.Get("not_found_content"); v != nil {
		notFound = fileOptStr(v)
	}
	changes, err := r.replaceExec(name, fileReplaceArgs{pattern: a.Str("pattern"), repl: pyfmt.Str(a.Get("repl")),
		count: int(count), flags: a.Get("flags"), appendIf: a.Bool("append_if_not_found"),
		prependIf: a.Bool("prepend_if_not_found"), notFound: notFound, backup: fileBackupArg(a.Get("backup")),
		dryRun: c.Test, showChanges: a.Bool("show_changes"), ignoreIfMissing: a.Bool("ignore_if_missing"),
		backslashLiteral: a.Bool("backslash_literal")})
	if err != nil {
		return states.Ret{}, err
	}
	return fileDiffOutcome(ret, changes, c.Test, "Changes would have been made"), nil
}

// ---- file.blockreplace ----

// fileBlockArgs are salt.modules.file.blockreplace's arguments.
type fileBlockArgs struct {
	markerStart, markerEnd, content string
	appendIf, prependIf             bool
	backup                          any
	dryRun, showChanges             bool
	appendNewline                   any
	insertBefore, insertAfter       any
}

// blockreplaceExec is salt.modules.file.blockreplace.
func (r *fileRun) blockreplaceExec(path string, a fileBlockArgs) (any, error) {
	n := 0
	for _, b := range []bool{a.appendIf, a.prependIf, payload.Truthy(a.insertBefore), payload.Truthy(a.insertAfter)} {
		if b {
			n++
		}
	}
	if n > 1 {
		return nil, fmt.Errorf("%w: Only one of append_if_not_found, prepend_if_not_found, insert_before_match, and insert_after_match is permitted", modules.ErrInvocation)
	}
	path = fileExpandUser(path)
	if !fileExists(path) {
		return nil, fmt.Errorf("%w: File not found: %s", modules.ErrInvocation, path)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: Failed to read from %s: %s", modules.ErrExecution, path, filePyOSError(err))
	}
	head := raw
	if len(head) > 2048 {
		head = head[:2048]
	}
	if strings.IndexByte(string(head), 0) >= 0 || !fileUTF8Prefix(head) {
		return nil, fmt.Errorf("%w: Cannot perform string replacements on a binary file: %s", modules.ErrInvocation, path)
	}
	var matchRe *regexp.Regexp
	if payload.Truthy(a.insertBefore) || payload.Truthy(a.insertAfter) {
		v, what := a.insertBefore, "insert_before_match"
		if !payload.Truthy(v) {
			v, what = a.insertAfter, "insert_after_match"
		}
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%w: RegEx expected in %s parameter.", modules.ErrExecution, what)
		}
		matchRe, err = filePyRegexp(s, 0)
		if err != nil {
			return nil, fmt.Errorf("%w: %s", modules.ErrExecution, err)
		}
	}
	appendNewline := payload.Truthy(a.appendNewline)
	if a.appendNewline == nil && !strings.HasSuffix(a.content, "\n") {
		appendNewline = true
	}
	var split []string
	for _, w := range strings.Split(a.content, "\r\n") {
		split = append(split, strings.Split(w, "\n")...)
	}
	addContent := func(linesep string, lines []string, includeStart bool, endLine string) []string {
		endLine = strings.TrimRight(endLine, "\r\n") + linesep
		if includeStart {
			lines = append(lines, a.markerStart+linesep)
		}
		for i, cl := range split {
			if i+1 != len(split) {
				lines = append(lines, cl+linesep)
			} else if appendNewline {
				lines = append(lines, cl+linesep, endLine)
			} else {
				lines = append(lines, cl+endLine)
			}
		}
		return lines
	}
	var origFile, newFile []string
	inBlock, found := false, false
	linesep := ""
	for _, line := range py.FileLines(fileDecodeLine(string(raw))) {
		write := true
		if linesep == "" {
			switch {
			case strings.HasSuffix(line, "\r\n"):
				linesep = "\r\n"
			default:
				linesep = "\n"
			}
		}
		if strings.Contains(line, a.markerStart) {
			inBlock = true
		} else if inBlock {
			write = false
			if pos := strings.Index(line, a.markerEnd); pos >= 0 {
				inBlock, found = false, true
				newFile = addContent(linesep, newFile, false, line[pos:])
			}
		}
		origFile = append(origFile, line)
		if write {
			newFile = append(newFile, line)
		}
	}
	if linesep == "" {
		linesep = "\n"
	}
	if inBlock {
		return nil, fmt.Errorf("%w: Unterminated marked block. End of file reached before marker_end.", modules.ErrExecution)
	}
	if !found {
		switch {
		case a.prependIf:
			newFile = append(addContent(linesep, nil, true, a.markerEnd), newFile...)
			found = true
		case a.appendIf:
			if len(newFile) > 0 && !strings.HasSuffix(newFile[len(newFile)-1], linesep) {
				newFile[len(newFile)-1] += linesep
			}
			newFile = addContent(linesep, newFile, true, a.markerEnd)
			found = true
		case matchRe != nil:
			idx := -1
			for i, l := range origFile {
				if matchRe.MatchString(l) {
					idx = i
					break
				}
			}
			if idx >= 0 {
				for _, l := range addContent(linesep, nil, true, a.markerEnd) {
					if payload.Truthy(a.insertAfter) {
						idx++
					}
					newFile = fileInsert(newFile, idx, l)
					if payload.Truthy(a.insertBefore) {
						idx++
					}
				}
				found = true
			}
		}
	}
	if !found {
		return nil, fmt.Errorf("%w: Cannot edit marked block. Markers were not found in file.", modules.ErrExecution)
	}
	diff := fileSaltDiff(origFile, newFile)
	hasChanges := diff != ""
	if hasChanges && !a.dryRun {
		pre, err := fileStatPath(path, true)
		if err != nil {
			return nil, err
		}
		if bk, ok := a.backup.(string); ok && a.backup != false && bk != "" {
			if err := fileCopyWithMeta(path, path+bk); err != nil {
				return nil, err
			}
		}
		if err := fileWriteKeep(path, []byte(strings.Join(newFile, ""))); err != nil {
			return nil, err
		}
		r.quietPerms(path, pre.user, pre.group, pre.mode)
	}
	if a.showChanges {
		return diff, nil
	}
	return hasChanges, nil
}

// fileUTF8Prefix reports whether b is UTF-8, allowing a character cut at
// the end of the block.
func fileUTF8Prefix(b []byte) bool {
	for cut := 0; cut < 4 && cut <= len(b); cut++ {
		if utf8.Valid(b[:len(b)-cut]) {
			return true
		}
	}
	return false
}

// fileSourcePairs is states.file._unify_sources_and_hashes.
func fileSourcePairs(source, sourceHash, sources, sourceHashes any) ([][2]any, error) {
	srcs, _ := sources.([]any)
	hashes, _ := sourceHashes.([]any)
	if payload.Truthy(source) && len(srcs) > 0 {
		return nil, errors.New("source and sources are mutually exclusive")
	}
	if payload.Truthy(sourceHash) && len(hashes) > 0 {
		return nil, errors.New("source_hash and source_hashes are mutually exclusive")
	}
	if payload.Truthy(source) {
		return [][2]any{{source, sourceHash}}, nil
	}
	var out [][2]any
	for i, s := range srcs {
		var h any
		if i < len(hashes) {
			h = hashes[i]
		}
		out = append(out, [2]any{s, h})
	}
	return out, nil
}

// templateTexts is states.file._get_template_texts: each source fetched
// and rendered; a failure names the source.
func (r *fileRun) templateTexts(pairs [][2]any, template string, defaults, context any) ([]string, *states.Ret) {
	var out []string
	for _, p := range pairs {
		src := pyfmt.Str(p[0])
		fail := func(msg string) ([]string, *states.Ret) {
			ret := fileNewRet(src)
			ret.Result, ret.Comment = states.False, msg
			return nil, ret
		}
		local, err := r.cacheFile(src)
		if err != nil || local == "" {
			return fail("Failed to load template file " + src)
		}
		data, err := os.ReadFile(local)
		if err != nil {
			return fail("Failed to load template file " + src)
		}
		text := string(data)
		if template != "" {
			text, err = r.renderText(template, data, src, defaults, context, nil)
			if err != nil {
				return fail("Failed to load template file " + src)
			}
		}
		if text == "" {
			return fail(fmt.Sprintf("Failed to read rendered template file %s (%s)", local, src))
		}
		out = append(out, text)
	}
	return out, nil
}

// fileBlockreplaceState is file.blockreplace.
func fileBlockreplaceState(ctx context.Context, c *states.Call) (states.Ret, error) {
	r := fileNewRun(ctx, c)
	a := c.Args
	name := fileExpandUser(a.Str("name"))
	ret := fileNewRet(name)
	ret.Result = states.False
	if name == "" {
		return fileError(ret, "Must provide name to file.blockreplace")
	}
	pairs, err := fileSourcePairs(a.Get("source"), a.Get("source_hash"), a.Get("sources"), a.Get("source_hashes"))
	if err != nil {
		return fileError(ret, err.Error())
	}
	if ok, msg := fileCheckFile(name); !ok {
		return fileError(ret, msg)
	}
	content := fileAccumContent(c, name, a.Str("content"))
	if len(pairs) > 0 {
		texts, fail := r.templateTexts(pairs, a.Str("template"), a.Get("defaults"), a.Get("context"))
		if fail != nil {
			return *fail, nil
		}
		for _, t := range texts {
			content += t
		}
	}
	changes, err := r.blockreplaceExec(name, fileBlockArgs{markerStart: a.Str("marker_start"), markerEnd: a.Str("marker_end"),
		content: content, appendIf: a.Bool("append_if_not_found"), prependIf: a.Bool("prepend_if_not_found"),
		backup: a.Get("backup"), dryRun: c.Test, showChanges: a.Bool("show_changes"),
		appendNewline: a.Get("append_newline"), insertBefore: a.Get("insert_before_match"), insertAfter: a.Get("insert_after_match")})
	if err != nil {
		msg := err.Error()
		for _, s := range []error{modules.ErrExecution, modules.ErrInvocation} {
			msg = strings.TrimPrefix(msg, s.Error()+": ")
		}
		ret.Comment = fmt.Sprintf("Encountered error managing block: %s. See the log for details.", msg)
		return *ret, nil
	}
	return fileDiffOutcome(ret, changes, c.Test, "Changes would be made"), nil
}

// ---- file.append ----

// fileShlexTokens splits a line like shlex.shlex(text) (non-POSIX) with
// whitespace_split and no commenters, quotes as given.
func fileShlexTokens(text, quotes string) ([]string, error) {
	var out []string
	var tok strings.Builder
	state := byte(' ')
	isWS := func(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
	isQuote := func(c byte) bool { return strings.IndexByte(quotes, c) >= 0 }
	for i := 0; i <= len(text); i++ {
		eof := i == len(text)
		var c byte
		if !eof {
			c = text[i]
		}
		switch {
		case state == ' ':
			switch {
			case eof:
			case isWS(c):
				if tok.Len() > 0 {
					out = append(out, tok.String())
					tok.Reset()
				}
			case isQuote(c):
				tok.WriteByte(c)
				state = c
			default:
				tok.WriteByte(c)
				state = 'a'
			}
		case state == 'a':
			switch {
			case eof:
			case isWS(c):
				out = append(out, tok.String())
				tok.Reset()
				state = ' '
			default:
				tok.WriteByte(c)
			}
		default: // inside a quote
			if eof {
				return nil, errors.New("No closing quotation")
			}
			tok.WriteByte(c)
			if c == state {
				out = append(out, tok.String())
				tok.Reset()
				state = ' '
			}
		}
	}
	if tok.Len() > 0 {
		out = append(out, tok.String())
	}
	return out, nil
}

// fileWhitespaceRegex is salt.utils.stringutils.build_whitespace_split_regex
// (for Go's RE2, with Python's \s set).
func fileWhitespaceRegex(text string) (string, error) {
	const ws = `(?:[\t\n\v\f\r ]+)?`
	var b strings.Builder
	quotes := `'"`
	switch {
	case strings.Contains(text, `'\"`):
		quotes = ""
	case strings.Contains(text, "'"):
		quotes = `"`
	case strings.Contains(text, `"`):
		quotes = "'"
	}
	for _, line := range py.SplitLines(text, false) {
		toks, err := fileShlexTokens(line, quotes)
		if err != nil {
			return "", err
		}
		parts := make([]string, len(toks))
		for i, t := range toks {
			parts[i] = regexp.QuoteMeta(t)
		}
		b.WriteString(ws + strings.Join(parts, ws) + ws)
	}
	return "(?m)^" + b.String() + "$", nil
}

// fileAppendState is file.append.
func fileAppendState(ctx context.Context, c *states.Call) (states.Ret, error) {
	r := fileNewRun(ctx, c)
	a := c.Args
	name := a.Str("name")
	ret := fileNewRet(name)
	ret.Result = states.False
	if name == "" {
		return fileError(ret, "Must provide name to file.append")
	}
	name = fileExpandUser(name)
	ret.Name = name
	text, early, err := r.textPrologue(ctx, c, ret, name)
	if early != nil || err != nil {
		return derefRet(early), err
	}
	chunks := fileStrList(text)
	raw, err := os.ReadFile(name)
	if err != nil {
		return states.Ret{}, err
	}
	slines := py.SplitLines(fileDecodeText(raw), false)
	var appendLines []string
	for _, chunk := range chunks {
		expr := chunk
		flags := filePyReM
		if a.Bool("ignore_whitespace") {
			expr, err = fileWhitespaceRegex(chunk)
			if err != nil {
				return states.Ret{}, err
			}
		}
		re, err := filePyRegexp(expr, flags)
		if err != nil {
			return states.Ret{}, fmt.Errorf("%w: %s", modules.ErrExecution, err)
		}
		if re.Match(raw) {
			continue
		}
		appendLines = append(appendLines, py.SplitLines(chunk, false)...)
	}
	diffOf := func(nlines []string) string {
		if !fileIsTextFile(name) {
			return "Replace binary file"
		}
		return strings.Join(fileUnifiedDiff(slines, nlines, "", "", "\n"), "\n")
	}
	if r.test {
		ret.Comment = fmt.Sprintf("File %s is set to be updated", name)
		ret.Result = states.None
		nlines := append(append([]string{}, slines...), appendLines...)
		if !fileSameLines(slines, nlines) {
			ret.Changes.Set("diff", diffOf(nlines))
		} else {
			ret.Comment = fmt.Sprintf("File %s is in correct state", name)
			ret.Result = states.True
		}
		return *ret, nil
	}
	if len(appendLines) > 0 {
		if err := fileAppendLines(name, appendLines); err != nil {
			return states.Ret{}, err
		}
		ret.Comment = fmt.Sprintf("Appended %d lines", len(appendLines))
	} else {
		ret.Comment = fmt.Sprintf("File %s is in correct state", name)
	}
	after, err := os.ReadFile(name)
	if err != nil {
		return states.Ret{}, err
	}
	nlines := py.SplitLines(fileDecodeText(after), false)
	if !fileSameLines(slines, nlines) {
		ret.Changes.Set("diff", diffOf(nlines))
	}
	ret.Result = states.True
	return *ret, nil
}

// fileAppendLines is salt.modules.file.append: a missing final newline is
// added, then each line with a newline.
func fileAppendLines(name string, lines []string) error {
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	var b strings.Builder
	if st.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err != nil {
			return err
		}
		if last[0] != '\n' {
			b.WriteByte('\n')
		}
	}
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	if _, err := f.WriteAt([]byte(b.String()), st.Size()); err != nil {
		return err
	}
	return f.Close()
}

// fileDiffOutcome finishes a line-editing state: the diff as changes, and
// Salt's comments for changes made, changes that would be made (test) and
// no changes.
func fileDiffOutcome(ret *states.Ret, changes any, test bool, would string) states.Ret {
	switch {
	case !payload.Truthy(changes):
		ret.Result, ret.Comment = states.True, "No changes needed to be made"
	case test:
		ret.Changes.Set("diff", changes)
		ret.Result, ret.Comment = states.None, would
	default:
		ret.Changes.Set("diff", changes)
		ret.Result, ret.Comment = states.True, "Changes were made"
	}
	return *ret
}

// textPrologue is what file.append and file.prepend do before they read
// the file: the sources validated, makedirs, the file created when
// missing (in test mode, touch's answer is the state's), and the text
// (rendered sources replace text). early is the state's return when it
// ends there.
func (r *fileRun) textPrologue(ctx context.Context, c *states.Call, ret *states.Ret, name string) (any, *states.Ret, error) {
	a := c.Args
	pairs, err := fileSourcePairs(a.Get("source"), a.Get("source_hash"), a.Get("sources"), a.Get("source_hashes"))
	if err != nil {
		out, _ := fileError(ret, err.Error())
		return nil, &out, nil
	}
	makedirs := a.Get("makedirs") == true
	if makedirs {
		dir := filePyDirname(name)
		if r.test {
			ret.Comment = fmt.Sprintf("Directory %s is set to be updated", dir)
			ret.Result = states.None
		} else if !fileIsDir(dir) {
			if err := r.makedirs(name, nil, nil, ""); err != nil {
				return nil, nil, err
			}
			if res, msg, ch := r.checkDirectory(dir, nil, nil, nil, "", "", false, nil, nil, -1, false); res == states.False {
				ret.Changes = ch
				out, _ := fileError(ret, msg)
				return nil, &out, nil
			}
		}
	}
	if ok, msg := fileCheckFile(name); !ok {
		tc := *c
		tc.Args = modules.NewArgs(modules.Spec{}, map[string]any{"name": name, "makedirs": makedirs})
		touchRet, err := fileTouchState(ctx, &tc)
		if err != nil {
			return nil, nil, err
		}
		if r.test {
			return nil, &touchRet, nil
		}
		if ok2, _ := fileCheckFile(name); !ok2 {
			out, _ := fileError(ret, msg)
			return nil, &out, nil
		}
	}
	text := a.Get("text")
	if len(pairs) > 0 {
		texts, fail := r.templateTexts(pairs, a.Str("template"), a.Get("defaults"), a.Get("context"))
		if fail != nil {
			return nil, fail, nil
		}
		list := make([]any, len(texts))
		for i, t := range texts {
			list[i] = t
		}
		text = list
	}
	return text, nil, nil
}

// derefRet is *r, or the zero Ret for nil.
func derefRet(r *states.Ret) states.Ret {
	if r == nil {
		return states.Ret{}
	}
	return *r
}
