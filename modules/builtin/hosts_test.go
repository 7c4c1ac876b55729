package builtin_test

import (
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
)

const hostsSample = "127.0.0.1\tlocalhost\n# The following lines are desirable for IPv6 capable hosts\n::1     localhost ip6-localhost ip6-loopback\n\n10.0.0.1  web1 web1.example.com # primary web\n10.0.0.2 db1\n10.0.0.1 alias-two\n  # indented comment\n10.0.0.3 a b c #\n10.0.0.9"

// TestHostsGolden compares the hosts module on temporary hosts files with
// Salt 3006 (testdata/golden/hosts.json), the returns and the files.
func TestHostsGolden(t *testing.T) {
	hf := map[string]string{"hosts": hostsSample}
	opts := []any{"hosts.file", "{dir}/hosts"}
	calls := []salttest.Call{
		{Name: "list_hosts", Fun: "hosts.list_hosts"},
		{Name: "list_hosts missing file", Fun: "hosts.list_hosts", Files: map[string]string{}},
		{Name: "get_ip", Fun: "hosts.get_ip", Args: []any{"web1.example.com"}},
		{Name: "get_ip second line", Fun: "hosts.get_ip", Args: []any{"alias-two"}},
		{Name: "get_ip none", Fun: "hosts.get_ip", Args: []any{"nope"}},
		{Name: "get_alias", Fun: "hosts.get_alias", Args: []any{"10.0.0.1"}},
		{Name: "get_alias none", Fun: "hosts.get_alias", Args: []any{"10.9.9.9"}},
		{Name: "has_pair", Fun: "hosts.has_pair", Args: []any{"10.0.0.1", "alias-two"}},
		{Name: "has_pair list", Fun: "hosts.has_pair", Args: []any{"10.0.0.3", []any{"a", "c"}}},
		{Name: "has_pair no", Fun: "hosts.has_pair", Args: []any{"10.0.0.2", "web1"}},
		{Name: "set_host replace", Fun: "hosts.set_host", Args: []any{"10.0.0.1", "newweb"}},
		{Name: "set_host comment", Fun: "hosts.set_host", Args: []any{"10.0.0.2", "db1 db1.example.com"}, Kwargs: []any{"comment", "database"}},
		{Name: "set_host new", Fun: "hosts.set_host", Args: []any{"192.168.1.1", "router"}},
		{Name: "set_host remove", Fun: "hosts.set_host", Args: []any{"10.0.0.1", " "}},
		{Name: "set_host missing file", Fun: "hosts.set_host", Args: []any{"1.2.3.4", "x"}, Files: map[string]string{}},
		{Name: "rm_host alias", Fun: "hosts.rm_host", Args: []any{"10.0.0.1", "web1"}},
		{Name: "rm_host last alias", Fun: "hosts.rm_host", Args: []any{"10.0.0.2", "db1"}},
		{Name: "rm_host absent", Fun: "hosts.rm_host", Args: []any{"10.0.0.2", "nope"}},
		{Name: "rm_host with comment", Fun: "hosts.rm_host", Args: []any{"10.0.0.3", "b"}},
		{Name: "add_host existing ip", Fun: "hosts.add_host", Args: []any{"10.0.0.2", "db2"}},
		{Name: "add_host new ip", Fun: "hosts.add_host", Args: []any{"10.0.0.5", "new"}},
		{Name: "add_host present", Fun: "hosts.add_host", Args: []any{"10.0.0.2", "db1"}},
		{Name: "add_host missing file", Fun: "hosts.add_host", Args: []any{"10.0.0.5", "new"}, Files: map[string]string{}},
		{Name: "set_comment", Fun: "hosts.set_comment", Args: []any{"10.0.0.2", "the db"}},
		{Name: "set_comment same", Fun: "hosts.set_comment", Args: []any{"10.0.0.1", "primary web"}},
		{Name: "set_comment missing ip", Fun: "hosts.set_comment", Args: []any{"10.9.9.9", "x"}},
	}
	for i := range calls {
		calls[i].Opts = opts
		if calls[i].Files == nil {
			calls[i].Files = hf
		}
	}
	runSuite(t, salttest.Suite{Name: "hosts", Calls: calls})
}
