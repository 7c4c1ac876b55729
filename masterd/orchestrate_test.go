package masterd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/cli/runcli"
	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/internal/testutil/proc"
	"github.com/gsalt/gsalt/masterd"
	"github.com/gsalt/gsalt/wire/payload"
)

// orchSLS is the orchestration of the end-to-end tests: a ping, a state
// run writing the file named by the orchestration's pillar on the minion,
// a runner, a tolerated failure (fail_minions), a failing step with an
// onfail handler (a runner firing an event) and a step requiring the
// failed one.
const orchSLS = `ping:
  salt.function:
    - name: test.ping
    - tgt: {{ pillar['minion'] }}

apply:
  salt.state:
    - tgt: {{ pillar['minion'] }}
    - sls: touch
    - pillar:
        path: {{ pillar['target'] }}
    - require:
      - salt: ping

jobs:
  salt.runner:
    - name: jobs.list_jobs
    - require:
      - salt: apply

tolerated:
  salt.function:
    - name: test.false
    - tgt: {{ pillar['minion'] }}
    - fail_minions: {{ pillar['minion'] }}
    - require:
      - salt: jobs

failing:
  salt.function:
    - name: cmd.run
    - tgt: {{ pillar['minion'] }}
    - arg:
      - exit 3
    - require:
      - salt: tolerated

cleanup:
  salt.runner:
    - name: event.send
    - tag: orch/failed
    - data: {step: failing}
    - onfail:
      - salt: failing

never:
  salt.function:
    - name: test.ping
    - tgt: {{ pillar['minion'] }}
    - require:
      - salt: failing
`

// touchSLS is what salt.state applies on the minion.
const touchSLS = `touched:
  file.managed:
    - name: {{ pillar['path'] }}
    - contents: orchestrated
`

