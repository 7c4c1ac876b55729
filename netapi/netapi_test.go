package netapi_test

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/masterd"
	gminion "github.com/gsalt/gsalt/minion"
	"github.com/gsalt/gsalt/wire/payload"
)

const vectorsDir = "../testdata/vectors"

func quiet() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError}))
}

func copyFile(t testing.TB, src, dst string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, mode); err != nil {
		t.Fatal(err)
	}
}

const apiConf = `auto_accept: True
external_auth:
  auto:
    fred:
      - m1:
        - test.*
        - cmd.run
        - grains.items
      - '@runner'
      - '@wheel'
    joe:
      - test.*
    ann:
      - test.*
      - sys.list_functions
  sharedsecret:
    fred:
      - .*
sharedsecret: s3cret
netapi_enable_clients: [local, local_async, local_subset, runner, runner_async, wheel]
rest_cherrypy:
  port: 0
  disable_ssl: True
  max_request_body_size: 4096
`

type apiEnv struct {
	t    *testing.T
	base string
	hc   *http.Client
}

// startAPI runs a gsalt master, an in-process gsalt minion m1 and
// gsalt-api in front of the master, all on loopback sockets.
func startAPI(t *testing.T) *apiEnv { return startAPIWith(t, nil) }

// startMasterMinion runs a gsalt master with apiConf and an in-process
// gsalt minion m1; cfg's ret_port is the daemon's real one.
func startMasterMinion(t *testing.T) (*config.Master, *masterd.Daemon, string) {
	dir, err := os.MkdirTemp("", "gapi")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	etc := filepath.Join(dir, "etc")
	os.MkdirAll(etc, 0o755)
	text := fmt.Sprintf("interface: 127.0.0.1\npublish_port: 0\nret_port: 0\nroot_dir: %[1]s\npki_dir: %[1]s/pki\n"+
		"cachedir: %[1]s/cache\nsock_dir: %[1]s/sock\nlog_file: %[1]s/master.log\nuser: root\n"+
		"file_roots: {base: [%[1]s/srv/salt]}\n", dir) + apiConf
	if err := os.WriteFile(filepath.Join(etc, "master"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadMaster(etc)
	if err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(vectorsDir, "pki/master/master.pem"), filepath.Join(cfg.PKIDir, "master.pem"), 0o400)
	copyFile(t, filepath.Join(vectorsDir, "pki/master/master.pub"), filepath.Join(cfg.PKIDir, "master.pub"), 0o644)
	d, err := masterd.Start(context.Background(), cfg, masterd.Options{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	startMinion(t, d.ReqAddr().(*net.TCPAddr).Port, dir, "m1")

	// The API reads the same config, with the daemon's real ret port.
	cfg.RetPort = d.ReqAddr().(*net.TCPAddr).Port
	return cfg, d, dir
}

func startMinion(t testing.TB, retPort int, dir, id string) {
	t.Helper()
	mdir := filepath.Join(dir, id)
	copyFile(t, filepath.Join(vectorsDir, "pki/minion1/minion.pem"), filepath.Join(mdir, "pki", "minion.pem"), 0o400)
	copyFile(t, filepath.Join(vectorsDir, "pki/minion1/minion.pub"), filepath.Join(mdir, "pki", "minion.pub"), 0o644)
	conf := fmt.Sprintf("id: %s\nroot_dir: %s\npki_dir: %[2]s/pki\ncachedir: %[2]s/cache\nsock_dir: %[2]s/sock\n"+
		"master: 127.0.0.1\nmaster_port: %d\nacceptance_wait_time: 0.2\nenable_fqdns_grains: False\nmine_interval: 0\n",
		id, mdir, retPort)
	if err := os.WriteFile(filepath.Join(mdir, "minion"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadMinion(mdir)
	if err != nil {
		t.Fatal(err)
	}
	mn, err := gminion.New(gminion.Options{Config: cfg, Logger: quiet(), Grains: payload.NewMap("kernel", "Linux", "os", "Debian", "id", id)})
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
	case <-time.After(120 * time.Second): // a cold Salt master's workers take long here
		t.Fatalf("minion %s not ready (last auth error: %v)", id, mn.LastAuthError())
	}
}

// do sends a request; body may be a string (sent as is) or a value sent
// as JSON.
func (e *apiEnv) do(method, path, token, ctype string, body any, hdr ...string) (int, http.Header, []byte) {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = strings.NewReader(string(j))
		if ctype == "" {
			ctype = "application/json"
		}
	}
	req, _ := http.NewRequest(method, e.base+path, rd)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	req.Header.Set("Accept", "application/json")
	if token != "" {
		req.Header.Set("X-Auth-Token", token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := e.hc.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

func (e *apiEnv) login(user, eauth, pw string) string {
	e.t.Helper()
	code, h, b := e.do("POST", "/login", "", "", map[string]any{"username": user, "password": pw, "eauth": eauth})
	if code != 200 {
		e.t.Fatalf("login %s: %d %s", user, code, b)
	}
	var r struct {
		Return []map[string]any `json:"return"`
	}
	if err := json.Unmarshal(b, &r); err != nil || len(r.Return) != 1 {
		e.t.Fatalf("login body %s", b)
	}
	tok, _ := r.Return[0]["token"].(string)
	if tok == "" || h.Get("X-Auth-Token") != tok || r.Return[0]["user"] != user || r.Return[0]["eauth"] != eauth {
		e.t.Fatalf("login answer %s (header %q)", b, h.Get("X-Auth-Token"))
	}
	return tok
}

func ret0(t *testing.T, b []byte) any {
	t.Helper()
	var r struct {
		Return []any `json:"return"`
	}
	if err := json.Unmarshal(b, &r); err != nil || len(r.Return) == 0 {
		t.Fatalf("body %s", b)
	}
	return r.Return[0]
}

func TestAPIEndToEnd(t *testing.T) {
	e := startAPI(t)

	if code, _, _ := e.do("GET", "/", "", "", nil); code != 200 {
		t.Fatalf("GET / = %d", code)
	}
	lowPing := []any{map[string]any{"client": "local", "tgt": "m1", "fun": "test.ping"}}
	if code, _, _ := e.do("POST", "/", "", "", lowPing); code != 401 {
		t.Fatalf("POST / without a token = %d", code)
	}
	if code, _, _ := e.do("POST", "/", "abcdef", "", lowPing); code != 401 {
		t.Fatalf("POST / with an unknown token = %d", code)
	}
	if code, _, _ := e.do("POST", "/login", "", "", map[string]any{"username": "fred", "password": "bad", "eauth": "sharedsecret"}); code != 401 {
		t.Fatalf("login with a wrong password = %d", code)
	}
	tok := e.login("fred", "auto", "x")

	code, _, b := e.do("POST", "/", tok, "", lowPing)
	if got := ret0(t, b); code != 200 || fmt.Sprint(got) != "map[m1:true]" {
		t.Fatalf("local test.ping: %d %s", code, b)
	}
	code, _, b = e.do("POST", "/", tok, "", []any{map[string]any{"client": "local", "tgt": "m1", "fun": "cmd.run", "arg": "echo hello"}})
	if got := ret0(t, b); code != 200 || fmt.Sprint(got) != "map[m1:hello]" {
		t.Fatalf("local cmd.run: %d %s", code, b)
	}
	// Form-encoded lowstate, as curl -d sends it.
	form := url.Values{"client": {"local"}, "tgt": {"m1"}, "fun": {"test.arg"}, "arg": {"a"}}.Encode()
	code, _, b = e.do("POST", "/", tok, "application/x-www-form-urlencoded", form)
	if code != 200 || !strings.Contains(string(b), `"args":["a"]`) {
		t.Fatalf("form local test.arg: %d %s", code, b)
	}
	code, _, b = e.do("POST", "/", tok, "", []any{map[string]any{"client": "local_async", "tgt": "m1", "fun": "test.ping"}})
	async, _ := ret0(t, b).(map[string]any)
	jid, _ := async["jid"].(string)
	if code != 200 || len(jid) != 20 || fmt.Sprint(async["minions"]) != "[m1]" {
		t.Fatalf("local_async: %d %s", code, b)
	}
	code, _, b = e.do("POST", "/", tok, "", []any{map[string]any{"client": "runner", "fun": "jobs.list_jobs"}})
	if jobs, ok := ret0(t, b).(map[string]any); code != 200 || !ok || jobs[jid] == nil {
		t.Fatalf("runner jobs.list_jobs: %d %s", code, b)
	}
	code, _, b = e.do("POST", "/", tok, "", []any{map[string]any{"client": "wheel", "fun": "key.list_all"}})
	if code != 200 || !strings.Contains(string(b), `"minions":["m1"]`) || !strings.Contains(string(b), `"user":"fred"`) {
		t.Fatalf("wheel key.list_all: %d %s", code, b)
	}
	code, _, b = e.do("GET", "/minions/m1", tok, "", nil)
	if code != 200 || !strings.Contains(string(b), `"kernel":"Linux"`) {
		t.Fatalf("GET /minions/m1: %d %s", code, b)
	}
	// rest_cherrypy's /jobs/<jid>: info keeps the job's Result, return
	// has each minion's bare return (polled until m1's return is stored).
	var jr struct {
		Info []struct {
			Result map[string]map[string]any `json:"Result"`
		} `json:"info"`
		Return []map[string]any `json:"return"`
	}
	testutil.Poll(30*time.Second, func() bool {
		code, _, b = e.do("GET", "/jobs/"+jid, tok, "", nil)
		if code != 200 || json.Unmarshal(b, &jr) != nil || len(jr.Info) != 1 || len(jr.Return) != 1 {
			t.Fatalf("GET /jobs/jid: %d %s", code, b)
		}
		return jr.Info[0].Result["m1"] != nil
	})
	if jr.Info[0].Result["m1"]["return"] != true || jr.Return[0]["m1"] != true {
		t.Fatalf("GET /jobs/jid: %s", b)
	}
	code, _, b = e.do("POST", "/", tok, "", []any{map[string]any{"client": "wheel_async", "fun": "key.list_all"}})
	if code != 400 || !strings.Contains(string(b), "Client disabled: &#39;wheel_async&#39;") && !strings.Contains(string(b), "Client disabled") {
		t.Fatalf("disabled client: %d %s", code, b)
	}

	// ACLs: joe may only run test.* and nothing on the master.
	joe := e.login("joe", "auto", "x")
	for _, low := range []map[string]any{
		{"client": "local", "tgt": "m1", "fun": "cmd.run", "arg": []any{"id"}},
		{"client": "runner", "fun": "jobs.list_jobs"},
		{"client": "wheel", "fun": "key.delete", "match": "m1"},
	} {
		if code, _, b := e.do("POST", "/", joe, "", []any{low}); code != 401 {
			t.Errorf("joe %v: %d %s", low, code, b)
		}
	}
	_, _, b = e.do("POST", "/", tok, "", []any{map[string]any{"client": "wheel", "fun": "key.list_all"}})
	if !strings.Contains(string(b), `"minions":["m1"]`) {
		t.Fatalf("m1's key was deleted by a refused request: %s", b)
	}
	// /run carries the credentials in the chunk.
	code, _, b = e.do("POST", "/run", "", "", []any{map[string]any{"client": "local", "tgt": "m1", "fun": "test.ping",
		"eauth": "sharedsecret", "username": "fred", "password": "s3cret"}})
	if code != 200 || fmt.Sprint(ret0(t, b)) != "map[m1:true]" {
		t.Fatalf("/run: %d %s", code, b)
	}
	code, _, _ = e.do("POST", "/run", "", "", []any{map[string]any{"client": "local", "tgt": "m1", "fun": "test.ping",
		"eauth": "sharedsecret", "username": "fred", "password": "wrong"}})
	if code != 401 {
		t.Fatalf("/run with a wrong password: %d", code)
	}

	// Bounded bodies, YAML answers, no CORS headers by default.
	code, _, _ = e.do("POST", "/", tok, "application/json", `[{"client": "local", "tgt": "m1", "fun": "test.arg", "arg": ["`+strings.Repeat("x", 5000)+`"]}]`)
	if code != 413 {
		t.Fatalf("oversized body: %d", code)
	}
	code, h, b := e.do("POST", "/", tok, "", lowPing, "Accept", "application/x-yaml", "Origin", "http://evil.example")
	if code != 200 || h.Get("Content-Type") != "application/x-yaml" || !strings.Contains(string(b), "m1: true") || h.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("yaml: %d %v %s", code, h, b)
	}

	// /events streams the bus; /hook fires salt/netapi/hook/<path>.
	if code, _, _ := e.do("POST", "/hook/my/app", "", "", map[string]any{"a": 1}); code != 401 {
		t.Fatalf("hook without a token: %d", code)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.base+"/events?token="+tok, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("events: %v %v", err, resp)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Type") != "text/event-stream;charset=utf-8" {
		t.Fatalf("events content type %q", resp.Header.Get("Content-Type"))
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "data: ") && strings.Contains(sc.Text(), `"tag":"salt/netapi/hook/my/app"`) {
				found <- sc.Text()
				return
			}
		}
	}()
	deadline := time.Now().Add(20 * time.Second)
	var line string
	for line == "" && time.Now().Before(deadline) {
		if code, _, b := e.do("POST", "/hook/my/app", tok, "", map[string]any{"a": 1}); code != 200 || !strings.Contains(string(b), `"success":true`) {
			t.Fatalf("hook: %d %s", code, b)
		}
		select {
		case line = <-found:
		case <-time.After(500 * time.Millisecond):
		}
	}
	if line == "" || !strings.Contains(line, `"post":{"a":1}`) || !strings.Contains(line, `"headers":{`) {
		t.Fatalf("hook event on /events: %q", line)
	}
	// /keys: list, then generate and pre-accept a key pair.
	code, _, b = e.do("GET", "/keys", tok, "", nil)
	if code != 200 || !strings.Contains(string(b), `"minions":["m1"]`) {
		t.Fatalf("GET /keys: %d %s", code, b)
	}
	code, h, b = e.do("POST", "/keys", "", "application/x-www-form-urlencoded",
		url.Values{"mid": {"newbie"}, "eauth": {"auto"}, "username": {"fred"}, "password": {"x"}}.Encode())
	if code != 200 || h.Get("Content-Type") != "application/x-tar" || !strings.Contains(h.Get("Content-Disposition"), "saltkeys-newbie.tar") {
		t.Fatalf("POST /keys: %d %v %q", code, h, b)
	}
	names := map[string]string{}
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		hdr, err := tr.Next()
		if err != nil {
			break
		}
		data, _ := io.ReadAll(tr)
		names[hdr.Name] = string(data)
	}
	if !strings.Contains(names["minion.pub"], "PUBLIC KEY") || !strings.Contains(names["minion.pem"], "PRIVATE KEY") {
		t.Fatalf("key tarball: %v", names)
	}
	code, _, b = e.do("GET", "/keys", tok, "", nil)
	if !strings.Contains(string(b), `"newbie"`) {
		t.Fatalf("generated key not accepted: %d %s", code, b)
	}
	if code, _, _ := e.do("POST", "/keys", "", "application/x-www-form-urlencoded", url.Values{"mid": {"evil"}, "eauth": {"auto"}, "username": {"joe"}, "password": {"x"}}.Encode()); code != 401 {
		t.Fatalf("POST /keys as joe: %d", code)
	}
	if code, _, _ := e.do("POST", "/logout", tok, "", nil); code != 200 {
		t.Fatalf("logout: %d", code)
	}
	if code, _, _ := e.do("GET", "/stats", "", "", nil); code != 401 {
		t.Fatalf("stats without a token: %d", code)
	}
}
