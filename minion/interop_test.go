package minion

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testlab"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/internal/testutil/proc"
)

// saltMaster is a real Salt 3006 salt-master run from the source tree.
type saltMaster struct {
	src, dir, conf string
	ret, pub       int
}

// startProcess starts cmd in its own process group and stops the whole
// group when the test ends.
func startProcess(t *testing.T, cmd *exec.Cmd, logPath string) {
	t.Helper()
	proc.Start(t, filepath.Base(logPath), cmd, proc.Options{Log: logPath, Grace: 5 * time.Second})
}

func startSaltMaster(t *testing.T, src string) *saltMaster {
	t.Helper()
	return startSaltMasterWith(t, src, "")
}

// startSaltMasterWith starts a salt-master with extra appended to its
// configuration.
func startSaltMasterWith(t *testing.T, src, extra string) *saltMaster {
	t.Helper()
	dir := t.TempDir()
	sm := &saltMaster{src: src, dir: dir, conf: filepath.Join(dir, "etc", "salt"), ret: testlab.FreePort(t), pub: testlab.FreePort(t)}
	for _, d := range []string{"etc/salt", "pki", "cache", "sock", "log", "srv/salt", "srv/pillar"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	conf := fmt.Sprintf(`root_dir: %[1]s
pki_dir: %[1]s/pki
cachedir: %[1]s/cache
sock_dir: %[1]s/sock
log_file: %[1]s/log/master
log_level_logfile: info
user: root
ipv6: False
interface: 127.0.0.1
publish_port: %[2]d
ret_port: %[3]d
file_roots: {base: [%[1]s/srv/salt]}
pillar_roots: {base: [%[1]s/srv/pillar]}
`, dir, sm.pub, sm.ret) + extra
	files := map[string]string{
		"etc/salt/master":      conf,
		"srv/pillar/top.sls":   "base:\n  '*':\n    - data\n",
		"srv/pillar/data.sls":  "foo: bar\nnested:\n  k: v\n",
		"srv/salt/hello.txt":   "hello from the master\n",
		"srv/salt/sub/big.bin": strings.Repeat("0123456789abcdef", 200000),
		"srv/salt/sub/d/s.txt": "small\n",
	}
	for p, c := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// An empty directory, for cp.get_dir and cp.cache_dir include_empty.
	if err := os.MkdirAll(filepath.Join(dir, "srv/salt/sub/empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	startProcess(t, saltpeer.Command(context.Background(), src, "salt-master", "-c", sm.conf, "-l", "warning"), filepath.Join(dir, "log", "stdout"))
	if !testutil.Poll(300*time.Second, func() bool {
		if _, err := os.Stat(filepath.Join(dir, "sock", "master_event_pub.ipc")); err != nil {
			return false
		}
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(sm.ret))
		if err != nil {
			return false
		}
		c.Close()
		return true
	}) {
		log, _ := os.ReadFile(filepath.Join(dir, "log", "master"))
		t.Fatalf("salt-master did not start:\n%s", log)
	}
	return sm
}

// run runs a Salt CLI script against the master and returns its stdout.
func (sm *saltMaster) run(t *testing.T, script string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scale(180*time.Second))
	defer cancel()
	cmd := saltpeer.Command(ctx, sm.src, script, append([]string{"-c", sm.conf}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		t.Logf("%s %v: %v\nstderr: %s", script, args, err, errb.String())
	}
	return out.String(), err
}

// saltJSON runs `salt ... --out json` and decodes the result. Without a
// -t of its own the CLI waits up to 60 s (it returns as soon as every
// targeted minion answered; Salt's default of 5 s is too short on a loaded
// machine).
func (sm *saltMaster) saltJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	if !slices.Contains(args, "-t") {
		args = append([]string{"-t", "60"}, args...)
	}
	out, _ := sm.run(t, "salt", append(args, "--out", "json", "--static")...)
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("salt %v: %v\n%s", args, err, out)
	}
	return v
}

// eventListener subscribes to the master bus with Salt's own MasterEvent.
func (sm *saltMaster) eventListener(t *testing.T, tag string) <-chan map[string]any {
	t.Helper()
	code := `import json, sys
import salt.config, salt.utils.event
opts = salt.config.client_config(sys.argv[1])
ev = salt.utils.event.get_master_event(opts, opts["sock_dir"], listen=True)
ev.connect_pub()
print("READY", flush=True)
e = ev.get_event(full=True, wait=60, tag=sys.argv[2])
print(json.dumps(e, default=str), flush=True)
`
	cmd := saltpeer.PythonCommand(context.Background(), sm.src, code, filepath.Join(sm.conf, "master"), tag)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	if !sc.Scan() || sc.Text() != "READY" {
		t.Fatalf("event listener did not start: %q", sc.Text())
	}
	ch := make(chan map[string]any, 1)
	go func() {
		if sc.Scan() {
			var v map[string]any
			json.Unmarshal(sc.Bytes(), &v)
			ch <- v
		}
		close(ch)
	}()
	return ch
}

