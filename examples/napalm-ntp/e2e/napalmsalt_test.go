package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/modules"
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
