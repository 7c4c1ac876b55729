package builtin_test

import (
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
)

// TestFileTextGolden compares file.search, comment_line, comment,
// uncomment, contains_regex and the path helpers with Salt 3006
// (testdata/golden/file_text.json).
func TestFileTextGolden(t *testing.T) {
	conf := map[string]string{"f.conf": "# Managed\ncolor = red\n#size = 3\n# size = 4\nname=x\n  color = indented\nlast no newline"}
	calls := []salttest.Call{
		{Name: "basename", Fun: "file.basename", Args: []any{"test/test.config"}},
		{Name: "basename slash", Fun: "file.basename", Args: []any{"/a/b/"}},
		{Name: "dirname", Fun: "file.dirname", Args: []any{"test/path/filename.config"}},
		{Name: "dirname root", Fun: "file.dirname", Args: []any{"/etc"}},
		{Name: "dirname slashes", Fun: "file.dirname", Args: []any{"//a//b"}},
		{Name: "dirname none", Fun: "file.dirname", Args: []any{"file"}},
		{Name: "join", Fun: "file.join", Args: []any{"/", "usr", "local", "bin"}},
		{Name: "join abs", Fun: "file.join", Args: []any{"/var", "/etc", "x"}},
		{Name: "contains_regex", Fun: "file.contains_regex", Args: []any{"{dir}/f.conf", `^color\s*=`}, Files: conf},
		{Name: "contains_regex lchar", Fun: "file.contains_regex", Args: []any{"{dir}/f.conf", `^size = 3`}, Kwargs: []any{"lchar", "#"}, Files: conf},
		{Name: "contains_regex no", Fun: "file.contains_regex", Args: []any{"{dir}/f.conf", `^size`}, Files: conf},
		{Name: "contains_regex missing", Fun: "file.contains_regex", Args: []any{"{dir}/nope", `x`}},
		{Name: "contains_glob", Fun: "file.contains_glob", Args: []any{"{dir}/f.conf", "*name=x*"}, Files: conf},
		{Name: "search", Fun: "file.search", Args: []any{"{dir}/f.conf", `^name=`}, Files: conf},
		{Name: "search no", Fun: "file.search", Args: []any{"{dir}/f.conf", `^nothing`}, Files: conf},
		{Name: "search ignorecase", Fun: "file.search", Args: []any{"{dir}/f.conf", `^COLOR`}, Kwargs: []any{"flags", []any{"IGNORECASE", "MULTILINE"}}, Files: conf},
		{Name: "search no multiline", Fun: "file.search", Args: []any{"{dir}/f.conf", `^color`}, Kwargs: []any{"flags", int64(0)}, Files: conf},
		{Name: "search multiline arg", Fun: "file.search", Args: []any{"{dir}/f.conf", `^color`}, Kwargs: []any{"flags", int64(0), "multiline", true}, Files: conf},
		{Name: "search missing", Fun: "file.search", Args: []any{"{dir}/nope", `x`}},
		{Name: "search missing ignored", Fun: "file.search", Args: []any{"{dir}/nope", `x`}, Kwargs: []any{"ignore_if_missing", true}},
		{Name: "search bad flag", Fun: "file.search", Args: []any{"{dir}/f.conf", `x`}, Kwargs: []any{"flags", "NOPE"}, Files: conf},
		{Name: "search binary", Fun: "file.search", Args: []any{"{dir}/b", `x`}, Files: map[string]string{"b": "a\x00b"}},
		{Name: "comment", Fun: "file.comment", Args: []any{"{dir}/f.conf", "^color"}, Files: conf},
		{Name: "comment anchored both", Fun: "file.comment", Args: []any{"{dir}/f.conf", "^name=x$"}, Files: conf},
		{Name: "comment no match", Fun: "file.comment", Args: []any{"{dir}/f.conf", "^nothing"}, Files: conf},
		{Name: "comment unanchored", Fun: "file.comment", Args: []any{"{dir}/f.conf", "color"}, Kwargs: []any{"char", ";", "backup", false}, Files: conf},
		{Name: "uncomment", Fun: "file.uncomment", Args: []any{"{dir}/f.conf", "size"}, Files: conf},
		{Name: "uncomment anchored", Fun: "file.uncomment", Args: []any{"{dir}/f.conf", "^size = 4$"}, Kwargs: []any{"backup", ".orig"}, Files: conf},
		{Name: "comment_line", Fun: "file.comment_line", Args: []any{"{dir}/f.conf", "^last"}, Files: conf},
		{Name: "comment_line uncomment", Fun: "file.comment_line", Args: []any{"{dir}/f.conf", "^size"}, Kwargs: []any{"cmnt", false}, Files: conf},
		{Name: "comment_line missing", Fun: "file.comment_line", Args: []any{"{dir}/nope", "^x"}},
	}
	runSuite(t, salttest.Suite{Name: "file_text", Calls: calls, Grains: linuxGrains()})
}
