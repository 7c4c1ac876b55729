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
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/cli/runcli"
	"github.com/gsalt/gsalt/cli/saltcli"
	"github.com/gsalt/gsalt/internal/saltpeer"
)

// eauthClientScript drives a gsalt-master with Salt 3006's own client
// classes: mk_token/get_token through salt.auth.Resolver, publishes
// through LocalClient.run_job with eauth credentials and a token, and
// runner/wheel calls through RunnerClient/WheelClient master_call.
const eauthClientScript = `
import json, sys
import salt.auth, salt.client, salt.config, salt.runner, salt.wheel
opts = salt.config.client_config(sys.argv[1])
out = {}
r = salt.auth.Resolver(opts)
tok = r.mk_token({"eauth": "auto", "username": "fred", "password": "x"})
out["mk_token_name"] = tok.get("name")
out["mk_token_len"] = len(tok.get("token", ""))
out["get_token_name"] = r.get_token(tok["token"]).get("name")
out["mk_token_bad"] = r.mk_token({"eauth": "sharedsecret", "username": "fred", "password": "nope"})
lc = salt.client.LocalClient(mopts=opts)
pub = lc.run_job("m1", "test.ping", eauth="auto", username="fred", password="x")
out["pub_eauth_minions"] = pub.get("minions")
pub = lc.run_job("m1", "test.ping", token=tok["token"])
out["pub_token_minions"] = pub.get("minions")
for name, kw in [("pub_outside_fun", dict(fun="cmd.run", arg=["ls"])),
                 ("pub_wrong_password", dict(fun="test.ping", password="no", eauth="sharedsecret"))]:
    try:
        a = dict(eauth="auto", username="fred", password="x")
        a.update(kw)
        fun = a.pop("fun"); arg = a.pop("arg", [])
        lc.run_job("m1", fun, arg, **a)
        out[name] = "published"
    except Exception as e:
        out[name] = "%s: %s" % (type(e).__name__, e)
rc = salt.runner.RunnerClient(opts)
try:
    ret = rc.cmd_async({"fun": "manage.present", "eauth": "auto", "username": "fred", "password": "x"})
    out["runner"] = sorted(ret)
except Exception as e:
    out["runner"] = "%s: %s" % (type(e).__name__, e)
try:
    rc.cmd_async({"fun": "manage.present", "eauth": "auto", "username": "joe", "password": "x"})
    out["runner_refused"] = "ran"
except Exception as e:
    out["runner_refused"] = "%s: %s" % (type(e).__name__, e)
wc = salt.wheel.WheelClient(opts)
ret = wc.cmd_sync({"fun": "key.list_all", "token": tok["token"]})
out["wheel_user"] = ret.get("data", {}).get("user")
out["wheel_minions"] = ret.get("data", {}).get("return", {}).get("minions")
print(json.dumps(out))
`

// TestEauthWithSaltClients: Salt 3006's Python client classes get tokens
// from a gsalt-master, publish with eauth and tokens, and are refused
// exactly as Salt refuses them.
func TestEauthWithSaltClients(t *testing.T) {
	src := saltpeer.Require(t)
	dir := shortDir(t)
	d, cfg := startMaster(t, dir, "external_auth:\n  auto:\n    fred:\n      - m1:\n        - test.*\n      - '@runner'\n      - '@wheel'\n    joe:\n      - test.*\n"+
		"  sharedsecret:\n    fred:\n      - .*\nsharedsecret: s3cret\n")
	mn := newMinion(t, d, "minion1", "m1")
	mn.auth()
	if _, err := d.Keys().Accept("m1"); err != nil {
		t.Fatal(err)
	}
	// A client config naming the daemon's real request port.
	cdir := filepath.Join(dir, "client")
	if err := os.MkdirAll(cdir, 0o755); err != nil {
		t.Fatal(err)
	}
	ccfg := fmt.Sprintf("interface: 127.0.0.1\nret_port: %d\nroot_dir: %s\ncachedir: %s\nsock_dir: %s\npki_dir: %s\nuser: root\n",
		d.ReqAddr().(*net.TCPAddr).Port, dir, cfg.CacheDir, cfg.SockDir, cfg.PKIDir)
	if err := os.WriteFile(filepath.Join(cdir, "master"), []byte(ccfg), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := saltpeer.PythonCommand(ctx, src, eauthClientScript, filepath.Join(cdir, "master"))
	outB, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("salt client: %v\n%s\n%s", err, outB, stderr)
	}
	var got map[string]any
	if err := json.Unmarshal(outB, &got); err != nil {
		t.Fatalf("salt client output %q: %v", outB, err)
	}
	want := map[string]any{
		"mk_token_name":      "fred",
		"mk_token_len":       float64(64),
		"get_token_name":     "fred",
		"mk_token_bad":       "",
		"pub_eauth_minions":  []any{"m1"},
		"pub_token_minions":  []any{"m1"},
		"pub_outside_fun":    "AuthorizationError: Authorization error occurred.",
		"pub_wrong_password": "AuthenticationError: Authentication error occurred.",
		"runner":             []any{"jid", "tag"},
		"runner_refused":     `EauthAuthenticationError: Authentication failure of type "eauth" occurred for user joe.`,
		"wheel_user":         "fred",
		"wheel_minions":      []any{"m1"},
	}
	for k, w := range want {
		if !reflect.DeepEqual(got[k], w) {
			t.Errorf("%s = %#v, want %#v", k, got[k], w)
		}
	}
}

