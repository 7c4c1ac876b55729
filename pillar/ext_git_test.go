package pillar_test

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGitExtPillarGolden compiles the git ext_pillar cases of
// testdata/ext_git_cases.json (remote forms, per-remote and global
// parameters, __env__, all_saltenvs, fallback, pillarenv, mountpoints
// and git_pillar_includes, merging of several remotes, Salt's errors)
// against local bare repositories made by testdata/git/mkrepos.sh, and
// compares them with what Salt 3006's Pillar and its git_pillar
// (GitPython) made of the same repositories (ext_git_golden.json).
func TestGitExtPillarGolden(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("TestGitExtPillarGolden: no git binary; skipping")
	}
	repos := t.TempDir()
	if out, err := exec.Command("/bin/sh", filepath.Join("testdata", "git", "mkrepos.sh"), repos).CombinedOutput(); err != nil {
		t.Fatalf("mkrepos.sh: %v\n%s", err, out)
	}
	extGolden(t, "ext_git_cases.json", "ext_git_golden.json", map[string]string{"GITDIR": repos})
}
