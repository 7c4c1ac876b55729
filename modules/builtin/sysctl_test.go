package builtin_test

import (
	"github.com/gsalt/gsalt/modules/salttest"
	"os"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/wire/payload"
)

// TestSysctlGolden compares sysctl.show on configuration files with Salt
// 3006 (testdata/golden/sysctl.json).
func TestSysctlGolden(t *testing.T) {
	conf := map[string]string{"sysctl.conf": "# comment = x\nnet.ipv4.ip_forward=1\n  vm.swappiness = 10 \nkernel.x =a b  \nnoequals\n;semi = 1\n#vm.y=2\nempty=\n"}
	runSuite(t, salttest.Suite{Name: "sysctl", Grains: linuxGrains(), Calls: []salttest.Call{
		{Name: "show config", Fun: "sysctl.show", Kwargs: []any{"config_file", "{dir}/sysctl.conf"}, Files: conf},
		{Name: "show config missing", Fun: "sysctl.show", Kwargs: []any{"config_file", "{dir}/nope.conf"}},
	}})
}

// TestSysctlLive runs sysctl.get, assign and persist against this
// machine's kernel, beside real Salt (gated on GSALT_SALT_SRC): values are
// written back unchanged.
func TestSysctlLive(t *testing.T) {
	b, err := os.ReadFile("/proc/sys/vm/swappiness")
	if err != nil {
		t.Skip("no /proc/sys/vm/swappiness")
	}
	cur := strings.TrimSpace(string(b))
	if f, err := os.OpenFile("/proc/sys/vm/swappiness", os.O_WRONLY, 0); err != nil {
		t.Skip("/proc/sys is not writable here")
	} else {
		_ = f.Close()
	}
	confSet := map[string]string{"s.conf": "# c\nvm.swappiness = " + cur + "\nother = 1\n"}
	confOther := map[string]string{"s.conf": "vm.swappiness=" + cur + "9\nother = 1"}
	runSuite(t, salttest.Suite{Name: "sysctl_live", Live: true, RealGrains: true, Calls: []salttest.Call{
		{Name: "get", Fun: "sysctl.get", Args: []any{"kernel.ostype"}},
		{Name: "get slash", Fun: "sysctl.get", Args: []any{"vm/swappiness"}},
		{Name: "get tabs", Fun: "sysctl.get", Args: []any{"net.ipv4.tcp_rmem"}},
		{Name: "get missing", Fun: "sysctl.get", Args: []any{"vm.nope"}},
		{Name: "assign same", Fun: "sysctl.assign", Args: []any{"vm.swappiness", cur}},
		{Name: "assign missing", Fun: "sysctl.assign", Args: []any{"vm.nope", "1"}},
		{Name: "assign invalid", Fun: "sysctl.assign", Args: []any{"vm.swappiness", "notanumber"}},
		{Name: "persist already set", Fun: "sysctl.persist", Args: []any{"vm.swappiness", cur}, Kwargs: []any{"config", "{dir}/s.conf"}, Files: confSet},
		{Name: "persist edit", Fun: "sysctl.persist", Args: []any{"vm.swappiness", cur}, Kwargs: []any{"config", "{dir}/s.conf"}, Files: confOther},
		{Name: "persist new file", Fun: "sysctl.persist", Args: []any{"vm.swappiness", cur}, Kwargs: []any{"config", "{dir}/sub/new.conf"}},
		{Name: "show has keys", Fun: "sysctl.show"},
	}, Normalize: func(name string, v any) any {
		if m, ok := v.(*payload.Map); ok && name == "show has keys" {
			// Live values change (entropy, counters): compare names of a
			// stable subset.
			return m.Has("kernel.ostype") && m.Has("vm.swappiness") && m.Str("kernel.ostype") == "Linux"
		}
		return v
	}})
}

// linuxGrains are the grains Salt's Linux-only modules need to load.
func linuxGrains() *payload.Map {
	return payload.NewMap("kernel", "Linux", "os", "Debian", "os_family", "Debian", "osrelease", "12", "osmajorrelease", int64(12), "init", "systemd")
}