// TestGsaltCLIEauth: `gsalt -a auto -T` against a gsalt master gets a
// token, saves it in ~/salt_token (mode 0600) and publishes with it; the
// next command reuses the saved token; a function outside the ACL is
// refused with Salt's text.
func TestGsaltCLIEauth(t *testing.T) {
	dir := shortDir(t)
	t.Setenv("HOME", dir)
	d, cfg := startMaster(t, dir, "external_auth:\n  auto:\n    fred:\n      - m1:\n        - test.*\n    joe:\n      - '@runner'\n")
	mn := newMinion(t, d, "minion1", "m1")
	mn.auth()
	if _, err := d.Keys().Accept("m1"); err != nil {
		t.Fatal(err)
	}
	// The CLI reads the master config with the daemon's real port.
	etc := filepath.Join(dir, "cli-etc")
	os.MkdirAll(etc, 0o755)
	conf := fmt.Sprintf("interface: 127.0.0.1\nret_port: %d\nroot_dir: %s\ncachedir: %s\nsock_dir: %s\npki_dir: %s\nuser: root\n",
		d.ReqAddr().(*net.TCPAddr).Port, dir, filepath.Join(dir, "nokey"), cfg.SockDir, cfg.PKIDir)
	if err := os.WriteFile(filepath.Join(etc, "master"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(fun string, e saltcli.EauthOptions) (int, string) {
		var out, errb bytes.Buffer
		code := saltcli.Run(context.Background(), saltcli.Options{ConfigDir: etc, Words: []string{"m1", fun}, Async: true,
			Eauth: e, Stdout: &out, Stderr: &errb, Logger: logger()})
		return code, out.String() + errb.String()
	}
	code, out := run("test.ping", saltcli.EauthOptions{Eauth: "auto", MakeToken: true, Username: "fred", Password: "x"})
	if code != 0 || !strings.Contains(out, "Executed command with job ID: ") {
		t.Fatalf("gsalt -a auto -T: %d %q", code, out)
	}
	fi, err := os.Stat(filepath.Join(dir, "salt_token"))
	if err != nil || fi.Mode().Perm() != 0o600 || fi.Size() != 64 {
		t.Fatalf("token file: %v %v", fi, err)
	}
	code, out = run("test.ping", saltcli.EauthOptions{})
	if code != 0 || !strings.Contains(out, "Executed command with job ID: ") {
		t.Fatalf("gsalt with the saved token: %d %q", code, out)
	}
	code, out = run("cmd.run", saltcli.EauthOptions{})
	if code == 0 || !strings.Contains(out, "Authorization error occurred.") {
		t.Fatalf("gsalt cmd.run outside the ACL: %d %q", code, out)
	}
	os.Remove(filepath.Join(dir, "salt_token"))
	code, out = run("test.ping", saltcli.EauthOptions{})
	if code == 0 {
		t.Fatalf("gsalt without key, token or eauth succeeded: %q", out)
	}

	// gsalt-run -a: runners need @runner.
	runRun := func(user string) (int, string) {
		var out, errb bytes.Buffer
		code := runcli.Run(context.Background(), runcli.Options{ConfigDir: etc, Words: []string{"manage.present"}, Async: true,
			Eauth: saltcli.EauthOptions{Eauth: "auto", Username: user, Password: "x"}, Stdout: &out, Stderr: &errb, Logger: logger()})
		return code, out.String() + errb.String()
	}
	if code, out := runRun("fred"); code == 0 || !strings.Contains(out, `Authentication failure of type "eauth" occurred for user fred.`) {
		t.Fatalf("gsalt-run -a auto as fred: %d %q", code, out)
	}
	if code, out := runRun("joe"); code != 0 || !strings.Contains(out, "This execution is running under tag salt/run/") {
		t.Fatalf("gsalt-run -a auto as joe: %d %q", code, out)
	}
}
