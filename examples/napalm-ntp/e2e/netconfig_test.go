package e2e

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gsalt/gsalt/modules"
	modbuiltin "github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/proxy/devsim"
	"github.com/gsalt/gsalt/proxy/netmod"
	"github.com/gsalt/gsalt/proxy/proxymod"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/schedule"
	"github.com/gsalt/gsalt/states"
	stbuiltin "github.com/gsalt/gsalt/states/builtin"
	"github.com/gsalt/gsalt/wire/payload"
)

// ncSecret is the simulator's enable secret.
const ncSecret = "s3cret"

// ncExampleRoot is the example formula's file root.
const ncExampleRoot = "../salt"

// ncTag is the state tag of the example's netconfig.managed state.
const ncTag = "netconfig_|-ntp_servers_|-ntp_servers_|-managed"

// ncProxy is the proxy framework's Service reduced to one device.
type ncProxy struct {
	mu sync.Mutex
	m  proxymod.Module
}

func (s *ncProxy) ID() string        { return "dev1" }
func (s *ncProxy) ProxyType() string { return proxymod.NapalmTypeName }
func (s *ncProxy) Do(ctx context.Context, fn func(ctx context.Context, m proxymod.Module) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fn(ctx, s.m)
}

// ncFiles serves salt:// files from one directory (render.FileSource and
// netmod.FileClient).
type ncFiles struct{ dir string }

func (f ncFiles) CacheFile(_ context.Context, src, _ string) (string, error) {
	rel, ok := strings.CutPrefix(src, "salt://")
	if !ok {
		return src, nil
	}
	p := filepath.Join(f.dir, filepath.FromSlash(rel))
	if fi, err := os.Stat(p); err != nil || fi.IsDir() {
		return "", nil
	}
	return p, nil
}

// ncEnv starts a simulated device of plat and returns it with a proxy
// minion environment whose registry has the execution modules, net.* and
// state.sls over the given state functions, serving root.
func ncEnv(t *testing.T, plat, root string, pillar *payload.Map) (*devsim.Device, *modules.Env) {
	t.Helper()
	return ncEnvProxy(t, plat, root, pillar, func(port int) *payload.Map {
		return payload.NewMap("proxytype", "napalm", "driver", plat, "host", "127.0.0.1", "username", "admin",
			"passwd", "admin", "timeout", int64(10),
			"optional_args", payload.NewMap("port", int64(port), "secret", ncSecret))
	})
}

// ncEnvProxy is ncEnv with the proxy configuration (the pillar's proxy
// key) made by proxy from the simulated device's port.
func ncEnvProxy(t *testing.T, plat, root string, pillar *payload.Map, proxy func(port int) *payload.Map) (*devsim.Device, *modules.Env) {
	t.Helper()
	fleet, err := devsim.Start(context.Background(), devsim.Options{Platform: plat, Devices: 1, Secret: ncSecret})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fleet.Close() })
	px := proxy(fleet.Port(0))
	mod := proxymod.NewNapalm(nil)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := mod.Init(context.Background(), &proxymod.Config{ID: "dev1", ProxyType: "napalm", Proxy: px, Log: log}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mod.Shutdown(context.Background()) })

	reg := modules.NewRegistry()
	if err := modbuiltin.Register(reg); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(netmod.Functions()...); err != nil {
		t.Fatal(err)
	}
	st := states.NewRegistry()
	if err := stbuiltin.Register(st); err != nil {
		t.Fatal(err)
	}
	if err := states.RegisterExec(reg, st, render.Default()); err != nil {
		t.Fatal(err)
	}
	opts := payload.NewMap("id", "dev1", "conf_file", filepath.Join(t.TempDir(), "proxy"), "cachedir", t.TempDir())
	sched := schedule.New(schedule.Options{Opts: opts, Logger: log})
	env := &modules.Env{ID: "dev1", Registry: reg, Log: log,
		Grains:   payload.NewMap("id", "dev1", "os", plat),
		Pillar:   pillar,
		Opts:     opts,
		Services: map[string]any{proxymod.ServiceName: &ncProxy{m: mod}, "files": ncFiles{root}, "schedule": sched}}
	return fleet.Device(0), env
}

// ncRun runs state.sls mods (test mode when test) and returns the ret
// dict of tag.
func ncRun(t *testing.T, env *modules.Env, mods, tag string, test bool) *payload.Map {
	t.Helper()
	m := nsRunAll(t, env, mods, test)
	r := m.Map(tag)
	if r == nil {
		t.Fatalf("state.sls %s: no %s in %v", mods, tag, m)
	}
	return r
}

