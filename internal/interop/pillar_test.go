package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil/proc"
)

// freshTree is a master (or masterless minion) tree whose pillar value
// "fresh" reaches a state's name, so a state run shows which pillar it saw;
// its top file applies that state, and the pillarenv dev has its own value
// (the minion's configured pillarenv is base, so dev's top is read only
// when a run asks for it).
type freshTree struct {
	dir, conf  string
	pub, ret   int
	pillarFile string
}

// newFreshTree writes configs for a master and a minion with id "pf1"
// sharing dir/srv; the minion config is also usable masterless.
func newFreshTree(t *testing.T, name string) *freshTree {
	t.Helper()
	base, err := os.MkdirTemp("/tmp", "gsalt-pf-"+name+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	p := proc.FreePorts(t, 2)
	ft := &freshTree{dir: base, conf: filepath.Join(base, "etc"), pub: p[0], ret: p[1],
		pillarFile: filepath.Join(base, "srv", "pillar", "data.sls")}
	writeConfigs(t, base, filepath.Join(ft.conf, "master"), filepath.Join(ft.conf, "minion"), "pf1", ft.pub, ft.ret,
		"pillar_roots: {base: [%[1]s/srv/pillar], dev: [%[1]s/srv/pillar-dev]}\n",
		"file_roots: {base: [%[1]s/srv/salt]}\npillar_roots: {base: [%[1]s/srv/pillar], dev: [%[1]s/srv/pillar-dev]}\npillarenv: base\n")
	writeFile(t, filepath.Join(base, "srv", "pillar", "top.sls"), "base:\n  '*':\n    - data\n")
	writeFile(t, filepath.Join(base, "srv", "pillar-dev", "top.sls"), "dev:\n  '*':\n    - data\n")
	writeFile(t, filepath.Join(base, "srv", "pillar-dev", "data.sls"), "fresh: from-dev\n")
	writeFile(t, filepath.Join(base, "srv", "salt", "top.sls"), "base:\n  '*':\n    - fresh\n")
	writeFile(t, filepath.Join(base, "srv", "salt", "fresh.sls"), "seen:\n  test.succeed_without_changes:\n    - name: {{ pillar['fresh'] }}\n")
	ft.setPillar(t, "one")
	return ft
}

// setPillar rewrites the pillar value "fresh".
func (ft *freshTree) setPillar(t *testing.T, v string) {
	t.Helper()
	if err := os.WriteFile(ft.pillarFile, []byte("fresh: "+v+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// freshStep is one state run of a fresh-pillar check: the pillar value
// written first ("" keeps it), the function and arguments, and the name
// the state must see.
type freshStep struct {
	set  string
	args []string
	want string
}

// runSteps runs steps through call (which adds the target and output
// options) and checks the name each state run of id saw.
func (ft *freshTree) runSteps(t *testing.T, id string, steps []freshStep, call func(args ...string) *exec.Cmd) {
	t.Helper()
	for _, st := range steps {
		if st.set != "" {
			ft.setPillar(t, st.set)
		}
		cmd := call(st.args...)
		if got := seenName(t, cmd, id); got != st.want {
			t.Errorf("%s (pillar set to %q) saw %q, want %q", strings.Join(cmd.Args, " "), st.set, got, st.want)
		}
	}
}

// seenName runs cmd (a state.sls fresh with --out json) and returns the
// name of the state "seen" as the run rendered it.
func seenName(t *testing.T, cmd *exec.Cmd, id string) string {
	t.Helper()
	out := run(t, cmd, false)
	var all map[string]map[string]map[string]any
	if err := json.Unmarshal(out, &all); err != nil {
		t.Fatalf("state.sls output %q: %v", out, err)
	}
	for _, st := range all[id] {
		if n, ok := st["name"].(string); ok {
			return n
		}
	}
	t.Fatalf("no state in %s", out)
	return ""
}

// checkFreshPillar changes the pillar between state runs on the minion pf1
// through cli (gsalt or salt) and checks each run (state.sls, state.apply
// of an SLS and of the highstate, state.highstate) saw the current pillar
// without a saltutil.refresh_pillar, that pillar= overrides it and that
// pillarenv= selects the dev pillar.
func checkFreshPillar(t *testing.T, ft *freshTree, cli func(args ...string) *exec.Cmd) {
	t.Helper()
	if got := seenName(t, cli("pf1", "state.sls", "fresh", "--out", "json"), "pf1"); got != "one" {
		t.Fatalf("first run saw pillar %q, want one", got)
	}
	steps := []freshStep{
		{"two", []string{"state.sls", "fresh"}, "two"},
		{"", []string{"state.sls", "fresh", `pillar={"fresh": "three"}`}, "three"},
		{"four", []string{"state.apply", "fresh"}, "four"},
		{"five", []string{"state.apply"}, "five"},
		{"six", []string{"state.highstate"}, "six"},
		{"", []string{"state.highstate", `pillar={"fresh": "seven"}`}, "seven"},
		{"", []string{"state.sls", "fresh", "pillarenv=dev"}, "from-dev"},
		{"", []string{"state.apply", "pillarenv=dev"}, "from-dev"},
		{"", []string{"state.sls", "fresh"}, "six"},
	}
	ft.runSteps(t, "pf1", steps, func(args ...string) *exec.Cmd {
		return cli(append(append([]string{"pf1"}, args...), "--out", "json")...)
	})
	// pillar.get outside a state run still answers from the minion's
	// in-memory pillar, as in Salt; a refresh brings the new value.
	run(t, cli("pf1", "saltutil.refresh_pillar", "wait=True", "--out", "json"), false)
	if out := run(t, cli("pf1", "pillar.get", "fresh", "--out", "json"), false); !bytes.Contains(out, []byte(`"six"`)) {
		t.Errorf("pillar.get after refresh: %s", out)
	}
}

// startGsaltMaster starts gsalt-master on ft and returns the gsalt CLI.
func startGsaltMaster(t *testing.T, ctx context.Context, bin string, ft *freshTree) func(args ...string) *exec.Cmd {
	t.Helper()
	daemon(t, exec.CommandContext(ctx, filepath.Join(bin, "gsalt-master"), "-c", ft.conf, "-l", "warning"), filepath.Join(ft.dir, "master.out"))
	return func(args ...string) *exec.Cmd {
		return exec.CommandContext(ctx, filepath.Join(bin, "gsalt"), append([]string{"-c", ft.conf, "-t", "60"}, args...)...)
	}
}

// acceptAndPing accepts pf1's key on the gsalt-master and waits until it
// answers.
func acceptAndPing(t *testing.T, ctx context.Context, bin string, ft *freshTree, gsalt func(args ...string) *exec.Cmd) {
	t.Helper()
	waitFor(t, "pf1 key pending on gsalt-master", 90*time.Second, func() bool {
		out := run(t, exec.CommandContext(ctx, filepath.Join(bin, "gsalt-key"), "-c", ft.conf, "-l", "un", "--out", "json"), true)
		return bytes.Contains(out, []byte(`"pf1"`))
	})
	run(t, exec.CommandContext(ctx, filepath.Join(bin, "gsalt-key"), "-c", ft.conf, "-A", "-y"), false)
	// Ping only once the master sees pf1 connected (manage.present: its
	// grains cached and a connection to the publish port): a ping
	// published before the minion subscribed is missed and then costs
	// the CLI its timeout plus gather_job_timeout (15 s).
	waitFor(t, "pf1 present on gsalt-master", 90*time.Second, func() bool {
		out := run(t, exec.CommandContext(ctx, filepath.Join(bin, "gsalt-run"), "-c", ft.conf, "manage.present", "--out", "json"), true)
		return bytes.Contains(out, []byte(`"pf1"`))
	})
	waitFor(t, "pf1 answering", 90*time.Second, func() bool {
		return bytes.Contains(run(t, gsalt("pf1", "test.ping", "--out", "json", "-t", "5"), true), []byte("true"))
	})
}

// TestFreshPillarGsaltMinion: gsalt-master + gsalt-minion, a changed
// pillar reaches the next state run with no refresh (issue 11).
func TestFreshPillarGsaltMinion(t *testing.T) {
	bin, ctx, cancel := startInterop(t)
	defer cancel()
	ft := newFreshTree(t, "g")
	gsalt := startGsaltMaster(t, ctx, bin, ft)
	daemon(t, exec.CommandContext(ctx, filepath.Join(bin, "gsalt-minion"), "-c", ft.conf, "-l", "warning"), filepath.Join(ft.dir, "minion.out"))
	acceptAndPing(t, ctx, bin, ft, gsalt)
	checkFreshPillar(t, ft, gsalt)
}

// TestFreshPillarRealMinion: gsalt-master + a real salt-minion (gated on
// GSALT_SALT_SRC): gsalt-master answers every state run's _pillar afresh.
func TestFreshPillarRealMinion(t *testing.T) {
	src := saltpeer.Require(t)
	bin, ctx, cancel := startInterop(t)
	defer cancel()
	ft := newFreshTree(t, "r")
	gsalt := startGsaltMaster(t, ctx, bin, ft)
	daemon(t, saltpeer.Command(ctx, src, "salt-minion", "-c", ft.conf, "-l", "warning"), filepath.Join(ft.dir, "minion.out"))
	acceptAndPing(t, ctx, bin, ft, gsalt)
	checkFreshPillar(t, ft, gsalt)
}

// TestLocalCallPillar: gsalt-call --local compiles the pillar from the
// local pillar_roots (salt-call --local) and serves salt:// from the local
// file_roots, for pillar.items and state runs (state.sls, state.apply,
// state.highstate, pillar= overrides, pillarenv=); with GSALT_SALT_SRC the
// same calls through salt-call --local see the same pillar.
func TestLocalCallPillar(t *testing.T) {
	bin, ctx, cancel := startInterop(t)
	defer cancel()
	ft := newFreshTree(t, "l")
	gsaltCall := func(args ...string) *exec.Cmd {
		return exec.CommandContext(ctx, filepath.Join(bin, "gsalt-call"), append([]string{"-c", ft.conf, "--local", "--out", "json"}, args...)...)
	}
	steps := []freshStep{
		{"local-one", []string{"state.sls", "fresh"}, "local-one"},
		{"local-two", []string{"state.sls", "fresh", `pillar={"fresh": "over"}`}, "over"},
		{"", []string{"state.sls", "fresh"}, "local-two"},
		{"local-three", []string{"state.apply"}, "local-three"},
		{"local-four", []string{"state.highstate"}, "local-four"},
		{"", []string{"state.apply", "fresh", "pillarenv=dev"}, "from-dev"},
	}
	ft.runSteps(t, "local", steps, gsaltCall)
	ft.setPillar(t, "local-one")
	out := run(t, gsaltCall("pillar.items"), false)
	if !bytes.Contains(out, []byte(`"fresh": "local-one"`)) {
		t.Errorf("gsalt-call --local pillar.items: %s", out)
	}
	src := saltpeer.Src()
	if src == "" {
		t.Log("GSALT_SALT_SRC not set: salt-call --local comparison skipped")
		return
	}
	saltCall := func(args ...string) *exec.Cmd {
		return saltpeer.Command(ctx, src, "salt-call", append([]string{"-c", ft.conf, "--local", "--out", "json"}, args...)...)
	}
	var a, b any
	if err := json.Unmarshal(out, &a); err != nil {
		t.Fatal(err)
	}
	real := run(t, saltCall("pillar.items"), false)
	if err := json.Unmarshal(real, &b); err != nil {
		t.Fatalf("salt-call output %q: %v", real, err)
	}
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("pillar.items differ\ngsalt-call --local: %v\nsalt-call --local:  %v", a, b)
	}
	ft.runSteps(t, "local", steps, saltCall)
}
