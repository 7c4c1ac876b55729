package masterd_test

import (
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
	"github.com/gsalt/gsalt/master/keys"
)

// wheelClientPy asks the master behind the CLI configuration argv[1] with
// the real WheelClient.master_call (the clear "wheel" command, as salt-api
// sends it) and runs the same function in-process with WheelClient.cmd over
// the same pki_dir, printing both as JSON.
const wheelClientPy = `
import json, sys
import salt.config, salt.wheel
opts = salt.config.master_config(sys.argv[1])
with open(opts["cachedir"] + "/.root_key") as f:
    key = f.read()
w = salt.wheel.WheelClient(opts)
out = {}
for fun, kw in json.loads(sys.argv[2]):
    remote = w.master_call(fun=fun, key=key, **kw)
    local = w.cmd(fun, kwarg=kw, print_event=False) if fun.startswith(("key.list", "key.finger", "key.name_match", "file_roots.list")) else None
    out[fun] = {"remote": remote, "local": local}
print(json.dumps(out))
`

// TestInteropWheelAndRunners points the real Python salt-run and
// WheelClient at a gsalt master: salt-run fileserver.* must print what the
// gsalt runners return and its events must reach the gsalt bus; the clear
// wheel command must answer WheelClient.master_call like Salt's master.
func TestInteropWheelAndRunners(t *testing.T) {
	src := saltpeer.Require(t)
	if testing.Short() {
		t.Skip("interop with real Salt skipped in -short mode")
	}
	dir := shortDir(t)
	d, cfg := startMaster(t, dir, "")
	srv := filepath.Join(dir, "srv", "salt")
	writeFile(t, filepath.Join(srv, "top.sls"), "base: {'*': [web]}\n")
	writeFile(t, filepath.Join(srv, "web", "init.sls"), "a: 1\n")
	copyFile(t, filepath.Join(vectorsDir, "pki/minion1/minion.pub"), filepath.Join(cfg.PKIDir, "minions_pre", "m1"), 0o644)
	copyFile(t, filepath.Join(vectorsDir, "pki/proxy1/minion.pub"), filepath.Join(cfg.PKIDir, "minions", "p1"), 0o644)
	bus := d.Bus().Subscribe(nil, 4096)
	defer bus.Close()

	retPort := d.ReqAddr().(*net.TCPAddr).Port
	pubPort := d.PubAddr().(*net.TCPAddr).Port
	cliEtc := filepath.Join(dir, "cli")
	writeFile(t, filepath.Join(cliEtc, "master"), fmt.Sprintf(
		"interface: 127.0.0.1\nret_port: %d\npublish_port: %d\nroot_dir: %s\npki_dir: %s\ncachedir: %s\nsock_dir: %s\n"+
			"log_file: %s/cli.log\nuser: root\nfile_roots: {base: [%s]}\n", retPort, pubPort, dir, cfg.PKIDir, cfg.CacheDir, cfg.SockDir, dir, srv))
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()

	// salt-run runs the runner in its own process, with the same options,
	// and fires its events into the master's event bus.
	for _, fun := range []string{"fileserver.envs", "fileserver.file_list", "fileserver.dir_list", "saltutil.sync_all"} {
		out := runCLI(t, ctx, src, "salt-run", "-c", cliEtc, fun, "--out", "json")
		var py any
		if err := json.Unmarshal(out, &py); err != nil {
			t.Fatalf("salt-run %s: %q: %v", fun, out, err)
		}
		if fun == "fileserver.file_list" && !reflect.DeepEqual(py, []any{"top.sls", "web/init.sls"}) {
			t.Fatalf("salt-run %s printed %s", fun, out)
		}
		ret := d.Master().RunRunner(ctx, "", fun, nil, nil, "root")
		var ours any
		b, _ := json.Marshal(mustGet(ret, "return"))
		if err := json.Unmarshal(b, &ours); err != nil || !reflect.DeepEqual(py, ours) {
			t.Fatalf("%s: salt-run printed %s, gsalt returns %s", fun, out, b)
		}
		ev := waitBusPrefix(t, bus, "salt/run/", "/ret", "runner."+fun)
		if ev.Data.Str("fun") != "runner."+fun {
			t.Fatalf("ret event %s", mapJSONish(ev.Data))
		}
	}
	runCLI(t, ctx, src, "salt-run", "-c", cliEtc, "event.send", "interop/tag", `{"a": 1}`, "--out", "json")
	if ev := waitBus(t, bus, "interop/tag"); mustGet(ev.Data, "a") != int64(1) {
		t.Fatalf("event.send data %s", mapJSONish(ev.Data))
	}

	// The clear wheel command, through Salt's own client.
	calls := `[["key.list_all", {}], ["key.finger", {"match": "*"}], ["key.name_match", {"match": "*1"}],` +
		` ["key.accept", {"match": "m1"}], ["key.list", {"match": "acc"}]]`
	cmd := saltpeer.PythonCommand(ctx, src, wheelClientPy, filepath.Join(cliEtc, "master"), calls)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("WheelClient: %v\n%s", err, out)
	}
	var res map[string]struct {
		Remote struct {
			Tag  string         `json:"tag"`
			Data map[string]any `json:"data"`
		} `json:"remote"`
		Local any `json:"local"`
	}
	if err := json.Unmarshal(out[strings.LastIndexByte(strings.TrimSpace(string(out)), '\n')+1:], &res); err != nil {
		t.Fatalf("WheelClient output %q: %v", out, err)
	}
	if len(res) != 5 || res["key.list_all"].Local == nil || res["key.finger"].Local == nil {
		t.Fatalf("WheelClient output %s", out)
	}
	for fun, r := range res {
		data := r.Remote.Data
		if r.Remote.Tag != "salt/wheel/"+fmt.Sprint(data["jid"]) || data["fun"] != "wheel."+fun || data["success"] != true ||
			data["user"] != "root" || data["_stamp"] == nil || len(data) != 7 {
			t.Fatalf("%s: reply %s", fun, out)
		}
		if r.Local != nil && fun != "key.list" && !reflect.DeepEqual(r.Local, data["return"]) {
			t.Fatalf("%s: gsalt %v, Salt %v", fun, data["return"], r.Local)
		}
	}
	if got := res["key.list"].Remote.Data["return"]; !reflect.DeepEqual(got, map[string]any{"minions": []any{"m1", "p1"}}) {
		t.Fatalf("key.list after key.accept: %v", got)
	}
	if ids, _ := d.Keys().ListState(keys.StateAccepted); !reflect.DeepEqual(ids, []string{"m1", "p1"}) {
		t.Fatalf("accepted %v", ids)
	}
	waitBus(t, bus, keys.TagKey)
}

// waitBusPrefix returns the next event whose tag has prefix and suffix
// and whose data has fun.
func waitBusPrefix(t *testing.T, sub *event.Subscription, prefix, suffix, fun string) event.Event {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev := <-sub.C():
			if strings.HasPrefix(ev.Tag, prefix) && strings.HasSuffix(ev.Tag, suffix) && ev.Data != nil && ev.Data.Str("fun") == fun {
				return ev
			}
		case <-deadline:
			t.Fatalf("no %s...%s event for %s", prefix, suffix, fun)
		}
	}
}
