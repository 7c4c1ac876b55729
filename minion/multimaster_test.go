package minion

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// multiConfig writes a minion config naming several fake masters.
func multiConfig(t *testing.T, id string, fms []*fakeMaster, extra string) *config.Minion {
	t.Helper()
	dir := t.TempDir()
	masters := ""
	if len(fms) > 0 {
		masters = "master:\n"
	}
	for _, fm := range fms {
		masters += fmt.Sprintf("  - 127.0.0.1:%d\n", fm.retPort())
	}
	conf := fmt.Sprintf(`id: %s
root_dir: %s
%sacceptance_wait_time: 0.1
acceptance_wait_time_max: 0.2
recon_default: 50
recon_max: 200
auth_timeout: 2
auth_tries: 2
enable_fqdns_grains: False
mine_interval: 0
%s`, id, dir, masters, extra)
	if err := os.WriteFile(filepath.Join(dir, "minion"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadMinion(dir)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// localEvents records the minion's local bus.
type localEvents struct {
	mu  sync.Mutex
	evs []string
}

func (e *localEvents) add(tag string, data any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	master := ""
	if m, ok := data.(*payload.Map); ok {
		master = m.Str("master")
	}
	e.evs = append(e.evs, tag+" "+master)
}

func (e *localEvents) wait(t *testing.T, want string) {
	t.Helper()
	var got []string
	if !testutil.Poll(wait, func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		got = append(got[:0], e.evs...)
		return slices.Contains(got, want)
	}) {
		t.Fatalf("local event %q not fired; got %q", want, got)
	}
}

func masterKeyFile() string { return filepath.Join(vectorsPKI, "master/master.pem") }

// TestHotMultiMaster: master: [m1, m2] connects to both, runs jobs from
// both, returns each job to the master that published it, sends its start
// events to each master and event.fire_master to every master; a master
// that goes away and comes back fires __master_disconnected and
// __master_connected with master_alive_interval.
func TestHotMultiMaster(t *testing.T) {
	fm1 := newFakeMaster(t, masterKeyFile(), 0, 0)
	fm2 := newFakeMaster(t, masterKeyFile(), 0, 0)
	fm1.set("m1", "accept")
	fm2.set("m1", "accept")
	cfg := multiConfig(t, "m1", []*fakeMaster{fm1, fm2}, "master_alive_interval: 1\n")
	installKey(t, cfg, "minion1")
	var evs localEvents
	m, _ := startMinion(t, cfg, Options{OnLocalEvent: evs.add})
	waitReady(t, m, wait)
	for _, fm := range []*fakeMaster{fm1, fm2} {
		fm.waitReq(t, wait, func(l *payload.Map) bool {
			return l.Str("cmd") == "_minion_event" && l.Str("tag") == "salt/minion/m1/start"
		})
	}
	warmup(t, fm1)
	warmup(t, fm2)

	fm1.publish(jobLoad("20260301000000000001", "test.echo", []any{"one"}))
	if r := fm1.waitReq(t, wait, isReturn("20260301000000000001")); r.Str("return") != "one" {
		t.Errorf("return to m1: %s", mustJSON(r))
	}
	fm2.noReq(t, 300*time.Millisecond, isReturn("20260301000000000001"))
	fm2.publish(jobLoad("20260301000000000002", "test.echo", []any{"two"}))
	if r := fm2.waitReq(t, wait, isReturn("20260301000000000002")); r.Str("return") != "two" {
		t.Errorf("return to m2: %s", mustJSON(r))
	}
	fm1.noReq(t, 300*time.Millisecond, isReturn("20260301000000000002"))

	// The same jid from both masters runs once (one jid queue, as Salt's
	// MinionManager shares it).
	fm1.publish(jobLoad("20260301000000000003", "test.ping", []any{}))
	fm1.waitReq(t, wait, isReturn("20260301000000000003"))
	fm2.publish(jobLoad("20260301000000000003", "test.ping", []any{}))
	fm2.noReq(t, 500*time.Millisecond, isReturn("20260301000000000003"))

	// event.fire_master from a job of m1 reaches both masters (Salt
	// forwards fire_master events to every master).
	fm1.publish(jobLoad("20260301000000000004", "event.fire_master", []any{payload.NewMap("a", int64(1)), "mm/test"}))
	for _, fm := range []*fakeMaster{fm1, fm2} {
		fm.waitReq(t, wait, func(l *payload.Map) bool { return l.Str("cmd") == "_minion_event" && l.Str("tag") == "mm/test" })
	}

	// m2 goes away: __master_disconnected for it, m1 keeps serving.
	ret, pub := fm2.retPort(), fm2.pubPort()
	m2name := fmt.Sprintf("127.0.0.1:%d", ret)
	fm2.stop()
	evs.wait(t, TagMasterDisconnected+" "+m2name)
	fm1.publish(jobLoad("20260301000000000005", "test.ping", []any{}))
	fm1.waitReq(t, wait, isReturn("20260301000000000005"))
	// newFakeMaster retries binding until the ports are reusable.
	fm3 := newFakeMaster(t, masterKeyFile(), ret, pub)
	fm3.set("m1", "accept")
	evs.wait(t, TagMasterConnected+" "+m2name)
	warmup(t, fm3)
}

// TestFailoverMultiMaster: master_type failover serves one master; a lost
// master fires __master_disconnected and the minion moves to the next
// one, and with master_failback it returns to the first master when that
// answers again (__master_failback).
func TestFailoverMultiMaster(t *testing.T) {
	fm1 := newFakeMaster(t, masterKeyFile(), 0, 0)
	fm2 := newFakeMaster(t, masterKeyFile(), 0, 0)
	fm1.set("m1", "accept")
	fm2.set("m1", "accept")
	cfg := multiConfig(t, "m1", []*fakeMaster{fm1, fm2}, "master_type: failover\nmaster_alive_interval: 1\nmaster_failback: True\nretry_dns: 0\n")
	installKey(t, cfg, "minion1")
	var evs localEvents
	m, _ := startMinion(t, cfg, Options{OnLocalEvent: evs.add})
	waitReady(t, m, wait)
	warmup(t, fm1)
	if n := fm2.authCount("m1"); n != 0 {
		t.Fatalf("failover signed in with the second master too (%d auths)", n)
	}
	ret1, pub1 := fm1.retPort(), fm1.pubPort()
	m1name := fmt.Sprintf("127.0.0.1:%d", ret1)
	fm1.stop()
	evs.wait(t, TagMasterDisconnected+" "+m1name)
	// The new master gets the start events and serves jobs.
	fm2.waitReq(t, wait, func(l *payload.Map) bool {
		return l.Str("cmd") == "_minion_event" && l.Str("tag") == "salt/minion/m1/start"
	})
	warmup(t, fm2)
	fm2.publish(jobLoad("20260302000000000001", "test.echo", []any{"on-m2"}))
	fm2.waitReq(t, wait, isReturn("20260302000000000001"))

	// master_failback_interval defaults to master_alive_interval: the
	// first master answers again, the minion goes back to it.
	fm3 := newFakeMaster(t, masterKeyFile(), ret1, pub1)
	fm3.set("m1", "accept")
	evs.wait(t, TagMasterFailback+" "+m1name)
	fm3.waitReq(t, wait, func(l *payload.Map) bool {
		return l.Str("cmd") == "_minion_event" && l.Str("tag") == "salt/minion/m1/start"
	})
	warmup(t, fm3)
	if a := m.active.Load(); a == nil || a.master != m1name {
		t.Errorf("active master after the failback: %+v", a)
	}
}

// TestFailoverSkipsDeadMaster: the first master of a failover list is
// down at start; the minion signs in with the second.
func TestFailoverSkipsDeadMaster(t *testing.T) {
	dead := newFakeMaster(t, masterKeyFile(), 0, 0)
	fm2 := newFakeMaster(t, masterKeyFile(), 0, 0)
	fm2.set("m1", "accept")
	cfg := multiConfig(t, "m1", []*fakeMaster{dead, fm2}, "master_type: failover\nretry_dns: 0\n")
	dead.stop()
	installKey(t, cfg, "minion1")
	m, _ := startMinion(t, cfg, Options{})
	waitReady(t, m, wait)
	warmup(t, fm2)
}

// TestMasterOptions checks how the master options set up the links, as
// eval_master reads them.
func TestMasterOptions(t *testing.T) {
	reg, err := NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, conf string
		wantErr    error
		mode       masterMode
		masters    []string
		failback   time.Duration
		retryDNS   float64
	}{
		{"single str", "master: salt\n", nil, modeHot, []string{"salt"}, 0, 30},
		{"hot list", "master: [a, 'b:4510']\n", nil, modeHot, []string{"a", "b:4510"}, 0, 30},
		{"failover", "master: [a, b]\nmaster_type: failover\nmaster_alive_interval: 7\nmaster_failback: True\n", nil, modeFailover, []string{"a", "b"}, 7 * time.Second, 0},
		{"failover interval", "master: [a, b]\nmaster_type: failover\nmaster_failback: True\nmaster_failback_interval: 3\n", nil, modeFailover, []string{"a", "b"}, 3 * time.Second, 0},
		{"failover str", "master: a\nmaster_type: failover\n", nil, modeFailover, []string{"a"}, 0, 0},
		{"distributed", "master: [a, b]\nmaster_type: distributed\n", nil, modeFailover, []string{"a", "b"}, 0, 0},
		{"disable", "master: a\nmaster_type: disable\n", nil, modeHot, nil, 0, 0},
		{"bad type", "master: a\nmaster_type: bogus\n", ErrMasterType, modeHot, nil, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "minion"), []byte("id: x\nroot_dir: "+dir+"\n"+c.conf), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, err := config.LoadMinion(dir)
			if err != nil {
				t.Fatal(err)
			}
			installKey(t, cfg, "minion1")
			m, err := New(Options{Config: cfg, Registry: reg, Grains: &payload.Map{}, Logger: testLogger(t)})
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("New: %v, want %v", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range m.links {
				got = append(got, l.master)
			}
			if !reflect.DeepEqual(got, c.masters) || m.mode != c.mode || m.failbackEvery != c.failback || (got != nil && m.retryDNS != c.retryDNS) {
				t.Errorf("links %v mode %v failback %v retry_dns %v", got, m.mode, m.failbackEvery, m.retryDNS)
			}
		})
	}
}