// waitKeys polls salt-key until want shows in the state.
func (sm *saltMaster) waitKey(t *testing.T, state, id string) {
	t.Helper()
	var out string
	if !testutil.Poll(120*time.Second, func() bool {
		out, _ = sm.run(t, "salt-key", "-L", "--out", "json")
		var v map[string][]string
		return json.Unmarshal([]byte(out), &v) == nil && slices.Contains(v[state], id)
	}) {
		t.Fatalf("key %s not in %s: %s", id, state, out)
	}
}

func interopMinionConfig(t *testing.T, sm *saltMaster, id, extra string) *config.Minion {
	t.Helper()
	dir := t.TempDir()
	conf := fmt.Sprintf("id: %s\nroot_dir: %s\nmaster: 127.0.0.1\nmaster_port: %d\nacceptance_wait_time: 0.5\nenable_fqdns_grains: False\nmine_functions:\n  network.ip_addrs: []\n  test.echo: [mined]\n%s",
		id, dir, sm.ret, extra)
	if err := os.WriteFile(filepath.Join(dir, "minion"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadMinion(dir)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestInteropSaltMaster runs a gsalt minion against a real Salt 3006
// salt-master and drives it with the real salt and salt-key.
func TestInteropSaltMaster(t *testing.T) {
	src := saltpeer.Require(t)
	sm := startSaltMaster(t, src)
	id := "gsalt-interop-1"
	cfg := interopMinionConfig(t, sm, id, "")
	m, stop := startMinion(t, cfg, Options{Logger: testLogger(t)})
	sm.waitKey(t, "minions_pre", id)
	if _, err := sm.run(t, "salt-key", "-a", id, "-y"); err != nil {
		t.Fatal(err)
	}
	waitReady(t, m, 30*time.Second)

	if got := sm.saltJSON(t, id, "test.ping"); !reflect.DeepEqual(got, map[string]any{id: true}) {
		t.Errorf("test.ping: %v", got)
	}
	g := sm.saltJSON(t, id, "grains.items")[id].(map[string]any)
	if g["id"] != id || g["os"] == nil || g["kernel"] != "Linux" {
		t.Errorf("grains.items: id=%v os=%v kernel=%v", g["id"], g["os"], g["kernel"])
	}
	if got := sm.saltJSON(t, id, "cmd.run", "echo hi"); got[id] != "hi" {
		t.Errorf("cmd.run: %v", got)
	}
	arg := sm.saltJSON(t, id, "test.arg", "1", "two", "k=v")[id].(map[string]any)
	if !reflect.DeepEqual(arg["args"], []any{1.0, "two"}) || arg["kwargs"].(map[string]any)["k"] != "v" || arg["kwargs"].(map[string]any)["__pub_jid"] == nil {
		t.Errorf("test.arg: %v", arg)
	}
	want := map[string]any{"foo": "bar", "nested": map[string]any{"k": "v"}}
	if got := sm.saltJSON(t, id, "pillar.items"); !reflect.DeepEqual(got[id], want) {
		t.Errorf("pillar.items: %v", got)
	}
	if v, _ := m.Pillar().Get("foo"); v != "bar" {
		t.Errorf("in-memory pillar %s", mustJSON(m.Pillar()))
	}
	if got := sm.saltJSON(t, "-I", "nested:k:v", "test.ping"); !reflect.DeepEqual(got, map[string]any{id: true}) {
		t.Errorf("pillar target: %v", got)
	}
	if got := sm.saltJSON(t, id, "mine.update"); got[id] != true {
		t.Errorf("mine.update: %v", got)
	}
	mine := sm.saltJSON(t, id, "mine.get", "*", "test.echo")
	if !reflect.DeepEqual(mine[id], map[string]any{id: "mined"}) {
		t.Errorf("mine.get test.echo: %v", mine)
	}
	ips := sm.saltJSON(t, id, "mine.get", id, "network.ip_addrs")[id].(map[string]any)
	if _, ok := ips[id].([]any); !ok {
		t.Errorf("mine.get network.ip_addrs: %v", ips)
	}
	events := sm.eventListener(t, "gsalt/interop")
	if got := sm.saltJSON(t, id, "event.send", "gsalt/interop", `{"a": 1}`); got[id] != true {
		t.Errorf("event.send: %v", got)
	}
	select {
	case ev := <-events:
		data, _ := ev["data"].(map[string]any)
		inner, _ := data["data"].(map[string]any)
		if ev["tag"] != "gsalt/interop" || data["id"] != id || inner["a"] != 1.0 {
			t.Errorf("master bus event: %v", ev)
		}
	case <-time.After(30 * time.Second):
		t.Error("event.send not seen on the master bus")
	}
	if got := sm.saltJSON(t, id, "cp.get_file_str", "salt://hello.txt"); got[id] != "hello from the master\n" {
		t.Errorf("cp.get_file_str: %v", got)
	}
	cached := sm.saltJSON(t, id, "cp.cache_file", "salt://sub/big.bin")[id]
	if b, err := os.ReadFile(fmt.Sprint(cached)); err != nil || len(b) != 16*200000 {
		t.Errorf("cp.cache_file of a 3 MiB file: %v %d %v", cached, len(b), err)
	}
	// The directory functions send _file_list, _file_list_emptydirs and
	// _file_find to the real master.
	dest := t.TempDir()
	wantDir := []any{dest + "/sub/big.bin", dest + "/sub/d/s.txt", dest + "/sub/empty"}
	if got := sm.saltJSON(t, id, "cp.get_dir", "salt://sub", dest)[id]; !reflect.DeepEqual(got, wantDir) {
		t.Errorf("cp.get_dir: %v, want %v", got, wantDir)
	}
	if b, err := os.ReadFile(filepath.Join(dest, "sub", "d", "s.txt")); err != nil || string(b) != "small\n" {
		t.Errorf("cp.get_dir wrote %q %v", b, err)
	}
	cachedDir, _ := sm.saltJSON(t, id, "cp.cache_dir", "salt://sub", "include_empty=True", "exclude_pat=*.bin")[id].([]any)
	if len(cachedDir) != 2 || !strings.HasSuffix(fmt.Sprint(cachedDir[0]), "/files/base/sub/d/s.txt") || !strings.HasSuffix(fmt.Sprint(cachedDir[1]), "/files/base/sub/empty") {
		t.Errorf("cp.cache_dir: %v", cachedDir)
	}
	if got := sm.saltJSON(t, id, "cp.stat_file", "salt://hello.txt")[id]; got != "0644" {
		t.Errorf("cp.stat_file: %v", got)
	}
	// A job longer than the CLI timeout: the CLI keeps waiting thanks to
	// saltutil.find_job.
	start := time.Now()
	if got := sm.saltJSON(t, "-t", "2", id, "test.sleep", "4"); got[id] != true || time.Since(start) < 4*time.Second {
		t.Errorf("test.sleep 4 with -t 2: %v after %s", got, time.Since(start))
	}
	if got := sm.saltJSON(t, id, "nosuch.fun"); got[id] != "'nosuch.fun' is not available." {
		t.Errorf("missing function: %v", got)
	}
	// gsalt-call with the same configuration talks to the same master.
	res, err := Call(context.Background(), CallOptions{ConfigDir: filepath.Dir(cfg.ConfFile), Fun: "pillar.get", Args: []string{"nested:k"},
		Logger: testLogger(t)})
	if err != nil || res.Return != "v" || res.Retcode != 0 {
		t.Errorf("gsalt-call pillar.get: %+v %v", res, err)
	}
	if err := stop(); err != nil {
		t.Errorf("Run: %v", err)
	}
}

// TestInteropSwarm runs a small swarm against a real Salt master.
func TestInteropSwarm(t *testing.T) {
	src := saltpeer.Require(t)
	if testing.Short() {
		t.Skip("swarm interop skipped in -short mode")
	}
	sm := startSaltMaster(t, src)
	cfg := interopMinionConfig(t, sm, "gsw", "")
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var minions []*Minion
	done := make(chan error, 1)
	go func() {
		done <- RunSwarm(ctx, SwarmOptions{Config: cfg, N: 3, Logger: testLogger(t), Started: func(m *Minion) {
			mu.Lock()
			minions = append(minions, m)
			mu.Unlock()
		}})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(testutil.Scale(30 * time.Second)):
			t.Error("swarm did not stop")
		}
	})
	for i := 0; i < 3; i++ {
		sm.waitKey(t, "minions_pre", SwarmID("gsw", i))
		if _, err := os.Stat(filepath.Join(cfg.PKIDir, SwarmID("gsw", i), "minion.pem")); err != nil {
			t.Errorf("swarm key pair: %v", err)
		}
	}
	if _, err := sm.run(t, "salt-key", "-A", "-y"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	ms := append([]*Minion(nil), minions...)
	mu.Unlock()
	for _, m := range ms {
		waitReady(t, m, 30*time.Second)
	}
	got := sm.saltJSON(t, "gsw-*", "test.ping")
	want := map[string]any{"gsw-0000": true, "gsw-0001": true, "gsw-0002": true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("swarm test.ping: %v", got)
	}
	if got := sm.saltJSON(t, "gsw-0001", "grains.item", "id"); !reflect.DeepEqual(got["gsw-0001"], map[string]any{"id": "gsw-0001"}) {
		t.Errorf("swarm grains id: %v", got)
	}
}
