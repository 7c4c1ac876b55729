package builtin

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/target"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file is file.comment and file.uncomment of Salt's file state
// module, over the file.search and file.comment_line execution functions.

func fileCommentStates() []states.Function {
	return []states.Function{
		{Name: "file.comment", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbReq("regex"), sbOpt("char", "#"), sbOpt("backup", ".bak"), sbOpt("ignore_missing", false)}},
			Fn: fileCommentState},
		{Name: "file.uncomment", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbReq("regex"), sbOpt("char", "#"), sbOpt("backup", ".bak")}},
			Fn: fileUncommentState},
	}
}

var fileUnanchorRe = regexp.MustCompile(`^(\(\?[iLmsux]\))?\^?((?s).*?)\$?$`)

// fileSearch is file.search(name, pattern, multiline=True).
func fileSearch(ctx context.Context, c *states.Call, name, pattern string) (bool, error) {
	v, err := sbExec(ctx, c, "file.search", []any{name, pattern}, payload.NewMap("multiline", true))
	if err != nil {
		return false, err
	}
	return payload.Truthy(v), nil
}

// fileUncommentedMatch is file.search(name, "^(?!\s*<char>).*<regex>",
// multiline=True), done line by line since RE2 has no look-ahead: a line
// that does not start with optional blanks and char, and matches regex
// after some prefix.
func fileUncommentedMatch(name, char, regex string) (bool, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return false, fmt.Errorf("%w: File not found: %s", modules.ErrInvocation, name)
	}
	commented, err := fileMatchRe(`\s*` + char)
	if err != nil {
		return false, err
	}
	body, err := fileMatchRe(`.*` + regex)
	if err != nil {
		return false, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if !commented.MatchString(line) && body.MatchString(line) {
			return true, nil
		}
	}
	return false, nil
}

// fileMatchRe compiles a Python pattern for re.match with MULTILINE.
func fileMatchRe(p string) (*regexp.Regexp, error) {
	tr, err := target.TranslatePCRE("(?m)" + p)
	if err != nil {
		return nil, fmt.Errorf("%w: re.error: %w", modules.ErrExecution, err)
	}
	re, err := regexp.Compile(tr)
	if err != nil {
		return nil, fmt.Errorf("%w: re.error: %w", modules.ErrExecution, err)
	}
	return re, nil
}

// fileLines is the file's lines, each keeping its line ending.
func fileLines(name string) []string {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil
	}
	s := string(b)
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func fileCommentState(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := expandHome(sbName(c))
	ret := &states.Ret{Name: name, Result: states.False, Changes: &payload.Map{}}
	if name == "" {
		return fileError(ret, "Must provide name to file.comment")
	}
	if ok, msg := fileCheckFile(name); !ok {
		return fileError(ret, msg)
	}
	regex, char := c.Args.Str("regex"), c.Args.Str("char")
	unanchor := fileUnanchorRe.ReplaceAllString(regex, "$2")
	commentRegex := char + unanchor
	found, err := fileUncommentedMatch(name, char, unanchor)
	if err != nil {
		return *ret, err
	}
	if !found {
		already, err := fileSearch(ctx, c, name, commentRegex)
		if err != nil {
			return *ret, err
		}
		switch {
		case already:
			ret.Comment, ret.Result = "Pattern already commented", states.True
			return *ret, nil
		case payload.Truthy(c.Args.Get("ignore_missing")):
			ret.Comment, ret.Result = "Pattern not found and ignore_missing set to True", states.True
			return *ret, nil
		}
		return fileError(ret, unanchor+": Pattern not found")
	}
	if c.Test {
		ret.Changes.Set(name, "updated")
		ret.Comment = fmt.Sprintf("File %s is set to be updated", name)
		ret.Result = states.None
		return *ret, nil
	}
	before := fileLines(name)
	if _, err := sbExec(ctx, c, "file.comment_line", []any{name, regex, char, true, c.Args.Get("backup")}, nil); err != nil {
		return *ret, err
	}
	after := fileLines(name)
	ok, err := fileSearch(ctx, c, name, commentRegex)
	if err != nil {
		return *ret, err
	}
	ret.Result = states.ResultOf(ok)
	fileCommentDiff(ret, name, before, after)
	if ok {
		ret.Comment = "Commented lines successfully"
	} else {
		ret.Comment = "Expected commented lines not found"
	}
	return *ret, nil
}

func fileCommentDiff(ret *states.Ret, name string, before, after []string) {
	if equalLines(before, after) {
		return
	}
	if !fileIsTextFile(name) {
		ret.Changes.Set("diff", "Replace binary file")
		return
	}
	ret.Changes.Set("diff", strings.Join(fileUnifiedDiff(before, after, "", "", "\n"), ""))
}

func fileUncommentState(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := expandHome(sbName(c))
	ret := &states.Ret{Name: name, Result: states.False, Changes: &payload.Map{}}
	if name == "" {
		return fileError(ret, "Must provide name to file.uncomment")
	}
	if ok, msg := fileCheckFile(name); !ok {
		return fileError(ret, msg)
	}
	regex, char := c.Args.Str("regex"), c.Args.Str("char")
	body := strings.TrimLeft(regex, "^")
	commented, err := fileSearch(ctx, c, name, char+"[ \t]*"+body)
	if err != nil {
		return *ret, err
	}
	if !commented {
		plain, err := fileSearch(ctx, c, name, "^[ \t]*"+body)
		if err != nil {
			return *ret, err
		}
		if plain {
			ret.Comment, ret.Result = "Pattern already uncommented", states.True
			return *ret, nil
		}
		return fileError(ret, regex+": Pattern not found")
	}
	if c.Test {
		ret.Changes.Set(name, "updated")
		ret.Comment = fmt.Sprintf("File %s is set to be updated", name)
		ret.Result = states.None
		return *ret, nil
	}
	before := fileLines(name)
	if _, err := sbExec(ctx, c, "file.comment_line", []any{name, regex, char, false, c.Args.Get("backup")}, nil); err != nil {
		return *ret, err
	}
	after := fileLines(name)
	ok, err := fileSearch(ctx, c, name, "^[ \t]*"+body)
	if err != nil {
		return *ret, err
	}
	ret.Result = states.ResultOf(ok)
	fileCommentDiff(ret, name, before, after)
	if ok {
		ret.Comment = "Uncommented lines successfully"
	} else {
		ret.Comment = "Expected uncommented lines not found"
	}
	return *ret, nil
}

// expandHome is os.path.expanduser for "~" and "~/...".
func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if h, err := os.UserHomeDir(); err == nil {
			return h + p[1:]
		}
	}
	return p
}