// TestFailoverOrder: a lost master goes to the end of the list; a
// failback restores the configured order; random_master with
// master_failback keeps the first master first.
func TestFailoverOrder(t *testing.T) {
	m := &Minion{cfg: &config.Minion{}, mode: modeFailover}
	a, b, c := &link{master: "a"}, &link{master: "b"}, &link{master: "c"}
	m.masterList = []*link{a, b, c}
	names := func(ls []*link) (out []string) {
		for _, l := range ls {
			out = append(out, l.master)
		}
		return out
	}
	if got := names(m.failoverOrder([]*link{a, b, c}, a, false)); !reflect.DeepEqual(got, []string{"b", "c", "a"}) {
		t.Errorf("after a failed: %v", got)
	}
	if got := names(m.failoverOrder([]*link{b, c, a}, b, false)); !reflect.DeepEqual(got, []string{"c", "a", "b"}) {
		t.Errorf("after b failed: %v", got)
	}
	if got := names(m.failoverOrder([]*link{c, a, b}, c, true)); !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
		t.Errorf("failback: %v", got)
	}
	m.cfg = &config.Minion{RandomMaster: true, MasterFailback: true}
	for range 20 {
		if got := m.shuffled([]*link{a, b, c}); got[0] != a {
			t.Fatalf("random_master with master_failback moved the first master: %v", names(got))
		}
	}
	m.cfg = &config.Minion{RandomMaster: true}
	seen := map[string]bool{}
	for range 200 {
		seen[m.shuffled([]*link{a, b, c})[0].master] = true
	}
	if len(seen) != 3 {
		t.Errorf("random_master never put some masters first: %v", seen)
	}
}

