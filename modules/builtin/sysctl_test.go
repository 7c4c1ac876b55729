package builtin_test

import (
	"os"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/wire/payload"
)

// TestSysctlGolden compares sysctl.show on configuration files with Salt
// 3006 (testdata/golden/sysctl.json).
func TestSysctlGolden(t *testing.T) {
	conf := map[string]string{"sysctl.conf": "# comment = x\nnet.ipv4.ip_forward=1\n  vm.swappiness = 10 \nkernel.x =a b  \nnoequals\n;semi = 1\n#vm.y=2\nempty=\n"}
	runSuite(t, sSuite{name: "sysctl", grains: linuxGrains(), calls: []sCall{
		{name: "show config", fun: "sysctl.show", kwargs: []any{"config_file", "{dir}/sysctl.conf"}, files: conf},
		{name: "show config missing", fun: "sysctl.show", kwargs: []any{"config_file", "{dir}/nope.conf"}},
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
	runSuite(t, sSuite{name: "sysctl_live", live: true, realGrains: true, calls: []sCall{
		{name: "get", fun: "sysctl.get", args: []any{"kernel.ostype"}},
		{name: "get slash", fun: "sysctl.get", args: []any{"vm/swappiness"}},
		{name: "get tabs", fun: "sysctl.get", args: []any{"net.ipv4.tcp_rmem"}},
		{name: "get missing", fun: "sysctl.get", args: []any{"vm.nope"}},
		{name: "assign same", fun: "sysctl.assign", args: []any{"vm.swappiness", cur}},
		{name: "assign missing", fun: "sysctl.assign", args: []any{"vm.nope", "1"}},
		{name: "assign invalid", fun: "sysctl.assign", args: []any{"vm.swappiness", "notanumber"}},
		{name: "persist already set", fun: "sysctl.persist", args: []any{"vm.swappiness", cur}, kwargs: []any{"config", "{dir}/s.conf"}, files: confSet},
		{name: "persist edit", fun: "sysctl.persist", args: []any{"vm.swappiness", cur}, kwargs: []any{"config", "{dir}/s.conf"}, files: confOther},
		{name: "persist new file", fun: "sysctl.persist", args: []any{"vm.swappiness", cur}, kwargs: []any{"config", "{dir}/sub/new.conf"}},
		{name: "show has keys", fun: "sysctl.show"},
	}, normalize: func(name string, v any) any {
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
