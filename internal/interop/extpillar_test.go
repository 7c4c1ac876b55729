package interop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/saltpeer"
)

// gitPillarRepo makes a bare repository dir/pillar.git whose master
// branch has a top.sls and one pillar file for the git ext_pillar.
func gitPillarRepo(t *testing.T, dir string) string {
	t.Helper()
	work := filepath.Join(dir, "pillar-work")
	bare := filepath.Join(dir, "pillar.git")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"top.sls":     "base:\n  'pf1':\n    - gitdata\n",
		"gitdata.sls": "git_from: git ext_pillar\ngit_id: {{ grains['id'] }}\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(work, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"-c", "init.defaultBranch=master", "init", "-q"},
		{"add", "-A"},
		{"-c", "user.name=gsalt", "-c", "user.email=gsalt@example.com", "commit", "-q", "-m", "pillar"},
		{"clone", "-q", "--bare", work, bare},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = work
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return bare
}

// addExtPillar appends ext_pillar options to the master and minion
// configs of ft: a cmd_yaml command, a CSV file and a git remote when
// git is installed (the minion's copy serves gsalt-call --local).
func addExtPillar(t *testing.T, ft *freshTree) {
	t.Helper()
	csv := filepath.Join(ft.dir, "hosts.csv")
	if err := os.WriteFile(csv, []byte("id,rack\npf1,r42\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	extra := fmt.Sprintf(`ext_pillar:
  - cmd_yaml: "echo 'ext_from: cmd_yaml'; echo 'ext_id: %%s'"
  - csv: {path: %s, namespace: inventory}
  - nosuchmodule: x
`, csv)
	if _, err := exec.LookPath("git"); err == nil {
		extra += fmt.Sprintf("  - git: [\"master file://%s\"]\n", gitPillarRepo(t, ft.dir))
	}
	for _, f := range []string{"master", "minion"} {
		p := filepath.Join(ft.conf, f)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, append(b, extra...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// pillarOf runs pillar.items (or another pillar call) and decodes the
// minion's answer.
func pillarOf(t *testing.T, cmd *exec.Cmd, id string) map[string]any {
	t.Helper()
	out := run(t, cmd, false)
	var all map[string]map[string]any
	if err := json.Unmarshal(out, &all); err != nil {
		t.Fatalf("%s: %q: %v", strings.Join(cmd.Args, " "), out, err)
	}
	return all[id]
}

func checkExtData(t *testing.T, what string, p map[string]any) {
	t.Helper()
	inv, _ := p["inventory"].(map[string]any)
	if p["ext_from"] != "cmd_yaml" || p["ext_id"] != "pf1" || inv["rack"] != "r42" || p["fresh"] != "one" {
		t.Errorf("%s: ext_pillar data missing: %v", what, p)
	}
	if _, err := exec.LookPath("git"); err == nil && (p["git_from"] != "git ext_pillar" || p["git_id"] != "pf1") {
		t.Errorf("%s: git ext_pillar data missing: %v", what, p)
	}
	if _, ok := p["_errors"]; ok {
		t.Errorf("%s: _errors %v (an unknown ext_pillar is only logged)", what, p["_errors"])
	}
}

// checkVirtKeys applies virt.keys on pf1 through cli: the libvirt
// ext_pillar on the master generates the TLS material, the state writes
// it, test=True then predicts nothing, and a rerun finds all correct.
func checkVirtKeys(t *testing.T, cli func(args ...string) *exec.Cmd, base string) {
	t.Helper()
	if _, err := exec.LookPath("certtool"); err != nil {
		t.Log("certtool not installed: virt.keys part skipped")
		return
	}
	basepath := filepath.Join(base, "pki-"+filepath.Base(os.Args[0])+fmt.Sprint(time.Now().UnixNano()))
	stateRet := func(args ...string) map[string]any {
		t.Helper()
		all := pillarOf(t, cli(append([]string{"pf1", "state.single", "virt.keys", "name=lv", "basepath=" + basepath, "--out", "json"}, args...)...), "pf1")
		for _, v := range all {
			if m, ok := v.(map[string]any); ok {
				return m
			}
		}
		t.Fatalf("no state return in %v", all)
		return nil
	}
	r := stateRet("test=True")
	if r["result"] != nil || r["comment"] != "Libvirt keys are set to be updated" {
		t.Errorf("virt.keys test=True: %v", r)
	}
	r = stateRet("country=FR")
	ch, _ := r["changes"].(map[string]any)
	if r["result"] != true || r["comment"] != "Updated libvirt certs and keys" || len(ch) != 5 || ch["cacert"] != "new" {
		t.Fatalf("virt.keys: %v", r)
	}
	for _, f := range []string{"libvirt/private/serverkey.pem", "libvirt/servercert.pem", "libvirt/private/clientkey.pem", "libvirt/clientcert.pem", "CA/cacert.pem"} {
		b, err := os.ReadFile(filepath.Join(basepath, f))
		if err != nil || !bytes.Contains(b, []byte("-----BEGIN")) {
			t.Errorf("%s: %v %.40q", f, err, b)
		}
	}
	r = stateRet()
	if r["result"] != true || r["comment"] != "All keys are correct" {
		t.Errorf("virt.keys rerun: %v", r)
	}
}

// TestExtPillarGsaltMinion: gsalt-master with ext_pillar modules +
// gsalt-minion: pillar.items shows the ext_pillar data, pillar.ext runs
// libvirt on demand, virt.keys writes the keys; gsalt-call --local
// compiles the same ext_pillar masterless.
func TestExtPillarGsaltMinion(t *testing.T) {
	bin, ctx, cancel := startInterop(t)
	defer cancel()
	ft := newFreshTree(t, "xg")
	addExtPillar(t, ft)
	gsalt := startGsaltMaster(t, ctx, bin, ft)
	daemon(t, exec.CommandContext(ctx, filepath.Join(bin, "gsalt-minion"), "-c", ft.conf, "-l", "warning"), filepath.Join(ft.dir, "minion.out"))
	acceptAndPing(t, ctx, bin, ft, gsalt)
	checkExtData(t, "gsalt-master pillar.items", pillarOf(t, gsalt("pf1", "pillar.items", "--out", "json"), "pf1"))
	checkVirtKeys(t, gsalt, ft.dir)
	local := pillarOf(t, exec.CommandContext(ctx, filepath.Join(bin, "gsalt-call"), "-c", ft.conf, "--local", "--out", "json", "pillar.items"), "local")
	checkExtData(t, "gsalt-call --local pillar.items", local)
	// Masterless, the git ext_pillar checks out under the minion's
	// cachedir (Salt's minion-side Pillar opts), not the master default
	// /var/cache/salt/master on the host.
	if _, err := exec.LookPath("git"); err == nil {
		if ents, err := os.ReadDir(filepath.Join(ft.dir, "n", "cache", "git_pillar")); err != nil || len(ents) == 0 {
			t.Errorf("gsalt-call --local: no git_pillar checkout under the minion's cachedir: %v", err)
		}
	}
}

// TestExtPillarRealMinion: the same through gsalt-master and a real
// salt-minion (gated on GSALT_SALT_SRC): Salt's pillar.ext and virt.keys
// send the on-demand ext in their _pillar request.
func TestExtPillarRealMinion(t *testing.T) {
	src := saltpeer.Require(t)
	bin, ctx, cancel := startInterop(t)
	defer cancel()
	ft := newFreshTree(t, "xr")
	addExtPillar(t, ft)
	gsalt := startGsaltMaster(t, ctx, bin, ft)
	daemon(t, saltpeer.Command(ctx, src, "salt-minion", "-c", ft.conf, "-l", "warning"), filepath.Join(ft.dir, "minion.out"))
	acceptAndPing(t, ctx, bin, ft, gsalt)
	checkExtData(t, "salt-minion pillar.items", pillarOf(t, gsalt("pf1", "pillar.items", "--out", "json"), "pf1"))
	checkVirtKeys(t, gsalt, ft.dir)
}
