package netapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil/proc"
	"github.com/gsalt/gsalt/netapi"
)

// startSaltAPI runs Salt 3006's salt-api with the master config of cfg
// (real ret port) on a free port.
func startSaltAPI(t *testing.T, src string, cfg *config.Master, dir string) *apiEnv {
	port := proc.FreePort(t)
	apiEtc := filepath.Join(dir, "api-etc")
	os.MkdirAll(apiEtc, 0o755)
	conf, err := os.ReadFile(cfg.ConfFile)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(conf), "ret_port: 0\n", fmt.Sprintf("ret_port: %d\n", cfg.RetPort), 1)
	text = strings.Replace(text, "  port: 0\n", fmt.Sprintf("  port: %d\n  host: 127.0.0.1\n", port), 1)
	text = strings.Replace(text, "log_file: "+dir+"/master.log", "log_file: "+dir+"/api.log", 1)
	if err := os.WriteFile(filepath.Join(apiEtc, "master"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	// salt-api forks its netapi process: proc runs it in its own process
	// group and stops the whole group.
	p := proc.Start(t, "salt-api", saltpeer.Command(context.Background(), src, "salt-api", "-c", apiEtc, "-l", "error"),
		proc.Options{Log: filepath.Join(dir, "salt-api.out")})
	e := &apiEnv{t: t, base: fmt.Sprintf("http://127.0.0.1:%d", port), hc: &http.Client{Timeout: 60 * time.Second}}
	p.WaitFor(t, 60*time.Second, "salt-api answering", func() bool {
		resp, err := e.hc.Get(e.base + "/")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return true
	})
	return e
}

// TestRealSaltAPIWithGsaltMaster: Salt 3006's own salt-api
// (rest_cherrypy) in front of a gsalt master: /login with eauth, local
// test.ping and cmd.run, runner jobs.list_jobs, wheel key.list_all, an ACL
// refusal and /events.
func TestRealSaltAPIWithGsaltMaster(t *testing.T) {
	src := saltpeer.Require(t)
	cfg, _, dir := startMasterMinion(t)
	e := startSaltAPI(t, src, cfg, dir)
	tok := e.login("fred", "auto", "x")
	code, _, b := e.do("POST", "/", tok, "", []any{map[string]any{"client": "local", "tgt": "m1", "fun": "test.ping"}})
	if code != 200 || fmt.Sprint(ret0(t, b)) != "map[m1:true]" {
		t.Fatalf("local test.ping: %d %s", code, b)
	}
	code, _, b = e.do("POST", "/", tok, "", []any{map[string]any{"client": "local", "tgt": "m1", "fun": "cmd.run", "arg": "echo hello"}})
	if code != 200 || fmt.Sprint(ret0(t, b)) != "map[m1:hello]" {
		t.Fatalf("local cmd.run: %d %s", code, b)
	}
	code, _, b = e.do("POST", "/", tok, "", []any{map[string]any{"client": "runner", "fun": "jobs.list_jobs"}})
	if _, ok := ret0(t, b).(map[string]any); code != 200 || !ok {
		t.Fatalf("runner jobs.list_jobs: %d %s", code, b)
	}
	code, _, b = e.do("POST", "/", tok, "", []any{map[string]any{"client": "wheel", "fun": "key.list_all"}})
	if code != 200 || !strings.Contains(string(b), `"minions": ["m1"]`) && !strings.Contains(string(b), `"minions":["m1"]`) {
		t.Fatalf("wheel key.list_all: %d %s", code, b)
	}
	joe := e.login("joe", "auto", "x")
	if code, _, b := e.do("POST", "/", joe, "", []any{map[string]any{"client": "local", "tgt": "m1", "fun": "cmd.run", "arg": "id"}}); code != 401 {
		t.Fatalf("joe cmd.run through salt-api: %d %s", code, b)
	}
	ectx, ecancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer ecancel()
	req, _ := http.NewRequestWithContext(ectx, "GET", e.base+"/events?token="+tok, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("events: %v %v", err, resp)
	}
	resp.Body.Close()
}

var jidRE = regexp.MustCompile(`\b[0-9]{20}\b`)

// normalize blanks what differs between runs: tokens, jids, times, tags.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, val := range x {
			switch k {
			case "token", "jid", "start", "expire", "_stamp", "tag":
				out[k] = "X"
			default:
				if len(k) == 20 && strings.Trim(k, "0123456789") == "" {
					k = "JID"
				}
				out[k] = normalize(val)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = normalize(x[i])
		}
		return out
	case string:
		return jidRE.ReplaceAllString(x, "JID")
	}
	return v
}