// writeOrchFiles writes the orchestration and the minion's SLS under the
// daemon's file_roots (DIR/srv/salt).
func writeOrchFiles(t testing.TB, dir string) {
	t.Helper()
	for name, text := range map[string]string{"orch/site.sls": orchSLS, "touch.sls": touchSLS} {
		p := filepath.Join(dir, "srv", "salt", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// orchStep returns the state return of ID id in the orchestration's
// data for the master.
func orchStep(t testing.TB, data *payload.Map, id string) *payload.Map {
	t.Helper()
	for _, it := range data.Items() {
		if strings.Contains(payload.KeyString(it.Key), "_|-"+id+"_|-") {
			return it.Value.(*payload.Map)
		}
	}
	t.Fatalf("no step %s in %s", id, mapJSONish(data))
	return nil
}

// checkOrchestration checks the return of state.orchestrate orch.site
// for minion id (file written at target) against Salt's texts.
func checkOrchestration(t testing.TB, ret *payload.Map, masterID, id, target string) {
	t.Helper()
	if ret.Str("outputter") != "highstate" || ret.Len() != 3 {
		t.Fatalf("orchestrate return %s", mapJSONish(ret))
	}
	if rc, _ := ret.Int("retcode"); rc != 1 {
		t.Errorf("retcode %d, want 1 (a step failed)", rc)
	}
	data := ret.Map("data").Map(masterID)
	if data == nil || data.Len() != 7 {
		t.Fatalf("orchestration data for %s: %s", masterID, mapJSONish(ret))
	}
	want := []struct {
		id      string
		result  any
		comment string
	}{
		{"ping", true, "Function ran successfully. Function test.ping ran on " + id + "."},
		{"apply", true, "States ran successfully. Updating " + id + "."},
		{"jobs", true, "Runner function 'jobs.list_jobs' executed."},
		{"tolerated", true, "Function ran successfully. Function test.false ran on " + id + "."},
		{"failing", false, "Running function cmd.run failed on minions: " + id + " Function cmd.run ran on " + id + "."},
		{"cleanup", true, "Runner function 'event.send' executed."},
		{"never", false, "One or more requisite failed: orch.site.failing"},
	}
	for _, w := range want {
		st := orchStep(t, data, w.id)
		if r, _ := st.Get("result"); r != w.result || st.Str("comment") != w.comment {
			t.Errorf("step %s: result %v comment %q, want %v %q", w.id, r, st.Str("comment"), w.result, w.comment)
		}
	}
	if ch := orchStep(t, data, "ping").Map("changes").Map("ret"); ch == nil || ch.Bool(id) != true {
		t.Errorf("ping changes %s", mapJSONish(orchStep(t, data, "ping")))
	}
	apply := orchStep(t, data, "apply").Map("changes")
	if apply.Str("out") != "highstate" || apply.Map("ret").Map(id) == nil {
		t.Fatalf("apply changes %s", mapJSONish(apply))
	}
	for _, it := range apply.Map("ret").Map(id).Items() {
		fr := it.Value.(*payload.Map)
		if !strings.HasPrefix(payload.KeyString(it.Key), "file_|-touched_|-"+target) || fr.Bool("result") != true ||
			fr.Map("changes").Str("diff") != "New file" {
			t.Errorf("minion state %s: %s", payload.KeyString(it.Key), mapJSONish(fr))
		}
	}
	if jobs := orchStep(t, data, "jobs").Map("changes"); jobs == nil || jobs.Map("return") == nil {
		t.Errorf("jobs.list_jobs changes %s", mapJSONish(orchStep(t, data, "jobs")))
	}
	if ch := orchStep(t, data, "failing").Map("changes").Map("ret"); ch == nil || ch.Str(id) != "" {
		t.Errorf("failing changes %s", mapJSONish(orchStep(t, data, "failing")))
	}
	b, err := os.ReadFile(target)
	if err != nil || string(b) != "orchestrated\n" && string(b) != "orchestrated" {
		t.Errorf("the minion's file %s: %q %v", target, b, err)
	}
}

// runOrch runs state.orchestrate orch.site in-process on the daemon's
// master, like the clear runner command does.
func runOrch(t testing.TB, d *masterd.Daemon, kwargs *payload.Map) *payload.Map {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scale(240*time.Second))
	defer cancel()
	out := d.Master().RunRunner(ctx, "", "state.orchestrate", []any{"orch.site"}, kwargs, "root")
	ret, ok := out.Get("return")
	rm, isMap := ret.(*payload.Map)
	if !ok || !isMap {
		t.Fatalf("state.orchestrate returned %s", mapJSONish(out))
	}
	if out.Bool("success") {
		t.Errorf("success true although a step failed")
	}
	return rm
}

// clientConfig writes a CLI configuration pointing at the daemon's
// actual ports and directories.
func clientConfig(t testing.TB, d *masterd.Daemon, cfg *config.Master, dir string) string {
	t.Helper()
	etc := filepath.Join(dir, "cli")
	if err := os.MkdirAll(etc, 0o755); err != nil {
		t.Fatal(err)
	}
	text := fmt.Sprintf("interface: 127.0.0.1\nret_port: %d\npublish_port: %d\nroot_dir: %s\npki_dir: %s\ncachedir: %s\nsock_dir: %s\n"+
		"log_file: %s/cli.log\nuser: root\n", d.ReqAddr().(*net.TCPAddr).Port, d.PubAddr().(*net.TCPAddr).Port, dir,
		cfg.PKIDir, cfg.CacheDir, cfg.SockDir, dir)
	if err := os.WriteFile(filepath.Join(etc, "master"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return etc
}

// TestOrchestrateEndToEnd: gsalt-master (daemon, real sockets) with an
// in-process gsalt minion; state.orchestrate runs test.ping, a state run
// that writes a file on the minion, jobs.list_jobs, a failure tolerated by
// fail_minions, a failing cmd.run whose onfail handler fires an event, and
// a step skipped by its failed requisite. Then gsalt-run prints the same
// orchestration with the highstate outputter and exits 1, and test=True
// changes nothing.
func TestOrchestrateEndToEnd(t *testing.T) {
	dir := shortDir(t)
	writeOrchFiles(t, dir)
	d, cfg := startMaster(t, dir, "auto_accept: True\n")
	bus := d.Bus().Subscribe(event.All(), 1<<14)
	defer bus.Close()
	startGsaltMinion(t, d, dir, "m1")

	target := filepath.Join(dir, "orchestrated")
	ret := runOrch(t, d, payload.NewMap("pillar", payload.NewMap("minion", "m1", "target", target)))
	checkOrchestration(t, ret, cfg.ID, "m1", target)

	// The onfail runner fired its event; the steps fired their args events.
	var failedEv, argsEv bool
	deadline := time.After(10 * time.Second)
	for !failedEv || !argsEv {
		select {
		case ev := <-bus.C():
			switch {
			case ev.Tag == "orch/failed":
				failedEv = ev.Data.Str("step") == "failing"
			case strings.HasPrefix(ev.Tag, "salt/run/") && strings.HasSuffix(ev.Tag, "/args") && ev.Data.Str("type") == "state":
				argsEv = ev.Data.Str("tgt") == "m1" && ev.Data.Str("name") == "apply"
			}
		case <-deadline:
			t.Fatalf("events: orch/failed %v, state args %v", failedEv, argsEv)
		}
	}

	// gsalt-run: the clear runner command, the highstate outputter, exit 1.
	if err := os.Remove(target); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scale(240*time.Second))
	defer cancel()
	code := runcli.Run(ctx, runcli.Options{ConfigDir: clientConfig(t, d, cfg, dir), Stdout: &stdout, Stderr: &stderr,
		Words: []string{"state.orchestrate", "orch.site", fmt.Sprintf(`pillar={"minion": "m1", "target": %q}`, target)}})
	// gsalt-run also prints the salt/run/<jid>/args events of the steps
	// (salt-run does not: it prints only what the runner fires through
	// its own namespaced event); the highstate output follows them.
	out := stdout.String()
	if i := strings.Index(out, "\n"+cfg.ID+":\n"); i >= 0 {
		out = out[i+1:]
	}
	if code != 1 || !strings.HasPrefix(out, cfg.ID+":\n") || !strings.Contains(out, "Summary for "+cfg.ID) ||
		!strings.Contains(out, "Succeeded: 5 (changed=6)") || !strings.Contains(out, "Failed:    2") ||
		!strings.Contains(out, "          ID: failing") || strings.Contains(out, "retcode") {
		t.Fatalf("gsalt-run exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr.String())
	}
	if _, err := os.Stat(target); err != nil {
		t.Fatalf("the file was not written again: %v", err)
	}

	// test=True: nothing runs on the minion, the file stays absent.
	if err := os.Remove(target); err != nil {
		t.Fatal(err)
	}
	tret := runOrchTest(t, d, payload.NewMap("test", true, "pillar", payload.NewMap("minion", "m1", "target", target)))
	data := tret.Map("data").Map(cfg.ID)
	if st := orchStep(t, data, "ping"); st.Str("comment") != "Function test.ping would be executed on target m1" {
		t.Errorf("test ping %s", mapJSONish(st))
	}
	if st := orchStep(t, data, "jobs"); st.Str("comment") != "Runner function 'jobs.list_jobs' would be executed." {
		t.Errorf("test jobs %s", mapJSONish(st))
	}
	if st := orchStep(t, data, "apply"); st.Str("comment") != "States ran successfully. Updating m1." || st.Has("result") && st.Bool("result") {
		t.Errorf("test apply %s", mapJSONish(st))
	}
	if _, err := os.Stat(target); err == nil {
		t.Error("test=True wrote the file")
	}
}

// runOrchTest runs state.orchestrate orch.site expecting success.
func runOrchTest(t testing.TB, d *masterd.Daemon, kwargs *payload.Map) *payload.Map {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scale(240*time.Second))
	defer cancel()
	out := d.Master().RunRunner(ctx, "", "state.orchestrate", []any{"orch.site"}, kwargs, "root")
	rm, ok := out.Map("return"), out.Has("return")
	if !ok || rm == nil || !out.Bool("success") {
		t.Fatalf("state.orchestrate test=True: %s", mapJSONish(out))
	}
	return rm
}

// TestInteropOrchestrateRealMinion: a real Salt 3006 salt-minion against
// gsalt-master, driven by the orchestration; then the same orchestration
// through a real Salt 3006 salt-master (salt-run state.orchestrate) and
// another real salt-minion, whose step returns must equal gsalt's (times,
// jids and the job list aside).
func TestInteropOrchestrateRealMinion(t *testing.T) {
	src := saltpeer.Require(t)
	if testing.Short() {
		t.Skip("interop with real Salt skipped in -short mode")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := shortDir(t)
	writeOrchFiles(t, dir)
	d, cfg := startMaster(t, dir, fmt.Sprintf("auto_accept: True\npillar_roots: {base: [%s/pillar]}\n", dir))
	bus := d.Bus().Subscribe(event.All(), 4096)
	defer bus.Close()
	retPort := d.ReqAddr().(*net.TCPAddr).Port
	mdir := filepath.Join(dir, "rm1")
	writeFile(t, filepath.Join(mdir, "etc", "minion"), minionConf(mdir, "rm1", retPort, ""))
	startPeer(t, ctx, src, "salt-minion", filepath.Join(dir, "rm1.out"), "-c", filepath.Join(mdir, "etc"), "-l", "warning")
	waitBus(t, bus, "salt/minion/rm1/start")

	target := filepath.Join(dir, "orchestrated-real")
	ret := runOrch(t, d, payload.NewMap("pillar", payload.NewMap("minion", "rm1", "target", target)))
	checkOrchestration(t, ret, cfg.ID, "rm1", target)
	gsaltData := orchNormalise(t, []byte(mapJSONish(ret)), dir)

	// The same through Salt's own master.
	sdir := shortDir(t)
	writeOrchFiles(t, sdir)
	ports := proc.FreePorts(t, 2)
	etc := filepath.Join(sdir, "etc")
	writeFile(t, filepath.Join(etc, "master"), fmt.Sprintf("interface: 127.0.0.1\npublish_port: %[2]d\nret_port: %[3]d\n"+
		"root_dir: %[1]s\npki_dir: %[1]s/pki\ncachedir: %[1]s/cache\nsock_dir: %[1]s/sock\nlog_file: %[1]s/master.log\n"+
		"user: root\nauto_accept: True\nipv6: False\nfile_roots: {base: [%[1]s/srv/salt]}\npillar_roots: {base: [%[1]s/pillar]}\n",
		sdir, ports[0], ports[1]))
	startPeer(t, ctx, src, "salt-master", filepath.Join(sdir, "master.out"), "-c", etc, "-l", "warning")
	smdir := filepath.Join(sdir, "rm1")
	writeFile(t, filepath.Join(smdir, "etc", "minion"), minionConf(smdir, "rm1", ports[1], ""))
	startPeer(t, ctx, src, "salt-minion", filepath.Join(sdir, "rm1.out"), "-c", filepath.Join(smdir, "etc"), "-l", "warning")
	cctx, ccancel := context.WithTimeout(ctx, testutil.Scale(600*time.Second))
	defer ccancel()
	// Each try waits up to 10 s for the answer, so polling needs no sleep.
	testutil.Eventually(t, 240*time.Second, func() bool {
		cmd := saltpeer.Command(cctx, src, "salt", "-c", etc, "rm1", "test.ping", "--out", "json", "-t", "10")
		out, err := cmd.Output()
		return err == nil && bytes.Contains(out, []byte("true"))
	}, "the real salt-minion answering the real salt-master")
	starget := filepath.Join(sdir, "orchestrated-real")
	cmd := saltpeer.Command(cctx, src, "salt-run", "-c", etc, "state.orchestrate", "orch.site",
		fmt.Sprintf(`pillar={"minion": "rm1", "target": %q}`, starget), "--out", "json")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee interface{ ExitCode() int }
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("salt-run state.orchestrate: %v (want exit 1)\n%s\n%s", err, stdout.String(), stderr.String())
	}
	saltData := orchNormalise(t, stdout.Bytes(), sdir)
	if !reflect.DeepEqual(gsaltData, saltData) {
		g, _ := json.MarshalIndent(gsaltData, "", " ")
		s, _ := json.MarshalIndent(saltData, "", " ")
		t.Errorf("orchestration returns differ\ngsalt-master:\n%s\nsalt-master:\n%s", g, s)
	}
}

// orchNormalise reads an orchestration return (JSON) and keeps what both
// masters must agree on: the master id becomes MASTER, the directory
// DIR; times, jids and the job list go.
func orchNormalise(t *testing.T, raw []byte, dir string) map[string]any {
	t.Helper()
	raw = bytes.ReplaceAll(raw, []byte(dir), []byte("DIR"))
	var ret map[string]any
	if err := json.Unmarshal(raw, &ret); err != nil {
		t.Fatalf("orchestration return %q: %v", raw, err)
	}
	data, _ := ret["data"].(map[string]any)
	if len(data) != 1 {
		t.Fatalf("orchestration data %s", raw)
	}
	for id, steps := range data {
		if !strings.HasSuffix(id, "_master") {
			t.Errorf("master id %q", id)
		}
		delete(data, id)
		data["MASTER"] = steps
		sm, _ := steps.(map[string]any)
		for tag, v := range sm {
			st, _ := v.(map[string]any)
			delete(st, "start_time")
			delete(st, "duration")
			delete(st, "__jid__")
			ch, _ := st["changes"].(map[string]any)
			if strings.Contains(tag, "_|-jobs_|-") && ch != nil {
				ch["return"] = "JOBS"
			}
			if rets, ok := ch["ret"].(map[string]any); ok && ch["out"] == "highstate" {
				for _, mr := range rets {
					states, _ := mr.(map[string]any)
					for _, sv := range states {
						if inner, ok := sv.(map[string]any); ok {
							delete(inner, "start_time")
							delete(inner, "duration")
						}
					}
				}
			}
		}
	}
	return ret
}
