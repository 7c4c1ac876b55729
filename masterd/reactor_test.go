package masterd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/internal/testutil/started"
	"github.com/gsalt/gsalt/master"
	"github.com/gsalt/gsalt/masterd"
	gminion "github.com/gsalt/gsalt/minion"
	"github.com/gsalt/gsalt/wire/payload"
)

// reactorConfig writes the reactor files of the end-to-end tests and
// returns the master configuration lines:
//   - my/tag: touch.sls (local.cmd.run on the firing minion, writing
//     the file named in the event) and salt://reactor/jobs.sls
//     (runner.jobs.list_jobs, legacy syntax);
//   - loop/tag: loop.sls, a local.event.send that fires loop/tag again
//     (an endless loop in Salt).
func reactorConfig(t testing.TB, dir string) string {
	t.Helper()
	write := func(p, text string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "reactor", "touch.sls"), "{% if data['data'].get('path') %}\n"+
		"touch_it:\n  local.cmd.run:\n    - tgt: {{ data['id'] }}\n    - args:\n      - cmd: 'echo {{ tag }} > {{ data['data']['path'] }}'\n"+
		"{% endif %}\n")
	write(filepath.Join(dir, "srv", "salt", "reactor", "jobs.sls"), "list_them:\n  runner.jobs.list_jobs: []\n")
	write(filepath.Join(dir, "reactor", "loop.sls"), "again:\n  local.event.send:\n    - tgt: {{ data['id'] }}\n    - arg: [loop/tag]\n")
	return fmt.Sprintf("auto_accept: True\nreactor:\n  - 'my/*':\n    - %[1]s/reactor/touch.sls\n    - salt://reactor/jobs.sls\n"+
		"  - loop/tag:\n    - %[1]s/reactor/loop.sls\n", dir)
}

// startGsaltMinion runs an in-process gsalt minion against the daemon.
func startGsaltMinion(t testing.TB, d *masterd.Daemon, dir, id string) *gminion.Minion {
	t.Helper()
	return startGsaltMinionConf(t, d, dir, id, "")
}

// startGsaltMinionConf is startGsaltMinion with extra minion options; it
// returns once the master has seen the minion's start event.
func startGsaltMinionConf(t testing.TB, d *masterd.Daemon, dir, id, extra string) *gminion.Minion {
	t.Helper()
	boot := started.Watch(t, d.Bus())
	mn := startGsaltMinionReady(t, d, dir, id, extra)
	boot.Wait(t, id)
	return mn
}

// startGsaltMinionReady runs an in-process gsalt-minion id against d
// (extra appended to its config) and returns once it is Ready.
func startGsaltMinionReady(t testing.TB, d *masterd.Daemon, dir, id, extra string) *gminion.Minion {
	t.Helper()
	mdir := filepath.Join(dir, id)
	if err := os.MkdirAll(filepath.Join(mdir, "pki"), 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(vectorsDir, "pki/minion1/minion.pem"), filepath.Join(mdir, "pki", "minion.pem"), 0o400)
	copyFile(t, filepath.Join(vectorsDir, "pki/minion1/minion.pub"), filepath.Join(mdir, "pki", "minion.pub"), 0o644)
	conf := fmt.Sprintf("id: %s\nroot_dir: %s\npki_dir: %[2]s/pki\ncachedir: %[2]s/cache\nsock_dir: %[2]s/sock\n"+
		"master: 127.0.0.1\nmaster_port: %d\nacceptance_wait_time: 0.2\nenable_fqdns_grains: False\nmine_interval: 0\n",
		id, mdir, d.ReqAddr().(*net.TCPAddr).Port) + extra
	if err := os.WriteFile(filepath.Join(mdir, "minion"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadMinion(mdir)
	if err != nil {
		t.Fatal(err)
	}
	mn, err := gminion.New(gminion.Options{Config: cfg, Logger: logger(), Grains: payload.NewMap("kernel", "Linux", "os", "Debian")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { mn.Run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
		}
	})
	select {
	case <-mn.Ready():
	case <-time.After(testutil.Scale(60 * time.Second)):
		t.Fatalf("minion %s not ready (last auth error: %v)", id, mn.LastAuthError())
	}
	return mn
}

// sendEvent makes the minion fire an event to the master with event.send.
func sendEvent(t testing.TB, d *masterd.Daemon, id, tag string, data *payload.Map) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scale(60*time.Second))
	defer cancel()
	res, err := d.Master().RunJob(ctx, master.PublishRequest{Tgt: id, Fun: "event.send",
		Arg: []any{tag, payload.NewMap("__kwarg__", true, "data", data)}}, testutil.Scale(40*time.Second), testutil.Scale(10*time.Second))
	if err != nil || res.Returns[id] == nil || res.Returns[id].Bool("return") != true {
		t.Fatalf("event.send on %s: %v %v", id, err, res)
	}
}

