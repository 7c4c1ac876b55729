package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/master"
	"github.com/gsalt/gsalt/master/keys"
	"github.com/gsalt/gsalt/masterd"
	gminion "github.com/gsalt/gsalt/minion"
	"github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/wire/payload"
)

// startMaster runs a gsalt master on loopback whose file_roots is the
// example's salt/ tree and whose master.d holds the example's reactor map
// as shipped.
func startMaster(t *testing.T, dir string) *masterd.Daemon {
	t.Helper()
	ex := exampleDir(t)
	etc := filepath.Join(dir, "etc")
	text := fmt.Sprintf("interface: 127.0.0.1\npublish_port: 0\nret_port: 0\nroot_dir: %[1]s\npki_dir: %[1]s/pki\n"+
		"cachedir: %[1]s/cache\nsock_dir: %[1]s/sock\nlog_file: %[1]s/master.log\nuser: root\n"+
		"file_roots: {base: [%[2]s/salt]}\nauto_accept: True\n", dir, ex)
	testutil.WriteFile(t, filepath.Join(etc, "master"), text, 0o644)
	copyFile(t, filepath.Join(ex, "master.d", "dnsmasq-reservations.conf"), filepath.Join(etc, "master.d", "dnsmasq-reservations.conf"), 0o644)
	copyFile(t, filepath.Join(vectorsDir, "pki/master/master.pem"), filepath.Join(dir, "pki", "master.pem"), 0o400)
	copyFile(t, filepath.Join(vectorsDir, "pki/master/master.pub"), filepath.Join(dir, "pki", "master.pub"), 0o644)
	cfg, err := config.LoadMaster(etc)
	if err != nil {
		t.Fatal(err)
	}
	d, err := masterd.Start(context.Background(), cfg, masterd.Options{Logger: logger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if d.Reactor() == nil {
		t.Fatal("the master runs no reactor although master.d sets the reactor option")
	}
	return d
}

// minionProc is an in-process gsalt minion that a test can stop.
type minionProc struct {
	m    *gminion.Minion
	stop func()
}

// startMinion runs an in-process gsalt minion (real sockets) with the
// given extra configuration and minion.d files, and waits until it has
// fired its start event.
func startMinion(t *testing.T, d *masterd.Daemon, dir, id, extra string, dropins map[string]string) *minionProc {
	t.Helper()
	mdir := filepath.Join(dir, id)
	copyFile(t, filepath.Join(vectorsDir, "pki/minion1/minion.pem"), filepath.Join(mdir, "pki", "minion.pem"), 0o400)
	copyFile(t, filepath.Join(vectorsDir, "pki/minion1/minion.pub"), filepath.Join(mdir, "pki", "minion.pub"), 0o644)
	conf := fmt.Sprintf("id: %s\nroot_dir: %s\npki_dir: %[2]s/pki\ncachedir: %[2]s/cache\nsock_dir: %[2]s/sock\n"+
		"master: 127.0.0.1\nmaster_port: %d\nacceptance_wait_time: 0.2\nenable_fqdns_grains: False\n",
		id, mdir, d.ReqAddr().(*net.TCPAddr).Port) + extra
	testutil.WriteFile(t, filepath.Join(mdir, "minion"), conf, 0o644)
	for name, text := range dropins {
		testutil.WriteFile(t, filepath.Join(mdir, "minion.d", name), text, 0o644)
	}
	cfg, err := config.LoadMinion(mdir)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := gminion.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := reg.Lookup("dnsmasq.version"); !ok {
		if err := reg.Register(builtin.DnsmasqFunctions()...); err != nil {
			t.Fatal(err)
		}
	}
	mn, err := gminion.New(gminion.Options{Config: cfg, Logger: logger(), Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { mn.Run(ctx); close(done) }()
	p := &minionProc{m: mn}
	p.stop = func() {
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Errorf("minion %s did not stop", id)
		}
	}
	t.Cleanup(p.stop)
	select {
	case <-mn.Ready():
	case <-time.After(30 * time.Second):
		t.Fatalf("minion %s not ready (last auth error: %v)", id, mn.LastAuthError())
	}
	return p
}

// runJob runs one function on one minion and returns its return value.
func runJob(t *testing.T, d *masterd.Daemon, id, fun string, args ...any) any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := d.Master().RunJob(ctx, master.PublishRequest{Tgt: id, Fun: fun, Arg: args}, 20*time.Second, 5*time.Second)
	if err != nil || res.Returns[id] == nil {
		t.Fatalf("%s on %s: %v %v", fun, id, err, res)
	}
	v, _ := res.Returns[id].Get("return")
	return v
}

// webMinion is the configuration of a minion standing for a cloud VM.
// Every minion of the test runs on this host, so each one's mine entry
// network.ip_addrs is aliased to a grain holding the address its VM would
// have (Salt's mine_function alias); the dnsmasq host keeps the real
// network.ip_addrs.
func webMinion(addr string) string {
	return fmt.Sprintf("grains:\n  vm_addrs: [%s]\nmine_functions:\n  network.ip_addrs:\n    - mine_function: grains.get\n    - vm_addrs\n", addr)
}

// TestReservations: a gsalt master reacting with the example's reactor
// files, the dnsmasq host minion (the example's minion.d file, paths
// pointed at the test's dnsmasq), and minions standing for cloud VMs. A
// starting minion's name resolves in dnsmasq to its mine address; a
// salt/cloud/<id>/destroyed event and a deleted key take it out again.
func TestReservations(t *testing.T) {
	requireTools(t)
	dir := testutil.ShortDir(t, "gdq")
	dns := startDnsmasq(t, dir)
	d := startMaster(t, dir)
	bus := d.Bus().Subscribe(event.All(), 1<<14)
	defer bus.Close()

	// The dnsmasq host: the example's minion.d file as shipped, with the
	// file locations of this test's dnsmasq.
	snippet, err := os.ReadFile(filepath.Join(exampleDir(t), "minion.d", "dnsmasq-host.conf"))
	if err != nil {
		t.Fatal(err)
	}
	hostConf := strings.NewReplacer(
		"/etc/dnsmasq.reservations.hosts", dns.addnHosts,
		"/etc/dnsmasq.reservations.dhcp", dns.dhcpHosts,
		"/run/dnsmasq/dnsmasq.pid", dns.pidFile,
		"/etc/dnsmasq.cloud.hosts.d", filepath.Join(dir, "cloud.hosts.d"),
		"/etc/dnsmasq.cloud.dhcp.d", filepath.Join(dir, "cloud.dhcp.d"),
	).Replace(string(snippet))
	if strings.Contains(hostConf, "/etc/") || strings.Contains(hostConf, "/run/") {
		t.Fatalf("a path of the minion.d file was not redirected:\n%s", hostConf)
	}
	startMinion(t, d, dir, "dns1", "", map[string]string{"dnsmasq-host.conf": hostConf})

	// Its own reservation uses its real first address, if it has one.
	var hostAddr string
	if l, ok := runJob(t, d, "dns1", "network.ip_addrs").([]any); ok && len(l) > 0 {
		hostAddr = payload.Text(l[0])
	}
	if hostAddr != "" {
		dns.waitDig(t, "dns1", hostAddr, 30*time.Second)
	} else {
		t.Log("this host has no non-loopback IPv4 address: dns1 gets no reservation")
	}
	// The execution module on the dnsmasq host reports the running version.
	if banner, err := exec.Command("dnsmasq", "-v").Output(); err != nil {
		t.Fatal(err)
	} else if v, f := runJob(t, d, "dns1", "dnsmasq.version"), strings.Fields(string(banner)); len(f) < 3 || v != f[2] {
		t.Errorf("dnsmasq.version on the dnsmasq host: %v (banner %q)", v, f)
	}

	web1 := startMinion(t, d, dir, "web1", webMinion("198.51.100.11"), nil)
	dns.waitDig(t, "web1", "198.51.100.11", 30*time.Second)
	web2 := startMinion(t, d, dir, "web2", webMinion("198.51.100.12"), nil)
	dns.waitDig(t, "web2", "198.51.100.12", 30*time.Second)

	// The files as the templates write them, sorted by minion id.
	wantHosts := []string{"198.51.100.11 web1", "198.51.100.12 web2"}
	wantDHCP := []string{"web1,198.51.100.11", "web2,198.51.100.12"}
	if hostAddr != "" {
		wantHosts = append([]string{hostAddr + " dns1"}, wantHosts...)
		wantDHCP = append([]string{"dns1," + hostAddr}, wantDHCP...)
	}
	checkFile(t, dns.addnHosts, wantHosts)
	checkFile(t, dns.dhcpHosts, wantDHCP)
	if dns.dhcp {
		// dnsmasq read the dhcp-hostsfile on SIGHUP and found nothing bad.
		log := dns.log.String()
		if !strings.Contains(log, "read "+dns.dhcpHosts) || strings.Contains(log, "bad ") {
			t.Errorf("dnsmasq on the dhcp-hostsfile:\n%s", log)
		}
	}

	// salt-cloud destroyed web1: the VM stops, the event comes.
	web1.stop()
	if err := d.Bus().Fire(event.Event{Tag: "salt/cloud/web1/destroyed", Data: payload.NewMap(
		"event", "destroyed instance", "name", "web1", "_stamp", time.Now().UTC().Format("2006-01-02T15:04:05.000000"))}); err != nil {
		t.Fatal(err)
	}
	dns.waitDig(t, "web1", "", 30*time.Second)
	if got, err := dns.dig("web2"); err != nil || got != "198.51.100.12" {
		t.Errorf("web2 after web1 was destroyed: %q %v", got, err)
	}
	waitNoKey(t, d, "web1")

	// web2 is decommissioned and its key deleted (what gsalt-key -d does).
	web2.stop()
	if _, err := d.Keys().Delete("web2"); err != nil {
		t.Fatal(err)
	}
	dns.waitDig(t, "web2", "", 30*time.Second)
	if hostAddr != "" {
		if got, err := dns.dig("dns1"); err != nil || got != hostAddr {
			t.Errorf("dns1 after the deletions: %q %v", got, err)
		}
	}
	want := []string{}
	if hostAddr != "" {
		want = []string{hostAddr + " dns1"}
	}
	checkFile(t, dns.addnHosts, want)

	// Every reaction was built and started; the event of each step came.
	st := d.Reactor().Stats()
	if st.Failed != 0 || st.RenderErrors != 0 || st.Wheel == 0 || st.Local < 6 {
		t.Errorf("reactor stats %+v", st)
	}
	seen := map[string]bool{}
	for {
		select {
		case ev := <-bus.C():
			seen[ev.Tag] = true
			continue
		default:
		}
		break
	}
	for _, tag := range []string{"salt/minion/web1/start", "dnsmasq/reservations/refresh", "salt/key"} {
		if !seen[tag] {
			t.Errorf("no %s event on the bus", tag)
		}
	}
}

// checkFile compares the reservation lines of a generated file (after its
// "managed by gsalt" header) with want.
func checkFile(t *testing.T, path string, want []string) {
	t.Helper()
	lines := readLines(t, path)
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "# managed by gsalt") || !strings.HasPrefix(lines[1], "# ") {
		t.Fatalf("%s has no managed-by header:\n%s", path, strings.Join(lines, "\n"))
	}
	if got := lines[2:]; !slices.Equal(got, want) {
		t.Errorf("%s: got %q, want %q", path, got, want)
	}
}

// waitNoKey waits until id has no key in any state.
func waitNoKey(t *testing.T, d *masterd.Daemon, id string) {
	t.Helper()
	var all map[keys.State][]string
	if !testutil.Poll(10*time.Second, func() bool {
		var err error
		if all, err = d.Keys().List(); err != nil {
			t.Fatal(err)
		}
		for _, ids := range all {
			if slices.Contains(ids, id) {
				return false
			}
		}
		return true
	}) {
		t.Fatalf("the key of %s is still there: %v", id, all)
	}
}
