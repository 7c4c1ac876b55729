package builtin

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
)

// TestGitPresentGolden compares git.present (bare and non-bare, force,
// template, separate_git_dir, test=True) with Salt 3006
// (testdata/golden/git_present.json), the repositories it creates
// included.
func TestGitPresentGolden(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	srv, _, current, _, _, _, _ := gitLatestFixture(t)
	bare := map[string]string{}
	for k, v := range srv {
		bare["new"+k[len("remote"):]] = v
	}
	// The bare repository's origin is the fixture's temporary work tree.
	if cfg, _, ok := strings.Cut(bare["new.git/config"], "[remote"); ok {
		bare["new.git/config"] = cfg
	}
	nonBare := map[string]string{}
	for k, v := range current {
		// The reflogs name the fixture's temporary path and the index
		// holds stat data: neither is stable between runs.
		if !strings.Contains(k, "/logs/") && !strings.HasSuffix(k, "/index") {
			nonBare["new"+k[len("repo"):]] = v
		}
	}
	stray := map[string]string{"new/stray.txt": "x\n"}
	empty := map[string]string{"new/": ""}
	tmpl := map[string]string{"tmpl/description": "template description\n", "tmpl/info/exclude": "*.o\n"}
	p := func(name string, test bool, files map[string]string, kw ...any) salttest.Call {
		c := single(name, "git.present", test, kw...)
		c.Files = files
		if c.Files == nil {
			c.Files = map[string]string{}
		}
		return c
	}
	calls := []salttest.Call{
		p("bare new", false, nil, "name", "{dir}/new.git"),
		p("bare new test", true, nil, "name", "{dir}/new.git"),
		p("non-bare new", false, nil, "name", "{dir}/new", "bare", false),
		p("non-bare new test", true, nil, "name", "{dir}/new", "bare", false),
		p("bare exists", false, bare, "name", "{dir}/new.git"),
		p("non-bare exists", false, nonBare, "name", "{dir}/new", "bare", false),
		p("bare wanted on non-bare", false, nonBare, "name", "{dir}/new"),
		p("empty dir", false, empty, "name", "{dir}/new"),
		p("not a repo", false, stray, "name", "{dir}/new"),
		p("not a repo non-bare", false, stray, "name", "{dir}/new", "bare", false),
		p("force test", true, stray, "name", "{dir}/new", "force", true),
		p("force", false, stray, "name", "{dir}/new", "force", true),
		p("force non-bare", false, stray, "name", "{dir}/new", "force", true, "bare", false),
		p("template", false, tmpl, "name", "{dir}/new.git", "template", "{dir}/tmpl"),
		p("separate_git_dir", false, tmpl, "name", "{dir}/new", "bare", false, "separate_git_dir", "{dir}/new-sep.git", "template", "{dir}/tmpl"),
		p("shared", false, tmpl, "name", "{dir}/new.git", "shared", "group", "template", "{dir}/tmpl"),
	}
	runStateSuite(t, salttest.Suite{Name: "git_present", Srv: srv, Calls: calls, Grains: payloadLinuxGrains(), FilesUnder: "new"})
}