// ncHasLine reports whether cfg has line as a whole line.
func ncHasLine(cfg, line string) bool {
	for _, l := range strings.Split(cfg, "\n") {
		if strings.TrimSpace(l) == line {
			return true
		}
	}
	return false
}

// TestNetconfigExampleFormula applies examples/napalm-ntp's ntp.netconfig
// to a simulated device: test mode predicts the diff and leaves the device
// alone, a real run applies it, a second run changes nothing.
func TestNetconfigExampleFormula(t *testing.T) {
	for _, plat := range []string{devsim.PlatformIOS, devsim.PlatformEOS} {
		t.Run(plat, func(t *testing.T) {
			pillar := payload.NewMap("ntp", payload.NewMap("servers", []any{"10.0.0.1", "10.0.0.2"}))
			dev, env := ncEnv(t, plat, ncExampleRoot, pillar)
			initial := dev.RunningConfig()
			if !ncHasLine(initial, "ntp server 172.16.255.254") {
				t.Fatalf("unexpected initial config:\n%s", initial)
			}
			wantDiff := []string{"+ntp server 10.0.0.1", "+ntp server 10.0.0.2", "ntp server 172.16.255.254"}

			r := ncRun(t, env, "ntp.netconfig", ncTag, true)
			if v, _ := r.Get("result"); v != nil {
				t.Errorf("test mode result %v, want None: %v", v, r)
			}
			c := r.Str("comment")
			if !strings.HasPrefix(c, "Configuration discarded.\n\nConfiguration diff:\n\n") {
				t.Errorf("test mode comment %q", c)
			}
			for _, d := range wantDiff {
				if !strings.Contains(c, d) {
					t.Errorf("test mode comment lacks %q: %q", d, c)
				}
			}
			if ch := r.Map("changes"); ch == nil || ch.Len() != 0 {
				t.Errorf("test mode changes %v, want {}", ch)
			}
			if got := dev.RunningConfig(); got != initial {
				t.Errorf("test mode changed the device:\n%s", got)
			}

			r = ncRun(t, env, "ntp.netconfig", ncTag, false)
			if v, _ := r.Get("result"); v != true {
				t.Fatalf("apply result %v: %v", v, r)
			}
			if r.Str("comment") != "Configuration changed!\n" {
				t.Errorf("apply comment %q", r.Str("comment"))
			}
			ch := r.Map("changes")
			if ch == nil || strings.Join(ch.Keys(), ",") != "diff" {
				t.Fatalf("apply changes %v", ch)
			}
			for _, d := range wantDiff {
				if !strings.Contains(ch.Str("diff"), d) {
					t.Errorf("apply diff lacks %q: %q", d, ch.Str("diff"))
				}
			}
			running := dev.RunningConfig()
			for _, l := range []string{"ntp server 10.0.0.1", "ntp server 10.0.0.2"} {
				if !ncHasLine(running, l) {
					t.Errorf("running config lacks %q", l)
				}
			}
			if ncHasLine(running, "ntp server 172.16.255.254") {
				t.Errorf("running config still has the unlisted server")
			}

			r = ncRun(t, env, "ntp.netconfig", ncTag, false)
			if v, _ := r.Get("result"); v != true || r.Str("comment") != "Already configured." {
				t.Errorf("second run: %v", r)
			}
			if ch := r.Map("changes"); ch == nil || ch.Len() != 0 {
				t.Errorf("second run changes %v", ch)
			}
			if got := dev.RunningConfig(); got != running {
				t.Errorf("second run changed the device")
			}
		})
	}
}

