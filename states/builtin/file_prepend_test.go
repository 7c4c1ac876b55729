package builtin

import (
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
)

// TestFilePrependStateGolden compares file.prepend (and test=True) with
// Salt 3006 (testdata/golden/file_prepend.json).
func TestFilePrependStateGolden(t *testing.T) {
	files := map[string]string{"f.conf": "line a\nline b\n", "h.conf": "# managed\n# by salt\nbody\n", "nonl.conf": "x = 1"}
	calls := []salttest.Call{
		single("prepend", "file.prepend", false, "name", "{dir}/f.conf", "text", "# top"),
		single("prepend test", "file.prepend", true, "name", "{dir}/f.conf", "text", "# top"),
		single("prepend present", "file.prepend", false, "name", "{dir}/f.conf", "text", "line b"),
		single("prepend present spaced", "file.prepend", false, "name", "{dir}/f.conf", "text", "line    a"),
		single("prepend list", "file.prepend", false, "name", "{dir}/f.conf", "text", []any{"one", "two\nthree", "line a"}),
		single("prepend list test", "file.prepend", true, "name", "{dir}/f.conf", "text", []any{"one", "line a"}),
		single("prepend no newline", "file.prepend", false, "name", "{dir}/nonl.conf", "text", "# hi"),
		single("prepend header same", "file.prepend", false, "name", "{dir}/h.conf", "text", []any{"# managed", "# by salt"}, "header", true),
		single("prepend header differs", "file.prepend", false, "name", "{dir}/h.conf", "text", []any{"# managed", "# by gsalt"}, "header", true),
		single("prepend header existing text", "file.prepend", false, "name", "{dir}/h.conf", "text", "body", "header", true),
		single("prepend missing file", "file.prepend", false, "name", "{dir}/new.conf", "text", "first"),
		single("prepend missing file test", "file.prepend", true, "name", "{dir}/new.conf", "text", "first"),
		single("prepend makedirs", "file.prepend", false, "name", "{dir}/a/b/new.conf", "text", "first", "makedirs", true),
		single("prepend no dir", "file.prepend", false, "name", "{dir}/a/b/new.conf", "text", "first"),
		single("prepend relative", "file.prepend", false, "name", "f.conf", "text", "x"),
	}
	for i := range calls {
		calls[i].Files = files
	}
	runStateSuite(t, salttest.Suite{Name: "file_prepend", Calls: calls, Grains: payloadLinuxGrains()})
}
