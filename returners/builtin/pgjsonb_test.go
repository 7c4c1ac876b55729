package builtin

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/internal/testutil/pgtest"
	"github.com/gsalt/gsalt/returners"
	"github.com/gsalt/gsalt/wire/payload"
)

func optionFunc(m map[string]any) returners.Option {
	return func(k string) (any, bool) { v, ok := m[k]; return v, ok }
}

func pgEnv(c *pgtest.Cluster, db string) returners.Env {
	return returners.Env{Option: optionFunc(c.PgjsonbOptions(db)), ID: "m1_master"}
}

func TestPgjsonbFunctions(t *testing.T) {
	c := pgtest.Start(t, pgtest.Options{})
	c.CreateDB(t, "salt", pgtest.PgjsonbSchema)
	p := NewPgjsonb(pgEnv(c, "salt"))
	defer p.Close()
	ctx := context.Background()
	jid := "20261127120000123456"
	load := payload.NewMap("fun", "test.ping", "arg", []any{}, "tgt", "*", "tgt_type", "glob", "user", "root", "jid", jid)
	if err := p.SaveLoad(ctx, jid, load); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"m1", "m2"} {
		ret := payload.NewMap("cmd", "_return", "id", id, "jid", jid, "fun", "test.ping", "fun_args", []any{},
			"return", true, "retcode", int64(0), "success", true, "data", []byte("b\xffytes"), "f", 1.0)
		if err := p.Return(ctx, ret); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.EventReturn(ctx, []returners.Event{{Tag: "salt/job/x/new", Data: payload.NewMap("a", int64(1))}, {Tag: "t2", Data: "s"}}); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, sql, want string }{
		{"jids", "SELECT jid, load FROM jids", jid + `|{"arg": [], "fun": "test.ping", "jid": "` + jid + `", "tgt": "*", "user": "root", "tgt_type": "glob"}`},
		{"returns", "SELECT fun, jid, return, id, success FROM salt_returns ORDER BY id", "test.ping|" + jid + "|true|m1|true\ntest.ping|" + jid + "|true|m2|true"},
		{"full_ret", "SELECT full_ret->>'data', full_ret->'f' FROM salt_returns WHERE id='m1'", "b\uFFFDytes|1.0"},
		{"events", "SELECT tag, data, master_id FROM salt_events ORDER BY id", "salt/job/x/new|{\"a\": 1}|m1_master\nt2|\"s\"|m1_master"},
	}
	for _, tc := range tests {
		if got := c.MustPSQL(t, "salt", tc.sql); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
	gl, err := p.GetLoad(ctx, jid)
	if err != nil || gl.Str("fun") != "test.ping" {
		t.Fatalf("GetLoad = %v, %v", gl, err)
	}
	if gl, err := p.GetLoad(ctx, "20000101000000000000"); err != nil || gl != nil {
		t.Fatalf("GetLoad(missing) = %v, %v", gl, err)
	}
	gj, err := p.GetJID(ctx, jid)
	if err != nil || gj.Len() != 2 || gj.Map("m2").Str("id") != "m2" {
		t.Fatalf("GetJID = %v, %v", gj, err)
	}
	jids, err := p.GetJIDs(ctx)
	if err != nil || len(jids) != 1 || jids[0].JID != jid {
		t.Fatalf("GetJIDs = %v, %v", jids, err)
	}
	ms, err := p.GetMinions(ctx)
	if err != nil || strings.Join(ms, ",") != "m1,m2" {
		t.Fatalf("GetMinions = %v, %v", ms, err)
	}
	gf, err := p.GetFun(ctx, "test.ping")
	if err != nil || gf.Len() != 2 {
		t.Fatalf("GetFun = %v, %v", gf, err)
	}
	// save_load again replaces the load (Salt's ON CONFLICT DO UPDATE).
	if err := p.SaveLoad(ctx, jid, payload.NewMap("fun", "other")); err != nil {
		t.Fatal(err)
	}
	if got := c.MustPSQL(t, "salt", "SELECT load->>'fun' FROM jids"); got != "other" {
		t.Fatalf("load after a second save_load: %q", got)
	}
	// clean_old_jobs with archive_jobs: old rows move to the archive tables.
	c.MustPSQL(t, "salt", "UPDATE salt_returns SET alter_time = NOW() - interval '2 hours'; UPDATE salt_events SET alter_time = NOW() - interval '2 hours'")
	if err := p.CleanOldJobs(ctx, time.Hour, true); err != nil {
		t.Fatal(err)
	}
	if got := c.MustPSQL(t, "salt", "SELECT (SELECT count(*) FROM jids), (SELECT count(*) FROM salt_returns), (SELECT count(*) FROM salt_events), (SELECT count(*) FROM jids_archive), (SELECT count(*) FROM salt_returns_archive), (SELECT count(*) FROM salt_events_archive)"); got != "0|0|0|1|2|2" {
		t.Fatalf("after clean_old_jobs archive: %q", got)
	}
}

