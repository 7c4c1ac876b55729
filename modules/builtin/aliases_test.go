package builtin_test

import (
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
)

// aliasesSample exercises Salt's alias pattern: comments, a blank line, an
// alias with spaces before its colon, a trailing comment, a '#' glued to a
// target (no match: kept as a comment), a line without a colon, a
// duplicate alias, a CRLF line and a lone CR.
const aliasesSample = "# /etc/aliases\nmailer-daemon: postmaster\npostmaster: root\n\nroot : admin@example.com # the admin\nlists: a, b,c\nglued: x#y\nnocolon here\nroot: second@example.com\ncrlf: win\r\nlone: cr\rlast: noeol"

// TestAliasesGolden compares the aliases module on temporary aliases files
// with Salt 3006 (testdata/golden/aliases.json), the returns and the
// rewritten files.
func TestAliasesGolden(t *testing.T) {
	af := map[string]string{"aliases": aliasesSample}
	calls := []salttest.Call{
		{Name: "list_aliases", Fun: "aliases.list_aliases"},
		{Name: "list_aliases missing file", Fun: "aliases.list_aliases", Files: map[string]string{}},
		{Name: "get_target", Fun: "aliases.get_target", Args: []any{"postmaster"}},
		{Name: "get_target spaced alias", Fun: "aliases.get_target", Args: []any{"root "}},
		{Name: "get_target duplicate", Fun: "aliases.get_target", Args: []any{"root"}},
		{Name: "get_target none", Fun: "aliases.get_target", Args: []any{"nope"}},
		{Name: "has_target", Fun: "aliases.has_target", Args: []any{"postmaster", "root"}},
		{Name: "has_target list", Fun: "aliases.has_target", Args: []any{"lists", []any{"a", "b,c"}}},
		{Name: "has_target no", Fun: "aliases.has_target", Args: []any{"postmaster", "other"}},
		{Name: "has_target missing alias", Fun: "aliases.has_target", Args: []any{"nope", "root"}},
		{Name: "has_target empty", Fun: "aliases.has_target", Args: []any{"postmaster", ""}},
		{Name: "set_target same", Fun: "aliases.set_target", Args: []any{"postmaster", "root"}},
		{Name: "set_target replace duplicate", Fun: "aliases.set_target", Args: []any{"root", "new@example.com"}},
		{Name: "set_target keeps comment", Fun: "aliases.set_target", Args: []any{"root ", "other@example.com"}},
		{Name: "set_target new", Fun: "aliases.set_target", Args: []any{"web", "www-data"}},
		{Name: "set_target list", Fun: "aliases.set_target", Args: []any{"team", []any{"a@x", "b@x"}}},
		{Name: "set_target empty list", Fun: "aliases.set_target", Args: []any{"team", []any{}}},
		{Name: "set_target missing file", Fun: "aliases.set_target", Args: []any{"web", "www-data"}, Files: map[string]string{}},
		{Name: "set_target empty alias", Fun: "aliases.set_target", Args: []any{"", "x"}},
		{Name: "set_target empty target", Fun: "aliases.set_target", Args: []any{"x", ""}},
		{Name: "rm_alias", Fun: "aliases.rm_alias", Args: []any{"postmaster"}},
		{Name: "rm_alias duplicate", Fun: "aliases.rm_alias", Args: []any{"root"}},
		{Name: "rm_alias absent", Fun: "aliases.rm_alias", Args: []any{"nope"}},
		{Name: "rm_alias missing file", Fun: "aliases.rm_alias", Args: []any{"root"}, Files: map[string]string{}},
	}
	for i := range calls {
		calls[i].Opts = []any{"aliases.file", "{dir}/aliases"}
		if calls[i].Files == nil {
			calls[i].Files = af
		}
	}
	runSuite(t, salttest.Suite{Name: "aliases", Calls: calls})
}
