package master

import (
	"github.com/gsalt/gsalt/master/eauth"
	"reflect"
	"testing"
	"time"

	"github.com/gsalt/gsalt/wire/payload"
)

const eauthConf = `external_auth:
  auto:
    fred:
      - 'm1':
        - test.*
        - 'cmd.run':
            args: ['^echo']
      - '@runner'
      - '@wheel': ['key.list_.*']
    joe:
      - '@jobs'
  sharedsecret:
    fred:
      - test.*
sharedsecret: s3cret
`

// TestClearEauth drives mk_token, get_token and token/eauth publish,
// runner and wheel through the master's clear command handling, with
// Salt's ACL refusals: nothing is published or run when refused.
func TestClearEauth(t *testing.T) {
	e := newEnv(t, eauthConf)
	e.m.eauth = newFastEauth(e)
	e.login("minion1", "m1")
	e.login("proxy1", "m2")
	e.drain()

	td, ok := e.clear(payload.NewMap("cmd", "mk_token", "eauth", "auto", "username", "fred", "password", "x")).(*payload.Map)
	if !ok || len(td.Str("token")) != 64 || td.Str("name") != "fred" || td.Str("eauth") != "auto" {
		t.Fatalf("mk_token: %v", td)
	}
	tok := td.Str("token")
	if got := e.clear(payload.NewMap("cmd", "mk_token", "eauth", "sharedsecret", "username", "fred", "password", "no")); got != "" {
		t.Fatalf("mk_token with a wrong password: %v", got)
	}
	if got, _ := e.clear(payload.NewMap("cmd", "get_token", "token", tok)).(*payload.Map); got == nil || got.Str("name") != "fred" {
		t.Fatalf("get_token: %v", got)
	}
	if got, _ := e.clear(payload.NewMap("cmd", "get_token", "token", "0000")).(*payload.Map); got == nil || got.Len() != 0 {
		t.Fatalf("get_token of an unknown token: %v", got)
	}
	if got := e.clear(payload.NewMap("cmd", "get_token")); got != false {
		t.Fatalf("get_token without token: %v", got)
	}

	authErr := payload.NewMap("error", payload.NewMap("name", "AuthenticationError", "message", "Authentication error occurred."))
	authzErr := payload.NewMap("error", payload.NewMap("name", "AuthorizationError", "message", "Authorization error occurred."))
	pub := func(tgt, fun string, arg []any, kw *payload.Map) *payload.Map {
		return e.publishReq(tgt, fun, arg, nil).Set("user", "fred").Set("kwargs", kw)
	}
	tokKw := func() *payload.Map { return payload.NewMap("token", tok) }
	eaKw := func(user, pw string) *payload.Map {
		return payload.NewMap("eauth", "sharedsecret", "username", user, "password", pw)
	}
	for _, tc := range []struct {
		name string
		load *payload.Map
		want *payload.Map // nil: published
	}{
		{"token, allowed", pub("m1", "test.ping", []any{}, tokKw()), nil},
		{"token, args allowed", pub("m1", "cmd.run", []any{"echo hi"}, tokKw()), nil},
		{"token, args refused", pub("m1", "cmd.run", []any{"rm -rf /"}, tokKw()), authzErr},
		{"token, function outside the ACL", pub("m1", "pkg.install", []any{"vim"}, tokKw()), authzErr},
		{"token, target outside the ACL", pub("m*", "test.ping", []any{}, tokKw()), authzErr},
		{"token unknown", pub("m1", "test.ping", []any{}, payload.NewMap("token", "f00")), authErr},
		{"eauth, allowed everywhere", pub("*", "test.ping", []any{}, eaKw("fred", "s3cret")), nil},
		{"eauth, wrong password", pub("*", "test.ping", []any{}, eaKw("fred", "nope")), authErr},
		{"eauth, user without ACL", pub("*", "test.ping", []any{}, eaKw("joe", "s3cret")), authzErr},
		{"eauth, not enabled", pub("*", "test.ping", []any{}, payload.NewMap("eauth", "pam", "username", "fred", "password", "x")), authErr},
	} {
		e.pub.reset()
		got, _ := e.clear(tc.load).(*payload.Map)
		if tc.want != nil {
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s: reply %v", tc.name, got)
			}
			if len(e.pub.all()) != 0 {
				t.Errorf("%s: something was published", tc.name)
			}
			continue
		}
		if got == nil || got.Map("load") == nil || got.Map("load").Str("jid") == "" {
			t.Errorf("%s: reply %v", tc.name, got)
			continue
		}
		if len(e.pub.all()) == 0 {
			t.Errorf("%s: nothing published", tc.name)
		}
		ev := e.waitEvent("salt/job/" + got.Map("load").Str("jid") + "/new")
		if ev.Data.Str("user") != "fred" {
			t.Errorf("%s: job user %q", tc.name, ev.Data.Str("user"))
		}
	}
	e.drain()

	// Runners and wheel functions need @runner / @wheel entries.
	for _, tc := range []struct {
		name string
		load *payload.Map
		err  string
	}{
		{"runner via token", payload.NewMap("cmd", "runner", "fun", "manage.present", "token", tok), ""},
		{"runner via eauth, @jobs only", payload.NewMap("cmd", "runner", "fun", "manage.present", "eauth", "auto", "username", "joe", "password", "x"),
			`Authentication failure of type "eauth" occurred for user joe.`},
		{"runner via eauth, @jobs", payload.NewMap("cmd", "runner", "fun", "jobs.list_jobs", "eauth", "auto", "username", "joe", "password", "x"), ""},
		{"runner without @runner", payload.NewMap("cmd", "runner", "fun", "manage.present", "eauth", "sharedsecret", "username", "fred", "password", "s3cret"),
			`Authentication failure of type "eauth" occurred for user fred.`},
		{"runner, wrong password", payload.NewMap("cmd", "runner", "fun", "manage.present", "eauth", "sharedsecret", "username", "fred", "password", "x"),
			`Authentication failure of type "eauth" occurred for user fred.`},
		{"runner, bad token", payload.NewMap("cmd", "runner", "fun", "manage.present", "token", "x"),
			`Authentication failure of type "token" occurred.`},
		{"runner, syntax", payload.NewMap("cmd", "runner", "fun", "manage", "token", tok),
			`A command invocation error occurred: Check syntax.`},
	} {
		got, _ := e.clear(tc.load).(*payload.Map)
		if tc.err == "" {
			if got == nil || got.Str("jid") == "" {
				t.Errorf("%s: %v", tc.name, got)
				continue
			}
			ev := e.waitEvent("salt/run/" + got.Str("jid") + "/ret")
			if ev.Data.Str("user") == "" || ev.Data.Str("user") == "root" {
				t.Errorf("%s: runner user %q", tc.name, ev.Data.Str("user"))
			}
			continue
		}
		if got == nil || got.Map("error") == nil || got.Map("error").Str("message") != tc.err {
			t.Errorf("%s: %v", tc.name, got)
		}
	}
	e.noEvent("salt/run/")
	got, _ := e.clear(payload.NewMap("cmd", "wheel", "fun", "key.list_all", "token", tok)).(*payload.Map)
	if got == nil || got.Map("data") == nil || got.Map("data").Str("user") != "fred" || !got.Map("data").Bool("success") {
		t.Fatalf("wheel via token: %v", got)
	}
	got, _ = e.clear(payload.NewMap("cmd", "wheel", "fun", "key.delete", "match", "m2", "token", tok)).(*payload.Map)
	if got == nil || got.Map("error").Str("name") != "TokenAuthenticationError" {
		t.Fatalf("wheel outside the ACL: %v", got)
	}
	if ids, _ := e.keys.ListState("accepted"); len(ids) != 2 {
		t.Fatalf("key.delete ran: %v", ids)
	}
}