// ncTree writes files (path → content) under a new temp dir.
func ncTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestNetconfigStates runs netconfig states from SLS files against a
// simulated IOS device, one fresh device per case.
func TestNetconfigStates(t *testing.T) {
	tree := ncTree(t, map[string]string{
		"inline.sls": "cfg:\n  netconfig.managed:\n    - template_source: {% raw %}\"ntp server {{ a }}\\nntp server {{ b }}\\n\"{% endraw %}\n" +
			"    - context: {a: 10.1.1.1}\n    - defaults: {a: 10.9.9.9, b: 10.1.1.2}\n",
		"vars.sls":     "cfg:\n  netconfig.managed:\n    - template_name: salt://t.jinja\n    - peer: 10.2.2.2\n",
		"t.jinja":      "ntp server {{ peer }}\n",
		"missing.sls":  "cfg:\n  netconfig.managed:\n    - template_name: salt://nope.jinja\n",
		"badtpl.sls":   "cfg:\n  netconfig.managed:\n    - template_source: {% raw %}\"ntp server {{ a \"{% endraw %}\n",
		"commitin.sls": "cfg:\n  netconfig.managed:\n    - template_source: ntp server 10.3.3.3\n    - commit_in: 5m\n",
		"nocommit.sls": "cfg:\n  netconfig.managed:\n    - template_source: ntp server 10.4.4.4\n    - commit: false\n",
		"cancel.sls":   "'20180726083540640360':\n  netconfig.commit_cancelled\n",
		"confirm.sls":  "'20180726083540640360':\n  netconfig.commit_confirmed\n",
	})
	const cancelTag = "netconfig_|-20180726083540640360_|-20180726083540640360_|-commit_cancelled"
	const confirmTag = "netconfig_|-20180726083540640360_|-20180726083540640360_|-commit_confirmed"
	type want struct {
		result        any
		comment       string // exact, or a prefix when prefix is set
		prefix        bool
		changeKeys    string
		commentHas    string
		runningHas    []string
		deviceUntouch bool
	}
	cases := []struct {
		name, sls, tag string
		test           bool
		pillar         *payload.Map
		want           want
	}{
		{"inline context over defaults", "inline", "", false, nil,
			want{result: true, comment: "Configuration changed!\n", changeKeys: "diff", runningHas: []string{"ntp server 10.1.1.1", "ntp server 10.1.1.2"}}},
		{"debug from pillar", "inline", "", false, payload.NewMap("debug", true),
			want{result: true, comment: "Configuration changed!\n", changeKeys: "diff,loaded_config", runningHas: []string{"ntp server 10.1.1.1"}}},
		{"debug in test mode", "inline", "", true, payload.NewMap("debug", true),
			want{result: nil, comment: "Configuration discarded.\n\nConfiguration diff:\n\n", prefix: true, changeKeys: "", deviceUntouch: true,
				commentHas: "\n\nLoaded config:\n\nntp server 10.1.1.1\nntp server 10.1.1.2\n"}},
		{"extra kwargs are template vars", "vars", "", false, nil,
			want{result: true, comment: "Configuration changed!\n", changeKeys: "diff", runningHas: []string{"ntp server 10.2.2.2"}}},
		{"missing template", "missing", "", false, nil,
			want{result: false, comment: "Source file salt://nope.jinja not found in saltenv 'base'", changeKeys: "", deviceUntouch: true}},
		{"bad template", "badtpl", "", false, nil,
			want{result: false, comment: "Error while rendering the template.", changeKeys: "", deviceUntouch: true}},
		{"commit_in scheduled", "commitin", "", false, nil,
			want{result: true, comment: "Configuration changed!\nChanges discarded for now, and scheduled commit at: ", prefix: true, changeKeys: "diff,commit_id", deviceUntouch: true}},
		{"commit false keeps candidate", "nocommit", "", false, nil,
			want{result: true, comment: "Configuration changed!\n", changeKeys: "diff", deviceUntouch: true}},
		{"commit_cancelled test", "cancel", cancelTag, true, nil,
			want{result: nil, comment: "It would cancel commit #20180726083540640360", changeKeys: "", deviceUntouch: true}},
		{"commit_confirmed test", "confirm", confirmTag, true, nil,
			want{result: nil, comment: "It would confirm commit #20180726083540640360", changeKeys: "", deviceUntouch: true}},
		{"commit_cancelled of an unknown commit", "cancel", cancelTag, false, nil,
			want{result: false, comment: "Unable to find commit #20180726083540640360.", changeKeys: "", deviceUntouch: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pillar := tc.pillar
			if pillar == nil {
				pillar = payload.NewMap()
			}
			dev, env := ncEnv(t, devsim.PlatformIOS, tree, pillar)
			before := dev.RunningConfig()
			tag := tc.tag
			if tag == "" {
				tag = "netconfig_|-cfg_|-cfg_|-managed"
			}
			r := ncRun(t, env, tc.sls, tag, tc.test)
			w := tc.want
			if v, _ := r.Get("result"); v != w.result {
				t.Errorf("result %v, want %v: %v", v, w.result, r)
			}
			c := r.Str("comment")
			if (w.prefix && !strings.HasPrefix(c, w.comment)) || (!w.prefix && c != w.comment) {
				t.Errorf("comment %q, want %q", c, w.comment)
			}
			if !strings.Contains(c, w.commentHas) {
				t.Errorf("comment %q lacks %q", c, w.commentHas)
			}
			if ch := r.Map("changes"); ch == nil || strings.Join(ch.Keys(), ",") != w.changeKeys {
				t.Errorf("changes %v, want keys %q", ch, w.changeKeys)
			}
			after := dev.RunningConfig()
			if w.deviceUntouch && after != before {
				t.Errorf("device changed:\n%s", after)
			}
			for _, l := range w.runningHas {
				if !ncHasLine(after, l) {
					t.Errorf("running config lacks %q", l)
				}
			}
		})
	}
}
