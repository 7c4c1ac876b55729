package builtin_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
)

// gitOpsFixture runs git with fixed identities and dates, so hashes are
// the same on every run.
func gitOpsFixture(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com", "GIT_COMMITTER_NAME=Test",
		"GIT_COMMITTER_EMAIL=test@example.com", "GIT_AUTHOR_DATE=2024-01-02T03:04:05Z", "GIT_COMMITTER_DATE=2024-01-02T03:04:05Z",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// TestGitOpsGolden compares the repository functions of the git module
// with Salt 3006 (testdata/golden/git_ops.json) on a checkout of a local
// bare repository (file://): reads (revision, current_branch, describe,
// rev_parse, list_branches, list_tags, remotes, remote_get, ls_remote,
// remote_refs, status, diff, merge_base, is_worktree) and changes
// (init, tag, branch, checkout, reset, remote_set, fetch, pull, clone),
// with their errors.
func TestGitOpsGolden(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	base := t.TempDir()
	work, remote := filepath.Join(base, "work"), filepath.Join(base, "remote.git")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(n, body string) {
		if err := os.WriteFile(filepath.Join(work, n), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitOpsFixture(t, work, "init", "-q", "-b", "main")
	write("f1.txt", "one\n")
	gitOpsFixture(t, work, "add", ".")
	gitOpsFixture(t, work, "commit", "-q", "-m", "c1")
	gitOpsFixture(t, work, "tag", "-a", "v1", "-m", "v1")
	write("f2.txt", "two\n")
	gitOpsFixture(t, work, "add", ".")
	gitOpsFixture(t, work, "commit", "-q", "-m", "c2")
	gitOpsFixture(t, base, "clone", "-q", "--bare", work, remote)
	co := filepath.Join(base, "co")
	gitOpsFixture(t, base, "clone", "-q", remote, co)
	srv := map[string]string{}
	repo := map[string]string{}
	read := func(dir, prefix string, into map[string]string) {
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			if d.IsDir() {
				if rel != "." {
					into[prefix+rel+"/"] = ""
				}
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			s := string(b)
			if rel == ".git/config" {
				s = strings.ReplaceAll(s, remote, "file://{srv}/remote.git")
			}
			into[prefix+rel] = s
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	read(remote, "remote.git/", srv)
	read(co, "repo/", repo)
	dirty := map[string]string{}
	for k, v := range repo {
		dirty[k] = v
	}
	dirty["repo/f1.txt"] = "changed\n"
	dirty["repo/new.txt"] = "new\n"
	r := "{dir}/repo"
	u := "file://{srv}/remote.git"
	c := func(name, fun string, files map[string]string, args []any, kw ...any) salttest.Call {
		if files == nil {
			files = map[string]string{}
		}
		return salttest.Call{Name: name, Fun: fun, Args: args, Kwargs: kw, Files: files}
	}
	calls := []salttest.Call{
		c("revision", "git.revision", repo, []any{r}),
		c("revision short", "git.revision", repo, []any{r}, "short", true),
		c("revision bad", "git.revision", repo, []any{r, "nosuch"}),
		c("current_branch", "git.current_branch", repo, []any{r}),
		c("describe", "git.describe", repo, []any{r}),
		c("rev_parse", "git.rev_parse", repo, []any{r, "v1^{commit}"}),
		c("rev_parse opts", "git.rev_parse", repo, []any{r, "HEAD"}, "opts", "--abbrev-ref"),
		c("list_branches", "git.list_branches", repo, []any{r}),
		c("list_branches remote", "git.list_branches", repo, []any{r}, "remote", true),
		c("list_tags", "git.list_tags", repo, []any{r}),
		c("remotes", "git.remotes", repo, []any{r}),
		c("remote_get", "git.remote_get", repo, []any{r}),
		c("remote_get missing", "git.remote_get", repo, []any{r, "upstream"}),
		c("ls_remote", "git.ls_remote", repo, []any{r}),
		c("ls_remote tags", "git.ls_remote", repo, []any{r}, "opts", "--tags"),
		c("remote_refs", "git.remote_refs", nil, []any{u}),
		c("remote_refs heads", "git.remote_refs", nil, []any{u}, "heads", true),
		c("remote_refs bad kwarg", "git.remote_refs", nil, []any{u}, "bogus", 1),
		c("remote_refs https_user", "git.remote_refs", nil, []any{u}, "https_user", "x"),
		c("status clean", "git.status", repo, []any{r}),
		c("status dirty", "git.status", dirty, []any{r}),
		c("diff", "git.diff", dirty, []any{r, "HEAD"}),
		c("diff no_index cached", "git.diff", dirty, []any{r}, "no_index", true, "cached", true),
		c("merge_base is_ancestor", "git.merge_base", repo, []any{r}, "refs", []any{"v1", "HEAD"}, "is_ancestor", true),
		c("merge_base not ancestor", "git.merge_base", repo, []any{r}, "refs", "HEAD,v1", "is_ancestor", true),
		c("merge_base", "git.merge_base", repo, []any{r}, "refs", []any{"v1", "HEAD"}),
		c("merge_base is_ancestor one ref", "git.merge_base", repo, []any{r}, "refs", "HEAD", "is_ancestor", true),
		c("is_worktree", "git.is_worktree", repo, []any{r}),
		c("is_worktree not repo", "git.is_worktree", nil, []any{"{dir}"}),
		c("init", "git.init", nil, []any{"{dir}/new"}),
		c("init bare", "git.init", nil, []any{"{dir}/new.git"}, "bare", true),
		c("tag", "git.tag", repo, []any{r, "v2"}),
		c("tag message opt", "git.tag", repo, []any{r, "v2"}, "opts", "-m x"),
		c("tag delete", "git.tag", repo, []any{r, "v1"}, "opts", "-d"),
		c("branch", "git.branch", repo, []any{r, "feature"}),
		c("checkout", "git.checkout", repo, []any{r, "v1"}),
		c("checkout new branch", "git.checkout", repo, []any{r}, "opts", "-b topic"),
		c("checkout no rev", "git.checkout", repo, []any{r}),
		c("reset hard", "git.reset", dirty, []any{r}, "opts", "--hard v1"),
		c("remote_set", "git.remote_set", repo, []any{r, "file:///elsewhere.git"}),
		c("remote_set new", "git.remote_set", repo, []any{r, "file:///elsewhere.git"}, "remote", "upstream"),
		c("fetch", "git.fetch", repo, []any{r}),
		c("pull", "git.pull", repo, []any{r}),
		c("clone", "git.clone", nil, []any{"{dir}/cl", u}),
		c("clone named", "git.clone", nil, []any{"{dir}/parent", u}, "name", "cl"),
		c("clone no url", "git.clone", nil, []any{"{dir}/cl"}),
		c("clone bad url", "git.clone", nil, []any{"{dir}/cl", "file:///nonexistent/repo.git"}),
	}
	runSuite(t, salttest.Suite{Name: "git_ops", Srv: srv, Calls: calls, FilesUnder: "repo/f"})
}
