package e2e

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/master/runners"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/pillar"
	"github.com/gsalt/gsalt/proxy/devsim"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/wire/payload"
)

// nsRouterTags are the states of napalm-salt's examples/router.
var nsRouterTags = []string{
	"netntp_|-cf_ntp_|-cf_ntp_|-managed",
	"netsnmp_|-cf_snmp_|-cf_snmp_|-managed",
	"netusers_|-cf_users_|-cf_users_|-managed",
	"probes_|-cf_probes_|-cf_probes_|-managed",
}

// nsRunAll runs state.sls mods and returns the whole return.
func nsRunAll(t *testing.T, env *modules.Env, mods string, test bool) *payload.Map {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	kw := payload.NewMap("__kwarg__", true)
	if test {
		kw.Set("test", true)
	}
	res := env.Registry.Execute(ctx, modules.Binder{}, env, "state.sls", []any{mods, kw}, nil)
	m, ok := res.Return.(*payload.Map)
	if !ok {
		t.Fatalf("state.sls %s: %T %v", mods, res.Return, res.Return)
	}
	return m
}

// TestNapalmSaltRouterExample applies napalm-salt's examples/router (the
// formula corpus's tree: GSALT_FORMULAS_DIR/napalm-salt, exported by
// scripts/formulas.sh) with the corpus's pillar
// (testdata/formulas/napalm-salt-router.sls) to a simulated IOS device
// through the napalm proxytype: test=True predicts changes and leaves the
// device alone; a run succeeds and commits what each state loaded last.
// Salt's side cannot run here (no NAPALM library), so this is gsalt
// against the device, not a comparison.
func TestNapalmSaltRouterExample(t *testing.T) {
	root := filepath.Join(os.Getenv("GSALT_FORMULAS_DIR"), "napalm-salt")
	if _, err := os.Stat(filepath.Join(root, "examples", "router", "init.sls")); os.Getenv("GSALT_FORMULAS_DIR") == "" || err != nil {
		t.Skip("TestNapalmSaltRouterExample: GSALT_FORMULAS_DIR has no napalm-salt (scripts/formulas.sh); skipping")
	}
	src, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "formulas", "napalm-salt-router.sls"))
	if err != nil {
		t.Fatal(err)
	}
	pv, err := render.Default().Render(context.Background(), src, "jinja|yaml", &render.Context{Grains: payload.NewMap("id", "router1")})
	if err != nil {
		t.Fatal(err)
	}
	pillar := pv.(*payload.Map)
	pillar.Delete("proxy")
	dev, env := ncEnv(t, devsim.PlatformIOS, root, pillar)
	initial := dev.RunningConfig()

	ret := nsRunAll(t, env, "examples.router", true)
	for _, tag := range nsRouterTags {
		r := ret.Map(tag)
		if r == nil {
			t.Fatalf("test run: no %s in %v", tag, ret)
		}
		if v, _ := r.Get("result"); v == false || strings.Contains(r.Str("comment"), "Traceback") {
			t.Errorf("test run %s: %v", tag, r)
		}
	}
	if got := dev.RunningConfig(); got != initial {
		t.Errorf("test mode changed the device:\n%s", got)
	}

	ret = nsRunAll(t, env, "examples.router", false)
	for _, tag := range nsRouterTags {
		if r := ret.Map(tag); r == nil || !r.Bool("result") {
			t.Errorf("run %s: %v", tag, r)
		}
	}
	running := dev.RunningConfig()
	// what each state loaded last before its commit reaches the device:
	// the ios driver, as NAPALM's, writes every load_merge_candidate to
	// flash:/merge_config.txt, replacing the one before (so netntp, which
	// loads its additions and removals separately, keeps only the last)
	for _, l := range []string{"snmp-server community public RO", "snmp-server community private RO",
		"username noc privilege 5 secret noc-secret", "ip sla schedule 1 life forever start-time now"} {
		if !ncHasLine(running, l) {
			t.Errorf("running config lacks %q:\n%s", l, running)
		}
	}
	if ncHasLine(running, "ntp server 172.16.255.254") {
		t.Errorf("running config keeps the NTP server netntp removed last")
	}
}

