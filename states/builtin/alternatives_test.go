package builtin

import (
	"os/exec"
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
)

// TestAlternativesLive runs the alternatives module and states on a
// throwaway alternative (gsalt-test-alt) with Salt 3006 and then gsalt,
// comparing every step (gated on GSALT_SALT_SRC; needs update-alternatives).
func TestAlternativesLive(t *testing.T) {
	if _, err := exec.LookPath("update-alternatives"); err != nil {
		t.Skip("no update-alternatives")
	}
	const n, link = "gsalt-test-alt", "/usr/local/bin/gsalt-test-alt"
	cleanup := func() { _ = exec.Command("update-alternatives", "--remove-all", n).Run() }
	cleanup()
	t.Cleanup(cleanup)
	calls := []salttest.Call{
		{Name: "show_current none", Fun: "alternatives.show_current", Args: []any{n}},
		single("remove missing", "alternatives.remove", false, "name", n, "path", "/bin/true"),
		single("install test", "alternatives.install", true, "name", n, "link", link, "path", "/bin/true", "priority", int64(10)),
		single("install", "alternatives.install", false, "name", n, "link", link, "path", "/bin/true", "priority", int64(10)),
		single("install second", "alternatives.install", false, "name", n, "link", link, "path", "/bin/false", "priority", int64(5)),
		single("install again", "alternatives.install", false, "name", n, "link", link, "path", "/bin/true", "priority", int64(10)),
		{Name: "display", Fun: "alternatives.display", Args: []any{n}},
		{Name: "show_link", Fun: "alternatives.show_link", Args: []any{n}},
		{Name: "check_exists", Fun: "alternatives.check_exists", Args: []any{n, "/bin/false"}},
		{Name: "check_installed", Fun: "alternatives.check_installed", Args: []any{n, "/bin/true"}},
		single("set test", "alternatives.set", true, "name", n, "path", "/bin/false"),
		single("set", "alternatives.set", false, "name", n, "path", "/bin/false"),
		single("set same", "alternatives.set", false, "name", n, "path", "/bin/false"),
		single("set missing path", "alternatives.set", false, "name", n, "path", "/bin/nope"),
		single("auto test", "alternatives.auto", true, "name", n),
		single("auto", "alternatives.auto", false, "name", n),
		single("auto already", "alternatives.auto", false, "name", n),
		single("remove test", "alternatives.remove", true, "name", n, "path", "/bin/true"),
		single("remove", "alternatives.remove", false, "name", n, "path", "/bin/true"),
		single("remove last", "alternatives.remove", false, "name", n, "path", "/bin/false"),
	}
	runStateSuite(t, salttest.Suite{Name: "alternatives_live", Live: true, RealGrains: true, Calls: calls})
}
