package netapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestEnableSessions: rest_cherrypy:enable_sessions. On (the default),
// /login sets the session_id cookie and the cookie alone authenticates;
// off, /login, /logout, /minions and /jobs do not exist (404), no cookie
// is read, and a token from /token works in the X-Auth-Token header and
// in /run's chunks.
func TestEnableSessions(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprintf("enable_sessions=%v", on), func(t *testing.T) {
			e := startAPIWith(t, func(rc map[string]any) { rc["enable_sessions"] = on })
			creds := map[string]any{"username": "fred", "password": "x", "eauth": "auto"}
			code, h, b := e.do("POST", "/login", "", "", creds)
			cookie := ""
			for _, c := range (&http.Response{Header: h}).Cookies() {
				if c.Name == "session_id" {
					cookie = c.Value
				}
			}
			if on {
				if code != 200 || cookie == "" || cookie != h.Get("X-Auth-Token") {
					t.Fatalf("/login: %d cookie %q header %q %s", code, cookie, h.Get("X-Auth-Token"), b)
				}
				code, _, b = e.do("GET", "/minions/m1", "", "", nil, "Cookie", "session_id="+cookie)
				if code != 200 || !strings.Contains(string(b), `"kernel":"Linux"`) {
					t.Errorf("/minions/m1 with the session cookie: %d %s", code, b)
				}
				return
			}
			if code != 404 || cookie != "" {
				t.Errorf("/login without sessions: %d cookie %q %s", code, cookie, b)
			}
			code, _, b = e.do("POST", "/token", "", "", creds)
			var toks []map[string]any
			if code != 200 || json.Unmarshal(b, &toks) != nil || len(toks) != 1 || toks[0]["token"] == "" {
				t.Fatalf("/token: %d %s", code, b)
			}
			tok := toks[0]["token"].(string)
			for _, tc := range []struct {
				method, path string
				code         int
			}{
				{"GET", "/logout", 404}, {"POST", "/logout", 404}, {"GET", "/minions", 404}, {"GET", "/minions/m1", 404},
				{"GET", "/jobs", 404}, {"GET", "/jobs/20260101010101000000", 404}, {"GET", "/", 200},
			} {
				if code, _, b := e.do(tc.method, tc.path, tok, "", nil); code != tc.code {
					t.Errorf("%s %s without sessions: %d %s, want %d", tc.method, tc.path, code, b, tc.code)
				}
			}
			ping := []any{map[string]any{"client": "local", "tgt": "m1", "fun": "test.ping"}}
			if code, _, b := e.do("POST", "/", tok, "", ping); code != 200 || fmt.Sprint(ret0(t, b)) != "map[m1:true]" {
				t.Errorf("/ with X-Auth-Token: %d %s", code, b)
			}
			if code, _, b := e.do("POST", "/", "", "", ping, "Cookie", "session_id="+tok); code != 401 {
				t.Errorf("/ with only a session cookie: %d %s, want 401", code, b)
			}
			run := []any{map[string]any{"client": "local", "tgt": "m1", "fun": "test.ping", "token": tok}}
			if code, _, b := e.do("POST", "/run", "", "", run); code != 200 || fmt.Sprint(ret0(t, b)) != "map[m1:true]" {
				t.Errorf("/run with the token: %d %s", code, b)
			}
		})
	}
}

// TestLocalSubset: the local_subset client is LocalClient.cmd_subset:
// sys.list_functions on the target, then the function on at most
// "subset" (legacy "sub", default 3) of the minions that have it; none
// has it: {}. The listing runs with the caller's rights, so a user whose
// ACL lacks sys.list_functions is refused.
func TestLocalSubset(t *testing.T) {
	e := startAPI(t)
	ann := e.login("ann", "auto", "x")
	joe := e.login("joe", "auto", "x")
	for _, tc := range []struct {
		name  string
		tok   string
		chunk map[string]any
		code  int
		want  string
	}{
		{"default subset", ann, map[string]any{"tgt": "*", "fun": "test.ping"}, 200, "map[m1:true]"},
		{"subset 1", ann, map[string]any{"tgt": "*", "fun": "test.arg", "arg": []any{"a"}, "subset": 1}, 200, "__pub_tgt:[m1] __pub_tgt_type:list"},
		{"legacy sub", ann, map[string]any{"tgt": "m1", "fun": "test.ping", "sub": 2}, 200, "map[m1:true]"},
		{"subset 0", ann, map[string]any{"tgt": "*", "fun": "test.ping", "subset": 0}, 200, "map[]"},
		{"function nobody has", ann, map[string]any{"tgt": "*", "fun": "test.nosuch"}, 200, "map[]"},
		{"full_return", ann, map[string]any{"tgt": "*", "fun": "test.ping", "full_return": true}, 200, "ret:true"},
		{"no sys.list_functions in the ACL", joe, map[string]any{"tgt": "*", "fun": "test.ping"}, 401, ""},
	} {
		tc.chunk["client"] = "local_subset"
		code, _, b := e.do("POST", "/", tc.tok, "", []any{tc.chunk})
		if code != tc.code {
			t.Errorf("%s: %d %s, want %d", tc.name, code, b, tc.code)
			continue
		}
		if tc.code == 200 && !strings.Contains(fmt.Sprint(ret0(t, b)), tc.want) {
			t.Errorf("%s: %v, want %s", tc.name, ret0(t, b), tc.want)
		}
	}
}
