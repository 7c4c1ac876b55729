package builtin_test

import (
	"github.com/gsalt/gsalt/modules/salttest"
	"os/exec"
	"testing"
)

var userRootFiles = map[string]string{
	"etc/passwd": "toor:x:0:0:toor:/root:/bin/bash\nsvcx:x:1:1:svcx:/usr/sbin:/usr/sbin/nologin\nalice:x:1000:1000:Alice Liddell,Room 1,555-1,555-2,other stuff, more:/home/alice:/bin/zsh\nbob:x:1001:100::/home/bob:/bin/sh\n",
	"etc/group":  "toor:x:0:\nsvcx:x:1:\nusers:x:100:alice,bob\nalice:x:1000:\nstaff:x:50:bob\n",
}

// TestUserGroupGolden compares the user and group readers on a root
// directory's passwd and group files with Salt 3006 (the names are not
// system users: group lists come from the system's groups, as in Salt)
// (testdata/golden/user_group.json).
func TestUserGroupGolden(t *testing.T) {
	calls := []salttest.Call{
		{Name: "user.info", Fun: "user.info", Args: []any{"alice"}, Kwargs: []any{"root", "{dir}"}},
		{Name: "user.info uid 0", Fun: "user.info", Args: []any{"toor"}, Kwargs: []any{"root", "{dir}"}},
		{Name: "user.info missing", Fun: "user.info", Args: []any{"nobody-here"}, Kwargs: []any{"root", "{dir}"}},
		{Name: "user.list_users", Fun: "user.list_users", Kwargs: []any{"root", "{dir}"}},
		{Name: "user.getent", Fun: "user.getent", Kwargs: []any{"root", "{dir}"}},
		{Name: "group.info", Fun: "group.info", Args: []any{"users"}, Kwargs: []any{"root", "{dir}"}},
		{Name: "group.info empty", Fun: "group.info", Args: []any{"alice"}, Kwargs: []any{"root", "{dir}"}},
		{Name: "group.info missing", Fun: "group.info", Args: []any{"nope"}, Kwargs: []any{"root", "{dir}"}},
		{Name: "group.getent", Fun: "group.getent", Kwargs: []any{"root", "{dir}"}},
		{Name: "user.get_loginclass", Fun: "user.get_loginclass", Args: []any{"alice"}},
		{Name: "user.chloginclass", Fun: "user.chloginclass", Args: []any{"alice", "staff"}, Kwargs: []any{"root", "{dir}"}},
	}
	for i := range calls {
		calls[i].Files = userRootFiles
	}
	runSuite(t, salttest.Suite{Name: "user_group", Calls: calls, Grains: linuxGrains()})
}

// TestUserGroupLive adds, changes and removes throwaway users and groups
// (gsalt-test-*) on this machine with Salt 3006 and then with gsalt, and
// compares every step (gated on GSALT_SALT_SRC; needs root and useradd).
func TestUserGroupLive(t *testing.T) {
	if _, err := exec.LookPath("useradd"); err != nil {
		t.Skip("no useradd")
	}
	cleanup := func() {
		_ = exec.Command("userdel", "-r", "gsalt-test-u1").Run()
		_ = exec.Command("groupdel", "gsalt-test-g1").Run()
		_ = exec.Command("groupdel", "gsalt-test-u1").Run()
	}
	cleanup()
	t.Cleanup(cleanup)
	u, g := "gsalt-test-u1", "gsalt-test-g1"
	calls := []salttest.Call{
		{Name: "group.add", Fun: "group.add", Args: []any{g}, Kwargs: []any{"gid", int64(47011)}},
		{Name: "group.add again", Fun: "group.add", Args: []any{g}},
		{Name: "group.info", Fun: "group.info", Args: []any{g}},
		{Name: "user.add", Fun: "user.add", Args: []any{u}, Kwargs: []any{"uid", int64(47010), "shell", "/bin/sh", "fullname", "Test User", "groups", []any{g}, "createhome", false, "home", "/nonexistent/gsalt-test"}},
		{Name: "user.add again", Fun: "user.add", Args: []any{u}},
		{Name: "user.info", Fun: "user.info", Args: []any{u}},
		{Name: "user.list_groups", Fun: "user.list_groups", Args: []any{u}},
		{Name: "user.primary_group", Fun: "user.primary_group", Args: []any{u}},
		{Name: "user.chshell", Fun: "user.chshell", Args: []any{u, "/bin/bash"}},
		{Name: "user.chshell same", Fun: "user.chshell", Args: []any{u, "/bin/bash"}},
		{Name: "user.chuid string", Fun: "user.chuid", Args: []any{u, "47012"}},
		{Name: "user.chfullname", Fun: "user.chfullname", Args: []any{u, "Other Name"}},
		{Name: "user.chworkphone", Fun: "user.chworkphone", Args: []any{u, "555"}},
		{Name: "user.chhome", Fun: "user.chhome", Args: []any{u, "/nonexistent/other"}},
		{Name: "user.chgroups", Fun: "user.chgroups", Args: []any{u, ""}},
		{Name: "group.adduser", Fun: "group.adduser", Args: []any{g, u}},
		{Name: "group.info member", Fun: "group.info", Args: []any{g}},
		{Name: "group.deluser", Fun: "group.deluser", Args: []any{g, u}},
		{Name: "group.deluser absent", Fun: "group.deluser", Args: []any{g, u}},
		{Name: "group.members", Fun: "group.members", Args: []any{g, "root," + u}},
		{Name: "group.info members", Fun: "group.info", Args: []any{g}},
		{Name: "group.chgid", Fun: "group.chgid", Args: []any{g, int64(47013)}},
		{Name: "user.chshell missing", Fun: "user.chshell", Args: []any{"gsalt-test-nope", "/bin/sh"}},
		{Name: "user.info after", Fun: "user.info", Args: []any{u}},
		{Name: "user.delete", Fun: "user.delete", Args: []any{u}, Kwargs: []any{"remove", true}},
		{Name: "user.delete again", Fun: "user.delete", Args: []any{u}},
		{Name: "group.delete", Fun: "group.delete", Args: []any{g}},
		{Name: "group.delete usergroup", Fun: "group.delete", Args: []any{u}},
		{Name: "user.info gone", Fun: "user.info", Args: []any{u}},
	}
	runSuite(t, salttest.Suite{Name: "user_group_live", Live: true, RealGrains: true, Calls: calls})
}
