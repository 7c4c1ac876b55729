package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testlab"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/internal/testutil/proc"
	"github.com/gsalt/gsalt/proxy"
	"github.com/gsalt/gsalt/proxy/devsim"
)

// startGroup starts cmd in its own process group, stopped with the test.
func startGroup(t *testing.T, cmd *exec.Cmd, logPath string) *proc.Proc {
	t.Helper()
	return proc.Start(t, filepath.Base(logPath), cmd, proc.Options{Log: logPath, Grace: 5 * time.Second})
}

// realMaster is a Salt 3006 salt-master run from source.
type realMaster struct {
	src, dir, conf string
	ret            int
}

func (sm *realMaster) run(t *testing.T, script string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := saltpeer.Command(ctx, sm.src, script, append([]string{"-c", sm.conf}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Logf("%s %v: %v\n%s", script, args, err, errb.String())
	}
	return out.String()
}

// salt runs `salt ARGS --out json --static` and decodes the result.
func (sm *realMaster) salt(t *testing.T, args ...string) map[string]any {
	t.Helper()
	out := sm.run(t, "salt", append(args, "--out", "json", "--static", "-t", "20")...)
	v := map[string]any{}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("salt %v: %v\n%s", args, err, out)
	}
	return v
}

func (sm *realMaster) keys(t *testing.T) map[string][]string {
	t.Helper()
	v := map[string][]string{}
	_ = json.Unmarshal([]byte(sm.run(t, "salt-key", "-L", "--out", "json")), &v)
	return v
}

// acceptWhenPending accepts ids as soon as they are pending.
func (sm *realMaster) acceptWhenPending(t *testing.T, ids ...string) {
	t.Helper()
	for _, id := range ids {
		testutil.Eventually(t, 90*time.Second, func() bool {
			return slices.Contains(sm.keys(t)["minions_pre"], id)
		}, id+" pending")
		sm.run(t, "salt-key", "-a", id, "-y")
	}
}

func startRealMaster(t *testing.T, src, dir string, files map[string]string) *realMaster {
	t.Helper()
	sm := &realMaster{src: src, dir: dir, conf: filepath.Join(dir, "etc", "salt"), ret: testlab.FreePort(t)}
	pub := testlab.FreePort(t)
	files["etc/salt/master"] = fmt.Sprintf("root_dir: %[1]s\npki_dir: %[1]s/pki\ncachedir: %[1]s/cache\nsock_dir: %[1]s/sock\n"+
		"log_file: %[1]s/master.log\nuser: root\nipv6: False\ninterface: 127.0.0.1\npublish_port: %[2]d\nret_port: %[3]d\n"+
		"file_roots: {base: [%[1]s/srv/salt]}\npillar_roots: {base: [%[1]s/srv/pillar]}\n", dir, pub, sm.ret)
	for p, c := range files {
		writeFile(t, filepath.Join(dir, p), c)
	}
	p := startGroup(t, saltpeer.Command(context.Background(), src, "salt-master", "-c", sm.conf, "-l", "warning"), filepath.Join(dir, "master.out"))
	p.WaitFor(t, 60*time.Second, "listening", func() bool {
		if _, err := os.Stat(filepath.Join(dir, "sock", "master_event_pub.ipc")); err != nil {
			return false
		}
		return proc.Dials("127.0.0.1:" + strconv.Itoa(sm.ret))
	})
	return sm
}

// pythonOnlyGrains are grains a Salt salt-proxy reports that describe its
// Python installation or SUSE's build; gsalt does not have them.
var pythonOnlyGrains = map[string]bool{
	"pythonexecutable": true, "pythonpath": true, "pythonversion": true, "saltpath": true, "zmqversion": true,
	"__suse_reserved_pkg_all_versions_support": true, "__suse_reserved_pkg_patches_support": true,
	"__suse_reserved_saltutil_states_support": true,
}

