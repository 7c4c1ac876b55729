package master

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gsalt/gsalt/event"

	"github.com/gsalt/gsalt/wire/payload"
)

// TestNewRunnersThroughMaster runs the runners that reach the master
// through the optional runner environments (file server, event bus,
// target matching) with the clear runner command.
func TestNewRunnersThroughMaster(t *testing.T) {
	e := newEnv(t, "minion_data_cache: true\n")
	srv := filepath.Join(e.root, "srv", "salt")
	if err := os.MkdirAll(filepath.Join(srv, "web"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(srv, "web", "init.sls"), []byte("a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.login("minion1", "m1")
	if err := e.m.data.store("m1", payload.NewMap("os", "Debian"), payload.NewMap("role", "web")); err != nil {
		t.Fatal(err)
	}
	e.drain()
	custom := e.bus.Subscribe(event.Prefix("custom/"), 16)
	defer custom.Close()
	for _, tc := range []struct {
		fun  string
		kw   *payload.Map
		want string
	}{
		{"fileserver.envs", payload.NewMap(), `["base"]`},
		{"fileserver.file_list", payload.NewMap(), `["web/init.sls"]`},
		{"fileserver.dir_list", payload.NewMap("saltenv", "base"), `["web"]`},
		{"cache.grains", payload.NewMap("tgt", "m*"), `{"m1":{"os":"Debian"}}`},
		{"cache.pillar", payload.NewMap("tgt", "os:Debian", "tgt_type", "grain"), `{"m1":{"role":"web"}}`},
		{"event.send", payload.NewMap("tag", "custom/tag", "data", payload.NewMap("x", 1)), `true`},
		{"test.arg", payload.NewMap("arg", []any{"a"}, "kwarg", payload.NewMap("k", 2)), `{"args":["a"],"kwargs":{"k":2}}`},
	} {
		_, ret := e.runner(tc.fun, tc.kw)
		v, _ := ret.Get("return")
		if got := jsonOf(v); got != tc.want || !ret.Bool("success") {
			t.Fatalf("%s: %s", tc.fun, mapJSON(ret))
		}
	}
	var ev event.Event
	select {
	case ev = <-custom.C():
	case <-time.After(5 * time.Second):
		t.Fatal("no custom/tag event")
	}
	if n, _ := ev.Data.Int("x"); n != 1 {
		t.Fatalf("event.send data %s", mapJSON(ev.Data))
	}
}

func jsonOf(v any) string {
	m := payload.NewMap("v", v)
	s := mapJSON(m)
	return s[len(`{"v":`) : len(s)-1]
}
