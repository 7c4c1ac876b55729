package keycli_test

import (
	"bytes"
	"context"
	"time"

	"github.com/gsalt/gsalt/event"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/cli/keycli"
	"github.com/gsalt/gsalt/wire/crypt"
)

func setup(t *testing.T) (confDir, pki string) {
	t.Helper()
	root := t.TempDir()
	confDir = filepath.Join(root, "etc")
	pki = filepath.Join(root, "pki")
	if err := os.MkdirAll(confDir, 0o755); err != nil {
		t.Fatal(err)
	}
	conf := "root_dir: " + root + "\npki_dir: " + pki + "\ncachedir: " + filepath.Join(root, "cache") + "\nsock_dir: " + filepath.Join(root, "sock") + "\n"
	if err := os.WriteFile(filepath.Join(confDir, "master"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return confDir, pki
}

func run(t *testing.T, o keycli.Options, stdin string) string {
	t.Helper()
	var out, errb bytes.Buffer
	o.Stdout, o.Stderr, o.Stdin = &out, &errb, strings.NewReader(stdin)
	code, err := keycli.Run(o)
	if err != nil || code != 0 {
		t.Fatalf("Run: code %d err %v stderr %s", code, err, errb.String())
	}
	return out.String()
}

func TestKeyLifecycle(t *testing.T) {
	conf, pki := setup(t)
	// The first run creates the pki layout and the master key pair.
	if got := run(t, keycli.Options{ConfigDir: conf, ListAll: true}, ""); got != "Accepted Keys:\nDenied Keys:\nUnaccepted Keys:\nRejected Keys:\n" {
		t.Fatalf("empty listing:\n%q", got)
	}
	if _, err := crypt.LoadPrivateKey(filepath.Join(pki, "master.pem")); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"web1", "web2", "db1"} {
		k, _ := crypt.GenerateKey(2048)
		if err := os.WriteFile(filepath.Join(pki, "minions_pre", id), crypt.MarshalPublicKeyPEM(&k.PublicKey), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := run(t, keycli.Options{ConfigDir: conf, Accept: "web*"}, "\n")
	want := "The following keys are going to be accepted:\nUnaccepted Keys:\nweb1\nweb2\nProceed? [n/Y] Key for minion web1 accepted.\nKey for minion web2 accepted.\n"
	if got != want {
		t.Fatalf("accept:\n%q\nwant\n%q", got, want)
	}
	// Declining the prompt changes nothing.
	run(t, keycli.Options{ConfigDir: conf, Delete: "db1"}, "n\n")
	if _, err := os.Stat(filepath.Join(pki, "minions_pre", "db1")); err != nil {
		t.Fatal("declined delete removed the key")
	}
	run(t, keycli.Options{ConfigDir: conf, RejectAll: true, Yes: true}, "")
	got = run(t, keycli.Options{ConfigDir: conf, ListAll: true, Out: "json"}, "")
	want = "{\n    \"minions\": [\n        \"web1\",\n        \"web2\"\n    ],\n    \"minions_pre\": [],\n    \"minions_rejected\": [\n        \"db1\"\n    ],\n    \"minions_denied\": []\n}\n"
	if got != want {
		t.Fatalf("json listing:\n%s\nwant\n%s", got, want)
	}
	if got := run(t, keycli.Options{ConfigDir: conf, Accept: "nope"}, ""); got != "The key glob 'nope' does not match any unaccepted keys.\n" {
		t.Fatalf("no match: %q", got)
	}
	fp := run(t, keycli.Options{ConfigDir: conf, Finger: "web1"}, "")
	if !strings.HasPrefix(fp, "Accepted Keys:\nweb1:  ") || strings.Count(fp, ":") != 2+31 {
		t.Fatalf("finger: %q", fp)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(pki), "cache", ".dfn")); err != nil {
		t.Fatalf("reject did not request AES rotation: %v", err)
	}
}

func TestGenKeys(t *testing.T) {
	dir := t.TempDir()
	got := run(t, keycli.Options{GenKeys: "node", GenKeysDir: dir}, "")
	fp, err := crypt.FingerprintFile(filepath.Join(dir, "node.pub"), "sha256")
	if err != nil {
		t.Fatal(err)
	}
	if got != "return:\n    "+fp+"\n" {
		t.Fatalf("gen-keys output %q", got)
	}
}

// TestKeyEventsReachMasterBus: like salt-key, gsalt-key fires salt/key
// events on a running master's bus (through master_event_pull.ipc).
func TestKeyEventsReachMasterBus(t *testing.T) {
	conf, pki := setup(t)
	sock := filepath.Join(filepath.Dir(pki), "sock")
	// Short socket paths: put the sockets where the config says, if short enough.
	if len(sock) > 90 {
		t.Skip("temp path too long for a unix socket")
	}
	if err := os.MkdirAll(sock, 0o700); err != nil {
		t.Fatal(err)
	}
	bus := event.New(event.Options{})
	defer bus.Close()
	srv, err := event.ServeIPC(context.Background(), bus, filepath.Join(sock, event.MasterPubSocket), filepath.Join(sock, event.MasterPullSocket))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	sub := bus.Subscribe(event.Prefix("salt/key"), 10)
	run(t, keycli.Options{ConfigDir: conf, ListAll: true}, "")
	k, _ := crypt.GenerateKey(2048)
	if err := os.WriteFile(filepath.Join(pki, "minions_pre", "m1"), crypt.MarshalPublicKeyPEM(&k.PublicKey), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, keycli.Options{ConfigDir: conf, Accept: "m1", Yes: true}, "")
	select {
	case ev := <-sub.C():
		if ev.Data.Str("act") != "accept" || ev.Data.Str("id") != "m1" || !ev.Data.Bool("result") {
			t.Fatalf("event %v", ev.Data.Keys())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no salt/key event on the master bus")
	}
}
