package builtin

import (
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
)

// TestFileCopyRenameStatesGolden compares file.copy and file.rename (and
// test=True) on temporary trees with Salt 3006
// (testdata/golden/file_copy.json): the returns and the files left behind.
func TestFileCopyRenameStatesGolden(t *testing.T) {
	files := map[string]string{"src.conf": "a = 1\n", "same.conf": "a = 1\n", "other.conf": "b = 2\n", "tree/x.txt": "x\n", "tree/sub/y.txt": "y\n"}
	calls := []salttest.Call{
		single("copy", "file.copy", false, "name", "{dir}/new.conf", "source", "{dir}/src.conf"),
		single("copy test", "file.copy", true, "name", "{dir}/new.conf", "source", "{dir}/src.conf"),
		single("copy exists", "file.copy", false, "name", "{dir}/other.conf", "source", "{dir}/src.conf"),
		single("copy exists test", "file.copy", true, "name", "{dir}/other.conf", "source", "{dir}/src.conf"),
		single("copy force", "file.copy", false, "name", "{dir}/other.conf", "source", "{dir}/src.conf", "force", true),
		single("copy force identical", "file.copy", false, "name", "{dir}/same.conf", "source", "{dir}/src.conf", "force", true),
		single("copy force test", "file.copy", true, "name", "{dir}/other.conf", "source", "{dir}/src.conf", "force", true),
		single("copy mode", "file.copy", false, "name", "{dir}/m.conf", "source", "{dir}/src.conf", "mode", "0600"),
		single("copy preserve", "file.copy", false, "name", "{dir}/p.conf", "source", "{dir}/src.conf", "preserve", true),
		single("copy no dir", "file.copy", false, "name", "{dir}/a/b/new.conf", "source", "{dir}/src.conf"),
		single("copy makedirs", "file.copy", false, "name", "{dir}/a/b/new.conf", "source", "{dir}/src.conf", "makedirs", true),
		single("copy subdir", "file.copy", false, "name", "{dir}/tree", "source", "{dir}/src.conf", "subdir", true),
		single("copy tree", "file.copy", false, "name", "{dir}/tree2", "source", "{dir}/tree"),
		single("copy missing source", "file.copy", false, "name", "{dir}/new.conf", "source", "{dir}/nope"),
		single("copy relative", "file.copy", false, "name", "new.conf", "source", "{dir}/src.conf"),
		single("copy bad user", "file.copy", false, "name", "{dir}/u.conf", "source", "{dir}/src.conf", "user", "no-such-user-gsalt"),
		single("rename", "file.rename", false, "name", "{dir}/moved.conf", "source", "{dir}/src.conf"),
		single("rename test", "file.rename", true, "name", "{dir}/moved.conf", "source", "{dir}/src.conf"),
		single("rename gone", "file.rename", false, "name", "{dir}/moved.conf", "source", "{dir}/nope"),
		single("rename exists", "file.rename", false, "name", "{dir}/other.conf", "source", "{dir}/src.conf"),
		single("rename force", "file.rename", false, "name", "{dir}/other.conf", "source", "{dir}/src.conf", "force", true),
		single("rename no dir", "file.rename", false, "name", "{dir}/a/moved.conf", "source", "{dir}/src.conf"),
		single("rename makedirs", "file.rename", false, "name", "{dir}/a/b/moved.conf", "source", "{dir}/src.conf", "makedirs", true),
		single("rename tree", "file.rename", false, "name", "{dir}/tree3", "source", "{dir}/tree"),
		single("rename relative", "file.rename", false, "name", "moved.conf", "source", "{dir}/src.conf"),
	}
	for i := range calls {
		calls[i].Files = files
	}
	runStateSuite(t, salttest.Suite{Name: "file_copy", Calls: calls, Grains: payloadLinuxGrains()})
}
