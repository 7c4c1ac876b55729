package builtin_test

import (
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
	"github.com/gsalt/gsalt/wire/payload"
)

// iniSample exercises Salt's ini parser: top-level options before the
// first section, '#' and ';' comments, a commented-out option that a new
// option replaces, an indented continuation line, a line without a
// separator, a duplicate key, a blank line, a key with spaces, a value
// with '=' in it, tabs, and CRLF line ends.
const iniSample = "top = 1\n# a comment\nother=two\n\n[general]\n; semicolon comment\nname = value\n#port = 8080\nmulti = first\n    second line\n\tthird line\nnosep line\nname = again\nspaced key = spaced value\nurl = a=b=c\n\n[empty]\n\n[crlf]\r\nx = 1\r\ny=2\r\n"

// TestIniGolden compares the ini module (Salt's ini_manage) on temporary
// ini files with Salt 3006 (testdata/golden/ini.json): the returns and the
// rewritten files.
func TestIniGolden(t *testing.T) {
	f := map[string]string{"a.ini": iniSample}
	file := "{dir}/a.ini"
	calls := []salttest.Call{
		{Name: "get_ini", Fun: "ini.get_ini", Args: []any{file}},
		{Name: "get_ini missing", Fun: "ini.get_ini", Args: []any{"{dir}/none.ini"}},
		{Name: "get_ini space separator", Fun: "ini.get_ini", Args: []any{file, " "}},
		{Name: "get_option", Fun: "ini.get_option", Args: []any{file, "general", "name"}},
		{Name: "get_option multi", Fun: "ini.get_option", Args: []any{file, "general", "multi"}},
		{Name: "get_option top", Fun: "ini.get_option", Args: []any{file, nil, "top"}},
		{Name: "get_option top is section", Fun: "ini.get_option", Args: []any{file, "", "general"}},
		{Name: "get_option missing section", Fun: "ini.get_option", Args: []any{file, "nope", "name"}},
		{Name: "get_option of an option", Fun: "ini.get_option", Args: []any{file, "top", "x"}},
		{Name: "get_section", Fun: "ini.get_section", Args: []any{file, "general"}},
		{Name: "get_section missing", Fun: "ini.get_section", Args: []any{file, "nope"}},
		{Name: "get_section of an option", Fun: "ini.get_section", Args: []any{file, "top"}},
		{Name: "set_option new and changed", Fun: "ini.set_option", Args: []any{file, payload.NewMap("general", payload.NewMap("name", "new", "port", int64(9090), "flag", true), "newsect", payload.NewMap("k", "v"), "toplevel", "t")}},
		{Name: "set_option unchanged", Fun: "ini.set_option", Args: []any{file, payload.NewMap("general", payload.NewMap("spaced key", "spaced value"))}},
		{Name: "set_option missing file", Fun: "ini.set_option", Args: []any{"{dir}/new.ini", payload.NewMap("s", payload.NewMap("a", "1", "b", []any{"x"}), "top", nil)}},
		{Name: "set_option nothing", Fun: "ini.set_option", Args: []any{file}},
		{Name: "set_option option over section", Fun: "ini.set_option", Args: []any{file, payload.NewMap("top", payload.NewMap("a", "b"))}},
		{Name: "set_option space separator", Fun: "ini.set_option", Args: []any{"{dir}/sp.ini", payload.NewMap("s", payload.NewMap("a", "1")), " "}, Files: map[string]string{"sp.ini": "[s]\na 0\nb 2\n"}},
		{Name: "remove_option", Fun: "ini.remove_option", Args: []any{file, "general", "multi"}},
		{Name: "remove_option top", Fun: "ini.remove_option", Args: []any{file, nil, "other"}},
		{Name: "remove_option missing", Fun: "ini.remove_option", Args: []any{file, "general", "nope"}},
		{Name: "remove_section", Fun: "ini.remove_section", Args: []any{file, "general"}},
		{Name: "remove_section missing", Fun: "ini.remove_section", Args: []any{file, "nope"}},
		{Name: "remove_section empty", Fun: "ini.remove_section", Args: []any{file, "empty"}},
	}
	for i := range calls {
		if calls[i].Files == nil {
			calls[i].Files = f
		}
	}
	runSuite(t, salttest.Suite{Name: "ini", Calls: calls})
}
