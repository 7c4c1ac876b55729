package builtin

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/salttest"
	"github.com/gsalt/gsalt/wire/payload"
)

// cronStateTab is a crontab as Salt writes it.
const cronStateTab = `MAILTO=x
# Lines below here are managed by Salt, do not edit
PATH=/bin
# SALT_CRON_IDENTIFIER:/usr/bin/job
0 1 * * * /usr/bin/job
# note SALT_CRON_IDENTIFIER:named
*/10 * * * * /usr/bin/other
# SALT_CRON_IDENTIFIER:/usr/bin/boot
@reboot /usr/bin/boot
`

// TestCronStateGolden compares cron.present/absent/env_present/env_absent
// and cron.file (and test=True) with Salt 3006
// (testdata/golden/cron_state.json). The crontab is {dir}/tab behind a
// crontab stand-in, so the user is that path.
func TestCronStateGolden(t *testing.T) {
	testutil.FakeCrontab(t)
	u := "{dir}/tab"
	calls := []salttest.Call{
		single("present new", "cron.present", false, "name", "/bin/new", "user", u, "minute", 5, "hour", 3),
		single("present new test", "cron.present", true, "name", "/bin/new", "user", u, "minute", 5, "hour", 3),
		single("present same", "cron.present", false, "name", "/usr/bin/job", "user", u, "minute", 0, "hour", 1),
		single("present same test", "cron.present", true, "name", "/usr/bin/job", "user", u, "minute", "0", "hour", "1"),
		single("present update", "cron.present", false, "name", "/usr/bin/job", "user", u, "minute", 30, "hour", 1),
		single("present update test", "cron.present", true, "name", "/usr/bin/job", "user", u, "minute", 30, "hour", 1),
		single("present identifier cmd change", "cron.present", false, "name", "  /usr/bin/other --flag ", "user", u, "minute", "*/10", "identifier", "named", "comment", "note"),
		single("present comment test", "cron.present", true, "name", "/usr/bin/other", "user", u, "minute", "*/10", "identifier", "named", "comment", "changed"),
		single("present commented", "cron.present", false, "name", "/usr/bin/job", "user", u, "minute", 0, "hour", 1, "commented", true),
		single("present special new", "cron.present", false, "name", "/bin/s", "user", u, "special", "@hourly"),
		single("present special same test", "cron.present", true, "name", "/usr/bin/boot", "user", u, "special", "@reboot"),
		single("present special update", "cron.present", false, "name", "/usr/bin/boot", "user", u, "special", "@daily"),
		single("present fails", "cron.present", false, "name", "/bin/bad", "user", u, "minute", 99),
		single("absent", "cron.absent", false, "name", "/usr/bin/job", "user", u),
		single("absent test", "cron.absent", true, "name", "/usr/bin/job", "user", u),
		single("absent missing", "cron.absent", false, "name", "/bin/none", "user", u),
		single("absent missing test", "cron.absent", true, "name", "/bin/none", "user", u),
		single("absent identifier", "cron.absent", false, "name", "whatever", "identifier", "named", "user", u),
		single("absent special", "cron.absent", false, "name", "/usr/bin/boot", "special", "@reboot", "user", u),
		single("env_present new", "cron.env_present", false, "name", "SHELL", "value", "/bin/bash", "user", u),
		single("env_present new test", "cron.env_present", true, "name", "SHELL", "value", "/bin/bash", "user", u),
		single("env_present same", "cron.env_present", false, "name", "PATH", "value", "/bin", "user", u),
		single("env_present same test", "cron.env_present", true, "name", "PATH", "value", "/bin", "user", u),
		single("env_present update", "cron.env_present", false, "name", "PATH", "value", "/usr/bin:/bin", "user", u),
		single("env_present update test", "cron.env_present", true, "name", "PATH", "value", "/usr/bin:/bin", "user", u),
		single("env_present empty", "cron.env_present", false, "name", "EMPTY", "user", u),
		single("env_absent", "cron.env_absent", false, "name", "PATH", "user", u),
		single("env_absent test", "cron.env_absent", true, "name", "PATH", "user", u),
		single("env_absent missing", "cron.env_absent", false, "name", "NOPE", "user", u),
		single("env_absent missing test", "cron.env_absent", true, "name", "NOPE", "user", u),
		single("file baduser", "cron.file", false, "name", "salt://tab.txt", "user", "no_such_user_zz"),
	}
	for i := range calls {
		calls[i].Files = map[string]string{"tab": cronStateTab}
	}
	runStateSuite(t, salttest.Suite{Name: "cron_state", Calls: calls, Grains: payloadLinuxGrains(),
		Srv: map[string]string{"tab.txt": "@daily /bin/from-master\n"}})
}

// TestCronFileRealCrontab runs cron.file (test=True, then for real, then
// again) from a local source onto the real crontab of the user nobody,
// when running as root with crontab(1) installed.
func TestCronFileRealCrontab(t *testing.T) {
	if _, err := exec.LookPath("crontab"); err != nil || os.Geteuid() != 0 {
		t.Skip("needs root and crontab(1)")
	}
	const user = "nobody"
	_ = exec.Command("crontab", "-u", user, "-r").Run()
	t.Cleanup(func() { _ = exec.Command("crontab", "-u", user, "-r").Run() })
	src := filepath.Join(t.TempDir(), "tab")
	body := "# from a file\n@daily /bin/true\n"
	if err := os.WriteFile(src, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	reg := suiteRegistry(t)
	run := func(test bool) *payload.Map {
		t.Helper()
		env := &modules.Env{ID: "cron-test", Registry: reg, Opts: payload.NewMap("file_client", "local", "cachedir", t.TempDir()),
			Grains: payloadLinuxGrains(), Pillar: &payload.Map{}}
		kw := payload.NewMap("name", src, "user", user, "test", test, "__kwarg__", true)
		res := reg.Execute(context.Background(), modules.Binder{}, env, "state.single", []any{"cron.file", kw}, nil)
		m, ok := stateRet("", res.Return).(*payload.Map)
		if !ok {
			t.Fatalf("state.single returned %v", res.Return)
		}
		return m
	}
	cases := []struct {
		test    bool
		result  any
		comment string
	}{
		{true, nil, "The following values are set to be changed:\ndiff: --- \n+++ \n@@ -1 +1,2 @@\n-\n+# from a file\n+@daily /bin/true\n\n"},
		{false, true, "Crontab for user nobody was updated"},
		{false, true, "Crontab for user nobody is in the correct state"},
	}
	for i, c := range cases {
		r := run(c.test)
		if res, _ := r.Get("result"); res != c.result || r.Str("comment") != c.comment {
			t.Fatalf("step %d: result %v comment %q, want %v %q", i, res, r.Str("comment"), c.result, c.comment)
		}
	}
	out, err := exec.Command("crontab", "-u", user, "-l").Output()
	if err != nil || string(out) != body {
		t.Fatalf("crontab -l = %q, %v; want %q", out, err, body)
	}
}
