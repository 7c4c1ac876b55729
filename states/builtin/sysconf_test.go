package builtin

import (
	"bytes"
	"os"
	"testing"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/modules/salttest"
)

// sysconfFakes stand in for lsmod, modprobe, rmmod and timedatectl: a
// fixed module list, module "nope" missing, module "busy" in use, and a
// hardware clock in local time. They change nothing on the machine.
var sysconfFakes = map[string]string{
	"lsmod": `printf 'Module                  Size  Used by\nloop                   40960  0\next4                  999424  1\njbd2                  167936  1 ext4\n'
`,
	"modprobe": `if [ "$1" = nope ]; then echo "modprobe: FATAL: Module nope not found in directory /lib/modules/x" >&2; exit 1; fi
`,
	"rmmod": `if [ "$1" = busy ] || [ "$1" = jbd2 ]; then echo "rmmod: ERROR: Module $1 is in use by: ext4" >&2; exit 1; fi
`,
	"timedatectl": `case "$1" in
set-local-rtc) exit 0 ;;
set-timezone) echo "refusing in tests" >&2; exit 1 ;;
esac
printf '               Local time: Fri 2026-11-27 20:00:00 UTC\n           Universal time: Fri 2026-11-27 20:00:00 UTC\n                Time zone: Etc/UTC (UTC, +0000)\n          RTC in local TZ: yes\n'
`,
}

// TestSysconfStateGolden compares kmod.present/absent, timezone.system
// and locale.present/system (mostly test=True: the real runs would change
// the machine) with Salt 3006 (testdata/golden/sysconf_state.json),
// against the stand-ins above. The timezone cases need /etc/localtime to
// be Etc/UTC, as on this machine and most CI containers.
func TestSysconfStateGolden(t *testing.T) {
	local, err1 := os.ReadFile("/etc/localtime")
	utc, err2 := os.ReadFile("/usr/share/zoneinfo/Etc/UTC")
	if err1 != nil || err2 != nil || !bytes.Equal(local, utc) {
		t.Skip("timezone golden cases need /etc/localtime to be Etc/UTC")
	}
	testutil.FakeCommands(t, sysconfFakes)
	calls := []salttest.Call{
		single("kmod present loaded", "kmod.present", false, "name", "loop"),
		single("kmod present loaded test", "kmod.present", true, "name", "ext4"),
		single("kmod present missing test", "kmod.present", true, "name", "dummy"),
		single("kmod present mods test", "kmod.present", true, "name", "x", "mods", []any{"loop", "dummy"}),
		single("kmod present unavailable", "kmod.present", false, "name", "no_such_module_zz"),
		single("kmod absent not loaded", "kmod.absent", false, "name", "dummy"),
		single("kmod absent not loaded mods", "kmod.absent", false, "name", "x", "mods", []any{"dummy", "other"}),
		single("kmod absent test", "kmod.absent", true, "name", "loop"),
		single("kmod absent no change", "kmod.absent", false, "name", "loop"),
		single("kmod absent in use", "kmod.absent", false, "name", "jbd2"),
		single("timezone same, rtc local", "timezone.system", false, "name", "Etc/UTC"),
		single("timezone same, rtc local test", "timezone.system", true, "name", "Etc/UTC"),
		single("timezone same, utc false", "timezone.system", false, "name", "Etc/UTC", "utc", false),
		single("timezone other test", "timezone.system", true, "name", "Europe/Paris"),
		single("timezone other test utc false", "timezone.system", true, "name", "Europe/Paris", "utc", false),
		single("timezone missing", "timezone.system", false, "name", "No/Such_Zone"),
		single("timezone missing test", "timezone.system", true, "name", "No/Such_Zone"),
		single("locale present", "locale.present", false, "name", "C.UTF-8"),
		single("locale present test", "locale.present", true, "name", "C.utf8"),
		single("locale missing test", "locale.present", true, "name", "xx_YY.UTF-8"),
		single("locale system test", "locale.system", true, "name", "xx_YY.UTF-8"),
	}
	runStateSuite(t, salttest.Suite{Name: "sysconf_state", Calls: calls, Grains: payloadLinuxGrains()})
}
