package proxy_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/internal/testutil/started"
	"github.com/gsalt/gsalt/master"
	"github.com/gsalt/gsalt/masterd"
	"github.com/gsalt/gsalt/proxy"
	"github.com/gsalt/gsalt/proxy/devsim"
	"github.com/gsalt/gsalt/wire/payload"
)

// waitSchedRet waits for the master to receive the return of the device's
// scheduled job name (a scheduled job returns with jid "req": the master
// gives it a jid and fires salt/job/<jid>/ret/<id> with the schedule
// name in the data).
func waitSchedRet(t *testing.T, sub *event.Subscription, id, name string) *payload.Map {
	t.Helper()
	// The scheduled job runs seconds from now, then talks to the simulated
	// device over SSH: allow for a loaded machine.
	deadline := time.After(testutil.Scale(120 * time.Second))
	for {
		select {
		case ev := <-sub.C():
			if strings.HasPrefix(ev.Tag, "salt/job/") && strings.HasSuffix(ev.Tag, "/ret/"+id) && ev.Data.Str("schedule") == name {
				return ev.Data
			}
		case <-deadline:
			t.Fatalf("no return of the scheduled job %s from %s", name, id)
		}
	}
}

// TestScheduledCommitsAndReverts drives Salt's commit_in, revert_in,
// net.cancel_commit, net.confirm_commit and the netconfig.commit_cancelled
// / commit_confirmed states through a gsalt master and one gsalt-proxy
// serving a simulated IOS device: the proxy's scheduler commits later,
// reverts unless confirmed, and cancelled or confirmed commit IDs leave
// the device as they are.
func TestScheduledCommitsAndReverts(t *testing.T) {
	d, bus, running := startCommitLab(t, 0)
	call := func(fun string, args ...any) *payload.Map {
		t.Helper()
		r, ok := runJob(t, d, "sw1", "", fun, args...)["sw1"].(*payload.Map)
		if !ok {
			t.Fatalf("%s: no dict returned", fun)
		}
		return r
	}
	schedJobs := func() *payload.Map {
		t.Helper()
		r := call("schedule.list", "show_all=True", "return_yaml=False")
		return r
	}

	// commit_in: discarded now, committed by the scheduler later.
	r := call("net.load_config", "text=ntp server 10.1.1.1", "commit_in=3s")
	jid := r.Str("commit_id")
	if !r.Bool("result") || jid == "" || !strings.HasPrefix(r.Str("comment"), "Changes discarded for now, and scheduled commit at: ") ||
		!strings.Contains(r.Str("comment"), "salt sw1 net.cancel_commit "+jid) || !strings.Contains(r.Str("diff"), "+ntp server 10.1.1.1") {
		t.Fatalf("commit_in: %v", r)
	}
	if strings.Contains(running(), "10.1.1.1") {
		t.Fatal("commit_in committed at once")
	}
	if !schedJobs().Has("__napalm_commit_" + jid) {
		t.Errorf("the commit is not scheduled: %v", schedJobs())
	}
	ret := waitSchedRet(t, bus, "sw1", "__napalm_commit_"+jid)
	if rr := ret.Map("return"); !rr.Bool("result") || !strings.Contains(rr.Str("diff"), "10.1.1.1") {
		t.Errorf("scheduled commit return: %v", ret)
	}
	if !strings.Contains(running(), "ntp server 10.1.1.1") {
		t.Errorf("the scheduled commit did not reach the device:\n%s", running())
	}
	if schedJobs().Has("__napalm_commit_" + jid) {
		t.Errorf("the commit stays scheduled after it ran")
	}

	// commit_in, then net.cancel_commit: nothing is committed.
	r = call("net.load_config", "text=ntp server 10.3.3.3", "commit_in=3s")
	jid = r.Str("commit_id")
	if c := call("net.cancel_commit", jid); !c.Bool("result") || c.Str("comment") != fmt.Sprintf("Commit #%s cancelled.", jid) {
		t.Errorf("cancel_commit: %v", c)
	}
	if c := call("net.cancel_commit", jid); c.Bool("result") || c.Str("comment") != fmt.Sprintf("Unable to find commit #%s.", jid) {
		t.Errorf("second cancel_commit: %v", c)
	}

	// revert_in: committed now, reverted by the scheduler.
	before := running()
	r = call("net.load_config", "text=ntp server 10.2.2.2", "revert_in=3s")
	rjid := r.Str("commit_id")
	if !r.Bool("result") || rjid == "" || !strings.Contains(r.Str("comment"), "This commit will be reverted at: ") ||
		!strings.Contains(r.Str("comment"), "salt sw1 net.confirm_commit "+rjid) {
		t.Fatalf("revert_in: %v", r)
	}
	if !strings.Contains(running(), "ntp server 10.2.2.2") {
		t.Fatal("revert_in did not commit")
	}
	waitSchedRet(t, bus, "sw1", "__napalm_commit_"+rjid)
	if strings.Contains(running(), "10.2.2.2") || !strings.Contains(running(), "ntp server 10.1.1.1") {
		t.Errorf("not reverted:\n%s", running())
	}
	if strings.Contains(running(), "10.3.3.3") {
		t.Errorf("the cancelled commit reached the device")
	}
	_ = before

	// revert_in confirmed through the state: the change stays.
	r = call("net.load_config", "text=ntp server 10.4.4.4", "revert_in=5s")
	rjid = r.Str("commit_id")
	st := call("state.single", "netconfig.commit_confirmed", "name="+rjid)
	for _, it := range st.Items() {
		sr, _ := it.Value.(*payload.Map)
		if !sr.Bool("result") || sr.Str("comment") != fmt.Sprintf("Commit #%s confirmed.", rjid) {
			t.Errorf("commit_confirmed state: %v", sr)
		}
	}
	// commit_in cancelled through the state.
	r = call("net.load_config", "text=ntp server 10.5.5.5", "commit_in=5s")
	cjid := r.Str("commit_id")
	st = call("state.single", "netconfig.commit_cancelled", "name="+cjid)
	for _, it := range st.Items() {
		sr, _ := it.Value.(*payload.Map)
		if !sr.Bool("result") || sr.Str("comment") != fmt.Sprintf("Commit #%s cancelled.", cjid) {
			t.Errorf("commit_cancelled state: %v", sr)
		}
	}
	// A negative check, the behaviour under test: once both scheduled
	// times (5 s, on the minion's real schedule) have passed, the confirmed
	// commit stays and the cancelled one never ran.
	time.Sleep(6 * time.Second)
	if !strings.Contains(running(), "ntp server 10.4.4.4") {
		t.Errorf("the confirmed commit was reverted:\n%s", running())
	}
	if strings.Contains(running(), "10.5.5.5") {
		t.Errorf("the cancelled commit reached the device")
	}
	if jobs := schedJobs(); jobs.Len() != 0 {
		t.Errorf("schedule left with %v", jobs)
	}

	// Bad times are clear errors, and nothing changes.
	r = call("net.load_config", "text=ntp server 10.6.6.6", "commit_in=soon")
	if r.Bool("result") || !strings.Contains(r.Str("comment"), "is not a time span") || strings.Contains(running(), "10.6.6.6") {
		t.Errorf("bad commit_in: %v", r)
	}
}

