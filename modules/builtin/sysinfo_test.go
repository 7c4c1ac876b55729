package builtin_test

import (
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
)

// TestTimezoneLocaleKmodLive compares the timezone, locale and kmod
// readers with Salt 3006's on this machine (gated on GSALT_SALT_SRC).
func TestTimezoneLocaleKmodLive(t *testing.T) {
	calls := []salttest.Call{
		{Name: "timezone.get_zone", Fun: "timezone.get_zone"},
		{Name: "timezone.get_zonecode", Fun: "timezone.get_zonecode"},
		{Name: "timezone.get_offset", Fun: "timezone.get_offset"},
		{Name: "locale.list_avail", Fun: "locale.list_avail"},
		{Name: "locale.get_locale", Fun: "locale.get_locale"},
		{Name: "kmod.available", Fun: "kmod.available"},
		{Name: "kmod.check_available", Fun: "kmod.check_available", Args: []any{"ext4"}},
		{Name: "kmod.lsmod", Fun: "kmod.lsmod"},
		{Name: "kmod.is_loaded", Fun: "kmod.is_loaded", Args: []any{"no_such_mod"}},
	}
	runSuite(t, salttest.Suite{Name: "sysinfo_live", Live: true, RealGrains: true, Calls: calls})
}
