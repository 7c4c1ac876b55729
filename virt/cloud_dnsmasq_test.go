//go:build libvirt_dlopen

package virt_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/internal/testutil/proc"
	"github.com/gsalt/gsalt/virt/virttest"
)

// cloudDNS is a dnsmasq on 127.0.0.1:<free port> reading the example's
// reservation files and the per-guest --hostsdir/--dhcp-hostsdir.
type cloudDNS struct {
	port                                         int
	pidFile, addnHosts, dhcpHosts, hostsd, dhcpd string
	log                                          *testutil.Buffer
}

// freeUDPTCPPort returns a loopback port free for TCP and UDP, taken
// below the ephemeral range (proc.FreePort) so that no other test's
// outgoing connection takes it before dnsmasq binds it.
func freeUDPTCPPort(t *testing.T) int {
	t.Helper()
	for range 50 {
		port := proc.FreePort(t)
		u, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			_ = u.Close()
			return port
		}
	}
	t.Fatal("no free port on 127.0.0.1")
	return 0
}

func startCloudDNS(t *testing.T, dir string) *cloudDNS {
	t.Helper()
	for _, tool := range []string{"dnsmasq", "dig"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("virt: %s is not installed; skipping the cloud-events dnsmasq test", tool)
		}
	}
	c := &cloudDNS{port: freeUDPTCPPort(t), pidFile: filepath.Join(dir, "dnsmasq.pid"),
		addnHosts: filepath.Join(dir, "reservations.hosts"), dhcpHosts: filepath.Join(dir, "reservations.dhcp"),
		hostsd: filepath.Join(dir, "cloud.hosts.d"), dhcpd: filepath.Join(dir, "cloud.dhcp.d"), log: &testutil.Buffer{Max: 1 << 20}}
	writeFile(t, c.addnHosts, "")
	writeFile(t, c.dhcpHosts, "")
	for _, d := range []string{c.hostsd, c.dhcpd} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dhcpPorts := []int{freeUDPTCPPort(t), freeUDPTCPPort(t)}
	// DHCP (on alternate ports, never answered here) makes dnsmasq read the
	// dhcp-hostsdir; --user=root keeps the test's files readable after SIGHUP.
	cmd := exec.Command("dnsmasq", "--keep-in-foreground", "--conf-file=/dev/null", "--listen-address=127.0.0.1", "--bind-interfaces",
		"--port="+strconv.Itoa(c.port), "--pid-file="+c.pidFile, "--addn-hosts="+c.addnHosts, "--dhcp-hostsfile="+c.dhcpHosts,
		"--hostsdir="+c.hostsd, "--dhcp-hostsdir="+c.dhcpd, "--no-resolv", "--no-hosts", "--log-facility=-", "--user=root",
		"--dhcp-range=127.0.0.50,127.0.0.60", fmt.Sprintf("--dhcp-alternate-port=%d,%d", dhcpPorts[0], dhcpPorts[1]),
		"--dhcp-leasefile="+filepath.Join(dir, "dnsmasq.leases"))
	cmd.Stdout, cmd.Stderr = c.log, c.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		if t.Failed() {
			t.Logf("dnsmasq log:\n%s", tailStr(c.log.String(), 3000))
		}
	})
	testutil.Eventually(t, 20*time.Second, func() bool {
		select {
		case <-done:
			t.Fatalf("dnsmasq exited: %s", c.log.String())
		default:
		}
		_, err := c.dig("localhost.invalid")
		return err == nil
	}, "dnsmasq answering")
	return c
}

