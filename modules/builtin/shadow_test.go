package builtin_test

import (
	"os"
	"os/exec"
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
)

var shadowRootFiles = map[string]string{
	"etc/passwd": "root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000::/home/alice:/bin/sh\nbob:x:1001:1001::/home/bob:/bin/sh\ncarol:x:1002:1002::/home/carol:/bin/sh\n",
	"etc/group":  "root:x:0:\nalice:x:1000:\nbob:x:1001:\ncarol:x:1002:\n",
	"etc/shadow": "root:*:19000:0:99999:7:::\nalice:$6$abc$MtSdWSZbhct2oe.SOqOUM2M/GA/uj5.vyVtJgRHgKi9uqXuWuJqOYE7H/YlsYGVg/YYzDV0xt3fEIwYt580.5.:19500:1:90:14:30:20000:\nbob:!$6$x$y:19501::::::\ncarol:!:19502:0:99999:7:::\n",
}

// TestShadowGolden compares the shadow module on a root directory's
// shadow file (reads, chage/passwd -R changes and the files they leave)
// and gen_password with fixed salts with Salt 3006
// (testdata/golden/shadow.json).
func TestShadowGolden(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("shadow golden: needs root (chage -R and passwd -R chroot)")
	}
	root := []any{"root", "{dir}"}
	calls := []salttest.Call{
		{Name: "info", Fun: "shadow.info", Args: []any{"alice"}, Kwargs: root},
		{Name: "info empty fields", Fun: "shadow.info", Args: []any{"bob"}, Kwargs: root},
		{Name: "info missing", Fun: "shadow.info", Args: []any{"nobody-here"}, Kwargs: root},
		{Name: "list_users", Fun: "shadow.list_users", Kwargs: root},
		{Name: "default_hash", Fun: "shadow.default_hash"},
		{Name: "set_mindays", Fun: "shadow.set_mindays", Args: []any{"alice", int64(3)}, Kwargs: root},
		{Name: "set_mindays same", Fun: "shadow.set_mindays", Args: []any{"alice", int64(1)}, Kwargs: root},
		{Name: "set_mindays string", Fun: "shadow.set_mindays", Args: []any{"alice", "5"}, Kwargs: root},
		{Name: "set_maxdays", Fun: "shadow.set_maxdays", Args: []any{"alice", int64(60)}, Kwargs: root},
		{Name: "set_warndays", Fun: "shadow.set_warndays", Args: []any{"alice", int64(3)}, Kwargs: root},
		{Name: "set_inactdays", Fun: "shadow.set_inactdays", Args: []any{"alice", int64(9)}, Kwargs: root},
		{Name: "set_date", Fun: "shadow.set_date", Args: []any{"alice", int64(0)}, Kwargs: root},
		{Name: "set_expire", Fun: "shadow.set_expire", Args: []any{"alice", int64(-1)}, Kwargs: root},
		{Name: "set_expire missing user", Fun: "shadow.set_expire", Args: []any{"nobody-here", int64(5)}, Kwargs: root},
		{Name: "lock_password", Fun: "shadow.lock_password", Args: []any{"alice"}, Kwargs: root},
		{Name: "lock_password locked", Fun: "shadow.lock_password", Args: []any{"bob"}, Kwargs: root},
		{Name: "unlock_password", Fun: "shadow.unlock_password", Args: []any{"bob"}, Kwargs: root},
		{Name: "unlock_password unlocked", Fun: "shadow.unlock_password", Args: []any{"alice"}, Kwargs: root},
		{Name: "unlock_password missing", Fun: "shadow.unlock_password", Args: []any{"nobody-here"}, Kwargs: root},
		{Name: "del_password", Fun: "shadow.del_password", Args: []any{"alice"}, Kwargs: root},
		{Name: "gen_password sha512", Fun: "shadow.gen_password", Args: []any{"I_am_password"}, Kwargs: []any{"crypt_salt", "I_am_salt"}},
		{Name: "gen_password sha256", Fun: "shadow.gen_password", Args: []any{"I_am_password"}, Kwargs: []any{"crypt_salt", "I_am_salt", "algorithm", "sha256"}},
		{Name: "gen_password md5", Fun: "shadow.gen_password", Args: []any{"pw"}, Kwargs: []any{"crypt_salt", "abcdefghij", "algorithm", "md5"}},
		{Name: "gen_password rounds", Fun: "shadow.gen_password", Args: []any{"pw"}, Kwargs: []any{"crypt_salt", "rounds=2000$saltsalt"}},
		{Name: "gen_password bad salt", Fun: "shadow.gen_password", Args: []any{"pw"}, Kwargs: []any{"crypt_salt", "a:b"}},
		{Name: "gen_password bad algorithm", Fun: "shadow.gen_password", Args: []any{"pw"}, Kwargs: []any{"algorithm", "sha1"}},
	}
	for i := range calls {
		calls[i].Files = shadowRootFiles
	}
	runSuite(t, salttest.Suite{Name: "shadow", Calls: calls, Grains: linuxGrains()})
}

// TestShadowLive sets and reads the password and ageing of a throwaway
// user (gsalt-test-sh1) on this machine with Salt 3006 and then gsalt
// (gated on GSALT_SALT_SRC; needs root and useradd).
func TestShadowLive(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("shadow live: needs root")
	}
	if _, err := exec.LookPath("useradd"); err != nil {
		t.Skip("no useradd")
	}
	u := "gsalt-test-sh1"
	cleanup := func() {
		_ = exec.Command("userdel", "-r", u).Run()
		_ = exec.Command("groupdel", u).Run()
	}
	cleanup()
	t.Cleanup(cleanup)
	hash := "$6$abc$MtSdWSZbhct2oe.SOqOUM2M/GA/uj5.vyVtJgRHgKi9uqXuWuJqOYE7H/YlsYGVg/YYzDV0xt3fEIwYt580.5."
	calls := []salttest.Call{
		{Name: "user.add", Fun: "user.add", Args: []any{u}, Kwargs: []any{"createhome", false, "usergroup", true}},
		{Name: "info new", Fun: "shadow.info", Args: []any{u}},
		{Name: "set_password", Fun: "shadow.set_password", Args: []any{u, hash}},
		{Name: "set_password usermod", Fun: "shadow.set_password", Args: []any{u, hash}, Kwargs: []any{"use_usermod", true}},
		{Name: "set_password missing", Fun: "shadow.set_password", Args: []any{"gsalt-test-nope", hash}},
		{Name: "set_maxdays", Fun: "shadow.set_maxdays", Args: []any{u, int64(45)}},
		{Name: "set_date", Fun: "shadow.set_date", Args: []any{u, int64(19000)}},
		{Name: "lock_password", Fun: "shadow.lock_password", Args: []any{u}},
		{Name: "unlock_password", Fun: "shadow.unlock_password", Args: []any{u}},
		{Name: "del_password", Fun: "shadow.del_password", Args: []any{u}},
		{Name: "info", Fun: "shadow.info", Args: []any{u}},
		{Name: "user.delete", Fun: "user.delete", Args: []any{u}},
		{Name: "info gone", Fun: "shadow.info", Args: []any{u}},
	}
	runSuite(t, salttest.Suite{Name: "shadow_live", Live: true, RealGrains: true, Calls: calls})
}
