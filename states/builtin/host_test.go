package builtin

import (
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
)

// TestHostStatesGolden compares host.present, host.absent and host.only
// (and test=True) on temporary hosts files with Salt 3006
// (testdata/golden/host.json).
func TestHostStatesGolden(t *testing.T) {
	hf := map[string]string{"hosts": "127.0.0.1 localhost\n10.0.0.1 web1 # the web\n10.0.0.2 db1 other\n"}
	calls := []salttest.Call{
		single("present new", "host.present", false, "name", "app1", "ip", "10.0.0.9"),
		single("present new test", "host.present", true, "name", "app1", "ip", "10.0.0.9"),
		single("present exists", "host.present", false, "name", "web1", "ip", "10.0.0.1"),
		single("present add alias", "host.present", false, "name", "web2", "ip", "10.0.0.1"),
		single("present comment", "host.present", false, "name", "db1", "ip", "10.0.0.2", "comment", "database"),
		single("present comment test", "host.present", true, "name", "db1", "ip", "10.0.0.2", "comment", "database"),
		single("present other ip warns", "host.present", false, "name", "web1", "ip", "10.0.0.5"),
		single("present clean", "host.present", false, "name", "web1", "ip", "10.0.0.5", "clean", true),
		single("present clean test", "host.present", true, "name", "web1", "ip", "10.0.0.5", "clean", true),
		single("absent", "host.absent", false, "name", "other", "ip", "10.0.0.2"),
		single("absent test", "host.absent", true, "name", "other", "ip", "10.0.0.2"),
		single("absent already", "host.absent", false, "name", "nope", "ip", []any{"10.0.0.2", "10.0.0.3"}),
		single("only", "host.only", false, "name", "10.0.0.2", "hostnames", []any{"a", " b "}),
		single("only same", "host.only", false, "name", "10.0.0.2", "hostnames", []any{"db1", "other"}),
		single("only test", "host.only", true, "name", "10.0.0.2", "hostnames", "x"),
		single("only clear", "host.only", false, "name", "10.0.0.1", "hostnames", []any{}),
	}
	for i := range calls {
		calls[i].Files = hf
		calls[i].Opts = []any{"hosts.file", "{dir}/hosts"}
	}
	runStateSuite(t, salttest.Suite{Name: "host", Calls: calls, Grains: payloadLinuxGrains()})
}
