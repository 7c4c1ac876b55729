package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/target"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file is Salt's aliases module (salt/modules/aliases.py): the mail
// aliases file named by the aliases.file option (/etc/aliases by
// default), read line by line with Salt's alias pattern and rewritten
// whole.

// maxAliasesFile bounds the aliases file read into memory.
const maxAliasesFile = 64 << 20

// aliasLineRe is Salt's __ALIAS_RE, `([^:#]*)\s*:?\s*([^#]*?)(\s+#.*|$)`,
// translated with Python's re.match semantics ($ also matches before a
// trailing newline, which the translation consumes into the third group).
var aliasLineRe = regexp.MustCompile(mustTranslatePCRE(`([^:#]*)\s*:?\s*([^#]*?)(\s+#.*|$)`))

func mustTranslatePCRE(pattern string) string {
	src, err := target.TranslatePCRE(pattern)
	if err != nil {
		panic(err) // a constant pattern: a programming error
	}
	return src
}

// aliasLine is one line of the aliases file: an alias with its target and
// trailing comment, or (matched false) a line the pattern does not match,
// kept as its stripped text.
type aliasLine struct {
	alias, target, comment string
	matched                bool
	// targetList is a target given as a list (set_target), written
	// joined by ", "
	targetList []any
}

func aliasesFunctions() []modules.Function {
	return []modules.Function{
		{Name: "aliases.list_aliases",
			Doc: "Return the aliases found in the aliases file in this format::\n\n    {'alias': 'target'}\n\nCLI Example:\n\n    salt '*' aliases.list_aliases",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				lines, err := aliasesParse(c)
				if err != nil {
					return nil, err
				}
				return aliasesList(lines), nil
			}},
		{Name: "aliases.get_target", Spec: modules.Spec{Params: []modules.Param{req("alias")}},
			Doc: "Return the target associated with an alias\n\nCLI Example:\n\n    salt '*' aliases.get_target alias",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return aliasesGetTarget(c, c.Args.Get("alias"))
			}},
		{Name: "aliases.has_target", Spec: modules.Spec{Params: []modules.Param{req("alias"), req("target")}},
			Doc: "Return true if the alias/target is set\n\nCLI Example:\n\n    salt '*' aliases.has_target alias target",
			Fn:  aliasesHasTarget},
		{Name: "aliases.set_target", Spec: modules.Spec{Params: []modules.Param{req("alias"), req("target")}},
			Doc: "Set the entry in the aliases file for the given alias, this will overwrite\nany previous entry for the given alias or create a new one if it does not\nexist.\n\nCLI Example:\n\n    salt '*' aliases.set_target alias target",
			Fn:  aliasesSetTarget},
		{Name: "aliases.rm_alias", Spec: modules.Spec{Params: []modules.Param{req("alias")}},
			Doc: "Remove an entry from the aliases file\n\nCLI Example:\n\n    salt '*' aliases.rm_alias alias",
			Fn:  aliasesRmAlias},
	}
}

// aliasesFile is os.path.realpath(config.option("aliases.file")).
func aliasesFile(c *modules.Call) string {
	return fileRealpath(pyfmt.Str(configOptionValue(c, "aliases.file", "/etc/aliases")))
}

// aliasesParse is __parse_aliases: the file's lines (none when it is not a
// regular file), read as salt.utils.files.fopen reads them (newline="":
// a line keeps its "\r\n").
func aliasesParse(c *modules.Call) ([]aliasLine, error) {
	afn := aliasesFile(c)
	if st, err := os.Stat(afn); err != nil || !st.Mode().IsRegular() {
		return nil, nil
	}
	b, err := readBounded(afn, maxAliasesFile)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("%w: %s", modules.ErrExecution, cmdPyOSError(err))
	}
	var out []aliasLine
	for _, line := range py.FileLines(string(b)) {
		m := aliasLineRe.FindStringSubmatch(line)
		if m == nil {
			out = append(out, aliasLine{comment: strings.TrimFunc(line, cmdPyIsSpace)})
			continue
		}
		comment := m[3]
		if comment == "\n" {
			// Python's $ matched before the newline
			comment = ""
		}
		out = append(out, aliasLine{alias: m[1], target: m[2], comment: comment, matched: true})
	}
	return out, nil
}

// aliasesList is list_aliases over parsed lines: alias -> target for each
// line with a non-empty alias (a later line wins, in the first one's place).
func aliasesList(lines []aliasLine) *payload.Map {
	ret := &payload.Map{}
	for _, l := range lines {
		if l.matched && l.alias != "" {
			ret.Set(l.alias, l.target)
		}
	}
	return ret
}

// aliasesGetTarget is get_target: the alias's target, or "".
func aliasesGetTarget(c *modules.Call, alias any) (any, error) {
	lines, err := aliasesParse(c)
	if err != nil {
		return nil, err
	}
	if v, ok := aliasesList(lines).GetKey(alias); ok {
		return v, nil
	}
	return "", nil
}

