//go:build libvirt_dlopen

package virt_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
)

// procStatusKiB reads a "Name:  N kB" field of /proc/PID/status.
func procStatusKiB(pid int, field string) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, field+":") {
			f := strings.Fields(line)
			if len(f) >= 2 {
				n, _ := strconv.Atoi(f[1])
				return n
			}
		}
	}
	return 0
}

// pidOf finds the process whose command line holds every part.
func pidOf(parts ...string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cl, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		ok := true
		for _, p := range parts {
			if !bytes.Contains(cl, []byte(p)) {
				ok = false
				break
			}
		}
		if ok {
			return pid
		}
	}
	return 0
}

// TestBenchVirtInitToPing is scripts/bench-virt.sh's measurement, run only
// when GSALT_BENCH_VIRT=1: on the e2e lab (private libvirtd, TCG), the
// time from gsalt-run virt.init of the seeded tiny image to the guest's
// first answered test.ping, and the hypervisor gsalt-minion's RSS before
// and after, printed as "BENCH key=value" lines. Nothing is asserted on
// the numbers.
func TestBenchVirtInitToPing(t *testing.T) {
	if os.Getenv("GSALT_BENCH_VIRT") != "1" {
		t.Skip("virt: the init-to-ping benchmark runs only from scripts/bench-virt.sh (GSALT_BENCH_VIRT=1)")
	}
	l := newE2ELab(t)
	pid := pidOf("gsalt-minion", filepath.Join(l.base, "etc", "hv"))
	if pid == 0 {
		t.Fatal("the hypervisor minion's process was not found")
	}
	rssIdle := procStatusKiB(pid, "VmRSS")
	start := time.Now()
	out, err := l.cli(t, 10*time.Minute, "gsalt-run", "virt.init", "vmb", "1", "256", "salt://images/tiny.qcow2", "hypervisor=qemu",
		fmt.Sprintf("config={master: 10.0.2.2, master_port: %d, publish_port: %d, acceptance_wait_time: 1, enable_fqdns_grains: False, ipv6: False}", l.ret, l.pub))
	if err != nil || !strings.Contains(out, "good") {
		t.Fatalf("gsalt-run virt.init: %v\n%s", err, out)
	}
	initDone := time.Since(start)
	// Poll often: the measure is the first answer.
	testutil.Eventually(t, 8*time.Minute, func() bool {
		out, _ := l.cli(t, 30*time.Second, "gsalt", "vmb", "test.ping", "--out", "json", "-t", "3")
		return strings.Contains(out, `"vmb": true`)
	}, "vmb to answer test.ping")
	firstPing := time.Since(start)
	rssAfter := procStatusKiB(pid, "VmRSS")
	hwm := procStatusKiB(pid, "VmHWM")
	image, _ := os.Stat(filepath.Join(l.base, "srv", "salt", "images", "tiny.qcow2"))
	var size int64
	if image != nil {
		size = image.Size()
	}
	fmt.Printf("BENCH init_s=%.1f\nBENCH first_ping_s=%.1f\nBENCH image_mib=%.1f\nBENCH hv_rss_idle_mib=%.1f\nBENCH hv_rss_after_mib=%.1f\nBENCH hv_hwm_mib=%.1f\n",
		initDone.Seconds(), firstPing.Seconds(), float64(size)/(1<<20), float64(rssIdle)/1024, float64(rssAfter)/1024, float64(hwm)/1024)
	if out, err := l.cli(t, 5*time.Minute, "gsalt-run", "virt.purge", "vmb"); err != nil || !strings.Contains(out, "good") {
		t.Errorf("virt.purge: %v %s", err, out)
	}
	benchSaltHypervisor(t, l)
}

// treeRSSKiB sums VmRSS over pid and its descendants (a salt-minion is
// a process manager with the minion in a child).
func treeRSSKiB(pid int) int {
	total := procStatusKiB(pid, "VmRSS")
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces; split after ')'.
		if i := bytes.LastIndexByte(b, ')'); i > 0 {
			f := strings.Fields(string(b[i+1:]))
			if len(f) > 1 && f[1] == strconv.Itoa(pid) {
				total += treeRSSKiB(child)
			}
		}
	}
	return total
}

// benchSaltHypervisor: with GSALT_SALT_SRC, a real Salt 3006 salt-minion
// hypervisor (Salt's virt module, python3-libvirt) on the same libvirtd
// joins the master; after one virt.full_info job on each, the RSS of both
// hypervisor minions (process trees).
func benchSaltHypervisor(t *testing.T, l *e2eLab) {
	src := saltpeer.Src()
	if src == "" {
		if out, err := l.cli(t, 2*time.Minute, "gsalt", "hv1", "virt.full_info", "--out", "json", "-t", "60"); err != nil || !strings.Contains(out, "node_info") {
			t.Fatalf("hv1 virt.full_info: %v %s", err, out)
		}
		gpid := pidOf("gsalt-minion", filepath.Join(l.base, "etc", "hv"))
		fmt.Printf("BENCH salt_hv_rss_mib=-\nBENCH hv_rss_full_info_mib=%.1f\n", float64(treeRSSKiB(gpid))/1024)
		return
	}
	conf := filepath.Join(l.base, "etc", "hvs")
	writeFile(t, filepath.Join(conf, "minion"), hvMinionConf("hvs", filepath.Join(l.base, "hvs"), l.ret, l.pub, l.d.URI))
	startCmd(t, saltpeer.Command(context.Background(), src, "salt-minion", "-c", conf, "-l", "warning"), filepath.Join(l.base, "hvs.out"))
	testutil.Eventually(t, 150*time.Second, func() bool {
		out, _ := l.cli(t, 60*time.Second, "gsalt", "hvs", "test.ping", "--out", "json", "-t", "10")
		return strings.Contains(out, "true")
	}, "the Salt hypervisor minion answers")
	for _, id := range []string{"hv1", "hvs"} {
		if out, err := l.cli(t, 2*time.Minute, "gsalt", id, "virt.full_info", "--out", "json", "-t", "60"); err != nil || !strings.Contains(out, "node_info") {
			t.Fatalf("%s virt.full_info: %v %s", id, err, out)
		}
	}
	spid := pidOf("salt-minion", conf)
	gpid := pidOf("gsalt-minion", filepath.Join(l.base, "etc", "hv"))
	fmt.Printf("BENCH salt_hv_rss_mib=%.1f\nBENCH hv_rss_full_info_mib=%.1f\n", float64(treeRSSKiB(spid))/1024, float64(treeRSSKiB(gpid))/1024)
}
