package builtin

import (
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
)

// TestAliasStatesGolden compares alias.present and alias.absent (and
// test=True) on temporary aliases files with Salt 3006
// (testdata/golden/alias.json), the returns and the rewritten files.
func TestAliasStatesGolden(t *testing.T) {
	af := map[string]string{"aliases": "# mail aliases\npostmaster: root\nroot: admin@example.com # the admin\nteam: a@x, b@x\n"}
	calls := []salttest.Call{
		single("present new", "alias.present", false, "name", "web", "target", "www-data"),
		single("present new test", "alias.present", true, "name", "web", "target", "www-data"),
		single("present exists", "alias.present", false, "name", "postmaster", "target", "root"),
		single("present list exists", "alias.present", false, "name", "team", "target", []any{"a@x", "b@x"}),
		single("present list", "alias.present", false, "name", "ops", "target", []any{"a@x", "c@x"}),
		single("present replace keeps comment", "alias.present", false, "name", "root", "target", "info@example.com"),
		single("present replace test", "alias.present", true, "name", "root", "target", "info@example.com"),
		single("present empty target", "alias.present", false, "name", "root", "target", ""),
		single("absent", "alias.absent", false, "name", "postmaster"),
		single("absent test", "alias.absent", true, "name", "postmaster"),
		single("absent already", "alias.absent", false, "name", "nope"),
		single("absent already test", "alias.absent", true, "name", "nope"),
		{Name: "absent missing file", Fun: "state.single", Args: []any{"alias.absent"}, Kwargs: []any{"name", "root"}, Files: map[string]string{}},
		{Name: "present missing file", Fun: "state.single", Args: []any{"alias.present"}, Kwargs: []any{"name", "root", "target", "x@y"}, Files: map[string]string{}},
	}
	for i := range calls {
		if calls[i].Files == nil {
			calls[i].Files = af
		}
		calls[i].Opts = []any{"aliases.file", "{dir}/aliases"}
	}
	runStateSuite(t, salttest.Suite{Name: "alias", Calls: calls, Grains: payloadLinuxGrains()})
}
