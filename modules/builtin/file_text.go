package builtin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/gsalt/gsalt/internal/py"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/target"
	"github.com/gsalt/gsalt/wire/payload"
)

// maxTextFile bounds a file the text functions read into memory.
const maxTextFile = 256 << 20

// fileTextFunctions are the path helpers and the regex search and
// comment functions of Salt's file module.
func fileTextFunctions() []modules.Function {
	return []modules.Function{
		{Name: "file.basename", Spec: modules.Spec{Params: []modules.Param{req("path")}},
			Doc: "Returns the final component of a pathname\n\nCLI Example:\n\n    salt '*' file.basename 'test/test.config'",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				p := c.Args.Str("path")
				return p[strings.LastIndexByte(p, '/')+1:], nil
			}},
		{Name: "file.dirname", Spec: modules.Spec{Params: []modules.Param{req("path")}},
			Doc: "Returns the directory component of a pathname\n\nCLI Example:\n\n    salt '*' file.dirname 'test/path/filename.config'",
			Fn:  func(_ context.Context, c *modules.Call) (any, error) { return pyDirname(c.Args.Str("path")), nil }},
		{Name: "file.join", Spec: modules.Spec{Varargs: true},
			Doc: "Return a normalized file system path for the underlying OS\n\nCLI Example:\n\n    salt '*' file.join '/' 'usr' 'local' 'bin'",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				if len(c.Args.Varargs) == 0 {
					return nil, fmt.Errorf("%w: join() missing 1 required positional argument: 'a'", modules.ErrArguments)
				}
				out := pyfmt.Str(c.Args.Varargs[0])
				for _, a := range c.Args.Varargs[1:] {
					s := pyfmt.Str(a)
					switch {
					case strings.HasPrefix(s, "/"):
						out = s
					case out == "" || strings.HasSuffix(out, "/"):
						out += s
					default:
						out += "/" + s
					}
				}
				return out, nil
			}},
		{Name: "file.contains_regex", Spec: modules.Spec{Params: []modules.Param{req("path"), req("regex"), opt("lchar", "")}},
			Doc: "Return True if the given regular expression matches on any line in the text\nof a given file.\n\nIf the lchar argument (leading char) is specified, it\nwill strip `lchar` from the left side of each line before trying to match\n\nCLI Example:\n\n    salt '*' file.contains_regex /etc/crontab",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				p := expandUser(c.Args.Str("path"))
				b, err := readBounded(p, maxTextFile)
				if err != nil {
					return false, nil
				}
				re, err := pyRegexp(c.Args.Str("regex"), "")
				if err != nil {
					return nil, err
				}
				lchar := c.Args.Str("lchar")
				for _, line := range py.FileLines(string(b)) {
					if lchar != "" {
						line = strings.TrimLeft(line, lchar)
					}
					if re.MatchString(line) {
						return true, nil
					}
				}
				return false, nil
			}},
		{Name: "file.contains_glob", Spec: modules.Spec{Params: []modules.Param{req("path"), req("glob_expr")}},
			Doc: "Return ``True`` if the given glob matches a string in the named file\n\nCLI Example:\n\n    salt '*' file.contains_glob /etc/foobar '*cheese*'",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				b, err := readBounded(expandUser(c.Args.Str("path")), maxTextFile)
				if err != nil {
					return false, nil
				}
				// salt.utils.filebuffer reads 32 KiB chunks.
				for len(b) > 0 {
					n := min(len(b), 32768)
					if py.Fnmatch(string(b[:n]), c.Args.Str("glob_expr")) {
						return true, nil
					}
					b = b[n:]
				}
				return false, nil
			}},
		{Name: "file.search", Spec: modules.Spec{Params: []modules.Param{req("path"), req("pattern"), opt("flags", int64(8)), opt("bufsize", int64(1)),
			opt("ignore_if_missing", false), opt("multiline", false)}},
			Doc: "Search for occurrences of a pattern in a file\n\nExcept for multiline, params are identical to file.replace.\n\nmultiline\n    If true, inserts 'MULTILINE' into ``flags`` and sets ``bufsize`` to\n    'file'.\n\nCLI Example:\n\n    salt '*' file.search /etc/crontab 'mymaintenance.sh'",
			Fn:  fileSearch},
		{Name: "file.comment_line", Spec: modules.Spec{Params: []modules.Param{req("path"), req("regex"), opt("char", "#"), opt("cmnt", true), opt("backup", ".bak")}},
			Doc: "Comment or Uncomment a line in a text file.\n\n:param path: string\n    The full path to the text file.\n\n:param regex: string\n    A regex expression that begins with ``^`` that will find the line you wish\n    to comment. Can be as simple as ``^color =``\n\n:param char: string\n    The character used to comment a line in the type of file you're referencing.\n    Default is ``#``\n\n:param cmnt: boolean\n    True to comment the line. False to uncomment the line. Default is True.\n\n:param backup: string\n    The file extension to give the backup file. Default is ``.bak``\n    Set to False/None to not keep a backup.\n\n:return: boolean\n    Returns True if successful, False if not\n\nCLI Example:\n\n    salt '*' file.comment_line '/etc/modules' '^pcspkr'",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return FileCommentLine(c.Args.Str("path"), c.Args.Str("regex"), c.Args.Str("char"), argsBool(c, "cmnt"), c.Args.Get("backup"))
			}},
		{Name: "file.comment", Spec: modules.Spec{Params: []modules.Param{req("path"), req("regex"), opt("char", "#"), opt("backup", ".bak")}},
			Doc: "Comment out specified lines in a file\n\npath\n    The full path to the file to be edited\nregex\n    A regular expression used to find the lines that are to be commented;\n    this pattern will be wrapped in parenthesis and will move any\n    preceding/trailing ``^`` or ``$`` characters outside the parenthesis\n    (e.g., the pattern ``^foo$`` will be rewritten as ``^(foo)$``)\nchar: ``#``\n    The character to be inserted at the beginning of a line in order to\n    comment it out\nbackup: ``.bak``\n    The file will be backed up before edit with this file extension\n\nCLI Example:\n\n    salt '*' file.comment /etc/modules pcspkr",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return FileCommentLine(c.Args.Str("path"), c.Args.Str("regex"), c.Args.Str("char"), true, c.Args.Get("backup"))
			}},
		{Name: "file.uncomment", Spec: modules.Spec{Params: []modules.Param{req("path"), req("regex"), opt("char", "#"), opt("backup", ".bak")}},
			Doc: "Uncomment specified commented lines in a file\n\npath\n    The full path to the file to be edited\nregex\n    A regular expression used to find the lines that are to be uncommented.\n    This regex should not include the comment character. A leading ``^``\n    character will be stripped for convenience (for easily switching\n    between comment() and uncomment()).\nchar: ``#``\n    The character to remove in order to uncomment a line\nbackup: ``.bak``\n    The file will be backed up before edit with this file extension;\n\nCLI Example:\n\n    salt '*' file.uncomment /etc/hosts.deny 'ALL: PARANOID'",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return FileCommentLine(c.Args.Str("path"), c.Args.Str("regex"), c.Args.Str("char"), false, c.Args.Get("backup"))
			}},
	}
}

