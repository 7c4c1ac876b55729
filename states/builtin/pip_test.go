package builtin

import (
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
)

// TestPipStatesGolden runs pip.installed and pip.removed (test=True,
// names with specifiers, pkgs lists, wheel paths, requirements files,
// failures) on local test wheels in a fresh virtualenv and compares each
// ret with Salt 3006's run now on the same venv (live: gated on
// GSALT_SALT_SRC; paths normalised). The sequence leaves the venv as it
// found it.
func TestPipStatesLive(t *testing.T) {
	lab := salttest.NewPipLab(t)
	be := func(kv ...any) []any { return append([]any{"bin_env", lab.Venv}, kv...) }
	fl := func(kv ...any) []any { return be(append([]any{"find_links", lab.Wheels, "no_index", true}, kv...)...) }
	req := map[string]string{"req.txt": "gsalttestdep==0.1\n"}
	basic := []salttest.Call{
		single("removed missing", "pip.removed", false, be("name", "gsalttestpkg")...),
		single("installed test", "pip.installed", true, fl("name", "gsalttestpkg==1.0")...),
		single("installed", "pip.installed", false, fl("name", "gsalttestpkg==1.0")...),
		single("installed again", "pip.installed", false, fl("name", "GSaltTestPkg>=0.5,<3")...),
		single("installed bad spec", "pip.installed", false, fl("name", "gsalttestpkg=1.0")...),
		single("installed pkgs test", "pip.installed", true, fl("name", "x", "pkgs", []any{"gsalttestpkg", "gsalttestdep==0.1"})...),
		single("installed pkgs not list", "pip.installed", false, fl("name", "x", "pkgs", "gsalttestpkg")...),
		single("installed missing", "pip.installed", false, fl("name", "gsalt-no-such-pkg")...),
		single("removed test", "pip.removed", true, be("name", "gsalttestpkg")...),
		single("removed", "pip.removed", false, be("name", "gsalttestpkg")...),
	}
	files := []salttest.Call{
		{Name: "installed requirements test", Fun: "state.single", Args: []any{"pip.installed"}, Files: req,
			Kwargs: fl("name", "reqs", "requirements", "{dir}/req.txt", "test", true)},
		{Name: "installed requirements", Fun: "state.single", Args: []any{"pip.installed"}, Files: req,
			Kwargs: fl("name", "reqs", "requirements", "{dir}/req.txt")},
		{Name: "installed requirements again", Fun: "state.single", Args: []any{"pip.installed"}, Files: req,
			Kwargs: fl("name", "reqs", "requirements", "{dir}/req.txt")},
		single("installed wheel path", "pip.installed", false, be("name", lab.Wheels2+"/gsalttestpkg-2.0-py3-none-any.whl")...),
		single("installed wheel path again", "pip.installed", false, be("name", lab.Wheels2+"/gsalttestpkg-2.0-py3-none-any.whl")...),
		single("installed bad bin_env", "pip.installed", false, "name", "gsalttestpkg", "bin_env", lab.Venv+"/nope"),
		single("removed wheel", "pip.removed", false, be("name", "gsalttestpkg")...),
		single("removed dep", "pip.removed", false, be("name", "gsalttestdep")...),
		single("removed bad bin_env", "pip.removed", false, "name", "gsalttestpkg", "bin_env", lab.Venv+"/nope"),
	}
	// Two suites: one Salt process runs each within salttest's deadline.
	norm := func(n string, v any) any { return salttest.PipNormalize(n, stateRet(n, v)) }
	for name, calls := range map[string][]salttest.Call{"pip_state": basic, "pip_state_files": files} {
		t.Run(name, func(t *testing.T) {
			salttest.Run(t, salttest.Suite{Name: name, Live: true, Calls: calls, Grains: payloadLinuxGrains(), Normalize: norm}, suiteRegistry(t))
		})
	}
}