// TestRetryDNS: an unresolvable master is retried every retry_dns seconds
// (retry_dns_count times), skipped in failover, and with retry_dns 0
// replaced by 127.0.0.1 as Salt does.
func TestRetryDNS(t *testing.T) {
	var lookups int
	fail := func(ctx context.Context, host string) ([]string, error) {
		lookups++
		return nil, errors.New("no such host")
	}
	newM := func(mode masterMode, retry float64, count any) *Minion {
		o := config.NewOpts("minion", map[string]any{})
		if count != nil {
			o.Set("retry_dns_count", count)
		}
		return &Minion{cfg: &config.Minion{Opts: o}, mode: mode, retryDNS: retry, lookupHost: fail, log: testLogger(t)}
	}
	l := parseMasters([]string{"nosuch.example:4510"}, 4506)[0]
	lookups = 0
	if err := newM(modeHot, 0.01, 2).resolveLink(context.Background(), l); !errors.Is(err, errUnresolvable) || lookups != 3 {
		t.Errorf("retry_dns_count 2: %v after %d lookups", err, lookups)
	}
	if err := newM(modeFailover, 0, nil).resolveLink(context.Background(), l); !errors.Is(err, errUnresolvable) {
		t.Errorf("failover: %v", err)
	}
	if err := newM(modeHot, 0, nil).resolveLink(context.Background(), l); err != nil {
		t.Errorf("retry_dns 0: %v", err)
	}
	if host, addr := l.target(); host != "127.0.0.1" || addr != "127.0.0.1:4510" {
		t.Errorf("retry_dns 0 fallback: %s %s", host, addr)
	}
}

// TestMasterTypeFunc: master_type func takes the master from a module
// function's return.
func TestMasterTypeFunc(t *testing.T) {
	fm := newFakeMaster(t, masterKeyFile(), 0, 0)
	fm.set("m1", "accept")
	reg, err := NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", fm.retPort())
	if err := reg.Register(modules.Function{Name: "mymaster.get", Fn: func(context.Context, *modules.Call) (any, error) {
		return []any{addr}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	cfg := multiConfig(t, "m1", nil, "master: mymaster.get\nmaster_type: func\n")
	installKey(t, cfg, "minion1")
	m, _ := startMinion(t, cfg, Options{Registry: reg})
	waitReady(t, m, wait)
	warmup(t, fm)
}
