package builtin

import (
	"os/exec"
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
)

// TestGroupStatesLive runs group.present and group.absent on throwaway
// groups (gsalt-test-*) with Salt 3006 and then gsalt, comparing every
// ret (gated on GSALT_SALT_SRC; needs root and groupadd).
func TestGroupStatesLive(t *testing.T) {
	if _, err := exec.LookPath("groupadd"); err != nil {
		t.Skip("no groupadd")
	}
	g := "gsalt-test-sg1"
	cleanup := func() { _ = exec.Command("groupdel", g).Run() }
	cleanup()
	t.Cleanup(cleanup)
	calls := []salttest.Call{
		single("absent missing", "group.absent", false, "name", g),
		single("present test", "group.present", true, "name", g, "gid", int64(47021)),
		single("present gid taken", "group.present", false, "name", g, "gid", int64(0)),
		single("present create", "group.present", false, "name", g, "gid", int64(47021), "members", []any{"root"}),
		single("present same", "group.present", false, "name", g, "gid", int64(47021), "members", []any{"root"}),
		single("present change test", "group.present", true, "name", g, "gid", int64(47022), "addusers", []any{"daemon"}),
		single("present change", "group.present", false, "name", g, "gid", int64(47022), "addusers", []any{"daemon"}),
		single("present delusers", "group.present", false, "name", g, "delusers", []any{"daemon", "bin"}),
		single("present conflict", "group.present", false, "name", g, "members", []any{"a"}, "addusers", []any{"b"}),
		single("present same add del", "group.present", false, "name", g, "addusers", []any{"a"}, "delusers", []any{"a"}),
		single("present members", "group.present", false, "name", g, "members", []any{"daemon", "root"}),
		single("present one member", "group.present", false, "name", g, "members", []any{"root"}),
		single("present empty members", "group.present", false, "name", g, "members", []any{}),
		single("present bad gid", "group.present", false, "name", g, "gid", "abc"),
		single("absent test", "group.absent", true, "name", g),
		single("absent", "group.absent", false, "name", g),
	}
	runStateSuite(t, salttest.Suite{Name: "group_state_live", Live: true, RealGrains: true, Calls: calls})
}
