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

// TestUserAbsentLive runs user.absent on a throwaway user
// (gsalt-test-ua1, created by useradd before each side) with Salt 3006
// and gsalt (gated on GSALT_SALT_SRC).
func TestUserAbsentLive(t *testing.T) {
	if _, err := exec.LookPath("useradd"); err != nil {
		t.Skip("no useradd")
	}
	u := "gsalt-test-ua1"
	cleanup := func() {
		_ = exec.Command("userdel", "-r", u).Run()
		_ = exec.Command("groupdel", u).Run()
	}
	cleanup()
	t.Cleanup(cleanup)
	calls := []salttest.Call{
		{Name: "add", Fun: "user.add", Args: []any{u}, Kwargs: []any{"uid", int64(47031), "usergroup", true, "createhome", false}},
		single("absent test", "user.absent", true, "name", u),
		single("absent", "user.absent", false, "name", u),
		single("absent again", "user.absent", false, "name", u),
	}
	runStateSuite(t, salttest.Suite{Name: "user_absent_live", Live: true, RealGrains: true, Calls: calls})
}
