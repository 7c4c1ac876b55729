package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
)

// TestReservationsStateOnRealSalt applies the example's
// dnsmasq.reservations state with a real Salt 3006 salt-call (masterless,
// its local mine) against a real dnsmasq: the example runs unchanged on
// Salt, writes the same files and makes dig answer; with the minion in
// the dnsmasq_exclude pillar the name goes away again.
func TestReservationsStateOnRealSalt(t *testing.T) {
	requireTools(t)
	src := saltpeer.Require(t)
	dir := testutil.ShortDir(t, "gdq")
	dns := startDnsmasq(t, dir)
	conf := filepath.Join(dir, "salt")
	snippet, err := os.ReadFile(filepath.Join(exampleDir(t), "minion.d", "dnsmasq-host.conf"))
	if err != nil {
		t.Fatal(err)
	}
	// The minion.d file as shipped, with this test's dnsmasq paths and the
	// mine entry aliased to a fixed address (this host may have none).
	hostConf := strings.NewReplacer(
		"/etc/dnsmasq.reservations.hosts", dns.addnHosts,
		"/etc/dnsmasq.reservations.dhcp", dns.dhcpHosts,
		"/run/dnsmasq/dnsmasq.pid", dns.pidFile,
		"/etc/dnsmasq.cloud.hosts.d", filepath.Join(dir, "cloud.hosts.d"),
		"/etc/dnsmasq.cloud.dhcp.d", filepath.Join(dir, "cloud.dhcp.d"),
		"  network.ip_addrs: []\n", "  network.ip_addrs:\n    - mine_function: grains.get\n    - vm_addrs\n",
	).Replace(string(snippet))
	testutil.WriteFile(t, filepath.Join(conf, "minion.d", "dnsmasq-host.conf"), hostConf, 0o644)
	testutil.WriteFile(t, filepath.Join(conf, "minion"), "id: golden\nfile_client: local\nroot_dir: "+dir+"/saltroot\n"+
		"file_roots: {base: ["+filepath.Join(exampleDir(t), "salt")+"]}\nenable_fqdns_grains: False\nipv6: False\nlog_level: error\n", 0o644)
	// minion.d files are merged key by key in name order: this one's
	// grains (the alias's address, and the role) replace the example's.
	testutil.WriteFile(t, filepath.Join(conf, "minion.d", "vm.conf"), "grains:\n  roles: [dnsmasq]\n  vm_addrs: [198.51.100.21]\n", 0o644)

	call := func(args ...string) map[string]any {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := saltpeer.Command(ctx, src, "salt-call", append([]string{"-c", conf, "--local", "--out", "json"}, args...)...)
		out, err := cmd.Output()
		var ret map[string]any
		if jerr := json.Unmarshal(out, &ret); jerr != nil {
			t.Fatalf("salt-call %v: %v %v\n%s", args, err, jerr, out)
		}
		return ret
	}
	applied := func(args ...string) {
		t.Helper()
		ret := call(append([]string{"state.apply", "dnsmasq.reservations"}, args...)...)
		states, ok := ret["local"].(map[string]any)
		if !ok || len(states) != 3 {
			t.Fatalf("state.apply: %v", ret)
		}
		for id, v := range states {
			if r, _ := v.(map[string]any)["result"].(bool); !r {
				t.Fatalf("state %s failed: %v", id, v)
			}
		}
	}
	if ret := call("mine.update"); ret["local"] != true {
		t.Fatalf("mine.update: %v", ret)
	}
	applied()
	dns.waitDig(t, "golden", "198.51.100.21", 10*time.Second)
	checkFile(t, dns.addnHosts, []string{"198.51.100.21 golden"})
	checkFile(t, dns.dhcpHosts, []string{"golden,198.51.100.21"})
	applied(`pillar={"dnsmasq_exclude": ["golden"]}`)
	dns.waitDig(t, "golden", "", 10*time.Second)
	checkFile(t, dns.addnHosts, []string{})

	// dnsmasq.cloud (reactor/cloud.sls on salt/cloud/<name>/created and
	// destroyed): a guest's fixed address from its MAC, kept on re-runs,
	// the next free one for the next guest, removed on destroy.
	cloud := func(pillar string, wantChanges bool) {
		t.Helper()
		ret := call("state.apply", "dnsmasq.cloud", "pillar="+pillar)
		states, ok := ret["local"].(map[string]any)
		if !ok || len(states) != 3 {
			t.Fatalf("state.apply dnsmasq.cloud %s: %v", pillar, ret)
		}
		changed := false
		for id, v := range states {
			st := v.(map[string]any)
			if r, _ := st["result"].(bool); !r {
				t.Fatalf("state %s failed: %v", id, v)
			}
			if ch, _ := st["changes"].(map[string]any); len(ch) > 0 {
				changed = true
			}
		}
		if changed != wantChanges {
			t.Errorf("dnsmasq.cloud %s: changes %v, want %v: %v", pillar, changed, wantChanges, states)
		}
	}
	cloud(`{"dnsmasq_cloud": {"name": "vm1", "mac": "52:54:00:00:00:01", "action": "add"}}`, true)
	dns.waitDig(t, "vm1", "10.20.1.10", 10*time.Second)
	cloud(`{"dnsmasq_cloud": {"name": "vm2", "mac": "52:54:00:00:00:02", "action": "add"}}`, true)
	dns.waitDig(t, "vm2", "10.20.1.11", 10*time.Second)
	cloud(`{"dnsmasq_cloud": {"name": "vm1", "mac": "52:54:00:00:00:01", "action": "add"}}`, false)
	if got := readLines(t, filepath.Join(dns.dhcpHostsDir, "vm1")); !slices.Equal(got, []string{"52:54:00:00:00:01,10.20.1.10,vm1"}) {
		t.Errorf("vm1's dhcp-hostsdir file: %q", got)
	}
	cloud(`{"dnsmasq_cloud": {"name": "vm1", "action": "remove"}}`, true)
	dns.waitDig(t, "vm1", "", 10*time.Second)
	dns.waitDig(t, "vm2", "10.20.1.11", 10*time.Second)
	if strings.Contains(dns.log.String(), "bad ") {
		t.Errorf("dnsmasq complained:\n%s", dns.log.String())
	}
}
