package builtin_test

import "testing"

// TestFileTextGolden compares file.search, comment_line, comment,
// uncomment, contains_regex and the path helpers with Salt 3006
// (testdata/golden/file_text.json).
func TestFileTextGolden(t *testing.T) {
	conf := map[string]string{"f.conf": "# Managed\ncolor = red\n#size = 3\n# size = 4\nname=x\n  color = indented\nlast no newline"}
	calls := []sCall{
		{name: "basename", fun: "file.basename", args: []any{"test/test.config"}},
		{name: "basename slash", fun: "file.basename", args: []any{"/a/b/"}},
		{name: "dirname", fun: "file.dirname", args: []any{"test/path/filename.config"}},
		{name: "dirname root", fun: "file.dirname", args: []any{"/etc"}},
		{name: "dirname slashes", fun: "file.dirname", args: []any{"//a//b"}},
		{name: "dirname none", fun: "file.dirname", args: []any{"file"}},
		{name: "join", fun: "file.join", args: []any{"/", "usr", "local", "bin"}},
		{name: "join abs", fun: "file.join", args: []any{"/var", "/etc", "x"}},
		{name: "contains_regex", fun: "file.contains_regex", args: []any{"{dir}/f.conf", `^color\s*=`}, files: conf},
		{name: "contains_regex lchar", fun: "file.contains_regex", args: []any{"{dir}/f.conf", `^size = 3`}, kwargs: []any{"lchar", "#"}, files: conf},
		{name: "contains_regex no", fun: "file.contains_regex", args: []any{"{dir}/f.conf", `^size`}, files: conf},
		{name: "contains_regex missing", fun: "file.contains_regex", args: []any{"{dir}/nope", `x`}},
		{name: "contains_glob", fun: "file.contains_glob", args: []any{"{dir}/f.conf", "*name=x*"}, files: conf},
		{name: "search", fun: "file.search", args: []any{"{dir}/f.conf", `^name=`}, files: conf},
		{name: "search no", fun: "file.search", args: []any{"{dir}/f.conf", `^nothing`}, files: conf},
		{name: "search ignorecase", fun: "file.search", args: []any{"{dir}/f.conf", `^COLOR`}, kwargs: []any{"flags", []any{"IGNORECASE", "MULTILINE"}}, files: conf},
		{name: "search no multiline", fun: "file.search", args: []any{"{dir}/f.conf", `^color`}, kwargs: []any{"flags", int64(0)}, files: conf},
		{name: "search multiline arg", fun: "file.search", args: []any{"{dir}/f.conf", `^color`}, kwargs: []any{"flags", int64(0), "multiline", true}, files: conf},
		{name: "search missing", fun: "file.search", args: []any{"{dir}/nope", `x`}},
		{name: "search missing ignored", fun: "file.search", args: []any{"{dir}/nope", `x`}, kwargs: []any{"ignore_if_missing", true}},
		{name: "search bad flag", fun: "file.search", args: []any{"{dir}/f.conf", `x`}, kwargs: []any{"flags", "NOPE"}, files: conf},
		{name: "search binary", fun: "file.search", args: []any{"{dir}/b", `x`}, files: map[string]string{"b": "a\x00b"}},
		{name: "comment", fun: "file.comment", args: []any{"{dir}/f.conf", "^color"}, files: conf},
		{name: "comment anchored both", fun: "file.comment", args: []any{"{dir}/f.conf", "^name=x$"}, files: conf},
		{name: "comment no match", fun: "file.comment", args: []any{"{dir}/f.conf", "^nothing"}, files: conf},
		{name: "comment unanchored", fun: "file.comment", args: []any{"{dir}/f.conf", "color"}, kwargs: []any{"char", ";", "backup", false}, files: conf},
		{name: "uncomment", fun: "file.uncomment", args: []any{"{dir}/f.conf", "size"}, files: conf},
		{name: "uncomment anchored", fun: "file.uncomment", args: []any{"{dir}/f.conf", "^size = 4$"}, kwargs: []any{"backup", ".orig"}, files: conf},
		{name: "comment_line", fun: "file.comment_line", args: []any{"{dir}/f.conf", "^last"}, files: conf},
		{name: "comment_line uncomment", fun: "file.comment_line", args: []any{"{dir}/f.conf", "^size"}, kwargs: []any{"cmnt", false}, files: conf},
		{name: "comment_line missing", fun: "file.comment_line", args: []any{"{dir}/nope", "^x"}},
	}
	runSuite(t, sSuite{name: "file_text", calls: calls, grains: linuxGrains()})
}
