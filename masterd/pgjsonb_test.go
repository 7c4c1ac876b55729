package masterd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/cli/saltcli"
	"github.com/gsalt/gsalt/config"
	gminion "github.com/gsalt/gsalt/minion"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/internal/testutil/pgtest"
	"github.com/gsalt/gsalt/internal/testutil/started"
	"github.com/gsalt/gsalt/master"
	"github.com/gsalt/gsalt/masterd"
	"github.com/gsalt/gsalt/returners"
	"github.com/gsalt/gsalt/wire/payload"
)

func pgMasterConf(c *pgtest.Cluster, db, extra string) string {
	return fmt.Sprintf("auto_accept: True\nmaster_job_cache: pgjsonb\nevent_return: pgjsonb\n"+
		"returner.pgjsonb.host: %s\nreturner.pgjsonb.port: %d\nreturner.pgjsonb.user: %s\nreturner.pgjsonb.pass: x\nreturner.pgjsonb.db: %s\n",
		c.Host, c.Port, c.User, db) + extra
}

func flushReturners(t *testing.T, d *masterd.Daemon, within time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scale(within))
	defer cancel()
	if err := d.FlushReturners(ctx); err != nil {
		t.Fatal(err)
	}
}

func runRunner(t *testing.T, d *masterd.Daemon, fun string, args ...any) any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scale(60*time.Second))
	defer cancel()
	res := d.Master().RunRunner(ctx, "", fun, args, nil, "root")
	r, _ := res.Get("return")
	return r
}

