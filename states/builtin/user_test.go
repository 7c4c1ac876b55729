package builtin

import (
	"os"
	"os/exec"
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
)

// TestUserPresentLive runs user.present through creation, test=True,
// updates (GECOS, shell, groups, password, ageing, locking, home
// creation), refused and allowed uid changes and its error comments on
// throwaway users and groups (gsalt-test-up*) with Salt 3006 and then
// gsalt, comparing every ret (gated on GSALT_SALT_SRC; needs root).
func TestUserPresentLive(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("user.present live: needs root")
	}
	if _, err := exec.LookPath("useradd"); err != nil {
		t.Skip("no useradd")
	}
	u, g, g2 := "gsalt-test-up1", "gsalt-test-upg1", "gsalt-test-upg2"
	cleanup := func() {
		_ = exec.Command("userdel", "-r", u).Run()
		for _, x := range []string{u, g, g2} {
			_ = exec.Command("groupdel", x).Run()
		}
	}
	cleanup()
	t.Cleanup(cleanup)
	h1 := "$6$saltA$1ESZzTtrDyR5aTyvZhRMD495X.FapL0iJJvXnaJwJ/8qftaIPs2KxM1KRzMHpAPNLtkuvwws0IrtjwZ9piYC41"
	h2 := "$6$saltB$lNuT3ah4UgB7FEcrIpMA6A8rfF4p7W7u5sCHlaszjwyuYQCEZLgrg3UTtpY.aXg58obGbHYKvRNl1kihb2zqa0"
	base := []any{"name", u, "uid", int64(47041), "gid", int64(47041), "createhome", false, "home", "/nonexistent/gsalt-up1", "shell", "/bin/sh"}
	with := func(kv ...any) []any { return append(append([]any{}, base...), kv...) }
	calls := []salttest.Call{
		{Name: "group.add own", Fun: "group.add", Args: []any{u}, Kwargs: []any{"gid", int64(47041)}},
		{Name: "group.add g", Fun: "group.add", Args: []any{g}, Kwargs: []any{"gid", int64(47042)}},
		{Name: "group.add g2", Fun: "group.add", Args: []any{g2}, Kwargs: []any{"gid", int64(47043)}},
		single("create test", "user.present", true, with("fullname", "Test User")...),
		single("missing group", "user.present", false, with("groups", []any{g, "gsalt-test-nogroup"})...),
		single("comma in fullname", "user.present", false, with("fullname", "A, B")...),
		single("create", "user.present", false, with("fullname", "Test User", "roomnumber", int64(12), "groups", []any{g}, "password", h1,
			"date", int64(19000), "mindays", int64(1), "maxdays", int64(90), "warndays", int64(7), "inactdays", int64(3), "expire", int64(30000))...),
		single("same", "user.present", false, with("fullname", "Test User", "roomnumber", "12", "groups", []any{g}, "password", h1,
			"mindays", int64(1), "maxdays", int64(90))...),
		single("change test", "user.present", true, with("fullname", "Other", "shell", "/bin/bash", "groups", []any{g2}, "password", h2, "mindays", int64(2))...),
		single("change", "user.present", false, with("fullname", "Other", "shell", "/bin/bash", "groups", []any{g2}, "password", h2, "mindays", int64(2), "workphone", "555")...),
		single("keep password", "user.present", false, with("password", h1, "enforce_password", false)...),
		single("optional groups", "user.present", false, with("optional_groups", []any{g, "gsalt-test-nogroup"}, "remove_groups", false)...),
		single("groups empty", "user.present", false, with("groups", []any{})...),
		single("uid change refused", "user.present", false, "name", u, "uid", int64(47044)),
		single("uid and gid change refused", "user.present", false, "name", u, "uid", int64(47044), "gid", g),
		single("uid change", "user.present", false, "name", u, "uid", int64(47044), "allow_uid_change", true),
		single("lock", "user.present", false, "name", u, "password_lock", true),
		single("lock again", "user.present", false, "name", u, "password_lock", true),
		single("unlock test", "user.present", true, "name", u, "password_lock", false),
		single("unlock", "user.present", false, "name", u, "password_lock", false),
		single("hash_password", "user.present", false, "name", u, "password", "secret", "hash_password", true),
		single("hash_password same", "user.present", false, "name", u, "password", "secret", "hash_password", true),
		single("empty_password", "user.present", false, "name", u, "empty_password", true),
		single("createhome", "user.present", false, "name", u, "home", "{dir}/home", "createhome", true),
		single("absent", "user.absent", false, "name", u, "purge", true),
		single("create empty password usergroup", "user.present", false, "name", u, "uid", int64(47041), "usergroup", true,
			"createhome", false, "empty_password", true, "system", true, "home", "/nonexistent/gsalt-up1"),
		single("absent again", "user.absent", false, "name", u),
		{Name: "group.delete own", Fun: "group.delete", Args: []any{u}},
		{Name: "group.delete g", Fun: "group.delete", Args: []any{g}},
		{Name: "group.delete g2", Fun: "group.delete", Args: []any{g2}},
	}
	runStateSuite(t, salttest.Suite{Name: "user_present_live", Live: true, RealGrains: true, Calls: calls})
}
