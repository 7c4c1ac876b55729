package builtin_test

import (
	"testing"

	"github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/modules/salttest"
	"github.com/gsalt/gsalt/wire/payload"
)

// saltProxyGoldenCalls are the salt_proxy calls compared with Salt 3006
// (testdata/golden/salt_proxy.json): the proxy file written, kept or not
// writable, test mode, starting a proxy process (a script doing nothing,
// salt-proxy for Salt and gsalt-proxy for gsalt, put first on PATH by the
// test), proxy ids that need shell quoting and ids that are not strings.
func saltProxyGoldenCalls() []salttest.Call {
	exists := map[string]string{"proxy": "master: old.example.org\n"}
	test := []any{"test", true}
	return []salttest.Call{
		{Name: "configure no start", Fun: "salt_proxy.configure_proxy", Args: []any{"p8000"}, Kwargs: []any{"start", false}},
		{Name: "configure no start exists", Fun: "salt_proxy.configure_proxy", Args: []any{"p8000"}, Kwargs: []any{"start", false}, Files: exists},
		{Name: "configure test", Fun: "salt_proxy.configure_proxy", Args: []any{"gsaltgoldenp1"}, Opts: test},
		{Name: "configure test exists", Fun: "salt_proxy.configure_proxy", Args: []any{"gsaltgoldenp1"}, Opts: test, Files: exists},
		{Name: "configure test no start", Fun: "salt_proxy.configure_proxy", Args: []any{"gsaltgoldenp1", false}, Opts: test},
		{Name: "configure start", Fun: "salt_proxy.configure_proxy", Args: []any{"gsaltgoldenp1"}},
		{Name: "configure start exists", Fun: "salt_proxy.configure_proxy", Args: []any{"gsaltgoldenp1"}, Kwargs: []any{"start", int64(1)}, Files: exists},
		{Name: "configure quoted id", Fun: "salt_proxy.configure_proxy", Args: []any{"p 1'x\"y"}},
		{Name: "configure empty id", Fun: "salt_proxy.configure_proxy", Args: []any{""}},
		{Name: "configure int id", Fun: "salt_proxy.configure_proxy", Args: []any{int64(8000)}},
		{Name: "configure int id no start", Fun: "salt_proxy.configure_proxy", Args: []any{int64(8000)}, Kwargs: []any{"start", false}},
		{Name: "configure missing dir", Fun: "salt_proxy.configure_proxy", Args: []any{"gsaltgoldenp1"}, Opts: []any{builtin.SaltProxyConfigDirOpt, "{dir}/missing"}},
		{Name: "configure missing dir test", Fun: "salt_proxy.configure_proxy", Args: []any{"gsaltgoldenp1"}, Opts: []any{builtin.SaltProxyConfigDirOpt, "{dir}/missing", "test", true}},
		{Name: "configure missing arg", Fun: "salt_proxy.configure_proxy"},
		{Name: "is_running", Fun: "salt_proxy.is_running", Args: []any{"gsaltgoldenp1"}},
		{Name: "is_running int", Fun: "salt_proxy.is_running", Args: []any{int64(1)}},
		{Name: "is_running none", Fun: "salt_proxy.is_running", Args: []any{nil}},
	}
}

// TestSaltProxyGolden compares the salt_proxy module with Salt 3006: the
// returns and the proxy file left in the configuration directory (a
// temporary one: salt_proxy.config_dir for gsalt, salt.syspaths.CONFIG_DIR
// for Salt).
func TestSaltProxyGolden(t *testing.T) {
	salttest.FakeCommands(t, "salt-proxy", "gsalt-proxy")
	calls := saltProxyGoldenCalls()
	for i := range calls {
		if len(calls[i].Opts) == 0 || calls[i].Opts[0] != builtin.SaltProxyConfigDirOpt {
			calls[i].Opts = append([]any{builtin.SaltProxyConfigDirOpt, "{dir}"}, calls[i].Opts...)
		}
	}
	runSuite(t, salttest.Suite{Name: "salt_proxy", Calls: calls, Grains: payload.NewMap("master", "salt.example.org", "kernel", "Linux")})
}