// TestInteropRealSaltMaster: a real Salt 3006 salt-master manages a real
// salt-proxy (dummy) p1 and, from one in-process Fleet, the gsalt proxies
// g1..g3 (dummy) and the deltaproxy control gctl with its sub-proxies gs1
// and gs2. The real salt and salt-key drive them; the gsalt dummy answers
// like the real one.
func TestInteropRealSaltMaster(t *testing.T) {
	src := saltpeer.Require(t)
	dir := shortDir(t)
	sm := startRealMaster(t, src, filepath.Join(dir, "m"), map[string]string{
		"srv/pillar/top.sls":   "base:\n  'p1 or g* and not gctl':\n    - match: compound\n    - dummy\n  'gctl':\n    - ctl\n",
		"srv/pillar/dummy.sls": "proxy:\n  proxytype: dummy\n",
		"srv/pillar/ctl.sls":   "proxy:\n  proxytype: deltaproxy\n  ids: [gs1, gs2]\n",
	})
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	// The real salt-proxy p1.
	pdir := filepath.Join(dir, "rp")
	writeFile(t, filepath.Join(pdir, "etc", "proxy"), fmt.Sprintf("master: 127.0.0.1\nmaster_port: %[2]d\nroot_dir: %[1]s\n"+
		"pki_dir: %[1]s/pki\ncachedir: %[1]s/cache\nsock_dir: %[1]s/sock\nlog_file: %[1]s/log\npidfile: %[1]s/pid\nuser: root\n"+
		"ipv6: False\nenable_fqdns_grains: False\nmultiprocessing: False\nacceptance_wait_time: 1\n", pdir, sm.ret))
	rp := saltpeer.Command(context.Background(), src, "salt-proxy", "-c", filepath.Join(pdir, "etc"), "--proxyid", "p1", "-l", "warning")
	rp.Dir = cwd
	startGroup(t, rp, filepath.Join(dir, "p1.out"))

	// gsalt proxies, all in this process.
	gdir := filepath.Join(dir, "gp")
	etc := filepath.Join(gdir, "etc")
	writeFile(t, filepath.Join(etc, "proxy"), fmt.Sprintf("master: 127.0.0.1\nmaster_port: %[2]d\nroot_dir: %[1]s\n"+
		"pki_dir: %[1]s/pki\ncachedir: %[1]s/cache\nsock_dir: %[1]s/sock\nlog_file: %[1]s/log\n"+
		"ipv6: False\nenable_fqdns_grains: False\nacceptance_wait_time: 0.5\n", gdir, sm.ret))
	writeFile(t, filepath.Join(etc, "proxy.d", "gctl", "meta.conf"), "metaproxy: deltaproxy\n")
	ctx, cancel := context.WithCancel(context.Background())
	runFleet(t, ctx, cancel, proxy.Options{ConfigDir: etc, IDs: []string{"g1", "g2", "g3", "gctl"}, Logger: testLogger()})

	sm.acceptWhenPending(t, "p1", "g1", "g2", "g3", "gctl", "gs1", "gs2")
	all := []string{"p1", "g1", "g2", "g3", "gctl", "gs1", "gs2"}
	want := map[string]any{}
	for _, id := range all {
		want[id] = true
	}
	var got map[string]any
	if !testutil.Poll(90*time.Second, func() bool {
		got = sm.salt(t, "*", "test.ping")
		return reflect.DeepEqual(got, want)
	}) {
		t.Fatalf("salt '*' test.ping: %v", got)
	}
	if got := sm.salt(t, "-G", "os_family:proxy", "test.ping"); len(got) != len(all) {
		t.Errorf("grain target os_family:proxy: %v", got)
	}

	// Grains: the same keys as the real salt-proxy (but its Python ones)
	// and the same values but the id.
	gr := sm.salt(t, "-L", "p1,g1,gs1", "grains.items")
	real, _ := gr["p1"].(map[string]any)
	for _, id := range []string{"g1", "gs1"} {
		mine, _ := gr[id].(map[string]any)
		if real == nil || mine == nil {
			t.Fatalf("grains.items: %v", gr)
		}
		var missing, extra, differ []string
		for k, v := range real {
			switch mv, ok := mine[k]; {
			case pythonOnlyGrains[k]:
			case !ok:
				missing = append(missing, k)
			case k != "id" && !reflect.DeepEqual(mv, v):
				differ = append(differ, fmt.Sprintf("%s: %v != %v", k, mv, v))
			}
		}
		for k := range mine {
			if _, ok := real[k]; !ok {
				extra = append(extra, k)
			}
		}
		sort.Strings(missing)
		sort.Strings(extra)
		sort.Strings(differ)
		if len(missing)+len(extra)+len(differ) > 0 {
			t.Errorf("%s grains vs salt-proxy p1: missing %v, extra %v, different %v", id, missing, extra, differ)
		}
		if mine["id"] != id {
			t.Errorf("%s id grain %v", id, mine["id"])
		}
	}

	// The dummy device's functions return what Salt's return.
	for _, c := range [][]string{
		{"pkg.list_pkgs"}, {"service.list"}, {"service.status", "samba"}, {"service.start", "samba"},
		{"service.status", "samba"}, {"service.stop", "samba"}, {"service.restart", "ntp"}, {"service.enabled", "redbull"},
		{"pkg.version", "apache"}, {"pkg.version", "apache", "tinc"}, {"pkg.install", "foo"}, {"pkg.install", "bar", "version=2.5"},
		{"pkg.remove", "foo"}, {"pkg.installed", "apache"}, {"pkg.upgrade"}, {"pkg.list_pkgs"},
		{"sys.list_functions", "pkg", "service"}, {"test.ping"}, {"grains.item", "os", "kernel", "dummy_grain_2"},
	} {
		out := sm.salt(t, append([]string{"-L", "p1,g2"}, c...)...)
		if out["p1"] == nil || !reflect.DeepEqual(out["p1"], out["g2"]) {
			t.Errorf("%v: salt-proxy %v, gsalt-proxy %v", c, out["p1"], out["g2"])
		}
	}
	if _, err := os.Stat(filepath.Join(gdir, "cache", "g2", "dummy-proxy-g2.cache")); err != nil {
		t.Errorf("g2 state file: %v", err)
	}
	keys := sm.keys(t)["minions"]
	sort.Strings(keys)
	if !reflect.DeepEqual(keys, []string{"g1", "g2", "g3", "gctl", "gs1", "gs2", "p1"}) {
		t.Errorf("accepted keys: %v", keys)
	}
}