func (c *cloudDNS) dig(name string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "dig", "@127.0.0.1", "-p", strconv.Itoa(c.port), name, "A", "+short", "+time=1", "+tries=1").Output()
	if err != nil {
		return "", fmt.Errorf("dig %s: %w (%s)", name, err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

const cloudMAC = "52:54:00:12:34:56"

// TestCloudEventsDnsmasqReservation: gsalt-run virt.init (start=False, a
// NIC profile with a fixed MAC) fires salt/cloud/vmc/created with the
// guest's MAC; examples/dnsmasq's reactor map as shipped gives the guest
// its reservation on the dnsmasq host minion (dnsmasq.cloud), and a real
// dnsmasq answers dig for it on 127.0.0.1; virt.purge fires
// salt/cloud/vmc/destroyed and the reservation is gone.
func TestCloudEventsDnsmasqReservation(t *testing.T) {
	t.Parallel() // its own private libvirtd, folders and ports
	if testing.Short() {
		t.Skip("virt: the cloud-events dnsmasq test is skipped in -short mode")
	}
	d := virttest.Start(t)
	t.Cleanup(d.DestroyAll)
	base, err := os.MkdirTemp("/tmp", "gsalt-vc-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	dns := startCloudDNS(t, filepath.Join(base, "dns"))
	bin := hostBins(t)
	example := filepath.Join(repoRoot(t), "examples", "dnsmasq")
	roots := filepath.Join(base, "srv")
	if err := os.MkdirAll(filepath.Join(roots, "images"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("qemu-img", "create", "-q", "-f", "qcow2", filepath.Join(roots, "images", "disk.qcow2"), "64M").CombinedOutput(); err != nil {
		t.Fatalf("qemu-img: %v %s", err, out)
	}
	pub, ret := freePort(t), freePort(t)
	masterConf := filepath.Join(base, "etc", "master")
	writeFile(t, filepath.Join(masterConf, "master"), fmt.Sprintf(`root_dir: %[1]s/m
pki_dir: %[1]s/m/pki
cachedir: %[1]s/m/cache
sock_dir: %[1]s/m/sock
log_file: %[1]s/m/log
user: root
ipv6: False
interface: 127.0.0.1
publish_port: %[2]d
ret_port: %[3]d
auto_accept: True
file_roots: {base: [%[4]s/salt, %[5]s]}
`, base, pub, ret, example, roots))
	reactorMap, err := os.ReadFile(filepath.Join(example, "master.d", "dnsmasq-reservations.conf"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(masterConf, "master.d", "dnsmasq-reservations.conf"), string(reactorMap))
	// The hypervisor is also the dnsmasq host: the example's minion.d file
	// as shipped, its paths pointed at this test's dnsmasq.
	snippet, err := os.ReadFile(filepath.Join(example, "minion.d", "dnsmasq-host.conf"))
	if err != nil {
		t.Fatal(err)
	}
	hostConf := strings.NewReplacer(
		"/etc/dnsmasq.reservations.hosts", dns.addnHosts,
		"/etc/dnsmasq.reservations.dhcp", dns.dhcpHosts,
		"/run/dnsmasq/dnsmasq.pid", dns.pidFile,
		"/etc/dnsmasq.cloud.hosts.d", dns.hostsd,
		"/etc/dnsmasq.cloud.dhcp.d", dns.dhcpd,
	).Replace(string(snippet))
	if strings.Contains(hostConf, "/etc/") || strings.Contains(hostConf, "/run/") {
		t.Fatalf("a path of the minion.d file was not redirected:\n%s", hostConf)
	}
	minionConf := filepath.Join(base, "etc", "hv")
	writeFile(t, filepath.Join(minionConf, "minion.d", "dnsmasq-host.conf"), hostConf)
	writeFile(t, filepath.Join(minionConf, "minion"), hvMinionConf("hv1", filepath.Join(base, "hv"), ret, pub, d.URI)+fmt.Sprintf(`  images: %s/images
  nic:
    fixed:
      - eth0:
          type: bridge
          source: br0
          mac: '%s'
`, base, cloudMAC))
	startCmd(t, exec.Command(filepath.Join(bin, "gsalt-master"), "-c", masterConf, "-l", "info"), filepath.Join(base, "master.out"))
	startCmd(t, exec.Command(filepath.Join(bin, "gsalt-minion"), "-c", minionConf, "-l", "info"), filepath.Join(base, "minion.out"))
	cli := func(timeout time.Duration, name string, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		out, err := exec.CommandContext(ctx, filepath.Join(bin, name), append([]string{"-c", masterConf}, args...)...).CombinedOutput()
		return string(out), err
	}
	testutil.Eventually(t, 120*time.Second, func() bool {
		out, _ := cli(60*time.Second, "gsalt", "hv1", "test.ping", "--out", "json", "-t", "10")
		return strings.Contains(out, "true")
	}, "hv1 answers test.ping")
	if got, err := dns.dig("vmc"); err != nil || got != "" {
		t.Fatalf("vmc resolves before virt.init: %q %v", got, err)
	}

	out, err := cli(5*time.Minute, "gsalt-run", "virt.init", "vmc", "1", "128", "salt://images/disk.qcow2", "nic=fixed", "seed=False", "start=False", "--out", "json")
	if err != nil || !strings.Contains(out, `"good"`) {
		t.Fatalf("gsalt-run virt.init: %v\n%s", err, out)
	}
	// The guest never booted: its name resolves from the reservation the
	// reactor made from the created event's MAC.
	var addr string
	testutil.Eventually(t, 120*time.Second, func() bool {
		addr, _ = dns.dig("vmc")
		return addr != ""
	}, "dig vmc answering its reservation")
	if addr != "10.20.1.10" {
		t.Errorf("vmc resolves to %q, want the first address of the example's cloud range, 10.20.1.10", addr)
	}
	dhcp, err := os.ReadFile(filepath.Join(dns.dhcpd, "vmc"))
	if err != nil || strings.TrimSpace(string(dhcp)) != cloudMAC+",10.20.1.10,vmc" {
		t.Errorf("vmc's dhcp-hostsdir entry: %q %v", dhcp, err)
	}
	if strings.Contains(dns.log.String(), "bad") {
		t.Errorf("dnsmasq complained:\n%s", dns.log.String())
	}

	out, err = cli(5*time.Minute, "gsalt-run", "virt.purge", "vmc", "--out", "json")
	if err != nil || !strings.Contains(out, `"good"`) {
		t.Fatalf("gsalt-run virt.purge: %v\n%s", err, out)
	}
	testutil.Eventually(t, 120*time.Second, func() bool {
		got, err := dns.dig("vmc")
		return err == nil && got == ""
	}, "vmc's reservation removed")
	for _, dir := range []string{dns.hostsd, dns.dhcpd} {
		if _, err := os.Stat(filepath.Join(dir, "vmc")); !os.IsNotExist(err) {
			t.Errorf("%s/vmc is still there after virt.purge: %v", dir, err)
		}
	}
	if out, _ := d.Virsh("list", "--all", "--name"); strings.Contains(out, "vmc") {
		t.Errorf("vmc is still defined: %s", out)
	}
}