func aliasesHasTarget(_ context.Context, c *modules.Call) (any, error) {
	target := c.Args.Get("target")
	if s, ok := target.(string); ok && s == "" {
		return nil, fmt.Errorf("%w: target can not be an empty string", modules.ErrInvocation)
	}
	lines, err := aliasesParse(c)
	if err != nil {
		return nil, err
	}
	cur, ok := aliasesList(lines).GetKey(c.Args.Get("alias"))
	if !ok {
		return false, nil
	}
	if l, isList := target.([]any); isList {
		target = aliasesJoin(l)
	}
	return pyfmt.Equal(target, cur), nil
}

// aliasesJoin is ", ".join(target) over a list of strings.
func aliasesJoin(l []any) string {
	parts := make([]string, len(l))
	for i, v := range l {
		parts[i] = pyfmt.Str(v)
	}
	return strings.Join(parts, ", ")
}

func aliasesSetTarget(ctx context.Context, c *modules.Call) (any, error) {
	alias, target := c.Args.Get("alias"), c.Args.Get("target")
	if s, ok := alias.(string); ok && s == "" {
		return nil, fmt.Errorf("%w: alias can not be an empty string", modules.ErrInvocation)
	}
	if s, ok := target.(string); ok && s == "" {
		return nil, fmt.Errorf("%w: target can not be an empty string", modules.ErrInvocation)
	}
	cur, err := aliasesGetTarget(c, alias)
	if err != nil {
		return nil, err
	}
	if pyfmt.Equal(cur, target) {
		return true, nil
	}
	lines, err := aliasesParse(c)
	if err != nil {
		return nil, err
	}
	name := pyfmt.Str(alias)
	newLine := aliasLine{alias: name, matched: true}
	if l, ok := target.([]any); ok {
		newLine.targetList = l
	} else {
		newLine.target = pyfmt.Str(target)
	}
	var out []aliasLine
	replaced := false
	for _, l := range lines {
		if l.matched && pyfmt.Equal(l.alias, alias) {
			if !replaced {
				nl := newLine
				nl.comment = l.comment
				out = append(out, nl)
				replaced = true
			}
			continue
		}
		out = append(out, l)
	}
	if !replaced {
		out = append(out, newLine)
	}
	return true, aliasesWrite(ctx, c, out)
}

func aliasesRmAlias(ctx context.Context, c *modules.Call) (any, error) {
	alias := c.Args.Get("alias")
	cur, err := aliasesGetTarget(c, alias)
	if err != nil {
		return nil, err
	}
	if !payload.Truthy(cur) {
		return true, nil
	}
	lines, err := aliasesParse(c)
	if err != nil {
		return nil, err
	}
	var out []aliasLine
	for _, l := range lines {
		if !l.matched || !pyfmt.Equal(l.alias, alias) {
			out = append(out, l)
		}
	}
	return true, aliasesWrite(ctx, c, out)
}

// aliasesWrite is __write_aliases_file: the lines written to a temporary
// file beside the aliases file (with its mode and owner, or 0644 root),
// renamed over it, then newaliases run when it is on the PATH.
func aliasesWrite(ctx context.Context, c *modules.Call, lines []aliasLine) error {
	afn := aliasesFile(c)
	var b strings.Builder
	for _, l := range lines {
		target := l.target
		if l.targetList != nil {
			target = aliasesJoin(l.targetList)
		}
		if l.matched && l.alias != "" && target != "" {
			b.WriteString(l.alias + ": " + target + l.comment + "\n")
		} else {
			b.WriteString(l.comment + "\n")
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(afn), "tmp")
	if err != nil {
		return fmt.Errorf("%w: %s", modules.ErrExecution, cmdPyOSError(err))
	}
	defer os.Remove(tmp.Name())
	mode, uid, gid := os.FileMode(0o644), 0, 0
	if st, err := os.Stat(afn); err == nil && st.Mode().IsRegular() {
		mode = st.Mode().Perm() | st.Mode()&(os.ModeSetuid|os.ModeSetgid|os.ModeSticky)
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			uid, gid = int(sys.Uid), int(sys.Gid)
		}
	}
	err = tmp.Chmod(mode)
	if err == nil {
		err = tmp.Chown(uid, gid)
	}
	if err == nil {
		_, err = tmp.WriteString(b.String())
	}
	if err != nil {
		_ = tmp.Close()
		return fmt.Errorf("%w: %s", modules.ErrExecution, cmdPyOSError(err))
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("%w: %s", modules.ErrExecution, cmdPyOSError(err))
	}
	if err := os.Rename(tmp.Name(), afn); err != nil {
		return fmt.Errorf("%w: %s", modules.ErrExecution, cmdPyOSError(err))
	}
	if newaliases := cmdWhich("newaliases"); newaliases != "" {
		if _, err := callFunction(ctx, c, "cmd.run", []any{newaliases}, nil); err != nil {
			return err
		}
	}
	return nil
}