// TestInteropRealSaltMasterNapalm: a real Salt 3006 salt-master manages a
// simulated IOS-XE switch (gsalt-devsim) through gsalt-proxy's napalm
// proxytype: salt sw1 net.cli 'show version', grains.get model, grain
// targeting and net.load_config in test mode and with commit.
func TestInteropRealSaltMasterNapalm(t *testing.T) {
	src := saltpeer.Require(t)
	if testing.Short() {
		t.Skip("interop with real Salt skipped in -short mode")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fleet, err := devsim.Start(ctx, devsim.Options{Platform: devsim.PlatformIOS, Devices: 1, User: "admin", Password: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	dir := t.TempDir()
	sm := startRealMaster(t, src, dir, map[string]string{
		"srv/pillar/top.sls": "base:\n  'sw1':\n    - sw\n",
		"srv/pillar/sw.sls": fmt.Sprintf("proxy:\n  proxytype: napalm\n  driver: ios\n  host: 127.0.0.1\n  username: admin\n"+
			"  password: admin\n  optional_args:\n    port: %d\n", fleet.Port(0)),
	})
	gdir := filepath.Join(dir, "gp")
	etc := filepath.Join(gdir, "etc")
	writeFile(t, filepath.Join(etc, "proxy"), fmt.Sprintf("master: 127.0.0.1\nmaster_port: %[2]d\nroot_dir: %[1]s\n"+
		"pki_dir: %[1]s/pki\ncachedir: %[1]s/cache\nsock_dir: %[1]s/sock\nlog_file: %[1]s/log\n"+
		"ipv6: False\nenable_fqdns_grains: False\nacceptance_wait_time: 0.5\n", gdir, sm.ret))
	runFleet(t, ctx, cancel, proxy.Options{ConfigDir: etc, IDs: []string{"sw1"}, Logger: testLogger()})
	sm.acceptWhenPending(t, "sw1")
	testutil.Eventually(t, 90*time.Second, func() bool { return sm.salt(t, "sw1", "test.ping")["sw1"] == true }, "sw1 answering test.ping")
	if got := sm.salt(t, "sw1", "grains.get", "model"); got["sw1"] != "CSR1000V" {
		t.Fatalf("grains.get model: %v", got)
	}
	if got := sm.salt(t, "-G", "vendor:Cisco", "test.ping"); got["sw1"] != true {
		t.Fatalf("grain targeting: %v", got)
	}
	cli, _ := sm.salt(t, "sw1", "net.cli", "show version")["sw1"].(map[string]any)
	out, _ := cli["out"].(map[string]any)
	if cli["result"] != true || !strings.Contains(fmt.Sprint(out["show version"]), "Cisco IOS XE Software") {
		t.Fatalf("net.cli: %v", cli)
	}
	lc, _ := sm.salt(t, "sw1", "net.load_config", "text=ntp server 10.0.0.1", "test=True")["sw1"].(map[string]any)
	if lc["result"] != true || !strings.Contains(fmt.Sprint(lc["diff"]), "+ntp server 10.0.0.1") ||
		strings.Contains(fleet.Device(0).RunningConfig(), "ntp server 10.0.0.1") {
		t.Fatalf("net.load_config test=True: %v", lc)
	}
	lc, _ = sm.salt(t, "sw1", "net.load_config", "text=ntp server 10.0.0.1", "commit=True")["sw1"].(map[string]any)
	if lc["result"] != true || !strings.Contains(fleet.Device(0).RunningConfig(), "ntp server 10.0.0.1") {
		t.Fatalf("net.load_config commit=True: %v", lc)
	}

	// commit_in: gsalt-proxy's scheduler commits later and returns the
	// scheduled job to the real master (jid "req"), which caches it.
	lc, _ = sm.salt(t, "sw1", "net.load_config", "text=ntp server 10.0.0.2", "commit_in=5s")["sw1"].(map[string]any)
	jid := fmt.Sprint(lc["commit_id"])
	if lc["result"] != true || lc["commit_id"] == nil || strings.Contains(fleet.Device(0).RunningConfig(), "10.0.0.2") {
		t.Fatalf("net.load_config commit_in: %v", lc)
	}
	testutil.Eventually(t, 30*time.Second, func() bool {
		return strings.Contains(fleet.Device(0).RunningConfig(), "ntp server 10.0.0.2")
	}, "the scheduled commit to reach the device")
	var jobs string
	if !testutil.Poll(30*time.Second, func() bool {
		jobs = sm.run(t, "salt-run", "jobs.list_jobs", "search_function=net.load_config", "--out", "json")
		return strings.Contains(jobs, jid) && strings.Contains(jobs, "commit_jid")
	}) {
		t.Fatalf("the real master has no scheduled return for commit %s:\n%s", jid, jobs)
	}
	if got := sm.salt(t, "sw1", "schedule.list", "show_all=True", "return_yaml=False"); fmt.Sprint(got["sw1"]) != "map[]" {
		t.Errorf("schedule after the commit ran: %v", got)
	}
}
