package minion

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
)

// TestInteropPushToSaltMaster: a gsalt minion runs cp.push and
// cp.push_dir against a real Salt 3006 salt-master with file_recv on; the
// files arrive byte-equal under the master's cachedir/minions/<id>/files,
// a 1.5 MiB file in six 256 KiB chunks, and a file beyond
// file_recv_max_size is refused by Salt's master (False).
func TestInteropPushToSaltMaster(t *testing.T) {
	src := saltpeer.Require(t)
	sm := startSaltMasterWith(t, src, "file_recv: True\nfile_recv_max_size: 2\n")
	id := "gsalt-push-1"
	cfg := interopMinionConfig(t, sm, id, "")
	m, stop := startMinion(t, cfg, Options{Logger: testLogger(t)})
	defer stop()
	sm.waitKey(t, "minions_pre", id)
	if _, err := sm.run(t, "salt-key", "-a", id, "-y"); err != nil {
		t.Fatal(err)
	}
	waitReady(t, m, 30*time.Second)

	data := t.TempDir()
	files := testutil.PushTree(t, data)
	recv := filepath.Join(sm.dir, "cache", "minions", id, "files")
	if got := sm.saltJSON(t, id, "cp.push", filepath.Join(data, "big.bin"))[id]; got != true {
		t.Fatalf("cp.push big.bin: %v", got)
	}
	testutil.SameFile(t, "cp.push", filepath.Join(recv, strings.TrimPrefix(data, "/"), "big.bin"), files["big.bin"])
	if got := sm.saltJSON(t, id, "cp.push", filepath.Join(data, "small.txt"), "upload_path=/up/./s.txt")[id]; got != true {
		t.Fatalf("cp.push upload_path: %v", got)
	}
	testutil.SameFile(t, "upload_path", filepath.Join(recv, "up", "s.txt"), files["small.txt"])
	if got := sm.saltJSON(t, id, "cp.push_dir", filepath.Join(data, "conf"), "glob=*.conf", "upload_path=/etc2")[id]; got != true {
		t.Fatalf("cp.push_dir: %v", got)
	}
	testutil.SameFile(t, "push_dir", filepath.Join(recv, "etc2", "a.conf"), files["conf/a.conf"])
	testutil.SameFile(t, "push_dir", filepath.Join(recv, "etc2", "sub", "b.conf"), files["conf/sub/b.conf"])
	if _, err := os.Stat(filepath.Join(recv, "etc2", "c.txt")); err == nil {
		t.Error("cp.push_dir glob=*.conf pushed c.txt")
	}
	if got := sm.saltJSON(t, id, "cp.push", filepath.Join(data, "gone.txt"), "remove_source=True")[id]; got != true {
		t.Fatalf("cp.push remove_source: %v", got)
	}
	if _, err := os.Stat(filepath.Join(data, "gone.txt")); err == nil {
		t.Error("remove_source left the source")
	}
	if got := sm.saltJSON(t, id, "cp.push", filepath.Join(data, "huge.bin"))[id]; got != false {
		t.Errorf("cp.push beyond file_recv_max_size: %v", got)
	}
	// gsalt-call with the minion's configuration pushes too, as salt-call does.
	res, err := Call(context.Background(), CallOptions{ConfigDir: filepath.Dir(cfg.ConfFile), Fun: "cp.push",
		Args: []string{filepath.Join(data, "small.txt"), "upload_path=/call/s.txt"}, Logger: testLogger(t)})
	if err != nil || res.Return != true {
		t.Fatalf("gsalt-call cp.push: %+v %v", res, err)
	}
	testutil.SameFile(t, "gsalt-call cp.push", filepath.Join(recv, "call", "s.txt"), files["small.txt"])
}
