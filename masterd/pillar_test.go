package masterd_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gsalt/gsalt/master/runners"
	"github.com/gsalt/gsalt/masterd"
	"github.com/gsalt/gsalt/wire/message"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestDaemonCompilesPillar: gsalt-master answers a minion's _pillar over
// real sockets with the pillar compiled from pillar_roots for the grains
// the minion sent (encrypted for that minion with send_private), keeps it
// in the pillar cache, and the pillar runners show the same data from
// the minion data cache.
func TestDaemonCompilesPillar(t *testing.T) {
	dir := shortDir(t)
	roots := filepath.Join(dir, "pillar")
	for name, text := range map[string]string{
		"top.sls":    "base:\n  '*':\n    - common\n  'os:Debian':\n    - match: grain\n    - debian\n  'other':\n    - other\n",
		"common.sls": "common: true\nlist: [1, 2]\n",
		"debian.sls": "include:\n  - .extra\nos_family: {{ grains['os'] }}\nid: {{ grains['id'] }}\n",
		"extra.sls":  "extra: true\n",
	} {
		writeFile(t, filepath.Join(roots, name), text)
	}
	cfg := writeConfig(t, dir, "pillar_roots: {base: ["+roots+"]}\npillar_cache: True\n")
	copyFile(t, filepath.Join(vectorsDir, "pki/master/master.pem"), filepath.Join(cfg.PKIDir, "master.pem"), 0o400)
	copyFile(t, filepath.Join(vectorsDir, "pki/master/master.pub"), filepath.Join(cfg.PKIDir, "master.pub"), 0o644)
	reg := runners.Default()
	for _, rn := range runners.PillarRunners() {
		if err := reg.Register(rn); err != nil && !errors.Is(err, runners.ErrDuplicate) {
			t.Fatal(err)
		}
	}
	d, err := masterd.Start(context.Background(), cfg, masterd.Options{Logger: logger(), Runners: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })

	mn := newMinion(t, d, "minion1", "m1")
	if st := mn.auth(); st != message.AuthPending {
		t.Fatalf("first auth %v", st)
	}
	if _, err := d.Keys().Accept("m1"); err != nil {
		t.Fatal(err)
	}
	if st := mn.auth(); st != message.AuthAccepted {
		t.Fatalf("auth %v", st)
	}
	load := payload.NewMap("cmd", "_pillar", "id", "m1", "grains", payload.NewMap("os", "Debian"),
		"saltenv", nil, "pillarenv", nil, "pillar_override", payload.NewMap("list", []any{"o"}),
		"extra_minion_data", payload.NewMap(), "ver", "2")
	frame, nonce, err := message.EncodeAESRequest(mn.sess, load)
	if err != nil {
		t.Fatal(err)
	}
	got, err := message.OpenPrivateReply(mn.priv, mn.masterPub(), mn.request(frame), nonce, payload.DefaultLimits)
	if err != nil {
		t.Fatalf("_pillar reply: %v", err)
	}
	// Salt starts from pillar_override, so its keys come first; the
	// master sets grains["id"] to the minion id before compiling.
	const want = `{"list":["o"],"common":true,"extra":true,"os_family":"Debian","id":"m1"}`
	if s := jsonOf(t, got); s != want {
		t.Fatalf("pillar\n got %s\nwant %s", s, want)
	}
	if _, err := os.Stat(filepath.Join(cfg.CacheDir, "pillar_cache", "m1")); err != nil {
		t.Fatalf("pillar cache file: %v", err)
	}

	ctx := context.Background()
	ret := d.Master().RunRunner(ctx, "", "pillar.show_pillar", []any{"m1"}, nil, "root")
	if s := jsonOf(t, ret.Map("return")); s != `{"common":true,"list":[1,2],"extra":true,"os_family":"Debian","id":"m1"}` || !ret.Bool("success") {
		t.Fatalf("show_pillar: %s", jsonOf(t, ret))
	}
	// An unknown minion gets {"fqdn": id} as grains: only the glob matches.
	ret = d.Master().RunRunner(ctx, "", "pillar.show_pillar", []any{"nosuch"}, nil, "root")
	if s := jsonOf(t, ret.Map("return")); s != `{"common":true,"list":[1,2]}` {
		t.Fatalf("show_pillar nosuch: %s", jsonOf(t, ret))
	}
	ret = d.Master().RunRunner(ctx, "", "pillar.show_top", []any{"m1"}, nil, "root")
	if s := jsonOf(t, ret.Map("return")); s != `{"base":{"*":["common"],"os:Debian":[{"match":"grain"},"debian"],"other":["other"]}}` {
		t.Fatalf("show_top: %s", jsonOf(t, ret))
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