// expandUser is os.path.expanduser for "~" and "~/...".
func expandUser(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return home + p[1:]
		}
	}
	return p
}

// pyRegexp compiles a Python regular expression with inline flags for
// re.search (unanchored); pyMatchRegexp for re.match.
func pyRegexp(pattern, flags string) (*regexp.Regexp, error) {
	tr, err := target.TranslatePCRE(flags + pattern)
	if err != nil {
		return nil, fmt.Errorf("re.error: %w", err)
	}
	// TranslatePCRE wraps the translation in ^(?:...) for re.match.
	if strings.HasPrefix(tr, "^(?:") && strings.HasSuffix(tr, ")") {
		tr = tr[4 : len(tr)-1]
	}
	re, err := regexp.Compile(tr)
	if err != nil {
		return nil, fmt.Errorf("re.error: %w", err)
	}
	return re, nil
}

// pyMatchRegexp compiles a Python regular expression for re.match.
func pyMatchRegexp(pattern string) (*regexp.Regexp, error) {
	tr, err := target.TranslatePCRE(pattern)
	if err != nil {
		return nil, fmt.Errorf("re.error: %w", err)
	}
	re, err := regexp.Compile(tr)
	if err != nil {
		return nil, fmt.Errorf("re.error: %w", err)
	}
	return re, nil
}

// pyReFlags is file._get_flags: an int, a flag name or a list of names,
// as inline flags.
func pyReFlags(v any) (string, error) {
	const (
		ignoreCase = 2
		multiline  = 8
		dotall     = 16
		verbose    = 64
	)
	bits := int64(0)
	names := map[string]int64{"IGNORECASE": ignoreCase, "I": ignoreCase, "MULTILINE": multiline, "M": multiline,
		"DOTALL": dotall, "S": dotall, "VERBOSE": verbose, "X": verbose, "UNICODE": 32, "U": 32, "ASCII": 256, "A": 256, "LOCALE": 4, "L": 4}
	switch x := v.(type) {
	case int64:
		bits = x
	case string:
		n, ok := names[strings.ToUpper(x)]
		if !ok {
			return "", fmt.Errorf("%w: Invalid re flag given: %s", modules.ErrExecution, x)
		}
		bits = n
	case []any:
		for _, f := range x {
			n, ok := names[strings.ToUpper(pyfmt.Str(f))]
			if !ok {
				return "", fmt.Errorf("%w: Invalid re flag given: %s", modules.ErrExecution, pyfmt.Str(f))
			}
			bits |= n
		}
	default:
		return "", fmt.Errorf("%w: Invalid re flags: \"%s\", must be given either as a single flag string, a list of strings, as an integer, or as an re flag", modules.ErrExecution, pyfmt.Str(v))
	}
	var f string
	if bits&ignoreCase != 0 {
		f += "i"
	}
	if bits&multiline != 0 {
		f += "m"
	}
	if bits&dotall != 0 {
		f += "s"
	}
	if bits&verbose != 0 {
		f += "x"
	}
	if f == "" {
		return "", nil
	}
	return "(?" + f + ")", nil
}

