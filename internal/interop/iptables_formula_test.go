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
	"github.com/gsalt/gsalt/internal/testutil/proc"
)

// iptablesApplyScript runs in a fresh network and mount namespace: /etc
// under an overlay whose upper layer is $1/upper (the formula saves its
// rules to /etc/iptables), then the command after $2 twice, then the
// kernel's rules and the saved file into $2.
const iptablesApplyScript = `set -e
dir=$1; out=$2; shift 2
mkdir -p "$dir/upper" "$dir/work"
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$dir/upper,workdir=$dir/work" /etc
"$@" > "$out/apply1.json" 2> "$out/stderr1" || true
"$@" > "$out/apply2.json" 2> "$out/stderr2" || true
iptables-save | grep -v '^#' > "$out/iptables-save"
grep -v '^#' /etc/iptables/rules.v4 > "$out/rules.v4" || true
`

// TestIptablesFormulaApply applies iptables-formula's iptables SLS for
// real, twice (the second run finds every rule set), with its kitchen
// test pillar (packages left out: install False), through Salt 3006's
// salt-call --local and through gsalt-call --local, each in a fresh
// network namespace with /etc under an overlay so that nothing on the
// host changes, and compares the state returns (timings left out), the
// kernel's rules (iptables-save) and the rules file the formula saves
// (/etc/iptables/rules.v4). Gated on GSALT_FORMULAS_DIR (the exported
// formula), GSALT_SALT_SRC and root.
func TestIptablesFormulaApply(t *testing.T) {
	root := os.Getenv("GSALT_FORMULAS_DIR")
	if root == "" {
		t.Skip("iptables formula apply: GSALT_FORMULAS_DIR is not set (export the formulas with scripts/formulas.sh)")
	}
	formula := filepath.Join(root, "iptables-formula")
	pillar, err := os.ReadFile(filepath.Join(formula, "test", "salt", "pillar", "default.sls"))
	if err != nil {
		t.Skipf("iptables formula apply: %v", err)
	}
	src := saltpeer.Require(t)
	if os.Geteuid() != 0 {
		t.Skip("iptables formula apply: needs root for network and mount namespaces")
	}
	if out, err := exec.Command("unshare", "-n", "-m", "--", "iptables", "-S").CombinedOutput(); err != nil {
		t.Skipf("iptables formula apply: iptables in a network namespace: %v %s", err, out)
	}
	bin := proc.Build(t, "./cmd/gsalt-call")
	base := t.TempDir()
	pillarDir := filepath.Join(base, "pillar")
	if err := os.MkdirAll(pillarDir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile := func(p, body string) {
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(filepath.Join(pillarDir, "default.sls"), strings.Replace(string(pillar), "install: true", "install: false", 1))
	writeFile(filepath.Join(pillarDir, "top.sls"), "base:\n  '*':\n    - default\n")
	side := func(name string, argv func(conf string) []string, env []string) map[string]string {
		dir := filepath.Join(base, name)
		out := filepath.Join(dir, "out")
		conf := filepath.Join(dir, "conf")
		for _, d := range []string{out, conf} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		writeFile(filepath.Join(conf, "minion"), fmt.Sprintf("id: ipt\nfile_client: local\nroot_dir: %s/root\nenable_fqdns_grains: False\nlog_level: error\n"+
			"file_roots:\n  base:\n    - %s\npillar_roots:\n  base:\n    - %s\n", dir, formula, pillarDir))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		args := append([]string{"-n", "-m", "--propagation", "private", "--", "sh", "-c", iptablesApplyScript, "sh", dir, out}, argv(conf)...)
		cmd := exec.CommandContext(ctx, "unshare", args...)
		cmd.Env = env
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, b)
		}
		res := map[string]string{}
		for _, f := range []string{"apply1.json", "apply2.json", "iptables-save", "rules.v4", "stderr1"} {
			b, err := os.ReadFile(filepath.Join(out, f))
			if err != nil {
				t.Fatal(err)
			}
			res[f] = string(b)
		}
		return res
	}
	apply := []string{"--local", "--out", "json", "state.apply", "iptables"}
	salt := side("salt", func(conf string) []string {
		return append([]string{saltpeer.Python(), filepath.Join(src, "scripts", "salt-call"), "-c", conf}, apply...)
	}, saltpeer.Env(src))
	gsalt := side("gsalt", func(conf string) []string {
		return append([]string{filepath.Join(bin, "gsalt-call"), "-c", conf}, apply...)
	}, os.Environ())
	for _, f := range []string{"apply1.json", "apply2.json"} {
		want, got := iptablesApplyRets(t, "salt "+f, salt[f], salt["stderr1"]), iptablesApplyRets(t, "gsalt "+f, gsalt[f], gsalt["stderr1"])
		if len(want) == 0 {
			t.Fatalf("salt %s: no states", f)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s differs:\ngot  %v\nwant %v", f, got, want)
		}
	}
	for _, f := range []string{"iptables-save", "rules.v4"} {
		if salt[f] == "" || !strings.Contains(salt[f], "-A INPUT") {
			t.Fatalf("salt's %s has no INPUT rule:\n%s", f, salt[f])
		}
		if gsalt[f] != salt[f] {
			t.Errorf("%s differs:\ngot  %s\nwant %s", f, gsalt[f], salt[f])
		}
	}
}

// iptablesApplyRets decodes a state.apply --out json return, without
// each state's start_time and duration.
func iptablesApplyRets(t *testing.T, what, text, stderr string) map[string]any {
	t.Helper()
	var v struct {
		Local map[string]map[string]any `json:"local"`
	}
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("%s: %v\n%s\n%s", what, err, text, stderr)
	}
	out := map[string]any{}
	for tag, r := range v.Local {
		delete(r, "start_time")
		delete(r, "duration")
		out[tag] = r
	}
	return out
}
