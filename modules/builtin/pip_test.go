package builtin_test

import (
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestPipGolden installs, lists, upgrades and removes local test wheels
// in a fresh virtualenv through the pip module and compares each return
// with Salt 3006's on the same kind of venv (testdata/golden/pip.json;
// -update-golden regenerates it with Salt; the venv path and pids are
// normalised). The sequence leaves the venv as it found it, so Salt and
// gsalt run it on the same venv.
func TestPipGolden(t *testing.T) {
	lab := salttest.NewPipLab(t)
	be := []any{"bin_env", lab.Venv}
	kw := func(kv ...any) []any { return append(append([]any{}, be...), kv...) }
	calls := []salttest.Call{
		{Name: "version", Fun: "pip.version", Kwargs: be},
		{Name: "version bin", Fun: "pip.version", Kwargs: []any{"bin_env", lab.Venv + "/bin/pip"}},
		{Name: "is_installed before", Fun: "pip.is_installed", Args: []any{"gsalttestpkg"}, Kwargs: be},
		{Name: "install", Fun: "pip.install", Args: []any{"gsalttestpkg==1.0"}, Kwargs: kw("no_index", true, "find_links", lab.Wheels)},
		{Name: "install nothing", Fun: "pip.install", Kwargs: be},
		{Name: "install bad find_links", Fun: "pip.install", Args: []any{"x"}, Kwargs: kw("find_links", "/nonexistent/gsalt")},
		{Name: "install index conflict", Fun: "pip.install", Args: []any{"x"}, Kwargs: kw("no_index", true, "index_url", "https://example.invalid/simple")},
		{Name: "install bad exists_action", Fun: "pip.install", Args: []any{"x"}, Kwargs: kw("exists_action", "q")},
		{Name: "install bad timeout", Fun: "pip.install", Args: []any{"x"}, Kwargs: kw("timeout", "abc")},
		{Name: "install missing", Fun: "pip.install", Args: []any{"gsalt-no-such-pkg"}, Kwargs: kw("no_index", true, "find_links", lab.Wheels)},
		{Name: "install requirements", Fun: "pip.install", Kwargs: kw("requirements", "{dir}/req.txt", "find_links", lab.Wheels, "no_index", true),
			Files: map[string]string{"req.txt": "gsalttestdep==0.1\n"}},
		{Name: "is_installed", Fun: "pip.is_installed", Args: []any{"GSaltTestPkg"}, Kwargs: be},
		{Name: "list prefix", Fun: "pip.list", Args: []any{"gsalttest"}, Kwargs: be},
		{Name: "freeze", Fun: "pip.freeze", Kwargs: be},
		{Name: "list_freeze_parse", Fun: "pip.list_freeze_parse", Kwargs: be},
		{Name: "list_freeze_parse prefix", Fun: "pip.list_freeze_parse", Args: []any{"GSaltTest"}, Kwargs: be},
		{Name: "list_freeze_parse pip", Fun: "pip.list_freeze_parse", Args: []any{"pi"}, Kwargs: be},
		{Name: "list_upgrades", Fun: "pip.list_upgrades", Kwargs: be, Opts: nil},
		{Name: "upgrade", Fun: "pip.install", Args: []any{"gsalttestpkg"}, Kwargs: kw("upgrade", true, "find_links", lab.Wheels+","+lab.Wheels2, "env_vars", payload.NewMap("GSALT_X", int64(1)))},
		{Name: "list after upgrade", Fun: "pip.list", Args: []any{"gsalttestpkg"}, Kwargs: be},
		{Name: "uninstall", Fun: "pip.uninstall", Args: []any{"gsalttestpkg,gsalttestdep"}, Kwargs: be},
		{Name: "uninstall absent", Fun: "pip.uninstall", Args: []any{"gsalttestpkg"}, Kwargs: be},
		{Name: "list after", Fun: "pip.list", Args: []any{"gsalttest"}, Kwargs: be},
	}
	runSuite(t, salttest.Suite{Name: "pip", Calls: calls, Grains: linuxGrains(), Normalize: salttest.PipNormalize})
}