func TestPgjsonbOptions(t *testing.T) {
	opts := map[string]any{
		"returner.pgjsonb.host":             "h1",
		"returner.pgjsonb.port":             "6543",
		"alternative.returner.pgjsonb.host": "h2",
		"alternative.returner.pgjsonb.db":   "altdb",
		"returner.pgjsonb":                  payload.NewMap("user", "dictuser"),
	}
	p := NewPgjsonb(returners.Env{Option: optionFunc(opts)})
	tests := []struct {
		name string
		ret  *payload.Map
		want string
	}{
		{"default", nil, "host='h1' port=6543 dbname='salt' user='dictuser' password='salt' connect_timeout=5"},
		{"alternative", payload.NewMap("ret_config", "alternative"), "host='h2' port=6543 dbname='altdb' user='dictuser' password='salt' connect_timeout=5"},
		{"kwargs", payload.NewMap("ret_kwargs", payload.NewMap("db", "another-salt", "pass", "it's")), `host='h1' port=6543 dbname='another-salt' user='dictuser' password='it\'s' connect_timeout=5`},
	}
	for _, tc := range tests {
		got, err := p.dsn(tc.ret)
		if err != nil || got != tc.want {
			t.Errorf("%s: dsn = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

// TestPgjsonbQueueSpool stops the database, queues writes (they go to the
// disk spool), starts it again and sees every row arrive in order.
func TestPgjsonbQueueSpool(t *testing.T) {
	c := pgtest.Start(t, pgtest.Options{})
	c.CreateDB(t, "salt", pgtest.PgjsonbSchema)
	p := NewPgjsonb(pgEnv(c, "salt"))
	defer p.Close()
	spoolPath := filepath.Join(t.TempDir(), "pgjsonb.spool")
	q, err := returners.NewQueue(p, returners.QueueOptions{Name: "test", SpoolPath: spoolPath, Memory: 4, Retry: 50 * time.Millisecond, MaxRetry: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	q.Put(returners.Op{Kind: returners.OpEvents, Events: []returners.Event{{Tag: "e0", Data: int64(0)}}})
	if err := q.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	c.Stop()
	for i := 1; i <= 20; i++ {
		q.Put(returners.Op{Kind: returners.OpEvents, Events: []returners.Event{{Tag: "e" + strconv.Itoa(i), Data: int64(i)}}})
	}
	testutil.Poll(30*time.Second, func() bool { s := q.Stats(); return s.Spooled >= 20 && s.Down })
	if s := q.Stats(); s.Spooled < 20 || !s.Down {
		t.Fatalf("while the database is down: %+v", s)
	}
	// The spool survives a restart of the queue.
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	c.Start(t)
	q, err = returners.NewQueue(p, returners.QueueOptions{Name: "test", SpoolPath: spoolPath, Retry: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	q.Put(returners.Op{Kind: returners.OpEvents, Events: []returners.Event{{Tag: "e21", Data: int64(21)}}})
	if err := q.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got := c.MustPSQL(t, "salt", "SELECT string_agg(data::text, ',' ORDER BY id) FROM salt_events")
	want := "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21"
	if got != want {
		t.Fatalf("events after catch-up: %q, want %q", got, want)
	}
	if s := q.Stats(); s.Dropped != 0 || s.Spooled != 0 {
		t.Fatalf("stats: %+v", s)
	}
}

// TestQueueSpoolFull: past the spool's bound writes are dropped and
// counted, never blocking.
func TestQueueSpoolFull(t *testing.T) {
	c := pgtest.Start(t, pgtest.Options{})
	c.CreateDB(t, "salt", pgtest.PgjsonbSchema)
	p := NewPgjsonb(pgEnv(c, "salt"))
	defer p.Close()
	c.Stop()
	q, err := returners.NewQueue(p, returners.QueueOptions{Name: "test", SpoolPath: filepath.Join(t.TempDir(), "s"), MaxSpool: 5, Memory: 2, Retry: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	for i := 0; i < 12; i++ {
		q.Put(returners.Op{Kind: returners.OpEvents, Events: []returners.Event{{Tag: "e", Data: int64(i)}}})
	}
	var s returners.QueueStats
	if !testutil.Poll(30*time.Second, func() bool {
		s = q.Stats()
		return s.Spooled+s.Pending+int(s.Dropped) == 12 && s.Spooled == 5
	}) || s.Dropped < 5 {
		t.Fatalf("stats: %+v", s)
	}
}
