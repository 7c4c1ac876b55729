package builtin

import (
	"testing"

	mbuiltin "github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/modules/salttest"
)

// TestSaltProxyStatesGolden compares salt_proxy.configure_proxy with Salt
// 3006 (testdata/golden/salt_proxy.json): the state's return and the
// proxy file it leaves in a temporary configuration directory, with
// test=True, start False, the default proxyname and a started process (a
// script doing nothing, salt-proxy for Salt and gsalt-proxy for gsalt,
// first on PATH).
func TestSaltProxyStatesGolden(t *testing.T) {
	salttest.FakeCommands(t, "salt-proxy", "gsalt-proxy")
	exists := map[string]string{"proxy": "master: old.example.org\n"}
	calls := []salttest.Call{
		single("configure", "salt_proxy.configure_proxy", false, "name", "salt-proxy-configure", "proxyname", "gsaltgoldenp2"),
		single("configure test", "salt_proxy.configure_proxy", true, "name", "salt-proxy-configure", "proxyname", "gsaltgoldenp2"),
		single("configure default proxyname test", "salt_proxy.configure_proxy", true, "name", "p"),
		single("configure no start", "salt_proxy.configure_proxy", false, "name", "p", "proxyname", "gsaltgoldenp2", "start", false),
		single("configure no start test", "salt_proxy.configure_proxy", true, "name", "p", "proxyname", "gsaltgoldenp2", "start", false),
		single("configure int proxyname", "salt_proxy.configure_proxy", false, "name", "p", "proxyname", int64(8000)),
		{Name: "configure exists", Fun: "state.single", Args: []any{"salt_proxy.configure_proxy"}, Kwargs: []any{"name", "p", "proxyname", "gsaltgoldenp2"}, Files: exists},
		{Name: "configure exists test", Fun: "state.single", Args: []any{"salt_proxy.configure_proxy"}, Kwargs: []any{"name", "p", "proxyname", "gsaltgoldenp2", "test", true}, Files: exists},
	}
	for i := range calls {
		calls[i].Opts = []any{mbuiltin.SaltProxyConfigDirOpt, "{dir}"}
	}
	grains := payloadLinuxGrains()
	grains.Set("master", "salt.example.org")
	runStateSuite(t, salttest.Suite{Name: "salt_proxy", Calls: calls, Grains: grains})
}
