package netapi_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/saltpeer"
)

// freePort returns a loopback port free at the time of the call.
func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestRealSaltAPIWithGsaltMaster: Salt 3006's own salt-api
// (rest_cherrypy) in front of a gsalt master: /login with eauth, local
// test.ping and cmd.run, runner jobs.list_jobs, wheel key.list_all, an ACL
// refusal and /events.
func TestRealSaltAPIWithGsaltMaster(t *testing.T) {
	src := saltpeer.Require(t)
	cfg, _, dir := startMasterMinion(t)
	port := freePort(t)
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
	ctx, cancel := context.WithCancel(context.Background())
	cmd := saltpeer.Command(ctx, src, "salt-api", "-c", apiEtc, "-l", "error")
	logf, err := os.Create(filepath.Join(dir, "salt-api.out"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	// salt-api forks its netapi process: run it in its own process group
	// and stop the whole group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	})
	e := &apiEnv{t: t, base: fmt.Sprintf("http://127.0.0.1:%d", port), hc: &http.Client{Timeout: 60 * time.Second}}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := e.hc.Get(e.base + "/")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(filepath.Join(dir, "salt-api.out"))
			t.Fatalf("salt-api did not come up: %v\n%s", err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
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
