package proxy_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testlab"
	"github.com/gsalt/gsalt/internal/testutil/started"
	"github.com/gsalt/gsalt/master"
	"github.com/gsalt/gsalt/proxy"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestJunosThroughProxy manages a real NETCONF server (yuma123's
// netconfd behind a private sshd, as the junos driver's own tests do)
// through a gsalt master and gsalt-proxy: grains, net.load_config with
// test and commit, revert_in through the device's own confirmed commit
// (reverted by the server), and net.confirm_commit of a pending one.
func TestJunosThroughProxy(t *testing.T) {
	lab := testlab.StartNetconf(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pillar := func(_ context.Context, _ master.PillarRequest) (*payload.Map, error) {
		return payload.NewMap("proxy", payload.NewMap("proxytype", "napalm", "driver", "junos", "host", "127.0.0.1",
			"username", lab.User, "password", lab.Password, "timeout", int64(15),
			"optional_args", payload.NewMap("port", int64(lab.Port), "keepalive", int64(60)))), nil
	}
	dir := shortDir(t)
	d := testMaster(t, dir, pillar)
	boot := started.Watch(t, d.Bus())
	bus := d.Bus().Subscribe(nil, 4096)
	defer bus.Close()
	f := runFleet(t, ctx, cancel, proxy.Options{ConfigDir: proxyConf(t, dir, d, "loop_interval: 0.2\n"), IDs: []string{"vmx1"}, Logger: testLogger()})
	waitFor(t, "vmx1 in the fleet", func() bool { _, ok := f.Device("vmx1"); return ok })
	dev, _ := f.Device("vmx1")
	waitServing(t, boot, dev)
	waitFor(t, "vmx1 up", dev.Initialized)

	call := func(fun string, args ...any) any { t.Helper(); return runJob(t, d, "vmx1", "", fun, args...)["vmx1"] }
	dict := func(fun string, args ...any) *payload.Map {
		t.Helper()
		r, ok := call(fun, args...).(*payload.Map)
		if !ok {
			t.Fatalf("%s returned %v\n%s", fun, r, lab.Logs())
		}
		return r
	}
	running := func() string {
		t.Helper()
		return dict("net.config", "source=running").Map("out").Str("running")
	}
	contact := func(s string) string {
		return `<system xmlns="urn:ietf:params:xml:ns:yang:ietf-system"><contact>` + s + `</contact></system>`
	}

	if v := call("test.ping"); v != true {
		t.Fatalf("test.ping: %v", v)
	}
	for g, want := range map[string]string{"vendor": "Juniper", "os": "junos", "hostname": "vmx1"} {
		if v := call("grains.get", g); v != want {
			t.Errorf("grains.get %s = %v, want %s", g, v, want)
		}
	}
	r := dict("net.load_config", "text="+contact("noc@example.net"), "test=True")
	if !r.Bool("result") || !strings.Contains(r.Str("diff"), "noc@example.net") || strings.Contains(running(), "noc@example.net") {
		t.Errorf("test=True: %v", r)
	}
	r = dict("net.load_config", "text="+contact("noc@example.net"))
	if !r.Bool("result") || !strings.Contains(running(), "<contact>noc@example.net</contact>") {
		t.Errorf("commit: %v", r)
	}

	// Junos "set" syntax is refused by this server with its own message,
	// and nothing changes.
	before := running()
	r = dict("net.load_config", "text=set system contact nobody")
	if r.Bool("result") || r.Str("comment") == "" || running() != before {
		t.Errorf("set syntax: %v", r)
	}
	// A change committed and rolled back.
	r = dict("net.load_config", "text="+contact("rolled"))
	if !r.Bool("result") || !strings.Contains(running(), "<contact>rolled</contact>") {
		t.Fatalf("commit before rollback: %v", r)
	}
	if rb := dict("net.rollback"); !rb.Bool("result") || strings.Contains(running(), "rolled") ||
		!strings.Contains(running(), "<contact>noc@example.net</contact>") {
		t.Errorf("rollback: %v", rb)
	}

	// revert_in: the server's confirmed commit reverts it by itself.
	r = dict("net.load_config", "text="+contact("temp"), "revert_in=3s")
	jid := r.Str("commit_id")
	if !r.Bool("result") || jid == "" || !strings.Contains(running(), "<contact>temp</contact>") {
		t.Fatalf("revert_in: %v", r)
	}
	deadline := time.Now().Add(30 * time.Second)
	for strings.Contains(running(), "<contact>temp</contact>") {
		if time.Now().After(deadline) {
			t.Fatalf("not reverted by the server\n%s", lab.Logs())
		}
		time.Sleep(2 * time.Second) // deliberately slow polling: netconfd's timer runs only between RPCs
	}
	if !strings.Contains(running(), "<contact>noc@example.net</contact>") {
		t.Errorf("the revert lost the earlier commit")
	}

	// revert_in confirmed: the change stays.
	r = dict("net.load_config", "text="+contact("kept"), "revert_in=6s")
	jid = r.Str("commit_id")
	if c := dict("net.confirm_commit", jid); !c.Bool("result") || c.Str("comment") != fmt.Sprintf("Commit #%s confirmed.", jid) {
		t.Errorf("confirm_commit: %v", c)
	}
	// A negative check, the behaviour under test: past the revert time
	// (6 s, on netconfd's real timer) the confirmed change stays.
	time.Sleep(7 * time.Second)
	if !strings.Contains(running(), "<contact>kept</contact>") {
		t.Errorf("the confirmed commit was reverted\n%s", lab.Logs())
	}
}
