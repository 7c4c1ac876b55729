package masterd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/internal/testutil/proc"
	"github.com/gsalt/gsalt/master"
	"github.com/gsalt/gsalt/master/keys"
	"github.com/gsalt/gsalt/masterd"
	"github.com/gsalt/gsalt/wire/payload"
)

// startPeer starts a real Salt process for the test, its output in
// logPath; it is stopped (its whole process group) when the test ends,
// whatever happens.
func startPeer(t *testing.T, ctx context.Context, src, name, logPath string, args ...string) *proc.Proc {
	t.Helper()
	cmd := saltpeer.Command(ctx, src, name, args...)
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return proc.Start(t, name, cmd, proc.Options{Log: logPath, Grace: 5 * time.Second})
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// minionConf is the configuration of a real salt-minion or salt-proxy
// pointing at the daemon (the publish port comes from the auth reply).
func minionConf(dir, id string, retPort int, extra string) string {
	return fmt.Sprintf("id: %[2]s\nmaster: 127.0.0.1\nmaster_port: %[3]d\nroot_dir: %[1]s\npki_dir: %[1]s/pki\n"+
		"cachedir: %[1]s/cache\nsock_dir: %[1]s/sock\nlog_file: %[1]s/log\nlog_level_logfile: info\npidfile: %[1]s/pid\n"+
		"user: root\nipv6: False\nenable_fqdns_grains: False\nmultiprocessing: False\nacceptance_wait_time: 1\n"+
		"random_reauth_delay: 1\nauth_timeout: 10\n", dir, id, retPort) + extra
}

// startRealMinion starts a real salt-minion id (configuration in
// dir/<id>/etc, extra appended) against the daemon, waits for its key to
// be pending, accepts it and waits on bus for its start event.
func startRealMinion(t *testing.T, ctx context.Context, src string, d *masterd.Daemon, bus *event.Subscription, dir, id, extra string) (string, *proc.Proc, event.Event) {
	t.Helper()
	mdir := filepath.Join(dir, id)
	writeFile(t, filepath.Join(mdir, "etc", "minion"), minionConf(mdir, id, d.ReqAddr().(*net.TCPAddr).Port, extra))
	mp := startPeer(t, ctx, src, "salt-minion", filepath.Join(dir, id+".out"), "-c", filepath.Join(mdir, "etc"), "-l", "warning")
	waitPending(t, d, id, mp)
	if _, err := d.Keys().Accept(id); err != nil {
		t.Fatal(err)
	}
	return mdir, mp, waitBus(t, bus, "salt/minion/"+id+"/start")
}

// waitPending polls the key store until id is pending.
func waitPending(t *testing.T, d *masterd.Daemon, id string, p *proc.Proc) {
	t.Helper()
	p.WaitFor(t, 120*time.Second, id+" pending", func() bool {
		ids, err := d.Keys().ListState(keys.StatePending)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range ids {
			if x == id {
				return true
			}
		}
		return false
	})
}

func runJob(t *testing.T, d *masterd.Daemon, tgt any, tgtType, fun string, arg ...any) map[string]*payload.Map {
	t.Helper()
	if arg == nil {
		arg = []any{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scale(180*time.Second))
	defer cancel()
	res, err := d.Master().RunJob(ctx, master.PublishRequest{Tgt: tgt, TgtType: tgtType, Fun: fun, Arg: arg}, testutil.Scale(60*time.Second), testutil.Scale(20*time.Second))
	if err != nil {
		t.Fatalf("%s: %v", fun, err)
	}
	return res.Returns
}

// TestInteropRealSalt runs a real Salt 3006 salt-minion and salt-proxy
// (dummy proxytype) against the daemon, publishes jobs in-process, and runs
// the real Python salt CLI against it.
func TestInteropRealSalt(t *testing.T) {
	src := saltpeer.Require(t)
	if testing.Short() {
		t.Skip("interop with real Salt skipped in -short mode")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := shortDir(t)
	d, cfg := startMaster(t, dir, "")
	retPort := d.ReqAddr().(*net.TCPAddr).Port
	pubPort := d.PubAddr().(*net.TCPAddr).Port
	bus := d.Bus().Subscribe(nil, 4096)
	defer bus.Close()

	// salt-minion m1: its key shows up pending, is accepted, it starts.
	mdir, mp, ev := startRealMinion(t, ctx, src, d, bus, dir, "m1", "mine_functions: {network.ip_addrs: []}\n")
	if ev.Data.Str("id") != "m1" || !strings.HasPrefix(ev.Data.Str("data"), "Minion m1 started") {
		t.Fatalf("start event %v", ev.Data.Keys())
	}
	if rets := runJob(t, d, "m1", "glob", "test.ping"); rets["m1"] == nil || rets["m1"].Bool("return") != true {
		t.Fatalf("test.ping %v", rets)
	}
	rets := runJob(t, d, "*", "glob", "grains.items")
	if g := rets["m1"].Map("return"); g == nil || g.Str("id") != "m1" || g.Str("kernel") != "Linux" {
		t.Fatalf("grains.items %v", rets)
	}
	rets = runJob(t, d, "m1", "glob", "cmd.run", "echo hi")
	if got := rets["m1"].Str("return"); got != "hi" {
		t.Fatalf("cmd.run %q", got)
	}
	rets = runJob(t, d, []any{"m1"}, "list", "test.arg", int64(1), "two", "k=v")
	ta := rets["m1"].Map("return")
	if ta == nil || !reflect.DeepEqual(ta.List("args"), []any{int64(1), "two"}) || ta.Map("kwargs").Str("k") != "v" {
		t.Fatalf("test.arg %v", rets["m1"])
	}
	// Grain targeting works from the data cache the minion's _pillar filled.
	if rets := runJob(t, d, "kernel:Linux", "grain", "test.ping"); rets["m1"] == nil {
		t.Fatal("grain target")
	}

	// salt-proxy p1 (dummy).
	pdir := filepath.Join(dir, "p1")
	writeFile(t, filepath.Join(pdir, "etc", "proxy"), minionConf(pdir, "p1", retPort, "proxy: {proxytype: dummy}\n"))
	pp := startPeer(t, ctx, src, "salt-proxy", filepath.Join(dir, "p1.out"), "-c", filepath.Join(pdir, "etc"), "--proxyid=p1", "-l", "warning")
	waitPending(t, d, "p1", pp)
	if _, err := d.Keys().Accept("p1"); err != nil {
		t.Fatal(err)
	}
	waitBus(t, bus, "salt/minion/p1/start")
	if rets := runJob(t, d, "p1", "glob", "test.ping"); rets["p1"] == nil || rets["p1"].Bool("return") != true {
		t.Fatalf("proxy test.ping %v", rets)
	}
	// The rest of the minion checks, for the proxy.
	if rets := runJob(t, d, "p1", "glob", "grains.items"); rets["p1"] == nil || rets["p1"].Map("return").Str("id") != "p1" {
		t.Fatalf("proxy grains.items %v", rets)
	}
	prets := runJob(t, d, "p1", "glob", "test.arg", int64(1), "two", payload.NewMap("__kwarg__", true, "k", "v"))
	if r := prets["p1"].Map("return"); r == nil || len(r.List("args")) != 2 || r.Map("kwargs").Str("k") != "v" {
		t.Fatalf("proxy test.arg %v", prets)
	}
	if rets := runJob(t, d, "p1", "glob", "cmd.run", "echo hi"); rets["p1"] == nil || rets["p1"].Str("return") != "hi" {
		t.Fatalf("proxy cmd.run %v", rets)
	}
	// Proxy -> master traffic: an event the proxy fires reaches the master
	// bus with the proxy's id, and its mine data is stored and served.
	if rets := runJob(t, d, "p1", "glob", "event.send", "proxy/tag", payload.NewMap("__kwarg__", true, "data", payload.NewMap("b", int64(2)))); rets["p1"] == nil || rets["p1"].Bool("return") != true {
		t.Fatalf("proxy event.send %v", rets)
	}
	if ev := waitBus(t, bus, "proxy/tag"); ev.Data.Str("id") != "p1" || ev.Data.Map("data") == nil {
		t.Fatalf("proxy event on the master bus: %v", mapJSONish(ev.Data))
	}
	if rets := runJob(t, d, "p1", "glob", "mine.send", "test.ping"); rets["p1"] == nil || rets["p1"].Bool("return") != true {
		t.Fatalf("proxy mine.send %v", rets)
	}
	if rets := runJob(t, d, "p1", "glob", "mine.get", "p1", "test.ping"); rets["p1"] == nil || rets["p1"].Map("return") == nil || rets["p1"].Map("return").Bool("p1") != true {
		t.Fatalf("proxy mine.get %v", rets)
	}

	// The real salt CLI, through .root_key, publish_pull.ipc and the event
	// bus sockets.
	cliEtc := filepath.Join(dir, "cli")
	writeFile(t, filepath.Join(cliEtc, "master"), fmt.Sprintf(
		"interface: 127.0.0.1\nret_port: %d\npublish_port: %d\nroot_dir: %s\npki_dir: %s\ncachedir: %s\nsock_dir: %s\n"+
			"log_file: %s/cli.log\nuser: root\n", retPort, pubPort, dir, cfg.PKIDir, cfg.CacheDir, cfg.SockDir, dir))
	cctx, ccancel := context.WithTimeout(ctx, testutil.Scale(400*time.Second))
	defer ccancel()
	out := runCLI(t, cctx, src, "salt", "-c", cliEtc, "*", "test.ping", "--out", "json", "--static", "-t", "60")
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("salt output %q: %v", out, err)
	}
	if !reflect.DeepEqual(got, map[string]any{"m1": true, "p1": true}) {
		t.Fatalf("salt '*' test.ping: %v", got)
	}
	out = runCLI(t, cctx, src, "salt", "-c", cliEtc, "m1", "cmd.run", "echo from-cli", "--out", "json", "-t", "60")
	if !bytes.Contains(out, []byte(`"m1": "from-cli"`)) {
		t.Fatalf("salt cmd.run: %s", out)
	}
	// A job that outlives the CLI timeout: the CLI asks with
	// saltutil.find_job and keeps waiting.
	start := time.Now()
	out = runCLI(t, cctx, src, "salt", "-c", cliEtc, "m1", "test.sleep", "3", "--out", "json", "-t", "1")
	if !bytes.Contains(out, []byte(`"m1": true`)) || time.Since(start) < 3*time.Second {
		t.Fatalf("salt test.sleep 3 -t 1: %s", out)
	}
	// Mine: mine.update sends _mine, mine.get reads it back with _mine_get.
	runCLI(t, cctx, src, "salt", "-c", cliEtc, "m1", "mine.update", "--out", "json", "-t", "60")
	out = runCLI(t, cctx, src, "salt", "-c", cliEtc, "m1", "mine.get", "*", "network.ip_addrs", "--out", "json", "-t", "60")
	var mineOut map[string]map[string][]any
	if err := json.Unmarshal(out, &mineOut); err != nil || len(mineOut["m1"]["m1"]) == 0 {
		t.Fatalf("mine.get: %s (%v)", out, err)
	}
	// salt-call event.send reaches the master bus.
	runCLI(t, cctx, src, "salt-call", "-c", filepath.Join(mdir, "etc"), "event.send", "my/tag", `{"a": 1}`, "--out", "json")
	if ev := waitBus(t, bus, "my/tag"); ev.Data.Map("data") == nil || ev.Data.Map("data").Str("a") != "1" || ev.Data.Str("id") != "m1" {
		t.Fatalf("event.send: %v", mapJSONish(ev.Data))
	}
	// manage.present sees m1's connection (presence from /proc/net/tcp
	// against the ipv4 grains; the dummy proxy reports no ipv4 grain, so
	// Salt does not see it either).
	if ids, err := d.Master().ConnectedIDs(); err != nil || ids["m1"] == "" {
		t.Fatalf("presence: %v %v", ids, err)
	}

	// Key delete: the session key rotates, the minion re-authenticates on
	// the next publish, its key is pending again; once accepted it answers.
	if _, err := d.Keys().Delete("m1"); err != nil {
		t.Fatal(err)
	}
	waitBus(t, bus, "key")
	type result struct {
		rets map[string]*payload.Map
	}
	done := make(chan result, 1)
	go func() {
		res, err := d.Master().RunJob(ctx, master.PublishRequest{Tgt: "*", Fun: "test.ping"}, testutil.Scale(60*time.Second), testutil.Scale(20*time.Second))
		if err != nil {
			done <- result{}
			return
		}
		done <- result{res.Returns}
	}()
	waitPending(t, d, "m1", mp)
	if _, err := d.Keys().Accept("m1"); err != nil {
		t.Fatal(err)
	}
	// The publish went out while m1 had no key (it was not expected);
	// after re-acceptance m1 answers new jobs.
	<-done
	if rets := runJob(t, d, "m1", "glob", "test.ping"); rets["m1"] == nil || rets["m1"].Bool("return") != true {
		t.Fatalf("test.ping after re-accept %v", rets)
	}
	out = runCLI(t, cctx, src, "salt", "-c", cliEtc, "*", "test.ping", "--out", "json", "--static", "-t", "60")
	if err := json.Unmarshal(out, &got); err != nil || !reflect.DeepEqual(got, map[string]any{"m1": true, "p1": true}) {
		t.Fatalf("salt '*' test.ping after re-accept: %s", out)
	}
}

func mapJSONish(m *payload.Map) string {
	b, _ := m.MarshalJSON()
	return string(b)
}

func runCLI(t *testing.T, ctx context.Context, src string, script string, args ...string) []byte {
	t.Helper()
	cmd := saltpeer.Command(ctx, src, script, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstdout: %s\nstderr: %s", script, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.Bytes()
}
