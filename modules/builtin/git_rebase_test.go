package builtin_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
)

// gitRebaseTree builds a checkout (committer identity in its config,
// fixed dates) with main (c1, c2 changing f1) and two branches forked at
// c1: feature (adds f3) and clash (changes f1 too), checked out at
// branch, and returns its files for a salttest call.
func gitRebaseTree(t *testing.T, branch string) map[string]string {
	t.Helper()
	work := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(n, body string) {
		if err := os.WriteFile(filepath.Join(work, n), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g := func(args ...string) { gitOpsFixture(t, work, args...) }
	g("init", "-q", "-b", "main")
	g("config", "user.name", "Test")
	g("config", "user.email", "test@example.com")
	write("f1.txt", "one\n")
	g("add", ".")
	g("commit", "-q", "-m", "c1")
	g("branch", "feature")
	g("branch", "clash")
	write("f1.txt", "one\nmain\n")
	g("commit", "-q", "-am", "c2")
	g("checkout", "-q", "feature")
	write("f3.txt", "three\n")
	g("add", ".")
	g("commit", "-q", "-m", "c3")
	g("checkout", "-q", "clash")
	write("f1.txt", "one\nclash\n")
	g("commit", "-q", "-am", "c4")
	g("checkout", "-q", branch)
	files := map[string]string{}
	err := filepath.WalkDir(work, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(filepath.Dir(work), p)
		if d.IsDir() {
			files[rel+"/"] = ""
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files[rel] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestGitRebaseGolden compares git.rebase with Salt 3006
// (testdata/golden/git_rebase.json): a rebase that applies, one already
// up to date, an upstream and branch given in rev, a conflict, a bad
// revision, the refused interactive forms and a bad opts string; the
// work tree's files are compared too.
func TestGitRebaseGolden(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	feature, main := gitRebaseTree(t, "feature"), gitRebaseTree(t, "main")
	clash := gitRebaseTree(t, "clash")
	r := "{dir}/repo"
	c := func(name string, files map[string]string, args []any, kw ...any) salttest.Call {
		return salttest.Call{Name: name, Fun: "git.rebase", Args: args, Kwargs: kw, Files: files}
	}
	calls := []salttest.Call{
		c("onto main", feature, []any{r, "main"}),
		c("up to date", main, []any{r, "main"}),
		c("default rev master", feature, []any{r}),
		c("upstream and branch", main, []any{r, "main feature"}),
		c("onto option", feature, []any{r, "main"}, "opts", "--onto main"),
		c("conflict", clash, []any{r, "main"}),
		c("conflict ignore_retcode", clash, []any{r, "main"}, "ignore_retcode", true),
		c("bad rev", feature, []any{r, "nosuch"}),
		c("interactive", feature, []any{r, "main"}, "opts", "-i"),
		c("interactive long", feature, []any{r, "main"}, "opts", []any{"--autostash", "--interactive"}),
		c("bad opts quoting", feature, []any{r, "main"}, "opts", "'--onto"),
		c("git_opts", feature, []any{r, "main"}, "git_opts", "-c core.quotepath=false"),
	}
	runSuite(t, salttest.Suite{Name: "git_rebase", Calls: calls, FilesUnder: "repo/f"})
}
