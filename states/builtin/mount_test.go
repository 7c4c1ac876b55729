package builtin

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
)

const mountGoldenDir = "/tmp/gsalt-mount-golden"

// sls is a state.template_str call running one state with these
// arguments: Salt's state.single cannot pass an "opts" argument (it
// collides with its own), an SLS can.
func sls(name, fun string, test bool, kwargs ...any) salttest.Call {
	var b strings.Builder
	b.WriteString("case:\n  " + fun + ":\n")
	for i := 0; i+1 < len(kwargs); i += 2 {
		v, _ := json.Marshal(kwargs[i+1])
		fmt.Fprintf(&b, "    - %s: %s\n", kwargs[i], v)
	}
	// state.template_str takes test from the minion options, not from a
	// test=True argument (Salt ignores that one there).
	c := salttest.Call{Name: name, Fun: "state.template_str", Args: []any{b.String()}}
	if test {
		c.Opts = []any{"test", true}
	}
	return c
}

// TestMountStateGolden compares mount.mounted and mount.unmounted (and
// test=True) with Salt 3006 (testdata/golden/mount_state.json) on a real
// tmpfs mounted at /tmp/gsalt-mount-golden/m, with each case's fstab
// (config=) and mount cache (cachedir, file "mounts") in its own
// directory. The cases
// run in order and leave nothing mounted, so Salt's run and gsalt's start
// alike. Needs root and a kernel that lets it mount tmpfs.
func TestMountStateGolden(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mount golden cases need root")
	}
	m := mountGoldenDir + "/m"
	if err := os.MkdirAll(m, 0o755); err != nil {
		t.Fatal(err)
	}
	umount := func() {
		b, _ := os.ReadFile("/proc/self/mounts")
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) > 1 && strings.HasPrefix(f[1], mountGoldenDir) {
				_ = exec.Command("umount", f[1]).Run()
			}
		}
	}
	umount()
	if err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", m).Run(); err != nil {
		t.Skipf("cannot mount tmpfs here: %v", err)
	}
	umount()
	t.Cleanup(func() { umount(); _ = os.RemoveAll(mountGoldenDir) })
	entry := "tmpfs\t\t" + m + "\ttmpfs\tsize=1m\t0 0\n"
	base := []any{"name", m, "device", "tmpfs", "fstype", "tmpfs", "opts", "size=1m", "config", "{dir}/fstab"}
	with := func(kv ...any) []any { return append(append([]any(nil), base...), kv...) }
	calls := []salttest.Call{
		sls("mounted test", "mount.mounted", true, base...),
		sls("mounted", "mount.mounted", false, base...),
		sls("mounted again test", "mount.mounted", true, base...),
		sls("mounted again", "mount.mounted", false, base...),
		sls("mounted noexec test", "mount.mounted", true, with("opts", "size=1m,noexec")...),
		sls("mounted noexec", "mount.mounted", false, with("opts", []any{"size=1m", "noexec"})...),
		sls("mounted no persist", "mount.mounted", false, with("persist", false)...),
		sls("mod_watch mounted", "mount.mod_watch", false, "name", m, "sfun", "mounted", "device", "tmpfs", "fstype", "tmpfs", "opts", "size=1m"),
		sls("mod_watch mounted opts list", "mount.mod_watch", false, "name", m, "sfun", "mounted", "device", "tmpfs", "fstype", "tmpfs", "opts", []any{"size=1m", "noatime"}),
		sls("mod_watch unmounted", "mount.mod_watch", false, "name", m, "sfun", "unmounted"),
		single("unmounted test", "mount.unmounted", true, "name", m),
		single("unmounted persist", "mount.unmounted", false, "name", m, "persist", true, "config", "{dir}/fstab"),
		single("unmounted again", "mount.unmounted", false, "name", m),
		single("unmounted persist test", "mount.unmounted", true, "name", m, "persist", true, "config", "{dir}/fstab"),
		single("unmounted persist wrong device", "mount.unmounted", false, "name", m, "device", "/dev/sdz9", "persist", true, "config", "{dir}/fstab"),
		single("unmounted persist no entry", "mount.unmounted", false, "name", m, "persist", true, "config", "{dir}/fstab"),
		sls("mounted missing dir test", "mount.mounted", true, with("name", mountGoldenDir+"/nodir")...),
		sls("mounted missing dir mkmnt test", "mount.mounted", true, with("name", mountGoldenDir+"/nodir", "mkmnt", true)...),
		sls("mounted missing dir", "mount.mounted", false, with("name", mountGoldenDir+"/nodir")...),
		sls("mounted mount false", "mount.mounted", false, with("name", mountGoldenDir+"/nodir", "mount", false)...),
		sls("mounted mount false test", "mount.mounted", true, with("name", mountGoldenDir+"/nodir", "mount", false, "mkmnt", true)...),
		sls("mounted mount false exists", "mount.mounted", false, with("mount", false)...),
		sls("mounted no fstype", "mount.mounted", false, with("fstype", "")...),
	}
	for i := range calls {
		calls[i].Opts = append(calls[i].Opts, "cachedir", "{dir}")
		files := map[string]string{"fstab": "# fstab\n"}
		if strings.HasPrefix(calls[i].Name, "unmounted persist") && !strings.HasSuffix(calls[i].Name, "no entry") {
			files["fstab"] = "# fstab\n" + entry
		}
		calls[i].Files = files
	}
	runStateSuite(t, salttest.Suite{Name: "mount_state", Calls: calls, Grains: payloadLinuxGrains()})
}