func fileSearch(_ context.Context, c *modules.Call) (any, error) {
	flags, err := pyReFlags(c.Args.Get("flags"))
	if err != nil {
		return nil, err
	}
	if argsBool(c, "multiline") && !strings.Contains(flags, "m") {
		if flags == "" {
			flags = "(?m)"
		} else {
			flags = flags[:len(flags)-1] + "m)"
		}
	}
	p, err := filepath.EvalSymlinks(expandUser(c.Args.Str("path")))
	if err != nil {
		if argsBool(c, "ignore_if_missing") {
			return false, nil
		}
		return nil, fmt.Errorf("%w: File not found: %s", modules.ErrInvocation, absClean(expandUser(c.Args.Str("path"))))
	}
	p = absClean(p)
	b, err := readBounded(p, maxTextFile)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	if !isTextBlock(b[:min(len(b), 512)]) {
		return nil, fmt.Errorf("%w: Cannot perform string replacements on a binary file: %s", modules.ErrInvocation, p)
	}
	re, err := pyRegexp(c.Args.Str("pattern"), flags)
	if err != nil {
		return nil, err
	}
	return re.Match(b), nil
}

func absClean(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// isTextBlock is salt.utils.files.is_text on the first 512 bytes: no NUL,
// and valid UTF-8 or at most 30% non-text bytes.
func isTextBlock(block []byte) bool {
	if bytes.IndexByte(block, 0) >= 0 {
		return false
	}
	if len(block) == 0 || utf8.Valid(block) {
		return true
	}
	nontext := 0
	for _, c := range block {
		if (c >= 32 && c < 127) || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == '\b' {
			continue
		}
		nontext++
	}
	return float64(nontext)/float64(len(block)) <= 0.30
}

// ErrNotFound is returned by FileCommentLine for a missing file.
var ErrNotFound = errors.New("file not found")

// FileCommentLine is file.comment_line: lines matching regex get char
// prepended (cmnt) or leading chars of char removed; the original is kept
// as path+backup when backup is a non-empty string. It returns false when
// no line matches, else the unified diff of the changed lines.
func FileCommentLine(p, regex, char string, cmnt bool, backup any) (any, error) {
	body := strings.TrimRight(strings.TrimLeft(regex, "^"), "$")
	var pattern string
	if cmnt {
		pattern = "(" + body + ")"
		if strings.HasPrefix(regex, "^") {
			pattern = "^" + pattern
		}
	} else {
		pattern = "^" + char + `\s*(` + body + ")"
	}
	if strings.HasSuffix(regex, "$") {
		pattern += "$"
	}
	re, err := pyMatchRegexp(pattern)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(expandUser(p))
	if err != nil {
		real = expandUser(p)
	}
	real = absClean(real)
	st, err := os.Stat(real)
	if err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: File not found: %s", modules.ErrInvocation, real)
	}
	b, err := readBounded(real, maxTextFile)
	if err != nil {
		return nil, fmt.Errorf("%w: Unable to open file '%s'. Exception: %w", modules.ErrExecution, real, err)
	}
	if !isTextBlock(b[:min(len(b), 512)]) {
		return nil, fmt.Errorf("%w: Cannot perform string replacements on a binary file: %s", modules.ErrInvocation, real)
	}
	var orig, changed []string
	lines := splitKeepNL(b)
	var out bytes.Buffer
	for _, lb := range lines {
		line := string(lb)
		if re.MatchString(line) {
			orig = append(orig, line)
			var nl string
			if cmnt {
				nl = char + line
			} else {
				nl = strings.TrimLeft(line, char)
			}
			changed = append(changed, nl)
			out.WriteString(nl)
			continue
		}
		out.Write(lb)
	}
	if len(orig) == 0 {
		return false, nil
	}
	if bs, ok := backup.(string); ok && bs != "" {
		if err := os.WriteFile(real+bs, b, st.Mode().Perm()); err != nil {
			return nil, fmt.Errorf("%w: Unable to move the temp file '%s' to the backup file '%s'. Exception: %w", modules.ErrExecution, real, real+bs, err)
		}
	} else if payload.Truthy(backup) {
		if err := os.WriteFile(real+pyfmt.Str(backup), b, st.Mode().Perm()); err != nil {
			return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
	}
	if err := os.WriteFile(real, out.Bytes(), st.Mode().Perm()); err != nil {
		return nil, fmt.Errorf("%w: Exception: %w", modules.ErrExecution, err)
	}
	return strings.Join(beaconsUnifiedDiff(orig, changed), ""), nil
}
