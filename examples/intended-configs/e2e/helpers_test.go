package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/internal/testutil/started"
	"github.com/gsalt/gsalt/master"
	"github.com/gsalt/gsalt/masterd"
	gminion "github.com/gsalt/gsalt/minion"
	"github.com/gsalt/gsalt/proxy"
)

// vectorsDir holds the repository's test keys.
const vectorsDir = "../../../testdata/vectors"

// exampleDir is the example's root, one level up from this package.
func exampleDir(t testing.TB) string {
	t.Helper()
	abs, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

func logger() *slog.Logger {
	if os.Getenv("GSALT_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// atomicWrite writes text to dir/name through a temporary file in dir and
// a rename, as the README recommends.
func atomicWrite(t testing.TB, dir, name, text string) {
	t.Helper()
	tmp := filepath.Join(dir, "."+name+".tmp")
	testutil.WriteFile(t, tmp, text, 0o644)
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// startMaster runs a gsalt master on loopback with the given pillar
// function; etc holds its master file and master.d.
func startMaster(t *testing.T, dir, etc string, pillar master.PillarFunc) *masterd.Daemon {
	t.Helper()
	text := fmt.Sprintf("interface: 127.0.0.1\npublish_port: 0\nret_port: 0\nroot_dir: %[1]s\npki_dir: %[1]s/pki\n"+
		"cachedir: %[1]s/cache\nsock_dir: %[1]s/sock\nlog_file: %[1]s/master.log\nuser: root\nauto_accept: True\n", dir)
	testutil.WriteFile(t, filepath.Join(etc, "master"), text, 0o644)
	testutil.WriteFile(t, filepath.Join(dir, "pki", "master.pem"), testutil.ReadFile(t, filepath.Join(vectorsDir, "pki/master/master.pem")), 0o400)
	testutil.WriteFile(t, filepath.Join(dir, "pki", "master.pub"), testutil.ReadFile(t, filepath.Join(vectorsDir, "pki/master/master.pub")), 0o644)
	cfg, err := config.LoadMaster(etc)
	if err != nil {
		t.Fatal(err)
	}
	d, err := masterd.Start(context.Background(), cfg, masterd.Options{Logger: logger(), Pillar: pillar})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if d.Reactor() == nil {
		t.Fatal("the master runs no reactor although master.d sets the reactor option")
	}
	return d
}

// startMinion runs an in-process gsalt minion (real sockets) with the
// given minion.d files and waits until it is ready.
func startMinion(t *testing.T, d *masterd.Daemon, dir, id string, dropins map[string]string) *gminion.Minion {
	t.Helper()
	mdir := filepath.Join(dir, id)
	testutil.WriteFile(t, filepath.Join(mdir, "pki", "minion.pem"), testutil.ReadFile(t, filepath.Join(vectorsDir, "pki/minion1/minion.pem")), 0o400)
	testutil.WriteFile(t, filepath.Join(mdir, "pki", "minion.pub"), testutil.ReadFile(t, filepath.Join(vectorsDir, "pki/minion1/minion.pub")), 0o644)
	conf := fmt.Sprintf("id: %s\nroot_dir: %s\npki_dir: %[2]s/pki\ncachedir: %[2]s/cache\nsock_dir: %[2]s/sock\n"+
		"master: 127.0.0.1\nmaster_port: %d\nacceptance_wait_time: 0.2\nenable_fqdns_grains: False\n",
		id, mdir, d.ReqAddr().(*net.TCPAddr).Port)
	testutil.WriteFile(t, filepath.Join(mdir, "minion"), conf, 0o644)
	for name, text := range dropins {
		testutil.WriteFile(t, filepath.Join(mdir, "minion.d", name), text, 0o644)
	}
	cfg, err := config.LoadMinion(mdir)
	if err != nil {
		t.Fatal(err)
	}
	mn, err := gminion.New(gminion.Options{Config: cfg, Logger: logger()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	boot := started.Watch(t, d.Bus())
	go func() { mn.Run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Errorf("minion %s did not stop", id)
		}
	})
	select {
	case <-mn.Ready():
	case <-time.After(30 * time.Second):
		t.Fatalf("minion %s not ready (last auth error: %v)", id, mn.LastAuthError())
	}
	boot.Wait(t, id)
	return mn
}

// startProxies runs an in-process gsalt-proxy fleet serving ids against
// the daemon; their proxy configuration comes from the master's pillar.
func startProxies(t *testing.T, d *masterd.Daemon, dir string, ids []string) *proxy.Fleet {
	t.Helper()
	etc := filepath.Join(dir, "petc")
	port := d.ReqAddr().(*net.TCPAddr).Port
	testutil.WriteFile(t, filepath.Join(etc, "proxy"), fmt.Sprintf("master: 127.0.0.1\nmaster_port: %[2]d\nroot_dir: %[1]s/p\n"+
		"pki_dir: %[1]s/p/pki\ncachedir: %[1]s/p/cache\nsock_dir: %[1]s/p/sock\nlog_file: %[1]s/p/log\n"+
		"enable_fqdns_grains: False\nacceptance_wait_time: 0.2\n", dir, port), 0o644)
	f, err := proxy.New(proxy.Options{ConfigDir: etc, IDs: ids, Logger: logger(),
		RetryMin: 200 * time.Millisecond, RetryMax: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	boot := started.Watch(t, d.Bus())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("proxy fleet: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("the proxy fleet did not stop")
		}
	})
	for _, id := range ids {
		waitFor(t, id+" up", func() bool {
			dev, ok := f.Device(id)
			return ok && dev.Initialized() && dev.Status().State == proxy.StateUp
		})
		dev, _ := f.Device(id)
		select {
		case <-dev.Ready():
		case <-time.After(30 * time.Second):
			t.Fatalf("%s never became ready (err %v)", id, dev.Err())
		}
		boot.Wait(t, id)
	}
	return f
}

// waitFor polls cond until it holds, for at most 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, cond, what)
}

// waitEvent returns the first event on sub whose tag is one of tags,
// recording every tag it skips in seen.
func waitEvent(t *testing.T, sub *event.Subscription, seen map[string]int, tags ...string) event.Event {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev := <-sub.C():
			seen[ev.Tag]++
			if strings.HasPrefix(ev.Tag, "salt/state_result/") || strings.Contains(ev.Tag, "/ret/") {
				b, _ := json.Marshal(ev.Data)
				t.Logf("%s: %s", ev.Tag, b)
			}
			for _, tag := range tags {
				if ev.Tag == tag {
					return ev
				}
			}
		case <-deadline:
			t.Fatalf("none of %v on the master bus; seen: %v", tags, seen)
		}
	}
}
