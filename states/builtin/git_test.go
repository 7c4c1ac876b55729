package builtin

import (
	"os/exec"
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
)

// TestGitConfigStateGolden compares git.config_set and git.config_unset
// (and test=True) with Salt 3006 (testdata/golden/git_config.json) on a
// repository's .git/config in each case's directory (the repository is
// the files .git/HEAD and .git/config, enough for git config --local).
func TestGitConfigStateGolden(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	cfg := "[core]\n\trepositoryformatversion = 0\n\tbare = false\n[user]\n\tname = Old Name\n[remote \"origin\"]\n\tpush = a\n\tpush = b\n[foo]\n\tbar = 1\n\tbaz = 2\n"
	r := "{dir}"
	calls := []salttest.Call{
		single("set new", "git.config_set", false, "name", "user.email", "value", "me@example.com", "repo", r),
		single("set new test", "git.config_set", true, "name", "user.email", "value", "me@example.com", "repo", r),
		single("set change", "git.config_set", false, "name", "user.name", "value", "New Name", "repo", r),
		single("set change test", "git.config_set", true, "name", "user.name", "value", "New Name", "repo", r),
		single("set same", "git.config_set", false, "name", "user.name", "value", "Old Name", "repo", r),
		single("set int", "git.config_set", false, "name", "core.abbrev", "value", 12, "repo", r),
		single("set multivar", "git.config_set", false, "name", "remote.origin.push", "multivar", []any{"x", "y", "z"}, "repo", r),
		single("set multivar test", "git.config_set", true, "name", "remote.origin.push", "multivar", "x,y", "repo", r),
		single("set multivar same", "git.config_set", false, "name", "remote.origin.push", "multivar", []any{"a", "b"}, "repo", r),
		single("set both", "git.config_set", false, "name", "a.b", "value", "1", "multivar", []any{"2"}, "repo", r),
		single("set no repo", "git.config_set", false, "name", "a.b", "value", "1"),
		single("set bad key", "git.config_set", false, "name", "nodot", "value", "1", "repo", r),
		single("set bad kwarg", "git.config_set", false, "name", "a.b", "value", "1", "repo", r, "bogus", 1),
		single("unset", "git.config_unset", false, "name", "user.name", "repo", r),
		single("unset test", "git.config_unset", true, "name", "user.name", "repo", r),
		single("unset missing", "git.config_unset", false, "name", "user.nope", "repo", r),
		single("unset multivar", "git.config_unset", false, "name", "remote.origin.push", "repo", r),
		single("unset multivar all", "git.config_unset", false, "name", "remote.origin.push", "repo", r, "all", true),
		single("unset value_regex", "git.config_unset", false, "name", "remote.origin.push", "value_regex", "^a$", "repo", r),
		single("unset value_regex test", "git.config_unset", true, "name", "remote.origin.push", "value_regex", "^b$", "repo", r),
		single("unset regex key", "git.config_unset", false, "name", "foo\\..*", "repo", r),
		single("unset regex key test", "git.config_unset", true, "name", "foo\\..*", "repo", r),
		single("unset no repo", "git.config_unset", false, "name", "a.b"),
		// user= runs git as that user (cmd.run_all's runas): a user that
		// does not exist is cmd's "User '...' is not available"
		single("set global missing user", "git.config_set", false, "name", "user.name", "value", "X", "global", true, "user", "gsalt_no_such_user"),
		single("set global missing user test", "git.config_set", true, "name", "user.name", "value", "X", "global", true, "user", "gsalt_no_such_user"),
		single("unset global missing user test", "git.config_unset", true, "name", "push.default", "global", true, "user", "gsalt_no_such_user"),
	}
	for i := range calls {
		calls[i].Files = map[string]string{".git/config": cfg, ".git/HEAD": "ref: refs/heads/main\n", ".git/objects/": "", ".git/refs/": ""}
	}
	runStateSuite(t, salttest.Suite{Name: "git_config", Calls: calls, Grains: payloadLinuxGrains(), FilesUnder: ".git/config"})
}
