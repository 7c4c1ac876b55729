package masterd_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestInteropRealMinionPush: a real Salt 3006 salt-minion runs cp.push
// and cp.push_dir against gsalt-master with file_recv on; the files
// arrive byte-equal under cachedir/minions/<id>/files, a 1.5 MiB file
// in six of the minion's 256 KiB chunks, and a file beyond
// file_recv_max_size is refused (False) as Salt's master refuses it.
func TestInteropRealMinionPush(t *testing.T) {
	src := saltpeer.Require(t)
	if testing.Short() {
		t.Skip("interop with real Salt skipped in -short mode")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := shortDir(t)
	d, cfg := startMaster(t, dir, "file_recv: True\nfile_recv_max_size: 2\n")
	bus := d.Bus().Subscribe(nil, 4096)
	defer bus.Close()
	startRealMinion(t, ctx, src, d, bus, dir, "m1", "")

	data := filepath.Join(dir, "data")
	files := testutil.PushTree(t, data)
	recv := filepath.Join(cfg.CacheDir, "minions", "m1", "files")
	push := func(fun string, arg ...any) any {
		t.Helper()
		rets := runJob(t, d, "m1", "glob", fun, arg...)
		if rets["m1"] == nil {
			t.Fatalf("%s %v: no return", fun, arg)
		}
		v, _ := rets["m1"].Get("return")
		return v
	}
	kw := func(pairs ...any) *payload.Map { return payload.NewMap(append([]any{"__kwarg__", true}, pairs...)...) }
	if got := push("cp.push", filepath.Join(data, "big.bin")); got != true {
		t.Fatalf("cp.push big.bin: %v", got)
	}
	testutil.SameFile(t, "cp.push", filepath.Join(recv, strings.TrimPrefix(data, "/"), "big.bin"), files["big.bin"])
	if got := push("cp.push", filepath.Join(data, "small.txt"), kw("upload_path", "/up/./s.txt")); got != true {
		t.Fatalf("cp.push upload_path: %v", got)
	}
	testutil.SameFile(t, "upload_path", filepath.Join(recv, "up", "s.txt"), files["small.txt"])
	if got := push("cp.push_dir", filepath.Join(data, "conf"), kw("glob", "*.conf", "upload_path", "/etc2")); got != true {
		t.Fatalf("cp.push_dir: %v", got)
	}
	testutil.SameFile(t, "push_dir", filepath.Join(recv, "etc2", "a.conf"), files["conf/a.conf"])
	testutil.SameFile(t, "push_dir", filepath.Join(recv, "etc2", "sub", "b.conf"), files["conf/sub/b.conf"])
	if _, err := os.Stat(filepath.Join(recv, "etc2", "c.txt")); err == nil {
		t.Error("cp.push_dir glob=*.conf pushed c.txt")
	}
	if got := push("cp.push", filepath.Join(data, "gone.txt"), kw("remove_source", true)); got != true {
		t.Fatalf("cp.push remove_source: %v", got)
	}
	if _, err := os.Stat(filepath.Join(data, "gone.txt")); err == nil {
		t.Error("remove_source left the source")
	}
	// 2.5 MiB with file_recv_max_size 2: the chunk that crosses 2 MiB is
	// refused and the minion returns False.
	if got := push("cp.push", filepath.Join(data, "huge.bin")); got != false {
		t.Errorf("cp.push beyond file_recv_max_size: %v", got)
	}
	if got := push("cp.push", "relative.txt"); got != false {
		t.Errorf("cp.push of a relative path: %v", got)
	}
}
