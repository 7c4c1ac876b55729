package builtin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/salttest"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestFileLinkStateGolden compares file.hardlink and file.decode (and
// test=True) with Salt 3006 (testdata/golden/file_link.json).
func TestFileLinkStateGolden(t *testing.T) {
	files := map[string]string{"t": "target data\n", "plain": "not a link\n", "d/x": "in dir\n"}
	// "hello world\n" in base64, with a line break as base64 tools write
	enc := "aGVsbG8g\nd29ybGQK"
	calls := []salttest.Call{
		single("hardlink new", "file.hardlink", false, "name", "{dir}/l", "target", "{dir}/t"),
		single("hardlink new test", "file.hardlink", true, "name", "{dir}/l", "target", "{dir}/t"),
		single("hardlink target missing", "file.hardlink", false, "name", "{dir}/l", "target", "{dir}/nope"),
		single("hardlink target missing test", "file.hardlink", true, "name", "{dir}/l", "target", "{dir}/nope"),
		single("hardlink to dir", "file.hardlink", false, "name", "{dir}/d", "target", "{dir}/t"),
		single("hardlink to dir test", "file.hardlink", true, "name", "{dir}/d", "target", "{dir}/t"),
		single("hardlink from dir", "file.hardlink", false, "name", "{dir}/l", "target", "{dir}/d"),
		single("hardlink file in way", "file.hardlink", false, "name", "{dir}/plain", "target", "{dir}/t"),
		single("hardlink file in way test", "file.hardlink", true, "name", "{dir}/plain", "target", "{dir}/t"),
		single("hardlink force", "file.hardlink", false, "name", "{dir}/plain", "target", "{dir}/t", "force", true),
		single("hardlink force test", "file.hardlink", true, "name", "{dir}/plain", "target", "{dir}/t", "force", true),
		single("hardlink no parent", "file.hardlink", false, "name", "{dir}/a/b/l", "target", "{dir}/t"),
		single("hardlink makedirs", "file.hardlink", false, "name", "{dir}/a/b/l", "target", "{dir}/t", "makedirs", true),
		single("hardlink relative", "file.hardlink", false, "name", "rel/l", "target", "t"),
		single("hardlink bad user", "file.hardlink", false, "name", "{dir}/l", "target", "{dir}/t", "user", "no_such_user_zz"),
		single("decode new", "file.decode", false, "name", "{dir}/out", "encoded_data", enc),
		single("decode new test", "file.decode", true, "name", "{dir}/out", "encoded_data", enc),
		single("decode same", "file.decode", false, "name", "{dir}/same", "encoded_data", enc),
		single("decode differs", "file.decode", false, "name", "{dir}/plain", "encoded_data", enc),
		single("decode differs test", "file.decode", true, "name", "{dir}/plain", "encoded_data", enc, "checksum", "sha256"),
		single("decode pillar", "file.decode", false, "name", "{dir}/out", "contents_pillar", "certs:web"),
	}
	for i := range calls {
		calls[i].Files = map[string]string{"same": "hello world\n"}
		for k, v := range files {
			calls[i].Files[k] = v
		}
	}
	runStateSuite(t, salttest.Suite{Name: "file_link", Calls: calls, Grains: payloadLinuxGrains(),
		Pillar: payload.NewMap("certs", payload.NewMap("web", "Y2VydAo="))})
}

// TestFileHardlinkExisting covers the cases whose starting tree holds a
// hard link (which the golden trees cannot): same inode, other inode.
func TestFileHardlinkExisting(t *testing.T) {
	reg := suiteRegistry(t)
	dir := t.TempDir()
	for _, f := range []string{"t", "u"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "l")
	if err := os.Link(filepath.Join(dir, "t"), link); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		target  string
		test    bool
		result  states.Result
		comment string
		changed bool
	}{
		{"t", true, states.True, "The hard link %[1]s/l is presently targetting %[1]s/t", false},
		{"t", false, states.True, "Target of hard link %[1]s/l is already pointing to %[1]s/t", false},
		{"u", true, states.None, "Link %[1]s/l target is set to be changed to %[1]s/u", true},
		{"u", false, states.True, "Set target of hard link %[1]s/l -> %[1]s/u", true},
		{"u", false, states.True, "Target of hard link %[1]s/l is already pointing to %[1]s/u", false},
	}
	for i, tc := range cases {
		env := &modules.Env{ID: "t", Registry: reg, Opts: payload.NewMap("test", tc.test), Grains: payloadLinuxGrains(), Pillar: &payload.Map{}}
		c := &states.Call{Name: link, Env: env, Test: tc.test}
		args, err := modules.BindKeywords(fileLinkStates()[0].Spec, payload.NewMap("name", link, "target", filepath.Join(dir, tc.target)))
		if err != nil {
			t.Fatal(err)
		}
		c.Args = args
		ret, err := fileHardlinkState(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf(tc.comment, dir)
		if ret.Result != tc.result || ret.Comment != want || (ret.Changes.Len() > 0) != tc.changed {
			t.Fatalf("case %d: %v %q %v, want %v %q changed=%v", i, ret.Result, ret.Comment, ret.Changes, tc.result, want, tc.changed)
		}
	}
	if !fileSameInode(link, filepath.Join(dir, "u")) {
		t.Fatal("link does not point at u")
	}
}
