package builtin

import (
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
)

// TestFileCommentStatesGolden compares file.comment and file.uncomment
// (and test=True) on temporary files with Salt 3006
// (testdata/golden/file_comment.json).
func TestFileCommentStatesGolden(t *testing.T) {
	f := map[string]string{"f.conf": "# header\ncolor = red\n#size = 3\n  # size = 4\nname=x\n"}
	calls := []salttest.Call{
		single("comment", "file.comment", false, "name", "{dir}/f.conf", "regex", "^color"),
		single("comment test", "file.comment", true, "name", "{dir}/f.conf", "regex", "^color"),
		single("comment anchored", "file.comment", false, "name", "{dir}/f.conf", "regex", "^name=x$", "backup", false),
		single("comment already", "file.comment", false, "name", "{dir}/f.conf", "regex", "^size = 3"),
		single("comment missing", "file.comment", false, "name", "{dir}/f.conf", "regex", "^nothing"),
		single("comment missing ignored", "file.comment", false, "name", "{dir}/f.conf", "regex", "^nothing", "ignore_missing", true),
		single("comment other char", "file.comment", false, "name", "{dir}/f.conf", "regex", "color", "char", ";"),
		single("comment relative", "file.comment", false, "name", "f.conf", "regex", "x"),
		single("comment no file", "file.comment", false, "name", "{dir}/nope", "regex", "x"),
		single("uncomment", "file.uncomment", false, "name", "{dir}/f.conf", "regex", "size = 3"),
		single("uncomment test", "file.uncomment", true, "name", "{dir}/f.conf", "regex", "^size"),
		single("uncomment already", "file.uncomment", false, "name", "{dir}/f.conf", "regex", "color"),
		single("uncomment missing", "file.uncomment", false, "name", "{dir}/f.conf", "regex", "nothing"),
		single("uncomment indented", "file.uncomment", false, "name", "{dir}/f.conf", "regex", "size = 4"),
	}
	for i := range calls {
		calls[i].Files = f
	}
	runStateSuite(t, salttest.Suite{Name: "file_comment", Calls: calls, Grains: payloadLinuxGrains()})
}
