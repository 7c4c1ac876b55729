package builtin_test

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/internal/vectors"
	"github.com/gsalt/gsalt/wire/payload"
)

func TestNetworkInterfacesLoopback(t *testing.T) {
	res := cfnRun(t, nil, "network.interfaces", nil, nil)
	ifaces, ok := res.Return.(*payload.Map)
	if !ok || ifaces.Len() == 0 {
		t.Fatalf("interfaces %#v", res.Return)
	}
	goIfs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, i := range goIfs {
		names = append(names, i.Name)
	}
	if strings.Join(ifaces.Keys(), ",") != strings.Join(names, ",") {
		t.Fatalf("interfaces %v, net package sees %v", ifaces.Keys(), names)
	}
	lo := ifaces.Map("lo")
	if lo == nil {
		t.Skip("no lo interface")
	}
	if !lo.Bool("up") || lo.Str("hwaddr") != "00:00:00:00:00:00" {
		t.Fatalf("lo %v", lo)
	}
	want := payload.NewMap("address", "127.0.0.1", "netmask", "255.0.0.0", "broadcast", nil, "label", "lo")
	if d := vectors.Equal(lo.List("inet")[0], want); d != "" {
		t.Fatalf("lo inet: %s", d)
	}
	if l := lo.List("inet6"); len(l) > 0 {
		want := payload.NewMap("address", "::1", "prefixlen", "128", "scope", "host")
		if d := vectors.Equal(l[0], want); d != "" {
			t.Fatalf("lo inet6: %s", d)
		}
	}

	cfnCheck(t, "network.hw_addr", []any{"lo"}, "00:00:00:00:00:00", 0)
	cfnCheck(t, "network.hwaddr", []any{"lo"}, "00:00:00:00:00:00", 0)
	cfnCheck(t, "network.interface_ip", []any{"lo"}, "127.0.0.1", 0)
	cfnCheck(t, "network.interface", []any{"lo"}, lo.List("inet"), 0)
	missing := `Interface "gsalt0" not in available interfaces: "` + strings.Join(ifaces.Keys(), `", "`) + `"`
	cfnCheck(t, "network.hw_addr", []any{"gsalt0"}, missing, 0)
	cfnCheck(t, "network.interface_ip", []any{"gsalt0"}, missing, 0)

	cfnCheck(t, "network.ip_addrs", []any{kw("interface", "lo", "include_loopback", true)}, []any{"127.0.0.1"}, 0)
	cfnCheck(t, "network.ip_addrs", []any{kw("interface", "l?", "include_loopback", true)}, []any{"127.0.0.1"}, 0)
	cfnCheck(t, "network.ip_addrs", []any{kw("interface", "lo")}, []any{}, 0)
	cfnCheck(t, "network.ip_addrs", []any{kw("interface", "gsalt*,lo", "include_loopback", true, "cidr", "127.0.0.0/8")}, []any{"127.0.0.1"}, 0)
	cfnCheck(t, "network.ip_addrs", []any{kw("interface", "lo", "include_loopback", true, "cidr", "10.0.0.0/8")}, []any{}, 0)
	cfnCheck(t, "network.ip_addrs", []any{kw("interface", "lo", "include_loopback", true, "type", "public")}, []any{}, 0)
	cfnCheck(t, "network.ip_addrs", []any{kw("interface", "lo", "include_loopback", true, "type", "private")}, []any{"127.0.0.1"}, 0)
	cfnCheck(t, "network.ip_in_subnet", []any{"127.0.0.1", "127.0.0.0/8"}, true, 0)
	cfnCheck(t, "network.ip_in_subnet", []any{"10.1.2.3", "172.16.0.0/12"}, false, 0)
	cfnCheck(t, "network.ip_in_subnet", []any{"10.1.2.3", "10.0.0.1/8"}, false, 0) // strict: host bits set
	cfnCheck(t, "network.ip_in_subnet", []any{"bogus", "10.0.0.0/8"},
		"The minion function caused an exception: ValueError: 'bogus' does not appear to be an IPv4 or IPv6 address", 1)
	cfnCheck(t, "network.in_subnet", []any{"127.0.0.0/8"}, false, 0) // loopback addresses are not counted
	cfnCheck(t, "network.subnets", []any{kw("interfaces", "lo")}, []any{}, 0)
	cfnCheck(t, "network.subnets", []any{kw("interfaces", "gsalt0")}, []any{}, 0)

	host, _ := os.Hostname()
	cfnCheck(t, "network.get_hostname", nil, host, 0)
}