// TestGoldenAgainstSaltAPI sends the same requests to Salt 3006's salt-api
// and to gsalt-api, both in front of one gsalt master: the status codes
// must be equal, and so must the JSON bodies apart from tokens, jids,
// times and tags.
func TestGoldenAgainstSaltAPI(t *testing.T) {
	src := saltpeer.Require(t)
	cfg, _, dir := startMasterMinion(t)
	salt := startSaltAPI(t, src, cfg, dir)
	o, err := netapi.OptionsFrom(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go netapi.New(cfg, o, quiet(), quiet()).Serve(ctx, ln)
	g := &apiEnv{t: t, base: "http://" + ln.Addr().String(), hc: &http.Client{Timeout: 60 * time.Second}}

	toks := map[*apiEnv]map[string]string{}
	for _, e := range []*apiEnv{salt, g} {
		toks[e] = map[string]string{"fred": e.login("fred", "auto", "x"), "joe": e.login("joe", "auto", "x"), "ann": e.login("ann", "auto", "x")}
	}
	type req struct {
		name, method, path, user, ctype string
		body                            any
		bodyCompare                     bool
	}
	low := func(m map[string]any) []any { return []any{m} }
	reqs := []req{
		{"login", "POST", "/login", "", "", map[string]any{"username": "fred", "password": "x", "eauth": "auto"}, true},
		{"login bad password", "POST", "/login", "", "", map[string]any{"username": "fred", "password": "x", "eauth": "sharedsecret"}, false},
		{"login eauth not enabled", "POST", "/login", "", "", map[string]any{"username": "fred", "password": "x", "eauth": "pam"}, false},
		{"no token", "POST", "/", "", "", low(map[string]any{"client": "local", "tgt": "m1", "fun": "test.ping"}), false},
		{"local test.ping", "POST", "/", "fred", "", low(map[string]any{"client": "local", "tgt": "m1", "fun": "test.ping"}), true},
		{"local cmd.run", "POST", "/", "fred", "", low(map[string]any{"client": "local", "tgt": "m1", "fun": "cmd.run", "arg": "echo hi"}), true},
		{"local test.arg kwarg", "POST", "/", "fred", "", low(map[string]any{"client": "local", "tgt": "m1", "fun": "test.arg", "arg": []any{"a", 1}, "kwarg": map[string]any{"k": "v"}}), true},
		{"local no minions", "POST", "/", "fred", "", low(map[string]any{"client": "local", "tgt": "nobody", "fun": "test.ping"}), true},
		{"local_async", "POST", "/", "fred", "", low(map[string]any{"client": "local_async", "tgt": "m1", "fun": "test.ping"}), true},
		{"local_subset", "POST", "/", "ann", "", low(map[string]any{"client": "local_subset", "tgt": "*", "fun": "test.ping", "subset": 1}), true},
		{"local_subset legacy sub", "POST", "/", "ann", "", low(map[string]any{"client": "local_subset", "tgt": "m1", "fun": "test.echo", "arg": "s", "sub": 2}), true},
		{"local_subset nobody has it", "POST", "/", "ann", "", low(map[string]any{"client": "local_subset", "tgt": "*", "fun": "test.nosuch"}), true},
		{"local_subset without sys.list_functions", "POST", "/", "fred", "", low(map[string]any{"client": "local_subset", "tgt": "m1", "fun": "test.ping"}), false},
		{"two chunks", "POST", "/", "fred", "", []any{map[string]any{"client": "local", "tgt": "m1", "fun": "test.ping"}, map[string]any{"client": "local", "tgt": "m1", "fun": "test.echo", "arg": "x"}}, true},
		{"wheel key.list_all", "POST", "/", "fred", "", low(map[string]any{"client": "wheel", "fun": "key.list_all"}), true},
		{"runner async", "POST", "/", "fred", "", low(map[string]any{"client": "runner_async", "fun": "manage.present"}), true},
		{"disabled client", "POST", "/", "fred", "", low(map[string]any{"client": "wheel_async", "fun": "key.list_all"}), false},
		{"bad client", "POST", "/", "fred", "", low(map[string]any{"client": "nope", "fun": "key.list_all"}), false},
		{"joe cmd.run", "POST", "/", "joe", "", low(map[string]any{"client": "local", "tgt": "m1", "fun": "cmd.run", "arg": "id"}), false},
		{"joe runner", "POST", "/", "joe", "", low(map[string]any{"client": "runner", "fun": "jobs.list_jobs"}), false},
		{"joe wheel", "POST", "/", "joe", "", low(map[string]any{"client": "wheel", "fun": "key.list_all"}), false},
		{"joe test.ping", "POST", "/", "joe", "", low(map[string]any{"client": "local", "tgt": "m1", "fun": "test.ping"}), true},
		{"form", "POST", "/", "fred", "application/x-www-form-urlencoded", "client=local&tgt=m1&fun=test.echo&arg=hi", true},
		{"minions m1", "GET", "/minions/m1", "fred", "", nil, true},
		{"minions post", "POST", "/minions", "fred", "", low(map[string]any{"tgt": "m1", "fun": "test.ping"}), true},
		{"hook", "POST", "/hook/a/b", "fred", "", map[string]any{"x": 1}, true},
		{"hook no token", "POST", "/hook/a/b", "", "", map[string]any{"x": 1}, false},
		{"yaml body", "POST", "/", "fred", "application/x-yaml", "- client: local\n  tgt: m1\n  fun: test.echo\n  arg: [yo]\n", true},
		{"lowstate not a list", "POST", "/", "fred", "application/json", "\"x\"", false},
		{"no content type", "POST", "/", "fred", "", "\"x\"", false},
		{"unknown content type", "POST", "/", "fred", "application/xml", "<x/>", false},
		{"bad json", "POST", "/", "fred", "application/json", "[{", false},
		{"text/plain json", "POST", "/", "fred", "text/plain", `[{"client": "local", "tgt": "m1", "fun": "test.echo", "arg": "t"}]`, true},
		{"jobs", "GET", "/jobs", "fred", "", nil, false},
		{"stats no token", "GET", "/stats", "", "", nil, false},
		{"root", "GET", "/", "", "", nil, true},
		{"keys", "GET", "/keys", "fred", "", nil, true},
		{"keys m1", "GET", "/keys/m1", "fred", "", nil, true},
		{"keys no token", "GET", "/keys", "", "", nil, false},
		{"logout", "POST", "/logout", "fred", "", nil, true},
	}
	for _, r := range reqs {
		var codes [2]int
		var bodies [2]any
		var raw [2][]byte
		for i, e := range []*apiEnv{salt, g} {
			tok := ""
			if r.user != "" {
				tok = toks[e][r.user]
			}
			code, _, b := e.do(r.method, r.path, tok, r.ctype, r.body)
			codes[i], raw[i] = code, b
			var v any
			if json.Unmarshal(b, &v) == nil {
				bodies[i] = normalize(v)
			}
		}
		if codes[0] != codes[1] {
			t.Errorf("%s: status salt-api %d, gsalt-api %d\nsalt-api: %s\ngsalt-api: %s", r.name, codes[0], codes[1], raw[0], raw[1])
			continue
		}
		if r.bodyCompare && !reflect.DeepEqual(bodies[0], bodies[1]) {
			t.Errorf("%s: bodies differ\nsalt-api:  %s\ngsalt-api: %s", r.name, raw[0], raw[1])
		}
	}
}

// TestGsaltAPIWithRealSaltMaster: gsalt-api in front of Salt 3006's
// salt-master (with a gsalt minion): /login with eauth, local test.ping
// and cmd.run, runner jobs.list_jobs, wheel key.list_all, an ACL refusal
// and /events, checked by the real master's own eauth.
func TestGsaltAPIWithRealSaltMaster(t *testing.T) {
	src := saltpeer.Require(t)
	dir, err := os.MkdirTemp("", "gapis")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	etc := filepath.Join(dir, "etc")
	os.MkdirAll(etc, 0o755)
	ret, pub := proc.FreePort(t), proc.FreePort(t)
	conf := fmt.Sprintf("interface: 127.0.0.1\nipv6: False\npublish_port: %[2]d\nret_port: %[3]d\nroot_dir: %[1]s\npki_dir: %[1]s/pki\n"+
		"cachedir: %[1]s/cache\nsock_dir: %[1]s/sock\nlog_file: %[1]s/master.log\nuser: root\n"+
		"file_roots: {base: [%[1]s/srv/salt]}\nlog_level_logfile: info\n", dir, pub, ret) + apiConf
	if err := os.WriteFile(filepath.Join(etc, "master"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	p := proc.Start(t, "salt-master", saltpeer.Command(context.Background(), src, "salt-master", "-c", etc, "-l", "warning"),
		proc.Options{Log: filepath.Join(dir, "salt-master.out"), Grace: 15 * time.Second})
	p.WaitFor(t, 90*time.Second, "listening", func() bool {
		if _, err := os.Stat(filepath.Join(dir, "sock", "master_event_pub.ipc")); err != nil {
			return false
		}
		return proc.Dials(fmt.Sprintf("127.0.0.1:%d", ret))
	})
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := os.ReadFile(filepath.Join(dir, "master.log"))
			t.Logf("salt-master log:\n%s", out)
		}
	})
	startMinion(t, ret, dir, "m1")

	cfg, err := config.LoadMaster(etc)
	if err != nil {
		t.Fatal(err)
	}
	o, err := netapi.OptionsFrom(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	actx, acancel := context.WithCancel(context.Background())
	defer acancel()
	go netapi.New(cfg, o, quiet(), quiet()).Serve(actx, ln)
	e := &apiEnv{t: t, base: "http://" + ln.Addr().String(), hc: &http.Client{Timeout: 90 * time.Second}}

	tok := e.login("fred", "auto", "x")
	code, _, b := e.do("POST", "/", tok, "", []any{map[string]any{"client": "local", "tgt": "m1", "fun": "test.ping"}})
	if code != 200 || fmt.Sprint(ret0(t, b)) != "map[m1:true]" {
		t.Fatalf("local test.ping: %d %s", code, b)
	}
	code, _, b = e.do("POST", "/", tok, "", []any{map[string]any{"client": "local", "tgt": "m1", "fun": "cmd.run", "arg": "echo hello"}})
	if code != 200 || fmt.Sprint(ret0(t, b)) != "map[m1:hello]" {
		t.Fatalf("local cmd.run: %d %s", code, b)
	}
	code, _, b = e.do("POST", "/", tok, "", []any{map[string]any{"client": "runner", "fun": "jobs.list_jobs"}})
	if _, ok := ret0(t, b).(map[string]any); code != 200 || !ok {
		t.Fatalf("runner jobs.list_jobs: %d %s", code, b)
	}
	code, _, b = e.do("POST", "/", tok, "", []any{map[string]any{"client": "wheel", "fun": "key.list_all"}})
	if code != 200 || !strings.Contains(string(b), `"minions":["m1"]`) {
		t.Fatalf("wheel key.list_all: %d %s", code, b)
	}
	joe := e.login("joe", "auto", "x")
	if code, _, b := e.do("POST", "/", joe, "", []any{map[string]any{"client": "local", "tgt": "m1", "fun": "cmd.run", "arg": "id"}}); code != 401 {
		t.Fatalf("joe cmd.run: %d %s", code, b)
	}
	ectx, ecancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer ecancel()
	req, _ := http.NewRequestWithContext(ectx, "GET", e.base+"/events?token="+tok, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("events: %v %v", err, resp)
	}
	resp.Body.Close()
}
