package builtin

import (
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
)

// TestFileCheckCmdGolden compares check_cmd through the state compiler
// with Salt 3006 (testdata/golden/file_check_cmd.json): file.managed runs
// its own check_cmd on the new file (and none in test mode, where the
// compiler's global check_cmd must not run either), while a state without
// mod_run_check_cmd gets the global one.
func TestFileCheckCmdGolden(t *testing.T) {
	files := map[string]string{"conf": "old\n", "same": "new\n"}
	calls := []salttest.Call{
		single("managed fail test", "file.managed", true, "name", "{dir}/conf", "contents", "new", "check_cmd", "/bin/false"),
		single("managed fail", "file.managed", false, "name", "{dir}/conf", "contents", "new", "check_cmd", "/bin/false"),
		single("managed fail output", "file.managed", false, "name", "{dir}/conf", "contents", "new", "check_cmd", "/bin/sh -c 'echo checked; echo bad >&2; exit 3'"),
		single("managed ok", "file.managed", false, "name", "{dir}/conf", "contents", "new", "check_cmd", "/bin/true"),
		single("managed ok test", "file.managed", true, "name", "{dir}/conf", "contents", "new", "check_cmd", "/bin/true"),
		single("managed same test", "file.managed", true, "name", "{dir}/same", "contents", "new", "check_cmd", "/bin/false"),
		single("managed same", "file.managed", false, "name", "{dir}/same", "contents", "new", "check_cmd", "/bin/false"),
		single("managed new file", "file.managed", false, "name", "{dir}/fresh", "contents", "x", "check_cmd", "/bin/false"),
		single("global on test", "test.succeed_with_changes", false, "name", "x", "check_cmd", []any{"false"}),
		single("global on test test", "test.succeed_with_changes", true, "name", "x", "check_cmd", []any{"true"}),
		single("global on file.touch", "file.touch", false, "name", "{dir}/t", "check_cmd", []any{"false"}),
	}
	for i := range calls {
		calls[i].Files = files
	}
	runStateSuite(t, salttest.Suite{Name: "file_check_cmd", Calls: calls, Grains: payloadLinuxGrains()})
}
