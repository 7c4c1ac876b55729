package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/internal/fleetlab"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/master"
	"github.com/gsalt/gsalt/proxy/devsim"
	"github.com/gsalt/gsalt/wire/payload"
)

// withLine returns cfg with line inserted after the first line starting
// with after.
func withLine(t *testing.T, cfg, after, line string) string {
	t.Helper()
	lines := strings.Split(cfg, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, after) {
			out := append(append(append([]string{}, lines[:i+1]...), line), lines[i+1:]...)
			return strings.Join(out, "\n")
		}
	}
	t.Fatalf("no line starting with %q in:\n%s", after, cfg)
	return ""
}

// TestIntendedConfigs: the example as shipped (master.d, minion.d, the
// reactor and state files), with its paths moved into a temporary
// directory. Renaming sw1.cfg into the watched directory replaces sw1's
// running configuration and reports intended/sw1/applied with the diff;
// the same file again commits nothing (intended/sw1/unchanged); a line
// the device rejects reports intended/sw1/failed with the device's error
// and leaves sw1 as it was; sw2 is never touched and other files are
// ignored.
func TestIntendedConfigs(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sim, err := devsim.Start(ctx, devsim.Options{Platform: devsim.PlatformIOS, Devices: 2, User: "admin", Password: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	ports := map[string]int{"sw1": sim.Port(0), "sw2": sim.Port(1)}
	pillar := func(_ context.Context, req master.PillarRequest) (*payload.Map, error) {
		p, ok := ports[req.ID]
		if !ok {
			return payload.NewMap(), nil
		}
		return payload.NewMap("proxy", payload.NewMap("proxytype", "napalm", "driver", "ios", "host", "127.0.0.1",
			"username", "admin", "password", "admin", "timeout", int64(10),
			"optional_args", payload.NewMap("port", int64(p)))), nil
	}

	dir := testutil.ShortDir(t, "gic")
	ex := exampleDir(t)
	roots := filepath.Join(dir, "srv")
	intended := filepath.Join(roots, "intended")
	if err := os.MkdirAll(intended, 0o755); err != nil {
		t.Fatal(err)
	}
	// The formula as shipped, in the test's file_roots directory.
	testutil.CopyTree(t, filepath.Join(ex, "salt"), roots)
	etc := filepath.Join(dir, "etc")
	conf := testutil.ReadFile(t, filepath.Join(ex, "master.d", "intended-configs.conf"))
	testutil.WriteFile(t, filepath.Join(etc, "master.d", "intended-configs.conf"), testutil.Redirect(t, conf, "/srv/salt", roots), 0o644)
	d := startMaster(t, dir, etc, pillar)
	bus := d.Bus().Subscribe(event.All(), 1<<14)
	defer bus.Close()
	seen := map[string]int{}

	beacons := testutil.ReadFile(t, filepath.Join(ex, "minion.d", "beacons.conf"))
	startMinion(t, d, dir, "salthost", map[string]string{"beacons.conf": testutil.Redirect(t, beacons, "/srv/salt", roots)})
	startProxies(t, d, dir, []string{"sw1", "sw2"})

	sw1, sw2 := sim.Device(0), sim.Device(1)
	initial1, initial2 := sw1.RunningConfig(), sw2.RunningConfig()
	const ntp = "ntp server 192.0.2.123"
	if fleetlab.HasLine(initial1, ntp) {
		t.Fatalf("sw1 starts with %q", ntp)
	}
	want := withLine(t, initial1, "ntp server ", ntp)

	// The beacon's watch is set up on its first run: wait for it by
	// writing a file the reactor ignores until its event comes.
	stats0 := d.Reactor().Stats()
	waitFor(t, "the beacon to report notes.txt", func() bool {
		testutil.WriteFile(t, filepath.Join(intended, "notes.txt"), "not a device\n", 0o644)
		for {
			select {
			case ev := <-bus.C():
				seen[ev.Tag]++
				if strings.HasPrefix(ev.Tag, "salt/beacon/salthost/inotify/") && strings.HasSuffix(ev.Data.Str("path"), "/notes.txt") {
					return true
				}
				continue
			default:
			}
			return false
		}
	})

	// 1. sw1's running configuration plus one NTP server.
	atomicWrite(t, intended, "sw1.cfg", want)
	ev := waitEvent(t, bus, seen, "intended/sw1/applied", "intended/sw1/failed", "intended/sw1/unchanged")
	if ev.Tag != "intended/sw1/applied" {
		t.Fatalf("first write: %s %v", ev.Tag, ev.Data)
	}
	if diff := ev.Data.Str("diff"); !strings.Contains(diff, "+"+ntp) {
		t.Errorf("applied event diff %q lacks +%s", diff, ntp)
	}
	if ev.Data.Str("device") != "sw1" || ev.Data.Str("jid") == "" {
		t.Errorf("applied event data %v", ev.Data)
	}
	applied := sw1.RunningConfig()
	if !fleetlab.HasLine(applied, ntp) {
		t.Fatalf("sw1 running config lacks %q:\n%s", ntp, applied)
	}
	if got := sw2.RunningConfig(); got != initial2 {
		t.Errorf("sw2 changed:\n%s", got)
	}

	// 2. The same content again, rewritten in place (close_write, not a
	// rename): compare finds nothing, no commit.
	if err := os.WriteFile(filepath.Join(intended, "sw1.cfg"), []byte(want), 0o644); err != nil {
		t.Fatal(err)
	}
	ev = waitEvent(t, bus, seen, "intended/sw1/applied", "intended/sw1/failed", "intended/sw1/unchanged")
	if ev.Tag != "intended/sw1/unchanged" {
		t.Fatalf("same content: %s %v", ev.Tag, ev.Data)
	}
	if got := sw1.RunningConfig(); got != applied {
		t.Errorf("sw1 changed although nothing was to change:\n%s", got)
	}

	// 3. Another server and a line the device rejects: the commit (IOS
	// configure replace with revert on error) fails, sw1 stays as it was.
	// (The simulator's compare leaves lines it cannot parse out of the
	// diff, so the change needs a valid line too to reach the commit.)
	const ntp2 = "ntp server 192.0.2.124"
	bad := withLine(t, withLine(t, want, "ntp server ", ntp2), "ntp server ", "frobnicate widgets now")
	atomicWrite(t, intended, "sw1.cfg", bad)
	ev = waitEvent(t, bus, seen, "intended/sw1/applied", "intended/sw1/failed", "intended/sw1/unchanged")
	if ev.Tag != "intended/sw1/failed" {
		t.Fatalf("rejected line: %s %v", ev.Tag, ev.Data)
	}
	if e := ev.Data.Str("error"); !strings.Contains(e, "Invalid input") {
		t.Errorf("failed event error %q lacks the device's message", e)
	}
	// The job's return: the replace failed, net.rollback ran (onfail).
	ret := waitEvent(t, bus, seen, "salt/job/"+ev.Data.Str("jid")+"/ret/sw1")
	rb := ret.Data.Map("return").Map("module_|-intended_configs_rollback_|-intended_configs_rollback_|-run")
	if rb == nil || rb.Bool("result") != true || rb.Has("__state_ran__") {
		t.Errorf("the rollback state: %v", rb)
	}
	if got := sw1.RunningConfig(); !fleetlab.HasLine(got, ntp) || fleetlab.HasLine(got, ntp2) || strings.Contains(got, "frobnicate") {
		t.Errorf("sw1 after the rejected replace:\n%s", got)
	}

	// Every reaction was built; notes.txt and the temporary files started
	// none (three for sw1.cfg, three reports).
	st := d.Reactor().Stats()
	if st.Failed != 0 || st.RenderErrors != 0 {
		t.Errorf("reactor stats %+v", st)
	}
	if n := st.Local - stats0.Local; n != 3 {
		t.Errorf("%d local reactions, want 3 (one per sw1.cfg write): %+v", n, st)
	}
	if got := sw2.RunningConfig(); got != initial2 {
		t.Errorf("sw2 changed:\n%s", got)
	}
	for tag := range seen {
		if strings.HasPrefix(tag, "intended/sw2/") || strings.HasPrefix(tag, "intended/notes") {
			t.Errorf("unexpected event %s", tag)
		}
	}
}
