package builtin_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gsalt/gsalt/modules/salttest"
)

// gitWorkTree reads every file below base (skipping skip) into a map,
// with base's path replaced by {dir} and the remote's by {srv} in the
// text files outside .git/objects (config, gitdir and .git files).
func gitWorkTree(t *testing.T, base, remote string, skip ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(base, p)
		for _, s := range skip {
			if rel == s || strings.HasPrefix(rel, s+"/") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
		}
		if d.IsDir() {
			if rel != "." {
				out[rel+"/"] = ""
			}
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		s := string(b)
		if !strings.Contains(rel, "objects/") && utf8.ValidString(s) && !strings.ContainsRune(s, 0) {
			if remote != "" {
				s = strings.ReplaceAll(s, remote, "{srv}/remote.git")
			}
			s = strings.ReplaceAll(s, base, "{dir}")
		}
		out[rel] = s
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestGitWorkGolden compares the working-tree functions of the git
// module with Salt 3006 (testdata/golden/git_work.json): add, rm,
// commit, stash, archive, push, merge, discard_local_changes,
// symbolic_ref, version and the worktree functions (worktree_add,
// worktree_prune, worktree_rm, list_worktrees, is_worktree), on
// checkouts of a local bare repository with fixed identities and dates
// so commit hashes are the same on both sides. The returns and the files
// left in the checkout (and its worktrees) are compared.
func TestGitWorkGolden(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	for k, v := range map[string]string{"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com", "GIT_COMMITTER_NAME": "Test",
		"GIT_COMMITTER_EMAIL": "test@example.com", "GIT_AUTHOR_DATE": "2024-01-02T03:04:05Z", "GIT_COMMITTER_DATE": "2024-01-02T03:04:05Z",
		"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"} {
		t.Setenv(k, v)
	}
	top := t.TempDir()
	work, remote := filepath.Join(top, "work"), filepath.Join(top, "remote.git")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(dir, n, body string) {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitOpsFixture(t, work, "init", "-q", "-b", "main")
	write(work, "f1.txt", "one\n")
	gitOpsFixture(t, work, "add", ".")
	gitOpsFixture(t, work, "commit", "-q", "-m", "c1")
	gitOpsFixture(t, work, "tag", "v1")
	write(work, "f2.txt", "two\n")
	gitOpsFixture(t, work, "add", ".")
	gitOpsFixture(t, work, "commit", "-q", "-m", "c2")
	gitOpsFixture(t, work, "checkout", "-q", "-b", "dev")
	write(work, "f3.txt", "three\n")
	gitOpsFixture(t, work, "add", ".")
	gitOpsFixture(t, work, "commit", "-q", "-m", "c3")
	gitOpsFixture(t, work, "checkout", "-q", "main")
	gitOpsFixture(t, top, "clone", "-q", "--bare", work, remote)
	srv := map[string]string{}
	for k, v := range gitWorkTree(t, remote, "") {
		srv["remote.git/"+k] = v
	}

	// fixture builds a checkout at base/repo, changed by prep.
	fixture := func(prep func(repo string)) map[string]string {
		base := t.TempDir()
		repo := filepath.Join(base, "repo")
		gitOpsFixture(t, base, "clone", "-q", "file://"+remote, repo)
		if prep != nil {
			prep(repo)
		}
		return gitWorkTree(t, base, remote)
	}
	clean := fixture(nil)
	dirty := fixture(func(r string) {
		write(r, "f1.txt", "changed\n")
		write(r, "fnew.txt", "new\n")
	})
	staged := fixture(func(r string) {
		write(r, "fnew.txt", "new\n")
		gitOpsFixture(t, r, "add", "fnew.txt")
	})
	ahead := fixture(func(r string) {
		write(r, "f4.txt", "four\n")
		gitOpsFixture(t, r, "add", ".")
		gitOpsFixture(t, r, "commit", "-q", "-m", "c4")
	})
	trees := fixture(func(r string) {
		gitOpsFixture(t, r, "worktree", "add", "-q", "-b", "fwt", filepath.Join(r, "fwt"))
		gitOpsFixture(t, r, "worktree", "add", "-q", "--detach", filepath.Join(r, "fdet"), "v1")
		gone := filepath.Join(filepath.Dir(r), "gone")
		gitOpsFixture(t, r, "worktree", "add", "-q", "-b", "gone", gone)
		if err := os.RemoveAll(gone); err != nil {
			t.Fatal(err)
		}
	})

	r := "{dir}/repo"
	c := func(name, fun string, files map[string]string, args []any, kw ...any) salttest.Call {
		if files == nil {
			files = map[string]string{}
		}
		return salttest.Call{Name: name, Fun: fun, Args: args, Kwargs: kw, Files: files}
	}
	calls := []salttest.Call{
		c("add", "git.add", dirty, []any{r, "fnew.txt"}),
		c("add verbose opt dropped", "git.add", dirty, []any{r, "."}, "opts", "-v"),
		c("add missing", "git.add", clean, []any{r, "nosuch"}),
		c("add missing ignore_retcode", "git.add", clean, []any{r, "nosuch"}, "ignore_retcode", true),
		c("commit git_opts", "git.commit", staged, []any{r, "abbrev"}, "git_opts", "-c core.abbrev=12"),
		c("stash git_opts list", "git.stash", dirty, []any{r, "push"}, "opts", "-m wip -- f1.txt", "git_opts", []any{"-c", "core.abbrev=9"}),
		c("rm", "git.rm", clean, []any{r, "f2.txt"}),
		c("rm cached", "git.rm", clean, []any{r, "f1.txt"}, "opts", "--cached"),
		c("rm missing", "git.rm", clean, []any{r, "nosuch"}),
		c("commit", "git.commit", staged, []any{r, "add fnew"}),
		c("commit nothing", "git.commit", clean, []any{r, "nothing"}),
		c("commit filename", "git.commit", dirty, []any{r, "change f1"}, "filename", "f1.txt"),
		c("commit opts all", "git.commit", dirty, []any{r, "all"}, "opts", "-a"),
		c("stash", "git.stash", dirty, []any{r}),
		c("stash list empty", "git.stash", clean, []any{r, "list"}),
		c("stash bad action", "git.stash", clean, []any{r, "nosuch"}),
		c("archive", "git.archive", clean, []any{r, "{dir}/repo/f.tar"}),
		c("archive zip prefix", "git.archive", clean, []any{r, "{dir}/repo/f.zip"}, "prefix", "p/", "format", "zip"),
		c("archive no prefix rev", "git.archive", clean, []any{r, "{dir}/repo/f1.tar"}, "prefix", "", "rev", "v1"),
		c("archive bad kwarg", "git.archive", clean, []any{r, "{dir}/repo/f.tar"}, "bogus", 1),
		c("archive bad rev", "git.archive", clean, []any{r, "{dir}/repo/f.tar"}, "rev", "nosuch"),
		c("merge", "git.merge", clean, []any{r}, "rev", "origin/dev"),
		c("merge bad rev", "git.merge", clean, []any{r}, "rev", "nosuch"),
		c("merge bad kwarg", "git.merge", clean, []any{r}, "bogus", 1),
		c("discard_local_changes", "git.discard_local_changes", dirty, []any{r}),
		c("discard_local_changes path", "git.discard_local_changes", dirty, []any{r, "f1.txt"}),
		c("symbolic_ref", "git.symbolic_ref", clean, []any{r, "HEAD"}),
		c("symbolic_ref short", "git.symbolic_ref", clean, []any{r, "HEAD"}, "opts", "--short"),
		c("symbolic_ref delete with value", "git.symbolic_ref", clean, []any{r, "HEAD", "x"}, "opts", "-d"),
		c("version", "git.version", nil, nil),
		c("version info", "git.version", nil, nil, "versioninfo", true),
		c("list_worktrees", "git.list_worktrees", trees, []any{r}),
		c("list_worktrees all", "git.list_worktrees", trees, []any{r}, "all", true),
		c("list_worktrees stale", "git.list_worktrees", trees, []any{r}, "stale", true),
		c("list_worktrees all and stale", "git.list_worktrees", trees, []any{r}, "all", true, "stale", true),
		c("list_worktrees bad kwarg", "git.list_worktrees", trees, []any{r}, "bogus", 1),
		c("list_worktrees none", "git.list_worktrees", clean, []any{r}),
		c("list_worktrees not repo", "git.list_worktrees", nil, []any{"{dir}"}),
		c("is_worktree", "git.is_worktree", trees, []any{r + "/fwt"}),
		c("worktree_add", "git.worktree_add", clean, []any{r, r + "/fwt"}),
		c("worktree_add branch ref", "git.worktree_add", clean, []any{r, r + "/fx"}, "branch", "topic", "ref", "v1"),
		c("worktree_add detach", "git.worktree_add", clean, []any{r, r + "/fd"}, "detach", true, "ref", "origin/dev"),
		c("worktree_add branch and detach", "git.worktree_add", clean, []any{r, r + "/fd"}, "detach", true, "branch", "x"),
		c("worktree_add existing branch", "git.worktree_add", clean, []any{r, r + "/fm"}, "branch", "main"),
		c("worktree_add reset_branch", "git.worktree_add", trees, []any{r, r + "/fnew"}, "branch", "fwt", "reset_branch", true, "force", true),
		c("worktree_prune dry_run", "git.worktree_prune", trees, []any{r}, "dry_run", true),
		c("worktree_prune", "git.worktree_prune", trees, []any{r}),
		c("worktree_prune quiet", "git.worktree_prune", trees, []any{r}, "verbose", false),
		c("worktree_rm", "git.worktree_rm", trees, []any{r + "/fwt"}),
		c("worktree_rm main", "git.worktree_rm", trees, []any{r}),
		c("worktree_rm missing", "git.worktree_rm", trees, []any{r + "/fnope"}),
		c("push", "git.push", ahead, []any{r, "origin", "HEAD:pushed"}),
		c("ls_remote after push", "git.ls_remote", clean, []any{r}, "ref", "pushed"),
		c("push bad kwarg", "git.push", ahead, []any{r, "origin", "main"}, "bogus", 1),
		c("push rejected", "git.push", clean, []any{r, "origin", "HEAD:dev"}),
	}
	runSuite(t, salttest.Suite{Name: "git_work", Srv: srv, Calls: calls, FilesUnder: "repo/f"})
}
