package masterd_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/internal/saltpeer"
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
	retPort := d.ReqAddr().(*net.TCPAddr).Port
	bus := d.Bus().Subscribe(nil, 4096)
	defer bus.Close()
	mdir := filepath.Join(dir, "m1")
	writeFile(t, filepath.Join(mdir, "etc", "minion"), minionConf(mdir, "m1", retPort, ""))
	mp := startPeer(t, ctx, src, "salt-minion", filepath.Join(dir, "m1.out"), "-c", filepath.Join(mdir, "etc"), "-l", "warning")
	waitPending(t, d, "m1", mp)
	if _, err := d.Keys().Accept("m1"); err != nil {
		t.Fatal(err)
	}
	waitBus(t, bus, "salt/minion/m1/start")

	data := filepath.Join(dir, "data")
	big := make([]byte, 3<<19)
	if _, err := rand.Read(big); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"big.bin": big, "small.txt": []byte("small\n"), "conf/a.conf": []byte("a\n"),
		"conf/sub/b.conf": []byte("b\n"), "conf/c.txt": []byte("c\n"), "gone.txt": []byte("gone\n"),
		"huge.bin": bytes.Repeat([]byte{7}, 5<<19)}
	for p, b := range files {
		writeFile(t, filepath.Join(data, p), string(b))
	}
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
	same := func(name, got string, want []byte) {
		t.Helper()
		b, err := os.ReadFile(got)
		if err != nil || !bytes.Equal(b, want) {
			t.Errorf("%s: %s holds %d bytes (%v), want %d equal bytes", name, got, len(b), err, len(want))
		}
	}
	if got := push("cp.push", filepath.Join(data, "big.bin")); got != true {
		t.Fatalf("cp.push big.bin: %v", got)
	}
	same("cp.push", filepath.Join(recv, strings.TrimPrefix(data, "/"), "big.bin"), big)
	if got := push("cp.push", filepath.Join(data, "small.txt"), payload.NewMap("__kwarg__", true, "upload_path", "/up/./s.txt")); got != true {
		t.Fatalf("cp.push upload_path: %v", got)
	}
	same("upload_path", filepath.Join(recv, "up", "s.txt"), files["small.txt"])
	if got := push("cp.push_dir", filepath.Join(data, "conf"), payload.NewMap("__kwarg__", true, "glob", "*.conf", "upload_path", "/etc2")); got != true {
		t.Fatalf("cp.push_dir: %v", got)
	}
	same("push_dir", filepath.Join(recv, "etc2", "a.conf"), files["conf/a.conf"])
	same("push_dir", filepath.Join(recv, "etc2", "sub", "b.conf"), files["conf/sub/b.conf"])
	if _, err := os.Stat(filepath.Join(recv, "etc2", "c.txt")); err == nil {
		t.Error("cp.push_dir glob=*.conf pushed c.txt")
	}
	if got := push("cp.push", filepath.Join(data, "gone.txt"), payload.NewMap("__kwarg__", true, "remove_source", true)); got != true {
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