// TestNetworkInterfacesMatchSalt parses `ip link show` + `ip addr show`
// with Salt's own parser (taken from the Salt source tree named by
// GSALT_SALT_SRC) and compares it with what gsalt reads over netlink.
func TestNetworkInterfacesMatchSalt(t *testing.T) {
	src := os.Getenv("GSALT_SALT_SRC")
	if src == "" {
		t.Skip("GSALT_SALT_SRC not set")
	}
	py, err1 := exec.LookPath("python3")
	ipPath, err2 := exec.LookPath("ip")
	if err1 != nil || err2 != nil {
		t.Skip("needs python3 and ip")
	}
	prog := `
import ast, json, re, subprocess, sys
tree = ast.parse(open(sys.argv[1]).read())
ns = {"re": re}
for node in tree.body:
    if isinstance(node, ast.FunctionDef) and node.name in ("_interfaces_ip", "cidr_to_ipv4_netmask"):
        exec(compile(ast.Module([node], []), "network.py", "exec"), ns)
run = lambda *a: subprocess.run([sys.argv[2]] + list(a), stdout=subprocess.PIPE, stderr=subprocess.STDOUT).stdout.decode()
print(json.dumps(ns["_interfaces_ip"]("{}\n{}".format(run("link", "show"), run("addr", "show"))), separators=(",", ":")))
`
	out, err := exec.Command(py, "-c", prog, filepath.Join(src, "salt", "utils", "network.py"), ipPath).Output()
	if err != nil {
		t.Fatalf("salt parser: %v", err)
	}
	res := cfnRun(t, nil, "network.interfaces", nil, nil)
	got, err := json.Marshal(res.Return)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimSpace(out), got) {
		t.Fatalf("interfaces differ\nsalt:  %s\ngsalt: %s", out, got)
	}
}

func TestNetworkCalc(t *testing.T) {
	tests := []struct {
		fun  string
		args []any
		want any
		rc   int
	}{
		{"network.calc_net", []any{"172.17.0.5", "255.255.255.240"}, "172.17.0.0/28", 0},
		{"network.calc_net", []any{"172.17.0.5/20"}, "172.17.0.0/20", 0},
		{"network.calc_net", []any{"172.17.0.5", "0.0.0.255"}, "172.17.0.0/24", 0},
		{"network.calc_net", []any{"172.17.0.5", int64(16)}, "172.17.0.0/16", 0},
		{"network.calc_net", []any{"10.0.0.1"}, "10.0.0.1/32", 0},
		{"network.calc_net", []any{"2a02:f6e:a000:80:84d8:8332:7866:4e07/64"}, "2a02:f6e:a000:80::/64", 0},
		{"network.calc_net", []any{"10.0.0.1", "255.0.255.0"}, cfnPrefix("The minion function caused an exception: ValueError: '10.0.0.1/255.0.255.0' does not appear to be an IPv4 or IPv6 network"), 1},
		{"network.convert_cidr", []any{"172.31.0.0/16"}, payload.NewMap("network", "172.31.0.0", "netmask", "255.255.0.0", "broadcast", "172.31.255.255"), 0},
		{"network.convert_cidr", []any{"172.31.4.5/30"}, payload.NewMap("network", "172.31.4.4", "netmask", "255.255.255.252", "broadcast", "172.31.4.7"), 0},
		{"network.convert_cidr", []any{"fd00::/64"}, payload.NewMap("network", "fd00::", "netmask", "ffff:ffff:ffff:ffff::", "broadcast", "fd00::ffff:ffff:ffff:ffff"), 0},
		{"network.is_loopback", []any{"127.3.4.5"}, true, 0},
		{"network.is_loopback", []any{"::1"}, true, 0},
		{"network.is_loopback", []any{"10.0.0.1"}, false, 0},
		{"network.is_private", []any{"nope"}, "The minion function caused an exception: ValueError: 'nope' does not appear to be an IPv4 or IPv6 address", 1},
	}
	for _, tc := range tests {
		cfnCheck(t, tc.fun, tc.args, tc.want, tc.rc)
	}
	// is_private against Python's ipaddress
	addrs := []string{"10.1.1.1", "8.8.8.8", "172.16.5.4", "172.32.0.1", "192.168.1.1", "100.64.0.1", "169.254.1.1",
		"127.0.0.1", "0.1.2.3", "192.0.0.171", "198.18.0.1", "240.0.0.1", "255.255.255.255", "fc00::1", "fe80::1",
		"2001:db8::1", "2001:4860::8888", "::1", "::", "::ffff:10.0.0.1", "2001:10::1", "2001:200::1"}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	out, err := exec.Command(py, append([]string{"-c", "import ipaddress,sys; print(' '.join(str(ipaddress.ip_address(a).is_private) for a in sys.argv[1:]))"}, addrs...)...).Output()
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range strings.Fields(string(out)) {
		cfnCheck(t, "network.is_private", []any{addrs[i]}, w == "True", 0)
	}
}

func TestNetworkPing(t *testing.T) {
	if _, err := exec.LookPath("ping"); err != nil {
		// Salt runs ping through cmd.run; a missing binary is its error.
		cfnCheck(t, "network.ping", []any{"127.0.0.1; rm -rf /"},
			cfnPrefix("ERROR: Unable to run command '['ping', '-c', '4', '127.0.0.1rm-rf']' with the context"), 1)
		cfnCheck(t, "network.ping", []any{"localhost", kw("timeout", int64(2))},
			cfnPrefix("ERROR: Unable to run command '['ping', '-W', '2', '-c', '4', 'localhost']'"), 1)
		return
	}
	if testing.Short() {
		t.Skip("pings take seconds")
	}
	res := cfnRun(t, nil, "network.ping", []any{"127.0.0.1", kw("return_boolean", true, "timeout", int64(1))}, nil)
	if res.Return != true && res.Return != false {
		t.Fatalf("ping: %#v", res.Return)
	}
}