// TestPgjsonbTwoMasters: two gsalt-masters with master_job_cache and
// event_return on one PostgreSQL (Salt's pgjsonb schema), each with a
// gsalt minion. Each master's jobs.list_jobs shows the jobs of both;
// lookup_jid on one finds the other's returns; events land in salt_events
// with each master's id; while the database is down a master keeps serving
// and spools, and the rows appear once it is back.
func TestPgjsonbTwoMasters(t *testing.T) {
	c := pgtest.Start(t, pgtest.Options{})
	c.CreateDB(t, "salt", pgtest.PgjsonbSchema)
	dirA, dirB := shortDir(t), shortDir(t)
	dA, cfgA := startMaster(t, dirA, pgMasterConf(c, "salt", "id: mastera\nevent_return_whitelist: ['salt/job/*']\nevent_return_queue: 2\n"))
	dB, cfgB := startMaster(t, dirB, pgMasterConf(c, "salt", "id: masterb\n"))
	startGsaltMinion(t, dA, dirA, "ma")
	startGsaltMinion(t, dB, dirB, "mb")

	resA, err := dA.Master().RunJob(context.Background(), masterPublish("ma", "test.ping"), testutil.Scale(60*time.Second), testutil.Scale(20*time.Second))
	if err != nil || resA.Returns["ma"] == nil {
		t.Fatalf("job on A: %v %v", err, resA)
	}
	resB, err := dB.Master().RunJob(context.Background(), masterPublish("mb", "test.arg", "x"), testutil.Scale(60*time.Second), testutil.Scale(20*time.Second))
	if err != nil || resB.Returns["mb"] == nil {
		t.Fatalf("job on B: %v %v", err, resB)
	}
	flushReturners(t, dA, 60*time.Second)
	flushReturners(t, dB, 60*time.Second)

	rows := c.MustPSQL(t, "salt", "SELECT jid, id, fun, success, return::text, full_ret->>'cmd' FROM salt_returns ORDER BY id")
	want := resA.JID + "|ma|test.ping|true|true|_return\n" + resB.JID + "|mb|test.arg|true|"
	if !strings.HasPrefix(rows, want) {
		t.Fatalf("salt_returns:\n%s\nwant prefix\n%s", rows, want)
	}
	if got := c.MustPSQL(t, "salt", "SELECT count(*) FROM jids WHERE jid IN ('"+resA.JID+"','"+resB.JID+"')"); got != "2" {
		t.Fatalf("jids rows: %s", got)
	}
	// A forwards only salt/job/* (whitelist); B everything, with its id.
	if got := c.MustPSQL(t, "salt", "SELECT count(*) FROM salt_events WHERE master_id = 'mastera' AND tag NOT LIKE 'salt/job/%'"); got != "0" {
		t.Fatalf("A's events outside the whitelist: %s", got)
	}
	for _, q := range []string{
		"SELECT count(*) > 0 FROM salt_events WHERE master_id = 'mastera' AND tag = 'salt/job/" + resA.JID + "/ret/ma' AND data->>'id' = 'ma'",
		"SELECT count(*) > 0 FROM salt_events WHERE master_id = 'masterb' AND tag = 'salt/job/" + resB.JID + "/ret/mb'",
		"SELECT count(*) > 0 FROM salt_events WHERE master_id = 'masterb' AND tag NOT LIKE 'salt/job/%'",
	} {
		if got := c.MustPSQL(t, "salt", q); got != "t" {
			t.Errorf("%s: %s", q, got)
		}
	}

	// Both masters list both jobs; each finds the other's returns.
	for _, d := range []*masterd.Daemon{dA, dB} {
		jobs, _ := runRunner(t, d, "jobs.list_jobs").(*payload.Map)
		if jobs == nil || !jobs.Has(resA.JID) || !jobs.Has(resB.JID) {
			t.Fatalf("list_jobs: %v", jobs)
		}
	}
	lk, _ := runRunner(t, dA, "jobs.lookup_jid", resB.JID).(*payload.Map)
	if lk == nil || lk.Len() != 1 || !lk.Has("mb") {
		t.Fatalf("lookup_jid of B's job on A: %v", lk)
	}
	lj, _ := runRunner(t, dB, "jobs.list_job", resA.JID).(*payload.Map)
	if lj == nil || lj.Map("Result") == nil || lj.Map("Result").Map("ma") == nil {
		t.Fatalf("list_job of A's job on B: %v", lj)
	}

	// The database goes away: A keeps serving (jobs run, lookup_jid from
	// the local store) and spools; back, the rows appear.
	c.Stop()
	resC, err := dA.Master().RunJob(context.Background(), masterPublish("ma", "test.echo", "offline"), testutil.Scale(60*time.Second), testutil.Scale(20*time.Second))
	if err != nil || resC.Returns["ma"] == nil {
		t.Fatalf("job while the database is down: %v %v", err, resC)
	}
	lk, _ = runRunner(t, dA, "jobs.lookup_jid", resC.JID).(*payload.Map)
	if lk == nil || lk.Str("ma") != "offline" {
		t.Fatalf("lookup_jid while the database is down: %v", lk)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	if err := dA.FlushReturners(ctx); err == nil {
		t.Fatal("flush succeeded with the database down")
	}
	cancel()
	c.Start(t)
	flushReturners(t, dA, 120*time.Second)
	if got := c.MustPSQL(t, "salt", "SELECT return::text FROM salt_returns WHERE jid = '"+resC.JID+"'"); got != `"offline"` {
		t.Fatalf("row of the job run while the database was down: %q", got)
	}
	_ = cfgA
	_ = cfgB
}

func masterPublish(tgt, fun string, arg ...any) master.PublishRequest {
	if arg == nil {
		arg = []any{}
	}
	return master.PublishRequest{Tgt: tgt, Fun: fun, Arg: arg}
}

// startGsaltMinionConf is startGsaltMinion with extra minion options.
func startGsaltMinionConf(t *testing.T, d *masterd.Daemon, dir, id, extra string) {
	t.Helper()
	boot := started.Watch(t, d.Bus())
	startGsaltMinionReady(t, d, dir, id, extra)
	boot.Wait(t, id)
}

// startGsaltMinionReady runs an in-process gsalt-minion id against d
// (extra appended to its config) and returns once it is Ready.
func startGsaltMinionReady(t *testing.T, d *masterd.Daemon, dir, id, extra string) {
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
}

func pollPsql(t *testing.T, c *pgtest.Cluster, db, sql, want string, within time.Duration) {
	t.Helper()
	got := ""
	if testutil.Poll(within, func() bool { got = c.MustPSQL(t, db, sql); return got == want }) {
		return
	}
	t.Fatalf("%s:\n got %q\nwant %q", sql, got, want)
}

// TestPgjsonbMinionReturner: a gsalt minion writes its returns itself
// (the master has no pgjsonb): a publish with --return pgjsonb, the same
// with --return_config alternative (another database) and --return_kwargs,
// and a schedule entry with returner: pgjsonb.
func TestPgjsonbMinionReturner(t *testing.T) {
	c := pgtest.Start(t, pgtest.Options{})
	c.CreateDB(t, "salt", pgtest.PgjsonbSchema)
	c.CreateDB(t, "alt", pgtest.PgjsonbSchema)
	c.CreateDB(t, "kw", pgtest.PgjsonbSchema)
	dir := shortDir(t)
	d, mcfg := startMaster(t, dir, "auto_accept: True\n")
	opts := fmt.Sprintf("returner.pgjsonb.host: %s\nreturner.pgjsonb.port: %d\nreturner.pgjsonb.user: %s\nreturner.pgjsonb.db: salt\n"+
		"alternative.returner.pgjsonb.db: alt\n"+
		"schedule:\n  pinger:\n    function: test.echo\n    args: [scheduled]\n    seconds: 1\n    returner: pgjsonb\n", c.Host, c.Port, c.User)
	startGsaltMinionConf(t, d, dir, "mr", opts)

	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scale(90*time.Second))
	defer cancel()
	run := func(req master.PublishRequest) string {
		t.Helper()
		res, err := d.Master().RunJob(ctx, req, testutil.Scale(60*time.Second), testutil.Scale(20*time.Second))
		if err != nil || res.Returns["mr"] == nil {
			t.Fatalf("%v: %v %v", req, err, res)
		}
		return res.JID
	}
	jid := run(master.PublishRequest{Tgt: "mr", Fun: "test.ping", Arg: []any{}, Ret: "pgjsonb"})
	pollPsql(t, c, "salt", "SELECT fun, id, success, return::text, full_ret->>'jid', full_ret ? 'cmd' FROM salt_returns WHERE jid = '"+jid+"'",
		"test.ping|mr|true|true|"+jid+"|f", 60*time.Second)
	if got := c.MustPSQL(t, "salt", "SELECT count(*) FROM jids"); got != "0" {
		t.Fatalf("the minion's returner wrote jids rows: %s", got)
	}
	load := masterPublish("mr", "test.echo", "alt")
	load.Ret = "pgjsonb"
	load.Kwargs = payload.NewMap("ret_config", "alternative")
	jid2 := run(load)
	pollPsql(t, c, "alt", "SELECT return::text, full_ret->>'ret_config' FROM salt_returns WHERE jid = '"+jid2+"'", `"alt"|alternative`, 60*time.Second)
	load = masterPublish("mr", "test.echo", "kw")
	load.Ret = "pgjsonb"
	load.Kwargs = payload.NewMap("ret_kwargs", payload.NewMap("db", "kw"))
	jid3 := run(load)
	pollPsql(t, c, "kw", "SELECT return::text FROM salt_returns WHERE jid = '"+jid3+"'", `"kw"`, 60*time.Second)
	// The gsalt CLI: gsalt mr test.echo viacli --return pgjsonb.
	etc := filepath.Join(dir, "cli-etc")
	if err := os.MkdirAll(etc, 0o755); err != nil {
		t.Fatal(err)
	}
	cliConf := fmt.Sprintf("interface: 127.0.0.1\nret_port: %d\nroot_dir: %s\ncachedir: %s\nsock_dir: %s\npki_dir: %s\nuser: root\n",
		d.ReqAddr().(*net.TCPAddr).Port, dir, mcfg.CacheDir, mcfg.SockDir, mcfg.PKIDir)
	if err := os.WriteFile(filepath.Join(etc, "master"), []byte(cliConf), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := saltcli.Run(ctx, saltcli.Options{ConfigDir: etc, Words: []string{"mr", "test.echo", "viacli"},
		Return: "pgjsonb", Out: "json", Stdout: &out, Stderr: &errb, Logger: logger()})
	if code != 0 || !strings.Contains(out.String(), "viacli") {
		t.Fatalf("gsalt --return pgjsonb: exit %d\n%s%s", code, out.String(), errb.String())
	}
	pollPsql(t, c, "salt", "SELECT id, full_ret->>'fun' FROM salt_returns WHERE return = '\"viacli\"'", "mr|test.echo", 60*time.Second)
	pollPsql(t, c, "salt", "SELECT count(*) > 0 FROM salt_returns WHERE fun = 'test.echo' AND return = '\"scheduled\"' AND full_ret->>'schedule' = 'pinger' AND jid <> 'req'", "t", 60*time.Second)
}

// TestPgjsonbRowsLikeSalt (gated on GSALT_SALT_SRC and python3-psycopg2):
// the jobs gsalt-master wrote to PostgreSQL (master_job_cache and
// event_return: pgjsonb) are written again by real Salt's pgjsonb returner
// into a second database from the same inputs (publish load, _return
// loads, events), the way salt-master calls it; every column but the
// times is equal.
func TestPgjsonbRowsLikeSalt(t *testing.T) {
	src := saltpeer.Require(t)
	if err := saltpeer.PythonCommand(context.Background(), src, "import psycopg2").Run(); err != nil {
		t.Skip("pgjsonb: python3-psycopg2 is not installed (apt-get install python3-psycopg2); skipping the real-Salt pgjsonb comparison")
	}
	c := pgtest.Start(t, pgtest.Options{})
	c.CreateDB(t, "gsalt", pgtest.PgjsonbSchema)
	c.CreateDB(t, "salt", pgtest.PgjsonbSchema)
	dir := shortDir(t)
	conf := fmt.Sprintf("auto_accept: True\nid: cmp_master\nmaster_job_cache: pgjsonb\nevent_return: pgjsonb\n"+
		"event_return_whitelist: ['salt/job/*/ret/*']\n"+
		"returner.pgjsonb.host: %s\nreturner.pgjsonb.port: %d\nreturner.pgjsonb.user: %s\nreturner.pgjsonb.db: gsalt\n", c.Host, c.Port, c.User)
	d, _ := startMaster(t, dir, conf)
	startGsaltMinion(t, d, dir, "mr")
	sub := d.Bus().Subscribe(nil, 4096)
	defer sub.Close()

	var jids []string
	jobs := []master.PublishRequest{
		masterPublish("mr", "test.echo", "hello"),
		masterPublish("mr", "test.arg", int64(1), "two", payload.NewMap("__kwarg__", true, "kw", 3.5)),
		masterPublish("mr", "test.retcode", int64(3)),
	}
	for _, job := range jobs {
		res, err := d.Master().RunJob(context.Background(), job, testutil.Scale(60*time.Second), testutil.Scale(20*time.Second))
		if err != nil || res.Returns["mr"] == nil {
			t.Fatalf("%v: %v %v", job.Fun, err, res)
		}
		flushReturners(t, d, 60*time.Second)
		jids = append(jids, res.JID)
		j, err := d.Jobs().Get(res.JID)
		if err != nil {
			t.Fatal(err)
		}
		ev := waitBus(t, sub, "salt/job/"+res.JID+"/ret/mr")
		rets := []any{ev.Data}
		evs := []any{payload.NewMap("tag", ev.Tag, "data", ev.Data)}
		minions := make([]any, len(j.Minions))
		for i, m := range j.Minions {
			minions[i] = m
		}
		in, err := payload.MarshalBin(payload.NewMap("jid", res.JID, "clear", j.Load, "minions", minions, "returns", rets, "events", evs))
		if err != nil {
			t.Fatal(err)
		}
		inPath := filepath.Join(dir, "in.msgpack")
		if err := os.WriteFile(inPath, in, 0o600); err != nil {
			t.Fatal(err)
		}
		script, _ := filepath.Abs("testdata/pgjsonb_salt.py")
		ctx, cancel := context.WithTimeout(context.Background(), testutil.Scale(120*time.Second))
		cmd := exec.CommandContext(ctx, saltpeer.Python(), script, inPath, c.Host, strconv.Itoa(c.Port), c.User, "salt", "cmp_master")
		cmd.Env = saltpeer.Env(src)
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("real Salt's pgjsonb: %v\n%s", err, out)
		}
	}
	for _, q := range []string{
		"SELECT jid, load::text FROM jids ORDER BY jid",
		"SELECT fun, jid, return::text, id, success, full_ret::text FROM salt_returns ORDER BY jid, id",
		"SELECT tag, data::text, master_id FROM salt_events ORDER BY id",
	} {
		g, s := c.MustPSQL(t, "gsalt", q), c.MustPSQL(t, "salt", q)
		if g != s || g == "" {
			t.Errorf("%s\ngsalt: %s\n salt: %s", q, g, s)
		}
	}
	// Salt's jobs runners reading gsalt's rows find what gsalt's find.
	script, _ := filepath.Abs("testdata/pgjsonb_salt.py")
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scale(120*time.Second))
	cmd := exec.CommandContext(ctx, saltpeer.Python(), append([]string{script, "read", c.Host, strconv.Itoa(c.Port), c.User, "gsalt"}, jids...)...)
	cmd.Env = saltpeer.Env(src)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	cancel()
	if err != nil {
		t.Fatalf("real Salt's jobs runners: %v\n%s", err, out)
	}
	var fromSalt struct {
		Lookup map[string]any            `json:"lookup"`
		List   map[string]map[string]any `json:"list"`
	}
	if err := json.Unmarshal(out[bytes.LastIndexByte(out[:len(out)-1], '\n')+1:], &fromSalt); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	gsaltList, _ := runRunner(t, d, "jobs.list_jobs").(*payload.Map)
	for _, jid := range jids {
		g, err := returners.JSON(runRunner(t, d, "jobs.lookup_jid", jid))
		if err != nil {
			t.Fatal(err)
		}
		var gv any
		json.Unmarshal([]byte(g), &gv)
		if !reflect.DeepEqual(gv, fromSalt.Lookup[jid]) {
			t.Errorf("jobs.lookup_jid %s: gsalt %s, Salt %v", jid, g, fromSalt.Lookup[jid])
		}
		sj, gj := fromSalt.List[jid], gsaltList.Map(jid)
		if sj == nil || gj == nil || sj["Function"] != gj.Str("Function") || sj["StartTime"] != gj.Str("StartTime") {
			t.Errorf("jobs.list_jobs %s: gsalt %v, Salt %v", jid, gj, sj)
		}
	}
	t.Logf("rows equal to real Salt's pgjsonb returner:\n%s", c.MustPSQL(t, "salt", "SELECT fun, success, full_ret::text FROM salt_returns ORDER BY jid"))
}

// TestUnknownMasterReturners: a master_job_cache or event_return naming a
// returner gsalt does not have stops the master with Salt's loader text.
func TestUnknownMasterReturners(t *testing.T) {
	tests := []struct{ conf, want string }{
		{"master_job_cache: nosuch\n", "master_job_cache: returners: unknown returner: 'nosuch.returner' is not available."},
		{"event_return: [pgjsonb, other]\n", "event_return: returners: unknown returner: 'other.returner' is not available."},
	}
	for _, tc := range tests {
		dir := shortDir(t)
		cfg := writeConfig(t, dir, tc.conf)
		copyFile(t, filepath.Join(vectorsDir, "pki/master/master.pem"), filepath.Join(cfg.PKIDir, "master.pem"), 0o400)
		copyFile(t, filepath.Join(vectorsDir, "pki/master/master.pub"), filepath.Join(cfg.PKIDir, "master.pub"), 0o644)
		d, err := masterd.Start(context.Background(), cfg, masterd.Options{Logger: logger()})
		if err == nil {
			d.Close()
			t.Fatalf("%q: the master started", tc.conf)
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v\nwant %s", tc.conf, err, tc.want)
		}
	}
}