// TestRevertAfterASlowCommit: with revert_in shorter than the commit
// takes (a device answering every command line 300 ms late), the revert
// time has passed when the commit is done. The revert must still run
// (scheduled just after the commit) instead of being dropped by the
// scheduler as a once job of the past, which left the change for good.
func TestRevertAfterASlowCommit(t *testing.T) {
	d, bus, running := startCommitLab(t, 300*time.Millisecond)

	start := time.Now()
	r, ok := runJob(t, d, "sw1", "", "net.load_config", "text=ntp server 10.9.9.9", "revert_in=1s")["sw1"].(*payload.Map)
	if !ok || !r.Bool("result") || r.Str("commit_id") == "" {
		t.Fatalf("revert_in: %v", r)
	}
	if took := time.Since(start); took < 2*time.Second {
		// The case under test needs a commit longer than revert_in.
		t.Fatalf("the commit took %v only: the device's latency does not make it slow enough", took)
	}
	if !strings.Contains(running(), "ntp server 10.9.9.9") {
		t.Fatal("revert_in did not commit")
	}
	waitSchedRet(t, bus, "sw1", "__napalm_commit_"+r.Str("commit_id"))
	if strings.Contains(running(), "10.9.9.9") {
		t.Errorf("not reverted:\n%s", running())
	}
}

// startCommitLab starts a gsalt master and a proxy fleet serving sw1, one
// simulated IOS switch answering each command after latency, with the
// scheduler evaluating every 0.2 s; it returns the master, a subscription
// to its event bus and a function reading the device's running config.
// Everything stops with the test.
func startCommitLab(t *testing.T, latency time.Duration) (*masterd.Daemon, *event.Subscription, func() string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	sim, err := devsim.Start(ctx, devsim.Options{Platform: devsim.PlatformIOS, Devices: 1, User: "admin", Password: "admin", Latency: latency})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	pillar := func(_ context.Context, req master.PillarRequest) (*payload.Map, error) {
		return payload.NewMap("proxy", payload.NewMap("proxytype", "napalm", "driver", "ios", "host", "127.0.0.1",
			"username", "admin", "password", "admin", "optional_args", payload.NewMap("port", int64(sim.Port(0))))), nil
	}
	dir := shortDir(t)
	d := testMaster(t, dir, pillar)
	boot := started.Watch(t, d.Bus())
	bus := d.Bus().Subscribe(nil, 4096)
	t.Cleanup(func() { bus.Close() })
	etc := proxyConf(t, dir, d, "loop_interval: 0.2\n")
	f := runFleet(t, ctx, cancel, proxy.Options{ConfigDir: etc, IDs: []string{"sw1"}, Logger: testLogger()})
	waitFor(t, "sw1 in the fleet", func() bool { _, ok := f.Device("sw1"); return ok })
	dev, _ := f.Device("sw1")
	waitServing(t, boot, dev)
	return d, bus, func() string { return sim.Device(0).RunningConfig() }
}