// TestGitClonedDetachedGolden compares git.cloned and git.detached (and
// git.latest's onlyif/unless, run by the state engine) with Salt 3006
// (testdata/golden/git_cloned.json) against a local bare repository
// over file://: fresh clones, existing checkouts, branch changes, tags,
// refs and commit hashes checked out detached, remote URL changes,
// hard_reset, force_clone, the argument errors and test=True. The
// checked-out files are compared too.
func TestGitClonedDetachedGolden(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	srv, behind, current, other, dirty, _, notRepo := gitLatestFixture(t)
	tmp := t.TempDir()
	salttest.WriteTree(t, tmp, tmp, srv)
	v1 := gitFixture(t, filepath.Join(tmp, "remote.git"), "rev-parse", "v1^{commit}")
	head := gitFixture(t, filepath.Join(tmp, "remote.git"), "rev-parse", "main")

	url := "file://{srv}/remote.git"
	tg := "{dir}/repo"
	call := func(fun, name string, test bool, files map[string]string, kw ...any) salttest.Call {
		c := single(name, fun, test, kw...)
		c.Files = files
		if c.Files == nil {
			c.Files = map[string]string{}
		}
		return c
	}
	cl := func(name string, test bool, files map[string]string, kw ...any) salttest.Call {
		return call("git.cloned", name, test, files, append([]any{"name", url}, kw...)...)
	}
	de := func(name string, test bool, files map[string]string, kw ...any) salttest.Call {
		return call("git.detached", name, test, files, append([]any{"name", url}, kw...)...)
	}
	calls := []salttest.Call{
		cl("cloned", false, nil, "target", tg),
		cl("cloned test", true, nil, "target", tg),
		cl("cloned branch", false, nil, "target", tg, "branch", "dev"),
		cl("cloned branch test", true, nil, "target", tg, "branch", "dev"),
		cl("cloned relative", false, nil, "target", "repo"),
		cl("cloned no target", false, nil),
		cl("cloned empty branch", false, nil, "target", tg, "branch", ""),
		cl("cloned bad url", false, nil, "target", tg, "name", "file:///nonexistent/repo.git"),
		cl("cloned exists", false, current, "target", tg),
		cl("cloned exists test", true, current, "target", tg),
		cl("cloned exists on branch", false, current, "target", tg, "branch", "main"),
		cl("cloned change branch test", true, current, "target", tg, "branch", "dev"),
		cl("cloned change branch", false, current, "target", tg, "branch", "dev"),
		cl("cloned change to missing branch", false, current, "target", tg, "branch", "nosuch"),
		cl("cloned not a repo", false, notRepo, "target", tg),
		de("detached tag", false, nil, "target", tg, "rev", "v1"),
		de("detached tag test", true, nil, "target", tg, "rev", "v1"),
		de("detached branch ref", false, nil, "target", tg, "rev", "dev"),
		de("detached hash", false, nil, "target", tg, "rev", v1),
		de("detached upstream remote", false, nil, "target", tg, "rev", "v2", "remote", "upstream"),
		de("detached no such rev", false, nil, "target", tg, "rev", "nosuch"),
		de("detached empty rev", false, nil, "target", tg, "rev", ""),
		de("detached relative", false, nil, "target", "repo", "rev", "v1"),
		de("detached bad kwarg", false, nil, "target", tg, "rev", "v1", "bogus", 1),
		de("detached bad identity", false, nil, "target", tg, "rev", "v1", "identity", 3),
		de("detached relative identity", false, nil, "target", tg, "rev", "v1", "identity", "id_rsa"),
		de("detached https_user", false, nil, "target", tg, "rev", "v1", "https_user", "u"),
		de("detached target is file", false, map[string]string{"repo": "x"}, "target", tg, "rev", "v1"),
		de("detached not a repo", false, notRepo, "target", tg, "rev", "v1"),
		de("detached force_clone test", true, notRepo, "target", tg, "rev", "v1", "force_clone", true),
		de("detached force_clone", false, notRepo, "target", tg, "rev", "v1", "force_clone", true),
		de("detached existing tag", false, current, "target", tg, "rev", "v1"),
		de("detached existing tag test", true, current, "target", tg, "rev", "v1"),
		de("detached existing at rev", false, current, "target", tg, "rev", "main"),
		de("detached existing local hash", false, current, "target", tg, "rev", head),
		de("detached existing local hash test", true, current, "target", tg, "rev", head),
		de("detached behind no fetch", false, behind, "target", tg, "rev", "v2", "fetch_remote", false),
		de("detached behind", false, behind, "target", tg, "rev", "v2"),
		de("detached other remote test", true, other, "target", tg, "rev", "v1"),
		de("detached other remote", false, other, "target", tg, "rev", "v1"),
		de("detached dirty", false, dirty, "target", tg, "rev", "v1"),
		de("detached dirty hard_reset", false, dirty, "target", tg, "rev", "v1", "hard_reset", true),
		de("detached dirty hard_reset test", true, dirty, "target", tg, "rev", "v1", "hard_reset", true, "fetch_remote", false),
		de("detached force_checkout", false, dirty, "target", tg, "rev", "dev", "force_checkout", true),
		call("git.latest", "latest unless", false, nil, "name", url, "target", tg, "unless", "true"),
		call("git.latest", "latest onlyif false", false, nil, "name", url, "target", tg, "onlyif", "false"),
		call("git.latest", "latest onlyif true", false, nil, "name", url, "target", tg, "onlyif", "true"),
		call("git.latest", "latest unless test", true, current, "name", url, "target", tg, "unless", "true"),
		call("git.latest", "latest submodules", false, nil, "name", url, "target", tg, "submodules", true),
		call("git.latest", "latest behind submodules", false, behind, "name", url, "target", tg, "submodules", true),
		call("git.latest", "latest dirty new branch", false, dirty, "name", url, "target", tg, "rev", "dev", "branch", "dev"),
		call("git.latest", "latest dirty new branch force_checkout", false, dirty, "name", url, "target", tg, "rev", "dev", "branch", "dev", "force_checkout", true, "force_reset", true),
		call("git.latest", "latest dirty force_checkout test", true, dirty, "name", url, "target", tg, "rev", "dev", "branch", "dev", "force_checkout", true),
		call("git.latest", "latest behind fetch_tags false", false, behind, "name", url, "target", tg, "fetch_tags", false),
		call("git.latest", "latest behind depth", false, behind, "name", url, "target", tg, "depth", 1),
		call("git.latest", "latest rev hash", false, nil, "name", url, "target", tg, "rev", v1),
		call("git.latest", "latest rev hash existing", false, current, "name", url, "target", tg, "rev", v1, "force_reset", true),
		call("git.latest", "latest bad identity", false, nil, "name", url, "target", tg, "identity", 3),
		call("git.latest", "latest existing other branch rev", false, current, "name", url, "target", tg, "rev", "dev"),
	}
	runStateSuite(t, salttest.Suite{Name: "git_cloned", Srv: srv, Calls: calls, Grains: payloadLinuxGrains(), FilesUnder: "repo/f"})
}
