package builtin

import (
	"flag"
	"os"
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
)

// TestPipStatesGolden runs pip.installed, pip.removed and pip.uptodate
// (test=True, names with specifiers, pkgs lists, wheel paths,
// requirements files, upgrades, failures) on local test wheels in a fresh
// virtualenv and compares each ret with Salt 3006's
// (testdata/golden/pip_state*.json, written by Salt with -update-golden
// and GSALT_SALT_SRC; paths normalised). The sequence leaves the venv as
// it found it. It runs pip some fifty times (a minute or more on a busy
// machine), so it is gated on GSALT_PIP_STATES=1 (or -update-golden).
func TestPipStatesGolden(t *testing.T) {
	if os.Getenv("GSALT_PIP_STATES") == "" && !updateGoldenSet() {
		t.Skip("pip state goldens: set GSALT_PIP_STATES=1 (runs pip in a throwaway venv, about a minute)")
	}
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
	// PIP_FIND_LINKS (the lab's environment) offers gsalttestpkg 2.0 to
	// list_upgrades and "install -U".
	uptodate := []salttest.Call{
		single("uptodate fresh", "pip.uptodate", false, be("name", "u")...),
		single("uptodate installed old", "pip.installed", false, fl("name", "gsalttestpkg==1.0")...),
		single("uptodate test", "pip.uptodate", true, be("name", "u")...),
		single("uptodate", "pip.uptodate", false, be("name", "u")...),
		single("uptodate again", "pip.uptodate", false, be("name", "u")...),
		single("uptodate downgrade", "pip.installed", false, fl("name", "gsalttestpkg==1.0")...),
		{Name: "upgrade module", Fun: "pip.upgrade", Kwargs: be()},
		{Name: "upgrade module nothing", Fun: "pip.upgrade", Kwargs: be()},
		single("uptodate bad bin_env", "pip.uptodate", false, "name", "u", "bin_env", lab.Venv+"/nope"),
		single("uptodate removed", "pip.removed", false, be("name", "gsalttestpkg")...),
	}
	// One Salt process per suite, each within salttest's deadline: Salt
	// takes 10-30 s per state.single here at load 15 (a new State and
	// loader per call, pip run two to four times), so a 19-call suite
	// did not fit on a machine at load 40-70.
	norm := func(n string, v any) any { return salttest.PipNormalize(n, stateRet(n, v)) }
	for _, s := range []struct {
		name  string
		calls []salttest.Call
	}{{"pip_state", basic}, {"pip_state_files", files}, {"pip_state_uptodate", uptodate}} {
		t.Run(s.name, func(t *testing.T) {
			salttest.Run(t, salttest.Suite{Name: s.name, Calls: s.calls, Grains: payloadLinuxGrains(), Normalize: norm}, suiteRegistry(t))
		})
	}
}

// updateGoldenSet reports whether salttest's -update-golden flag is set.
func updateGoldenSet() bool {
	f := flag.Lookup("update-golden")
	return f != nil && f.Value.String() == "true"
}