// TestPublisherACL: a non-root user's client key may only run what
// publisher_acl grants, and publisher_acl_blacklist refuses users and
// modules.
func TestPublisherACL(t *testing.T) {
	e := newEnv(t, "publisher_acl:\n  bob:\n    - test.*\npublisher_acl_blacklist:\n  modules: [cmd.*]\n  users: [mallory]\n")
	e.m.clientKeys["bob"] = "bob-key-0123456789"
	e.m.clientKeys["eve"] = "eve-key-0123456789"
	e.login("minion1", "m1")
	authzErr := payload.NewMap("error", payload.NewMap("name", "AuthorizationError", "message", "Authorization error occurred."))
	authErr := payload.NewMap("error", payload.NewMap("name", "AuthenticationError", "message", "Authentication error occurred."))
	for _, tc := range []struct {
		name, user, key, fun string
		want                 *payload.Map
	}{
		{"bob test", "bob", "bob-key-0123456789", "test.ping", nil},
		{"bob pkg", "bob", "bob-key-0123456789", "pkg.install", authzErr},
		{"eve no acl", "eve", "eve-key-0123456789", "test.ping", authErr},
		{"root cmd blacklisted", "root", e.rootKy, "cmd.run", authzErr},
		{"mallory blacklisted", "mallory", e.rootKy, "test.ping", authzErr},
		{"root test", "root", e.rootKy, "test.ping", nil},
	} {
		e.pub.reset()
		got, _ := e.clear(e.publishReq("m1", tc.fun, []any{}, tc.key).Set("user", tc.user)).(*payload.Map)
		if tc.want == nil {
			if got == nil || got.Map("load") == nil || len(e.pub.all()) == 0 {
				t.Errorf("%s: %v", tc.name, got)
			}
			continue
		}
		if !reflect.DeepEqual(got, tc.want) || len(e.pub.all()) != 0 {
			t.Errorf("%s: %v", tc.name, got)
		}
	}
}

// newFastEauth gives e's master an eauth whose failures take 1ms instead
// of Salt's one second.
func newFastEauth(e *env) *eauth.Auth {
	return eauth.New(eauth.Options{Opts: e.cfg.Opts.Get, TokenDir: tokenDir(e.cfg), Logger: quietLogger(), MinFailDelay: time.Millisecond})
}
