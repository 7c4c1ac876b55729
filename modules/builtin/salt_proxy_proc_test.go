package builtin_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/internal/testutil/proc"
	"github.com/gsalt/gsalt/internal/vectors"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestSaltProxyStartsGsaltProxy runs salt_proxy.configure_proxy with a
// real gsalt-proxy first on PATH: it must start a daemonized gsalt-proxy
// for the id (command line "gsalt-proxy --proxyid=<id> -l info -d -c
// <dir>", the configuration directory not being /etc/salt), which reads
// the proxy file there and connects to the master it names (a listener
// of the test on a free port); is_running must then report it, and a
// second configure_proxy must leave it alone ("already running").
func TestSaltProxyStartsGsaltProxy(t *testing.T) {
	bin := proc.Build(t, "./cmd/gsalt-proxy")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	connected := make(chan struct{}, 1)
	ln := testutil.ServeTCP(t, func(c net.Conn) {
		select {
		case connected <- struct{}{}:
		default:
		}
		_, _ = io.Copy(io.Discard, c) // held open until the proxy or Close closes it
	})
	// The server stays up until the proxy was stopped (cleanups run
	// last first): its stop must not wait for the master connection to
	// close (cmd/gsalt-proxy's TestProxyStopsOnSIGTERM checks the same).
	dir := t.TempDir()
	conf, root := filepath.Join(dir, "etc"), filepath.Join(dir, "root")
	id := fmt.Sprintf("gsaltproctest%d", os.Getpid())
	pidfile := filepath.Join(root, "salt", id, "proxy.pid")
	testutil.WriteFile(t, filepath.Join(conf, "proxy"), fmt.Sprintf("master: 127.0.0.1\nmaster_port: %d\nroot_dir: %s\npki_dir: %[2]s/pki\ncachedir: %[2]s/cache\n"+
		"sock_dir: %[2]s/sock\nlog_file: %[2]s/proxy.log\npidfile: %[2]s/proxy.pid\nproxy: {proxytype: dummy}\nacceptance_wait_time: 1\n", ln.Addr().(*net.TCPAddr).Port, root), 0o644)
	t.Cleanup(func() { stopProxyByID(t, pidfile, id) })

	r := goldenRegistry(t)
	env := &modules.Env{ID: "host", Registry: r, Log: slog.New(slog.DiscardHandler),
		Opts:   payload.NewMap("id", "host", builtin.SaltProxyConfigDirOpt, conf),
		Grains: payload.NewMap("master", "127.0.0.1")}
	call := func(fun string, args ...any) *payload.Map {
		t.Helper()
		res := r.Execute(context.Background(), modules.Binder{}, env, fun, args, nil)
		m, ok := res.Return.(*payload.Map)
		if !ok {
			t.Fatalf("%s: %v", fun, res.Return)
		}
		return m
	}
	running := func() bool { v, _ := call("salt_proxy.is_running", id).Get("result"); return v == true }
	if running() {
		t.Fatalf("a proxy for %s runs before the test started one", id)
	}
	got := call("salt_proxy.configure_proxy", id)
	want := payload.NewMap("result", true, "changes", payload.NewMap(
		"old", "Salt Proxy: "+filepath.Join(conf, "proxy")+" already exists, skipping",
		"new", "Salt Proxy: Started proxy process for "+id))
	if d := vectors.Equal(got, want); d != "" {
		t.Fatalf("configure_proxy: %s", d)
	}
	testutil.Eventually(t, 30*time.Second, running, "salt_proxy.is_running", id)
	select {
	case <-connected:
	case <-time.After(testutil.Scale(30 * time.Second)):
		t.Fatal("the started gsalt-proxy did not connect to the master port of its proxy file")
	}
	var cmdline []byte
	testutil.Eventually(t, 30*time.Second, func() bool {
		pids := proxyPids(pidfile, id)
		if len(pids) != 1 {
			return false
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pids[0]))
		cmdline = b
		return err == nil
	}, "one gsalt-proxy process for", id)
	args := strings.Join(strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")[1:], " ")
	if wantArgs := "--proxyid=" + id + " -l info -d -c " + conf; args != wantArgs {
		t.Errorf("gsalt-proxy arguments %q, want %q", args, wantArgs)
	}
	again := call("salt_proxy.configure_proxy", id)
	want = payload.NewMap("result", true, "changes", payload.NewMap(
		"old", "Salt Proxy: "+filepath.Join(conf, "proxy")+" already exists, skipping\nSalt Proxy: already running for "+id,
		"new", ""))
	if d := vectors.Equal(again, want); d != "" {
		t.Errorf("configure_proxy with the proxy running: %s", d)
	}
}

func readPid(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(string(bytes.TrimSpace(b)))
}

// proxyPids are the processes of the test's gsalt-proxy: the pid in its
// pidfile (root_dir/salt/<id>/proxy.pid for the pidfile option
// root_dir/proxy.pid) and any process with its unique id on its command
// line.
func proxyPids(pidfile, id string) []int {
	seen := map[int]bool{}
	var pids []int
	add := func(pid int) {
		if !seen[pid] {
			seen[pid] = true
			pids = append(pids, pid)
		}
	}
	if pid, err := readPid(pidfile); err == nil && syscall.Kill(pid, 0) == nil {
		add(pid)
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && bytes.Contains(b, []byte("--proxyid="+id+"\x00")) {
			add(pid)
		}
	}
	return pids
}

// stopProxyByID stops the daemonized gsalt-proxy the test started:
// SIGTERM, then SIGKILL if it is still there after 10 s.
func stopProxyByID(t *testing.T, pidfile, id string) {
	for _, pid := range proxyPids(pidfile, id) {
		_ = syscall.Kill(pid, syscall.SIGTERM)
		if !testutil.Poll(10*time.Second, func() bool { return syscall.Kill(pid, 0) != nil }) {
			t.Logf("gsalt-proxy %d ignored SIGTERM; killing it", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
