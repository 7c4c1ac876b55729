package master

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestRefusalsLogged: every refused publish, runner and wheel request and
// every refused mk_token is logged at warning level with Salt's message,
// the user and the function, and no password reaches the log.
func TestRefusalsLogged(t *testing.T) {
	e := newEnv(t, eauthConf)
	e.m.eauth = newFastEauth(e)
	var buf testutil.Buffer
	e.m.log = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))
	e.login("minion1", "m1")
	e.drain()
	creds := func(user, pw, backend string) *payload.Map {
		return payload.NewMap("eauth", backend, "username", user, "password", pw)
	}
	with := func(m *payload.Map, c *payload.Map) *payload.Map {
		for _, it := range c.Items() {
			m.SetKey(it.Key, it.Value)
		}
		return m
	}
	for _, tc := range []struct {
		name string
		load *payload.Map
		want []string
	}{
		{"publish outside the ACL",
			e.publishReq("m1", "cmd.run", []any{"rm -rf /"}, nil).Set("kwargs", creds("fred", "x", "auto")),
			[]string{`msg="Authentication failure of type \"eauth\" occurred."`, "user=fred", "fun=cmd.run", "tgt=m1"}},
		{"publish wrong password",
			e.publishReq("m1", "test.ping", nil, nil).Set("kwargs", creds("fred", "pw-secret-1", "sharedsecret")),
			[]string{`msg="Authentication failure of type \"eauth\" occurred."`, "user=fred", "fun=test.ping"}},
		{"runner without @runner",
			with(payload.NewMap("cmd", "runner", "fun", "manage.present"), creds("joe", "x", "auto")),
			[]string{`Authentication failure of type \"eauth\" occurred for user joe.`, "user=joe", "fun=manage.present", "client=runner"}},
		{"wheel outside @wheel",
			with(payload.NewMap("cmd", "wheel", "fun", "key.delete", "match", "m1"), creds("fred", "x", "auto")),
			[]string{`Authentication failure of type \"eauth\" occurred for user fred.`, "user=fred", "fun=key.delete", "client=wheel"}},
		{"mk_token wrong password",
			with(payload.NewMap("cmd", "mk_token"), creds("fred", "pw-secret-2", "sharedsecret")),
			[]string{`Authentication failure of type \"eauth\" occurred.`, "user=fred", "cmd=mk_token"}},
	} {
		before := len(buf.String())
		e.clear(tc.load)
		got := buf.String()[before:]
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: log lacks %s:\n%s", tc.name, w, got)
			}
		}
		if !strings.Contains(got, "level=WARN") {
			t.Errorf("%s: not a warning:\n%s", tc.name, got)
		}
	}
	// A refused publish that carries a jid is announced as Salt's
	// salt/job/<jid>/error, without the credentials.
	const jid = "20261127000000000001"
	e.clear(e.publishReq("m1", "cmd.run", []any{"id"}, nil).Set("jid", jid).Set("kwargs", creds("fred", "pw-secret-3", "auto")))
	ev := e.waitEvent("salt/job/" + jid + "/error")
	if ev.Data.Map("error").Str("name") != "AuthorizationError" || ev.Data.Str("fun") != "cmd.run" ||
		ev.Data.Map("kwargs").Str("username") != "fred" || ev.Data.Map("kwargs").Has("password") {
		t.Errorf("salt/job/%s/error: %v", jid, ev.Data)
	}
	if s := buf.String(); strings.Contains(s, "pw-secret") {
		t.Errorf("a password reached the log:\n%s", s)
	}
	if len(e.pub.all()) != 0 {
		t.Errorf("something was published: %d", len(e.pub.all()))
	}
}
