package builtin

import (
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestIniStatesGolden compares ini.options_present, options_absent,
// sections_present and sections_absent (and test=True) on temporary ini
// files with Salt 3006 (testdata/golden/ini_manage.json), the returns and
// the rewritten files. ceph-formula sets its ceph.conf with
// ini.options_present.
func TestIniStatesGolden(t *testing.T) {
	ini := map[string]string{"a.ini": "top = 1\nother = 2\n# a comment\n[global]\nfsid = abc\n#mon_host = x\nauth = none\n\n[client]\nkeyring = /etc/k\n"}
	global := payload.NewMap("fsid", "abc", "mon_host", "10.0.0.1", "auth", "cephx", "port", int64(6789))
	calls := []salttest.Call{
		single("options_present", "ini.options_present", false, "name", "{dir}/a.ini", "sections", payload.NewMap("global", global, "top", "1", "newtop", true)),
		single("options_present test", "ini.options_present", true, "name", "{dir}/a.ini", "sections", payload.NewMap("global", global, "top", "1", "newtop", true)),
		single("options_present unchanged", "ini.options_present", false, "name", "{dir}/a.ini", "sections", payload.NewMap("global", payload.NewMap("fsid", "abc"), "top", int64(1))),
		single("options_present unchanged test", "ini.options_present", true, "name", "{dir}/a.ini", "sections", payload.NewMap("global", payload.NewMap("fsid", "abc"), "top", int64(1))),
		single("options_present strict", "ini.options_present", false, "name", "{dir}/a.ini", "strict", true, "sections", payload.NewMap("client", payload.NewMap("new", "n"), "top", "1")),
		single("options_present strict test", "ini.options_present", true, "name", "{dir}/a.ini", "strict", true, "sections", payload.NewMap("client", payload.NewMap("new", "n"), "top", "1")),
		single("options_present new section", "ini.options_present", false, "name", "{dir}/a.ini", "sections", payload.NewMap("fresh", payload.NewMap("a", "b"))),
		single("options_present missing file", "ini.options_present", false, "name", "{dir}/new.ini", "sections", payload.NewMap("s", payload.NewMap("a", "b"))),
		single("options_present missing file test", "ini.options_present", true, "name", "{dir}/new.ini", "sections", payload.NewMap("s", payload.NewMap("a", "b"))),
		single("options_present no sections", "ini.options_present", false, "name", "{dir}/none.ini"),
		single("options_absent", "ini.options_absent", false, "name", "{dir}/a.ini", "sections", payload.NewMap("global", []any{"fsid", "nope"})),
		single("options_absent test", "ini.options_absent", true, "name", "{dir}/a.ini", "sections", payload.NewMap("global", []any{"fsid", "nope"}, "top", "x")),
		single("options_absent nothing test", "ini.options_absent", true, "name", "{dir}/a.ini", "sections", payload.NewMap("client", []any{"nope"})),
		single("sections_present", "ini.sections_present", false, "name", "{dir}/a.ini", "sections", payload.NewMap("client", payload.NewMap(), "extra", payload.NewMap())),
		single("sections_present test", "ini.sections_present", true, "name", "{dir}/a.ini", "sections", payload.NewMap("client", payload.NewMap(), "extra", payload.NewMap())),
		single("sections_absent", "ini.sections_absent", false, "name", "{dir}/a.ini", "sections", []any{"client", "nope"}),
		single("sections_absent test", "ini.sections_absent", true, "name", "{dir}/a.ini", "sections", []any{"client", "nope"}),
		single("sections_absent none test", "ini.sections_absent", true, "name", "{dir}/a.ini", "sections", []any{"nope"}),
	}
	for i := range calls {
		calls[i].Files = ini
	}
	runStateSuite(t, salttest.Suite{Name: "ini_manage", Calls: calls, Grains: payloadLinuxGrains()})
}
