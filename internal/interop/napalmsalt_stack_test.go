package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/internal/testutil/proc"
)

// napalmStackCalls are the calls TestNapalmSaltStackTree compares, per
// minion id: "master" is the machine napalm-salt's saltstack/salt top
// targets (its /etc/hosts and the packages, pip modules and salt-proxy
// processes of a NAPALM proxy host); veos1 and vsrx1 are proxies whose
// pillar (saltstack/pillar: veos.sls, vsrx.sls) is their proxy
// configuration.
var napalmStackCalls = []struct {
	id    string
	calls [][]string
}{
	{"master", [][]string{
		{"pillar.items"},
		{"state.show_top"},
		{"state.show_sls", "common,napalm_proxy"},
		{"state.show_lowstate"},
		{"state.show_highstate"},
		{"state.apply", "common", "test=True"},
		{"state.apply", "napalm_proxy", "test=True"},
	}},
	{"veos1", [][]string{{"pillar.items"}, {"state.show_top"}}},
	{"vsrx1", [][]string{{"pillar.items"}}},
}

// napalmStackConfig writes a masterless minion configuration with id
// serving napalm-salt's saltstack/salt and saltstack/pillar unchanged.
func napalmStackConfig(t *testing.T, dir, id, stack string) string {
	t.Helper()
	conf := filepath.Join(dir, "etc")
	text := fmt.Sprintf("id: %s\nfile_client: local\nroot_dir: %s\nfile_roots: {base: [%s]}\npillar_roots: {base: [%s]}\nenable_fqdns_grains: False\nipv6: False\nlog_level: error\n%s",
		id, filepath.Join(dir, "root"), filepath.Join(stack, "salt"), filepath.Join(stack, "pillar"), formulaGrains)
	testutil.WriteFile(t, filepath.Join(conf, "minion"), text, 0o644)
	return conf
}

// TestNapalmSaltStackTree renders napalm-salt's saltstack/ tree (the
// repository at the commit of testdata/formulas.txt, exported by
// scripts/formulas.sh into GSALT_FORMULAS_DIR/napalm-salt) through Salt
// 3006's salt-call --local and gsalt-call --local, for the master minion
// its top file targets and for two proxies whose pillar holds their NAPALM
// proxy configuration: pillar.items, the top, show_sls, show_lowstate,
// show_highstate, `state.apply common test=True` (file.managed of
// /etc/hosts in test mode: nothing is written) and `state.apply
// napalm_proxy test=True` (salt_proxy.configure_proxy for three proxies
// in test mode: the proxy file and processes it would make, after the
// pkg and pip states it requires) must be equal.
func TestNapalmSaltStackTree(t *testing.T) {
	stack := filepath.Join(os.Getenv("GSALT_FORMULAS_DIR"), "napalm-salt", "saltstack")
	if _, err := os.Stat(filepath.Join(stack, "salt", "top.sls")); os.Getenv("GSALT_FORMULAS_DIR") == "" || err != nil {
		t.Skip("TestNapalmSaltStackTree: GSALT_FORMULAS_DIR has no napalm-salt (scripts/formulas.sh); skipping")
	}
	src := saltpeer.Require(t)
	bin := proc.Build(t, "./cmd/gsalt-call")
	equal := 0
	total := 0
	for _, m := range napalmStackCalls {
		t.Run(m.id, func(t *testing.T) {
			work := t.TempDir()
			saltDir, gsaltDir := filepath.Join(work, "salt"), filepath.Join(work, "gsalt")
			saltConf := napalmStackConfig(t, saltDir, m.id, stack)
			gsaltConf := napalmStackConfig(t, gsaltDir, m.id, stack)
			replace := func(dir string) map[string]string { return map[string]string{stack: "STACK", dir: "ROOT"} }
			names := make([]string, len(m.calls))
			for i := range m.calls {
				names[i] = fmt.Sprint(i)
			}
			ctx, cancel := context.WithTimeout(context.Background(), testutil.Scale(10*time.Minute))
			defer cancel()
			saltOut, saltErr := formulaSalt(ctx, t, src, saltConf, m.calls, names, replace(saltDir), "", false)
			for i, call := range m.calls {
				total++
				cmd := exec.CommandContext(ctx, filepath.Join(bin, "gsalt-call"), append([]string{"-c", gsaltConf, "--local", "--out", "json"}, call...)...)
				got, err := showSLS(cmd, replace(gsaltDir))
				what := strings.Join(call, " ")
				if saltErr[i] != nil || err != nil {
					if msg, same := sameFailure(saltErr[i], err); same {
						equal++
						t.Logf("%s: both fail: %s", what, msg)
						continue
					}
					t.Errorf("%s: salt %v, gsalt %v", what, saltErr[i], err)
					continue
				}
				want := saltOut[i]
				if call[0] == "state.apply" {
					want, got = normalizeApply(want), normalizeApply(got)
				}
				if !reflect.DeepEqual(want, got) {
					wj, _ := json.Marshal(want)
					gj, _ := json.Marshal(got)
					t.Errorf("%s differs: %s\nsalt  %s\ngsalt %s", what, firstDiff("", want, got), wj, gj)
					continue
				}
				if os.Getenv("GSALT_DEBUG_STACK") != "" {
					wj, _ := json.Marshal(want)
					t.Logf("%s: %.400s", what, wj)
				}
				equal++
			}
		})
	}
	t.Logf("napalm-salt saltstack/: %d of %d calls equal to Salt's", equal, total)
}
