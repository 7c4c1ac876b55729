package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestBuildShared: the shared build folder of a configuration is reused
// by a later build (a new test binary's): the command is not relinked (same
// file, same inode) while its sources are unchanged; a second package
// with the same command name gets its own folder, and both commands stay
// what they are; another configuration (-race or not) another folder.
func TestBuildShared(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a command; skipped with -short")
	}
	t.Setenv(EnvBinDir, t.TempDir())
	o := BuildOptions{Race: false}
	conf := buildConfig(o)
	inode := func(p string) uint64 {
		t.Helper()
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Ino
	}
	run := func(bin string) string {
		t.Helper()
		// The shared hello fails on the bad port; the other one prints.
		out, _ := exec.Command(bin, "x").CombinedOutput()
		return string(out)
	}
	hello := "./internal/testutil/proc/testdata/hello"
	dir1, err := buildShared(o, conf, []string{hello})
	if err != nil {
		t.Fatal(err)
	}
	ino := inode(filepath.Join(dir1, "hello"))
	dir2, err := buildShared(o, conf, []string{hello})
	if err != nil {
		t.Fatal(err)
	}
	if dir2 != dir1 || inode(filepath.Join(dir2, "hello")) != ino {
		t.Fatalf("second build: folder %s (first %s), relinked: %v", dir2, dir1, inode(filepath.Join(dir2, "hello")) != ino)
	}
	other, err := buildShared(o, conf, []string{"./internal/testutil/proc/testdata/other/hello"})
	if err != nil {
		t.Fatal(err)
	}
	if other == dir1 {
		t.Fatalf("the other hello was built into the shared folder %s", other)
	}
	if out := run(filepath.Join(other, "hello")); !strings.Contains(out, "the other hello") {
		t.Fatalf("the other hello printed %q", out)
	}
	if out := run(filepath.Join(dir1, "hello")); strings.Contains(out, "the other hello") {
		t.Fatalf("the shared hello was replaced by the other one: %q", out)
	}
	if inode(filepath.Join(dir1, "hello")) != ino {
		t.Fatal("the shared hello was relinked")
	}
	if race := buildConfig(BuildOptions{Race: true}); hashOf(race) == hashOf(conf) {
		t.Fatal("-race and plain builds share a folder")
	}
}
