package builtin

import (
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"

	"github.com/gsalt/gsalt/modules/salttest"
)

// gitFixture runs git with fixed identities and dates, so that commit and
// tag hashes are the same on every run (and for Salt and gsalt).
func gitFixture(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com", "GIT_COMMITTER_NAME=Test",
		"GIT_COMMITTER_EMAIL=test@example.com", "GIT_AUTHOR_DATE=2024-01-02T03:04:05Z", "GIT_COMMITTER_DATE=2024-01-02T03:04:05Z",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// treeMap reads every regular file below dir into a map, rel path → body,
// with prefix prepended and the remote's real path replaced by {srv}.
func treeMap(t *testing.T, dir, prefix, remotePath string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if rel != "." {
				out[prefix+rel+"/"] = ""
			}
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		s := string(b)
		if remotePath != "" && rel == ".git/config" {
			s = strings.ReplaceAll(s, remotePath, "file://{srv}/remote.git")
		}
		out[prefix+rel] = s
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mergeMaps(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// TestGitLatestGolden compares git.latest (and test=True) with Salt 3006
// (testdata/golden/git_latest.json) against a local bare repository over
// file://: fresh clones (HEAD, branch, tags, bare, mirror, depth,
// branch=), updates of an existing checkout (fast-forward, uncommitted
// changes, force_reset, update_head=False, remote URL change, new
// branch), force_clone, and the argument errors. The checked-out files
// are compared too.
func TestGitLatestGolden(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	srv, behind, current, other, dirty, dirtyBehind, notRepo := gitLatestFixture(t)
	_ = other

	url := "file://{srv}/remote.git"
	tg := "{dir}/repo"
	gl := func(name string, test bool, files map[string]string, kw ...any) salttest.Call {
		c := single(name, "git.latest", test, append([]any{"name", url}, kw...)...)
		c.Files = files
		if c.Files == nil {
			c.Files = map[string]string{}
		}
		return c
	}
	calls := []salttest.Call{
		gl("clone", false, nil, "target", tg),
		gl("clone test", true, nil, "target", tg),
		gl("clone branch rev", false, nil, "target", tg, "rev", "dev"),
		gl("clone tag", false, nil, "target", tg, "rev", "v1"),
		gl("clone annotated tag", false, nil, "target", tg, "rev", "v2"),
		gl("clone with branch", false, nil, "target", tg, "rev", "dev", "branch", "feature"),
		gl("clone HEAD with branch", false, nil, "target", tg, "branch", "local"),
		gl("clone bare", false, nil, "target", tg, "bare", true),
		gl("clone mirror", false, nil, "target", tg, "mirror", true),
		gl("clone depth", false, nil, "target", tg, "rev", "main", "depth", 1),
		gl("depth HEAD", false, nil, "target", tg, "depth", 1),
		gl("rev with bare", false, nil, "target", tg, "rev", "main", "bare", true),
		gl("no such rev", false, nil, "target", tg, "rev", "nosuch"),
		gl("relative target", false, nil, "target", "repo"),
		gl("no target", false, nil),
		gl("target is file", false, map[string]string{"repo": "x"}, "target", tg),
		gl("target not repo", false, notRepo, "target", tg),
		gl("force_clone test", true, notRepo, "target", tg, "force_clone", true),
		gl("force_clone", false, notRepo, "target", tg, "force_clone", true),
		gl("https_user on file url", false, nil, "target", tg, "https_user", "u", "https_pass", "p"),
		gl("bad kwarg", false, nil, "target", tg, "bogus", 1),
		gl("bad force_reset", false, nil, "target", tg, "force_reset", "yes"),
		gl("bad remote", false, nil, "target", tg, "remote", ""),
		gl("up to date", false, current, "target", tg),
		gl("up to date test", true, current, "target", tg),
		gl("up to date rev main", false, current, "target", tg, "rev", "main"),
		gl("behind", false, behind, "target", tg),
		gl("behind test", true, behind, "target", tg),
		gl("behind rev main", false, behind, "target", tg, "rev", "main"),
		gl("behind update_head false", false, behind, "target", tg, "update_head", false),
		gl("behind new branch", false, behind, "target", tg, "rev", "dev", "branch", "dev"),
		gl("behind new branch test", true, behind, "target", tg, "rev", "dev", "branch", "dev"),
		gl("dirty", false, dirty, "target", tg),
		gl("dirty force_reset test", true, dirty, "target", tg, "force_reset", true),
		gl("dirty force_reset", false, dirty, "target", tg, "force_reset", true),
		gl("dirty behind", false, dirtyBehind, "target", tg),
		gl("dirty behind force_reset", false, dirtyBehind, "target", tg, "force_reset", true),
		gl("dirty behind remote-changes", false, dirtyBehind, "target", tg, "force_reset", "remote-changes"),
		// The remote-change comments go through Salt's double
		// _format_comments, which splits the {srv} path: checked by
		// TestGitLatestRemoteChange without Salt.
		gl("tag on current", false, current, "target", tg, "rev", "v1"),
		gl("remote named upstream", false, nil, "target", tg, "remote", "upstream"),
	}
	runStateSuite(t, salttest.Suite{Name: "git_latest", Srv: srv, Calls: calls, Grains: payloadLinuxGrains(), FilesUnder: "repo/f", Parallel: true})
}

// gitLatestFixture builds the remote (as a file_roots tree below
// remote.git/) and the checkouts the git.latest cases start from.
func gitLatestFixture(t *testing.T) (srv, behind, current, other, dirty, dirtyBehind, notRepo map[string]string) {
	t.Helper()
	base := t.TempDir()
	work := filepath.Join(base, "work")
	remote := filepath.Join(base, "remote.git")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(n, body string) {
		if err := os.WriteFile(filepath.Join(work, n), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitFixture(t, work, "init", "-q", "-b", "main")
	write("f1.txt", "one\n")
	gitFixture(t, work, "add", ".")
	gitFixture(t, work, "commit", "-q", "-m", "c1")
	gitFixture(t, work, "tag", "v1")
	gitFixture(t, base, "clone", "-q", "--bare", work, remote)
	gitFixture(t, base, "clone", "-q", remote, filepath.Join(base, "behind"))
	write("f2.txt", "two\n")
	gitFixture(t, work, "add", ".")
	gitFixture(t, work, "commit", "-q", "-m", "c2")
	gitFixture(t, work, "tag", "-a", "v2", "-m", "release 2")
	gitFixture(t, work, "checkout", "-q", "-b", "dev")
	write("f3.txt", "three\n")
	gitFixture(t, work, "add", ".")
	gitFixture(t, work, "commit", "-q", "-m", "c3")
	gitFixture(t, work, "checkout", "-q", "main")
	gitFixture(t, work, "push", "-q", remote, "main", "dev", "--tags")
	gitFixture(t, base, "clone", "-q", remote, filepath.Join(base, "current"))
	// A checkout whose origin is another URL.
	gitFixture(t, base, "clone", "-q", remote, filepath.Join(base, "other"))
	gitFixture(t, filepath.Join(base, "other"), "remote", "set-url", "origin", "file:///nonexistent/other.git")

	srv = treeMap(t, remote, "remote.git/", "")
	behind = treeMap(t, filepath.Join(base, "behind"), "repo/", remote)
	current = treeMap(t, filepath.Join(base, "current"), "repo/", remote)
	other = treeMap(t, filepath.Join(base, "other"), "repo/", "")
	dirty = mergeMaps(current, map[string]string{"repo/f1.txt": "changed\n"})
	dirtyBehind = mergeMaps(behind, map[string]string{"repo/f1.txt": "changed\n"})
	notRepo = map[string]string{"repo/stray.txt": "x\n"}

	return
}

// TestGitLatestRemoteChange: an existing checkout whose origin points
// elsewhere gets its remote URL changed (test=True only says so), with
// Salt's comment (its double _format_comments included).
func TestGitLatestRemoteChange(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	srv, _, _, other, _, _, _ := gitLatestFixture(t)
	for _, test := range []bool{true, false} {
		base := t.TempDir()
		srvDir, dir := filepath.Join(base, "srv"), filepath.Join(base, "c")
		salttest.WriteTree(t, srvDir, srvDir, srv)
		salttest.WriteTree(t, dir, srvDir, other)
		url := "file://" + srvDir + "/remote.git"
		reg := suiteRegistry(t)
		env := &modules.Env{ID: "t", Registry: reg, Opts: payload.NewMap("test", false), Log: slog.New(slog.DiscardHandler), Grains: payloadLinuxGrains(), Pillar: &payload.Map{}}
		kw := payload.NewMap("__kwarg__", true, "name", url, "target", dir+"/repo", "test", test)
		res := reg.Execute(t.Context(), modules.Binder{}, env, "state.single", []any{"git.latest", kw}, nil)
		m, ok := res.Return.(*payload.Map)
		if !ok || m.Len() != 1 {
			t.Fatalf("state.single returned %v", res.Return)
		}
		r := m.Items()[0].Value.(*payload.Map)
		action := "Remote 'origin' changed from file:///nonexistent/other.git to " + url
		w := ""
		if test {
			action = "Remote 'origin' would be changed from file:///nonexistent/other.git to " + url
			w = "that would be "
		}
		want := "Repository " + dir + "/repo is up-to-date\n\nChanges " + w + "made: " + gitFormatComments(strings.Split(action, ""))
		if got := r.Str("comment"); got != want {
			t.Fatalf("test=%v comment\n got %q\nwant %q", test, got, want)
		}
		out, err := exec.Command("git", "-C", dir+"/repo", "remote", "get-url", "origin").Output()
		if err != nil {
			t.Fatal(err)
		}
		wantURL := url
		if test {
			wantURL = "file:///nonexistent/other.git"
		}
		if strings.TrimSpace(string(out)) != wantURL {
			t.Fatalf("test=%v: origin is %s, want %s", test, out, wantURL)
		}
	}
}