// TestReactorEndToEnd: a gsalt master with a reactor configuration and an
// in-process gsalt minion over real sockets. The minion's event.send
// triggers a local.cmd.run that writes a file on the minion and a
// runner.jobs.list_jobs that fires salt/run/<jid>/new and ret as user
// Reactor; a reactor that re-fires its own tag is cut by the loop
// protection; the reactor stops with the daemon.
func TestReactorEndToEnd(t *testing.T) {
	dir := shortDir(t)
	d, _ := startMaster(t, dir, reactorConfig(t, dir))
	r := d.Reactor()
	if r == nil {
		t.Fatal("no reactor although the reactor option is set")
	}
	bus := d.Bus().Subscribe(event.All(), 1<<14)
	defer bus.Close()
	startGsaltMinion(t, d, dir, "m1")

	target := filepath.Join(dir, "touched")
	sendEvent(t, d, "m1", "my/tag", payload.NewMap("path", target))
	var cmdJob, runNew, runRet event.Event
	deadline := time.After(30 * time.Second)
	for cmdJob.Data == nil || runNew.Data == nil || runRet.Data == nil {
		select {
		case ev := <-bus.C():
			switch {
			case strings.HasPrefix(ev.Tag, "salt/job/") && strings.HasSuffix(ev.Tag, "/new") && ev.Data.Str("fun") == "cmd.run":
				cmdJob = ev
			case strings.HasPrefix(ev.Tag, "salt/run/") && strings.HasSuffix(ev.Tag, "/new") && ev.Data.Str("fun") == "runner.jobs.list_jobs":
				runNew = ev
			case strings.HasPrefix(ev.Tag, "salt/run/") && strings.HasSuffix(ev.Tag, "/ret") && ev.Data.Str("fun") == "runner.jobs.list_jobs":
				runRet = ev
			}
		case <-deadline:
			t.Fatalf("reaction events missing: cmd.run job %v, runner new %v, ret %v", cmdJob.Tag, runNew.Tag, runRet.Tag)
		}
	}
	if got := cmdJob.Data.List("minions"); len(got) != 1 || got[0] != "m1" {
		t.Errorf("cmd.run job targets %v", got)
	}
	if runNew.Data.Str("user") != "Reactor" || runRet.Data.Str("user") != "Reactor" || runRet.Data.Bool("success") != true {
		t.Errorf("runner events: new %v ret %v", mapJSONish(runNew.Data), mapJSONish(runRet.Data))
	}
	// Legacy syntax: the runner got every defaulted parameter.
	if fa := runNew.Data.List("fun_args"); len(fa) != 1 || fa[0].(*payload.Map).Len() != 8 {
		t.Errorf("runner fun_args %v", fa)
	}
	testutil.Eventually(t, 30*time.Second, func() bool {
		b, err := os.ReadFile(target)
		return err == nil && strings.TrimSpace(string(b)) == "my/tag"
	}, "the minion writing my/tag to ", target)

	// The loop: event.send → loop/tag → local.event.send loop/tag → ...
	sendEvent(t, d, "m1", "loop/tag", payload.NewMap())
	deadline = time.After(60 * time.Second)
	for r.Stats().Suppressed == 0 {
		select {
		case <-bus.C():
		case <-deadline:
			t.Fatalf("the loop was not cut: %+v", r.Stats())
		case <-time.After(10 * time.Millisecond):
		}
	}
	st := r.Stats()
	// The first reaction plus DefaultLoopBurst looped ones, then nothing.
	if st.Loops < 10 || st.Local < 12 || st.Failed != 0 {
		t.Errorf("stats after the loop %+v", st)
	}
	t.Logf("reactor stats after the loop: %+v", st)
	local := st.Local
	time.Sleep(300 * time.Millisecond) // a negative check: no reaction follows once the loop is cut
	if st := r.Stats(); st.Local != local {
		t.Errorf("reactions went on after the loop was cut: %d then %d", local, st.Local)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if r.Start(context.Background()) == nil {
		t.Error("the reactor restarted after the daemon closed")
	}
}

// TestNoReactorWithoutConfig: the reactor only runs when configured.
func TestNoReactorWithoutConfig(t *testing.T) {
	d, _ := startMaster(t, shortDir(t), "")
	if d.Reactor() != nil {
		t.Fatal("a reactor without the reactor option")
	}
}

// TestInteropRealMinionTriggersReaction: a real Salt 3006 salt-minion's
// "salt-call event.send my/tag" triggers a gsalt reaction that runs
// cmd.run on that minion. The minion runs with sign_pub_messages: True, so
// it checks the master's signature on the reaction's publish with Salt's
// own verify_signature: signed by gsalt-master (Salt 3006's default) the
// job runs; from a master with sign_pub_messages: False the minion refuses
// it with Salt's error and the command never runs.
func TestInteropRealMinionTriggersReaction(t *testing.T) {
	src := saltpeer.Require(t)
	if testing.Short() {
		t.Skip("interop with real Salt skipped in -short mode")
	}
	for _, tc := range []struct {
		name, master string
		runs         bool
	}{
		{name: "signed", runs: true},
		{name: "unsigned", master: "sign_pub_messages: False\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			dir := shortDir(t)
			d, _ := startMaster(t, dir, reactorConfig(t, dir)+tc.master)
			bus := d.Bus().Subscribe(event.All(), 4096)
			defer bus.Close()
			retPort := d.ReqAddr().(*net.TCPAddr).Port
			mdir := filepath.Join(dir, "rm1")
			writeFile(t, filepath.Join(mdir, "etc", "minion"), minionConf(mdir, "rm1", retPort, "sign_pub_messages: True\n"))
			mp := startPeer(t, ctx, src, "salt-minion", filepath.Join(dir, "rm1.out"), "-c", filepath.Join(mdir, "etc"), "-l", "warning")
			waitBus(t, bus, "salt/minion/rm1/start")
			target := filepath.Join(dir, "from-real-minion")
			cctx, ccancel := context.WithTimeout(ctx, testutil.Scale(240*time.Second))
			defer ccancel()
			runCLI(t, cctx, src, "salt-call", "-c", filepath.Join(mdir, "etc"), "event.send", "my/tag",
				fmt.Sprintf(`{"path": %q}`, target), "--out", "json")
			if !tc.runs {
				// Salt's client raises AuthenticationError on the unsigned
				// publish; its text reaches the minion's log.
				const refusal = "Message signing is enabled but the payload has no signature"
				mp.WaitFor(t, 120*time.Second, "the minion refusing the unsigned publish", func() bool {
					return strings.Contains(mp.Output(), refusal)
				})
				if _, err := os.Stat(target); !os.IsNotExist(err) {
					t.Fatalf("the minion ran the unsigned job (stat: %v)", err)
				}
				if st := d.Reactor().Stats(); st.Local < 1 {
					t.Fatalf("stats %+v", st)
				}
				return
			}
			var b []byte
			var err error
			if !testutil.Poll(120*time.Second, func() bool {
				b, err = os.ReadFile(target)
				return err == nil && strings.TrimSpace(string(b)) == "my/tag"
			}) {
				t.Fatalf("the real minion did not run the reaction: %q %v, reactor %+v\n%s", b, err, d.Reactor().Stats(), mp.Tail(4000))
			}
			if st := d.Reactor().Stats(); st.Local < 1 || st.Runner < 1 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

// BenchmarkReactorLocalJobs measures the whole reactor path of a running
// daemon per event: an event on the master's bus matched by the reactor
// map, its SLS rendered (jinja|yaml), the local reaction built and
// published through the master (target check against the accepted keys,
// job cache entry, salt/job/<jid>/new event, the publish load encrypted
// and, with sign_pub_messages on, Salt 3006's master default, RSA-signed)
// onto the publish socket. No minion answers. "signed" and "unsigned"
// differ only in sign_pub_messages; compare with the cost of one
// signature (wire/message BenchmarkPublishEncode/signed).
func BenchmarkReactorLocalJobs(b *testing.B) {
	for _, tc := range []struct{ name, sign string }{{"signed", "True"}, {"unsigned", "False"}} {
		b.Run(tc.name, func(b *testing.B) { benchReactorLocalJobs(b, "sign_pub_messages: "+tc.sign+"\n") })
	}
}

func benchReactorLocalJobs(b *testing.B, conf string) {
	dir := shortDir(b)
	if err := os.MkdirAll(filepath.Join(dir, "reactor"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "reactor", "job.sls"),
		[]byte("job:\n  local.test.arg:\n    - tgt: {{ data['id'] }}\n    - args:\n      - n: {{ data['n'] }}\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	extra := fmt.Sprintf("%sreactor_worker_hwm: 100000\nreactor:\n  - 'bench/*':\n    - %s/reactor/job.sls\n", conf, dir)
	d, cfg := startMaster(b, dir, extra)
	copyFile(b, filepath.Join(vectorsDir, "pki/minion1/minion.pub"), filepath.Join(cfg.PKIDir, "minions", "bm1"), 0o644)
	sub := d.Bus().Subscribe(event.Prefix("salt/job/"), 1<<16)
	defer sub.Close()
	var jobs atomic.Int64
	go func() {
		for ev := range sub.C() {
			if strings.HasSuffix(ev.Tag, "/new") {
				jobs.Add(1)
			}
		}
	}()
	r := d.Reactor()
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu0 := time.Now(), testutil.ProcessCPU()
	for i := 0; i < b.N; i++ {
		// Distinct tags (the loop protection limits one tag to 10/s),
		// paced by the events published so the bus subscription never
		// overflows.
		for int64(i)-jobs.Load() > 4096 {
			time.Sleep(50 * time.Microsecond) // pace the benchmark producer (backpressure)
		}
		d.Bus().Publish(event.Event{Tag: fmt.Sprintf("bench/%d", i), Data: payload.NewMap("id", "bm1", "n", int64(i))})
	}
	for jobs.Load() < int64(b.N) {
		if st := r.Stats(); st.Dropped+st.BusDropped+st.Failed+st.Suppressed > 0 {
			b.Fatalf("lost events: %+v", st)
		}
		time.Sleep(100 * time.Microsecond) // drain poll interval of the benchmark
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "jobs/s")
	b.ReportMetric(float64((testutil.ProcessCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/job")
}

// TestReactorRunners drives the running reactor with the reactor.* runners
// (Salt's event protocol: salt/reactors/manage/* with the root key).
func TestReactorRunners(t *testing.T) {
	dir := shortDir(t)
	d, _ := startMaster(t, dir, reactorConfig(t, dir))
	ctx := context.Background()
	run := func(fun string, args ...any) any {
		t.Helper()
		r := d.Master().RunRunner(ctx, "", fun, args, nil, "root")
		if !r.Bool("success") {
			t.Fatalf("%s: %s", fun, mapJSONish(r))
		}
		v, _ := r.Get("return")
		return v
	}
	list := func() string {
		b, _ := json.Marshal(run("reactor.list"))
		return string(b)
	}
	if got := list(); !strings.Contains(got, `"my/*"`) {
		t.Fatalf("reactor.list: %s", got)
	}
	if got, _ := run("reactor.add", "other/tag", "/srv/reactor/other.sls").(*payload.Map); got == nil || !got.Bool("status") {
		t.Fatalf("reactor.add: %v", got)
	}
	if got := list(); !strings.Contains(got, `{"other/tag":["/srv/reactor/other.sls"]}`) {
		t.Fatalf("reactor.list after add: %s", got)
	}
	if got, _ := run("reactor.delete", "other/tag").(*payload.Map); got == nil || !got.Bool("status") {
		t.Fatalf("reactor.delete: %v", got)
	}
	if got := list(); strings.Contains(got, "other/tag") {
		t.Fatalf("reactor.list after delete: %s", got)
	}
	if got := run("reactor.is_leader"); got != true {
		t.Fatalf("reactor.is_leader: %v", got)
	}
	if got := run("reactor.set_leader", false); got != false {
		t.Fatalf("reactor.set_leader: %v", got)
	}
	if got := run("reactor.is_leader"); got != false {
		t.Fatalf("reactor.is_leader after set_leader False: %v", got)
	}
	// Without a reactor: Salt's error.
	d2, _ := startMaster(t, shortDir(t), "")
	r := d2.Master().RunRunner(ctx, "", "reactor.list", nil, nil, "root")
	if r.Bool("success") || !strings.Contains(payload.Text(mustGetRet(r)), "Reactor system is not running.") {
		t.Fatalf("reactor.list without reactor: %s", mapJSONish(r))
	}
}

func mustGetRet(m *payload.Map) any {
	v, _ := m.Get("return")
	return v
}

// TestStartEventWaitsForSubscription: a reaction to a minion's start
// event reaches the minion although the master reads the minion's
// publish subscription late (a proxy in front of the publish port delays
// what the minion sends, as a busy machine may; the minion fires its
// start event once it has sent the subscription). The master holds the
// start event until the subscription is applied; without that the
// reactor's job was published before it and lost (the dnsmasq example's
// TestReservations flake: a started minion's announce job never ran).
// With a gsalt-minion (300 ms) and, when GSALT_SALT_SRC is set, a real
// Salt 3006 salt-minion (2 s: its pillar fetch and module loading come
// between its SUB connect and its start event).
func TestStartEventWaitsForSubscription(t *testing.T) {
	for _, tc := range []struct {
		name  string
		real  bool
		delay time.Duration
	}{
		{"gsalt-minion", false, 300 * time.Millisecond},
		{"salt-minion", true, 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := ""
			if tc.real {
				src = saltpeer.Require(t)
			}
			dir := shortDir(t)
			sls := filepath.Join(dir, "reactor", "start.sls")
			testutil.WriteFile(t, sls, "ping_{{ data['id'] }}:\n  local.test.ping:\n    - tgt: {{ data['id'] }}\n", 0o644)
			d, _ := startMaster(t, dir, fmt.Sprintf("auto_accept: True\nreactor:\n  - 'salt/minion/*/start':\n    - %s\n", sls))
			bus := d.Bus().Subscribe(event.All(), 1<<14)
			defer bus.Close()
			startLateMinion(t, d, dir, src, tc.delay)
			deadline := time.After(testutil.Scale(120 * time.Second))
			for {
				select {
				case ev := <-bus.C():
					if strings.HasPrefix(ev.Tag, "salt/job/") && strings.HasSuffix(ev.Tag, "/ret/m1") && ev.Data.Str("fun") == "test.ping" {
						if ev.Data.Bool("return") != true {
							t.Fatalf("test.ping return %v", mapJSONish(ev.Data))
						}
						return
					}
				case <-deadline:
					t.Fatalf("the reaction's test.ping never returned from m1: reactor %+v", d.Reactor().Stats())
				}
			}
		})
	}
}

// TestPublishRightAfterReady: a job published the moment a minion says
// it is ready reaches it although the master reads the minion's publish
// subscription late (a proxy in front of the publish port delays what the
// minion sends). The master answers a start event only once it applied
// the subscription, and a minion says it is ready after that answer: a
// gsalt-minion closes Ready, Salt 3006's salt-minion logs "Minion is
// ready to receive requests!" (when GSALT_SALT_SRC is set). Before the
// master held its answer, this first job was lost.
func TestPublishRightAfterReady(t *testing.T) {
	for _, tc := range []struct {
		name  string
		real  bool
		delay time.Duration
	}{
		{"gsalt-minion", false, 500 * time.Millisecond},
		{"salt-minion", true, 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := ""
			if tc.real {
				src = saltpeer.Require(t)
			}
			t.Parallel()
			dir := shortDir(t)
			d, _ := startMaster(t, dir, "auto_accept: True\n")
			if mdir := startLateMinion(t, d, dir, src, tc.delay); mdir != "" {
				testutil.Eventually(t, 120*time.Second, func() bool {
					b, _ := os.ReadFile(filepath.Join(mdir, "log"))
					return strings.Contains(string(b), "Minion is ready to receive requests!")
				}, "salt-minion's ready log line")
			}
			ctx, cancel := context.WithTimeout(context.Background(), testutil.Scale(60*time.Second))
			defer cancel()
			res, err := d.Master().RunJob(ctx, master.PublishRequest{Tgt: "m1", Fun: "test.ping", Arg: []any{}}, testutil.Scale(20*time.Second), testutil.Scale(5*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if ret, ok := res.Returns["m1"]; !ok || ret.Bool("return") != true {
				t.Fatalf("no test.ping return from m1 published right after it was ready (returns %v)", res.Returns)
			}
		})
	}
}

// startLateMinion starts minion m1 against d with its publish connection
// through a proxy that delays what the minion sends by delay: a real
// salt-minion from src when src is set (it returns the minion's folder,
// its log file is log there, without waiting), else an in-process
// gsalt-minion (it returns "" once the minion is Ready).
func startLateMinion(t *testing.T, d *masterd.Daemon, dir, src string, delay time.Duration) string {
	t.Helper()
	proxy := testutil.DelayProxy(t, d.PubAddr().String(), delay)
	_, port, err := net.SplitHostPort(proxy)
	if err != nil {
		t.Fatal(err)
	}
	if src == "" {
		startGsaltMinionReady(t, d, dir, "m1", "publish_port: "+port+"\n")
		return ""
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	mdir := filepath.Join(dir, "m1")
	writeFile(t, filepath.Join(mdir, "etc", "minion"), minionConf(mdir, "m1", d.ReqAddr().(*net.TCPAddr).Port, "publish_port: "+port+"\n"))
	startPeer(t, ctx, src, "salt-minion", filepath.Join(dir, "m1.out"), "-c", filepath.Join(mdir, "etc"), "-l", "warning")
	return mdir
}
