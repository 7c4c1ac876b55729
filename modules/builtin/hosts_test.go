package builtin_test

import "testing"

const hostsSample = "127.0.0.1\tlocalhost\n# The following lines are desirable for IPv6 capable hosts\n::1     localhost ip6-localhost ip6-loopback\n\n10.0.0.1  web1 web1.example.com # primary web\n10.0.0.2 db1\n10.0.0.1 alias-two\n  # indented comment\n10.0.0.3 a b c #\n10.0.0.9"

// TestHostsGolden compares the hosts module on temporary hosts files with
// Salt 3006 (testdata/golden/hosts.json), the returns and the files.
func TestHostsGolden(t *testing.T) {
	hf := map[string]string{"hosts": hostsSample}
	opts := []any{"hosts.file", "{dir}/hosts"}
	calls := []sCall{
		{name: "list_hosts", fun: "hosts.list_hosts"},
		{name: "list_hosts missing file", fun: "hosts.list_hosts", files: map[string]string{}},
		{name: "get_ip", fun: "hosts.get_ip", args: []any{"web1.example.com"}},
		{name: "get_ip second line", fun: "hosts.get_ip", args: []any{"alias-two"}},
		{name: "get_ip none", fun: "hosts.get_ip", args: []any{"nope"}},
		{name: "get_alias", fun: "hosts.get_alias", args: []any{"10.0.0.1"}},
		{name: "get_alias none", fun: "hosts.get_alias", args: []any{"10.9.9.9"}},
		{name: "has_pair", fun: "hosts.has_pair", args: []any{"10.0.0.1", "alias-two"}},
		{name: "has_pair list", fun: "hosts.has_pair", args: []any{"10.0.0.3", []any{"a", "c"}}},
		{name: "has_pair no", fun: "hosts.has_pair", args: []any{"10.0.0.2", "web1"}},
		{name: "set_host replace", fun: "hosts.set_host", args: []any{"10.0.0.1", "newweb"}},
		{name: "set_host comment", fun: "hosts.set_host", args: []any{"10.0.0.2", "db1 db1.example.com"}, kwargs: []any{"comment", "database"}},
		{name: "set_host new", fun: "hosts.set_host", args: []any{"192.168.1.1", "router"}},
		{name: "set_host remove", fun: "hosts.set_host", args: []any{"10.0.0.1", " "}},
		{name: "set_host missing file", fun: "hosts.set_host", args: []any{"1.2.3.4", "x"}, files: map[string]string{}},
		{name: "rm_host alias", fun: "hosts.rm_host", args: []any{"10.0.0.1", "web1"}},
		{name: "rm_host last alias", fun: "hosts.rm_host", args: []any{"10.0.0.2", "db1"}},
		{name: "rm_host absent", fun: "hosts.rm_host", args: []any{"10.0.0.2", "nope"}},
		{name: "rm_host with comment", fun: "hosts.rm_host", args: []any{"10.0.0.3", "b"}},
		{name: "add_host existing ip", fun: "hosts.add_host", args: []any{"10.0.0.2", "db2"}},
		{name: "add_host new ip", fun: "hosts.add_host", args: []any{"10.0.0.5", "new"}},
		{name: "add_host present", fun: "hosts.add_host", args: []any{"10.0.0.2", "db1"}},
		{name: "add_host missing file", fun: "hosts.add_host", args: []any{"10.0.0.5", "new"}, files: map[string]string{}},
		{name: "set_comment", fun: "hosts.set_comment", args: []any{"10.0.0.2", "the db"}},
		{name: "set_comment same", fun: "hosts.set_comment", args: []any{"10.0.0.1", "primary web"}},
		{name: "set_comment missing ip", fun: "hosts.set_comment", args: []any{"10.9.9.9", "x"}},
	}
	for i := range calls {
		calls[i].opts = opts
		if calls[i].files == nil {
			calls[i].files = hf
		}
	}
	runSuite(t, sSuite{name: "hosts", calls: calls})
}