// TestNapalmSaltStackProxy takes the pillar napalm-salt's saltstack/pillar
// gives the proxy veos1 (veos.sls: proxytype napalm, driver eos, host the
// minion id, admin/admin; compiled by gsalt's pillar compiler from the
// unchanged files, which TestNapalmSaltStackTree in internal/interop
// compares with Salt's) as the configuration of gsalt's napalm proxytype,
// adding only what a lab adds beside it (the address and port of a
// simulated EOS device, the enable secret), and applies the repository's
// examples/router with that pillar. The pillar names no NTP peers,
// servers, SNMP or users, so the states take the paths Salt's own take
// (salt/states/netntp.py managed: neither peers nor servers is a list, it
// returns its default result False with no comment before reading the
// device; probes: NAPALM's eos driver has no get_probes_config) and
// netusers.managed finds nothing to do. No Salt side: NAPALM cannot be
// installed here.
func TestNapalmSaltStackProxy(t *testing.T) {
	root := filepath.Join(os.Getenv("GSALT_FORMULAS_DIR"), "napalm-salt")
	stack := filepath.Join(root, "saltstack", "pillar")
	if _, err := os.Stat(filepath.Join(stack, "veos.sls")); os.Getenv("GSALT_FORMULAS_DIR") == "" || err != nil {
		t.Skip("TestNapalmSaltStackProxy: GSALT_FORMULAS_DIR has no napalm-salt (scripts/formulas.sh); skipping")
	}
	opts := payload.NewMap("pillar_roots", payload.NewMap("base", []any{stack}))
	comp := runners.NewPillarCompiler(pillar.GetterFunc(opts.Get), slog.New(slog.DiscardHandler))
	pil, err := comp.Compile(context.Background(), pillar.Request{ID: "veos1", Grains: payload.NewMap("id", "veos1")})
	if err != nil {
		t.Fatal(err)
	}
	px := pil.Map("proxy")
	if px.Str("proxytype") != "napalm" || px.Str("driver") != "eos" || px.Str("host") != "veos1" || px.Str("username") != "admin" {
		t.Fatalf("veos1's pillar: %v", pil)
	}
	dev, env := ncEnvProxy(t, devsim.PlatformEOS, root, pil, func(port int) *payload.Map {
		lab := px.Clone()
		lab.Set("host", "127.0.0.1")
		lab.Set("optional_args", payload.NewMap("port", int64(port), "secret", ncSecret))
		return lab
	})
	initial := dev.RunningConfig()
	const ntpTag, usersTag, probesTag = "netntp_|-cf_ntp_|-cf_ntp_|-managed", "netusers_|-cf_users_|-cf_users_|-managed", "probes_|-cf_probes_|-cf_probes_|-managed"
	check := func(what string, ret *payload.Map) {
		t.Helper()
		for _, tag := range nsRouterTags {
			if ret.Map(tag) == nil {
				t.Fatalf("%s: no %s in %v", what, tag, ret)
			}
		}
		if r := ret.Map(ntpTag); r.Bool("result") || r.Str("comment") != "" || r.Map("changes").Len() != 0 {
			t.Errorf("%s netntp: %v", what, r)
		}
		if r := ret.Map(probesTag); !strings.Contains(r.Str("comment"), "get_probes_config is not implemented for the NAPALM eos driver") {
			t.Errorf("%s probes: %v", what, r)
		}
		if r := ret.Map(usersTag); r.Map("changes").Len() != 0 || !r.Bool("result") {
			t.Errorf("%s netusers: %v", what, r)
		}
	}
	check("test run", nsRunAll(t, env, "examples.router", true))
	if got := dev.RunningConfig(); got != initial {
		t.Errorf("test mode changed the device:\n%s", got)
	}
	check("run", nsRunAll(t, env, "examples.router", false))
	if !ncHasLine(dev.RunningConfig(), "ntp server 172.16.255.254") {
		t.Errorf("netntp.managed touched the device's NTP server:\n%s", dev.RunningConfig())
	}
	check("second run", nsRunAll(t, env, "examples.router", false))
}
