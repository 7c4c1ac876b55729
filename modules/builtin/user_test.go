package builtin_test

import (
	"os/exec"
	"testing"
)

var userRootFiles = map[string]string{
	"etc/passwd": "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\nalice:x:1000:1000:Alice Liddell,Room 1,555-1,555-2,other stuff, more:/home/alice:/bin/zsh\nbob:x:1001:100::/home/bob:/bin/sh\n",
	"etc/group":  "root:x:0:\ndaemon:x:1:\nusers:x:100:alice,bob\nalice:x:1000:\nstaff:x:50:bob\n",
}

// TestUserGroupGolden compares the user and group readers on a root
// directory's passwd and group files with Salt 3006
// (testdata/golden/user_group.json).
func TestUserGroupGolden(t *testing.T) {
	calls := []sCall{
		{name: "user.info", fun: "user.info", args: []any{"alice"}, kwargs: []any{"root", "{dir}"}},
		{name: "user.info root", fun: "user.info", args: []any{"root"}, kwargs: []any{"root", "{dir}"}},
		{name: "user.info missing", fun: "user.info", args: []any{"nobody-here"}, kwargs: []any{"root", "{dir}"}},
		{name: "user.list_users", fun: "user.list_users", kwargs: []any{"root", "{dir}"}},
		{name: "user.getent", fun: "user.getent", kwargs: []any{"root", "{dir}"}},
		{name: "group.info", fun: "group.info", args: []any{"users"}, kwargs: []any{"root", "{dir}"}},
		{name: "group.info empty", fun: "group.info", args: []any{"alice"}, kwargs: []any{"root", "{dir}"}},
		{name: "group.info missing", fun: "group.info", args: []any{"nope"}, kwargs: []any{"root", "{dir}"}},
		{name: "group.getent", fun: "group.getent", kwargs: []any{"root", "{dir}"}},
		{name: "user.list_groups root", fun: "user.list_groups", args: []any{"root"}},
	}
	for i := range calls {
		calls[i].files = userRootFiles
	}
	runSuite(t, sSuite{name: "user_group", calls: calls, grains: linuxGrains()})
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
	calls := []sCall{
		{name: "group.add", fun: "group.add", args: []any{g}, kwargs: []any{"gid", int64(47011)}},
		{name: "group.add again", fun: "group.add", args: []any{g}},
		{name: "group.info", fun: "group.info", args: []any{g}},
		{name: "user.add", fun: "user.add", args: []any{u}, kwargs: []any{"uid", int64(47010), "shell", "/bin/sh", "fullname", "Test User", "groups", []any{g}, "createhome", false, "home", "/nonexistent/gsalt-test"}},
		{name: "user.add again", fun: "user.add", args: []any{u}},
		{name: "user.info", fun: "user.info", args: []any{u}},
		{name: "user.list_groups", fun: "user.list_groups", args: []any{u}},
		{name: "user.primary_group", fun: "user.primary_group", args: []any{u}},
		{name: "user.chshell", fun: "user.chshell", args: []any{u, "/bin/bash"}},
		{name: "user.chshell same", fun: "user.chshell", args: []any{u, "/bin/bash"}},
		{name: "user.chuid string", fun: "user.chuid", args: []any{u, "47012"}},
		{name: "user.chfullname", fun: "user.chfullname", args: []any{u, "Other Name"}},
		{name: "user.chworkphone", fun: "user.chworkphone", args: []any{u, "555"}},
		{name: "user.chhome", fun: "user.chhome", args: []any{u, "/nonexistent/other"}},
		{name: "user.chgroups", fun: "user.chgroups", args: []any{u, ""}},
		{name: "group.adduser", fun: "group.adduser", args: []any{g, u}},
		{name: "group.info member", fun: "group.info", args: []any{g}},
		{name: "group.deluser", fun: "group.deluser", args: []any{g, u}},
		{name: "group.deluser absent", fun: "group.deluser", args: []any{g, u}},
		{name: "group.members", fun: "group.members", args: []any{g, "root," + u}},
		{name: "group.info members", fun: "group.info", args: []any{g}},
		{name: "group.chgid", fun: "group.chgid", args: []any{g, int64(47013)}},
		{name: "user.chshell missing", fun: "user.chshell", args: []any{"gsalt-test-nope", "/bin/sh"}},
		{name: "user.info after", fun: "user.info", args: []any{u}},
		{name: "user.delete", fun: "user.delete", args: []any{u}, kwargs: []any{"remove", true}},
		{name: "user.delete again", fun: "user.delete", args: []any{u}},
		{name: "group.delete", fun: "group.delete", args: []any{g}},
		{name: "group.delete usergroup", fun: "group.delete", args: []any{u}},
		{name: "user.info gone", fun: "user.info", args: []any{u}},
	}
	runSuite(t, sSuite{name: "user_group_live", live: true, realGrains: true, calls: calls})
}
