package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/internal/testutil/proc"
)

func TestMain(m *testing.M) { proc.Main(m) }

// repoRoot is the module root.
func repoRoot(*testing.T) string { return proc.RepoRoot() }

// buildCommands builds gsalt's commands (once per test binary).
func buildCommands(t *testing.T) string {
	t.Helper()
	return proc.Build(t)
}

// startInterop starts a real-process interop test: parallel, skipped in
// -short mode, gsalt's commands built, and a five-minute context.
func startInterop(t *testing.T) (bin string, ctx context.Context, cancel context.CancelFunc) {
	t.Helper()
	t.Parallel()
	if testing.Short() {
		t.Skip("real-process test skipped in -short mode")
	}
	bin = buildCommands(t)
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Minute)
	return bin, ctx, cancel
}

// writeFile writes c to p, making p's folder first.
func writeFile(t *testing.T, p, c string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeConfigs writes the master config masterFile (state under base/m,
// 127.0.0.1 on ports pub and ret, file_roots base/srv/salt, then
// masterExtra) and the minion config minionFile (id, state under base/n,
// then minionExtra) the real-process trees share. The extras are formats
// in which %[1]s is base.
func writeConfigs(t *testing.T, base, masterFile, minionFile, id string, pub, ret int, masterExtra, minionExtra string) {
	t.Helper()
	writeFile(t, masterFile, fmt.Sprintf(`root_dir: %[1]s/m
pki_dir: %[1]s/m/pki
cachedir: %[1]s/m/cache
sock_dir: %[1]s/m/sock
log_file: %[1]s/m/log
user: root
ipv6: False
interface: 127.0.0.1
publish_port: %[2]d
ret_port: %[3]d
file_roots: {base: [%[1]s/srv/salt]}
`+masterExtra, base, pub, ret))
	writeFile(t, minionFile, fmt.Sprintf(`id: `+id+`
root_dir: %[1]s/n
pki_dir: %[1]s/n/pki
cachedir: %[1]s/n/cache
sock_dir: %[1]s/n/sock
log_file: %[1]s/n/log
user: root
master: 127.0.0.1
master_port: %[2]d
publish_port: %[3]d
acceptance_wait_time: 1
enable_fqdns_grains: False
ipv6: False
`+minionExtra, base, ret, pub))
}

// daemon starts cmd in its own process group, logging to logPath, and
// stops the group when the test ends.
func daemon(t *testing.T, cmd *exec.Cmd, logPath string) {
	t.Helper()
	proc.Start(t, filepath.Base(logPath), cmd, proc.Options{Log: logPath, Grace: 5 * time.Second})
}

// run runs a CLI and returns its stdout; a non-zero exit is tolerated
// when allowFail (state failures exit non-zero).
func run(t *testing.T, cmd *exec.Cmd, allowFail bool) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil && !allowFail {
		t.Fatalf("%s: %v\nstdout: %s\nstderr: %s", strings.Join(cmd.Args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.Bytes()
}

// copyTree copies the SLS and pillar tree into dir and writes the
// per-setup pillar root.sls.
func copyTree(t *testing.T, src, dir, root string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		dst := filepath.Join(dir, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pillar", "root.sls"), []byte("root: "+root+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// setup is one master + one minion pair with its own directories.
type setup struct {
	dir, root  string
	pub, ret   int
	masterConf string
	minionConf string
	srv        string
}

func newSetup(t *testing.T, name string) *setup {
	t.Helper()
	base, err := os.MkdirTemp("/tmp", "gsalt-st-"+name+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	p := proc.FreePorts(t, 2)
	s := &setup{dir: base, root: filepath.Join(base, "target"), pub: p[0], ret: p[1], srv: filepath.Join(base, "srv")}
	copyTree(t, filepath.Join(repoRoot(t), "testdata", "interop", "states"), s.srv, s.root)
	os.MkdirAll(s.root, 0o755)
	// A stale file web-stale must remove.
	os.WriteFile(filepath.Join(s.root, "stale"), []byte("old\n"), 0o644)
	s.masterConf = filepath.Join(base, "etc", "master")
	s.minionConf = filepath.Join(base, "etc", "minion")
	writeConfigs(t, base, filepath.Join(s.masterConf, "master"), filepath.Join(s.minionConf, "minion"), "st1", s.pub, s.ret,
		"pillar_roots: {base: [%[1]s/srv/pillar]}\n", "")
	return s
}

// stateResults normalises a state.apply return: the root path becomes
// ROOT, timings and pids are dropped.
func stateResults(t *testing.T, out []byte, id, root string) map[string]any {
	t.Helper()
	out = bytes.ReplaceAll(out, []byte(root), []byte("ROOT"))
	var all map[string]any
	if err := json.Unmarshal(out, &all); err != nil {
		t.Fatalf("state output %q: %v", out, err)
	}
	ret, ok := all[id].(map[string]any)
	if !ok {
		t.Fatalf("no state results for %s: %s", id, out)
	}
	for _, v := range ret {
		st, ok := v.(map[string]any)
		if !ok {
			continue
		}
		delete(st, "start_time")
		delete(st, "duration")
		if ch, ok := st["changes"].(map[string]any); ok {
			delete(ch, "pid")
		}
	}
	return ret
}

// snapshot lists the files under root with modes and contents.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			tgt, _ := os.Readlink(p)
			out[rel] = "link -> " + strings.ReplaceAll(tgt, root, "ROOT")
		case fi.IsDir():
			out[rel+"/"] = fi.Mode().Perm().String()
		default:
			b, _ := os.ReadFile(p)
			out[rel] = fi.Mode().Perm().String() + " " + string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	testutil.Eventually(t, timeout, cond, what)
}

// applyTwice runs state.apply twice through the CLI built by cli and
// returns both normalised results.
func applyTwice(t *testing.T, s *setup, cli func(args ...string) *exec.Cmd) [2]map[string]any {
	t.Helper()
	var res [2]map[string]any
	for i := range res {
		out := run(t, cli("st1", "state.apply", "--out", "json", "-t", "60"), true)
		res[i] = stateResults(t, out, "st1", s.root)
	}
	return res
}

func diffResults(t *testing.T, label string, a, b map[string]any) {
	t.Helper()
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var sorted []string
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		if !reflect.DeepEqual(a[k], b[k]) {
			ja, _ := json.MarshalIndent(a[k], "", " ")
			jb, _ := json.MarshalIndent(b[k], "", " ")
			t.Errorf("%s: state %s differs\nreal Salt minion: %s\ngsalt-minion:     %s", label, k, ja, jb)
		}
	}
}

// TestStatesBothSidesReal applies the same SLS tree (testdata/interop/states)
// through (a) gsalt-master + a real Salt 3006 salt-minion and (b) a real
// Salt 3006 salt-master + gsalt-minion, twice each, and requires the same
// files on disk and the same state results (timings aside).
func TestStatesBothSidesReal(t *testing.T) {
	src := saltpeer.Require(t)
	bin, ctx, cancel := startInterop(t)
	defer cancel()

	// The two setups are independent: (a) gsalt-master + real salt-minion
	// and (b) real salt-master + gsalt-minion run side by side.
	var resA, resB [2]map[string]any
	var extraA, extraB map[string]any
	var snapA, snapB map[string]string
	t.Run("setups", func(t *testing.T) {
		t.Run("gsalt-master+salt-minion", func(t *testing.T) {
			t.Parallel()
			a := newSetup(t, "a")
			daemon(t, exec.CommandContext(ctx, filepath.Join(bin, "gsalt-master"), "-c", a.masterConf, "-l", "warning"), filepath.Join(a.dir, "master.out"))
			waitFor(t, "gsalt-master listening", 180*time.Second, func() bool {
				c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", a.ret))
				if err == nil {
					c.Close()
				}
				return err == nil
			})
			daemon(t, saltpeer.Command(ctx, src, "salt-minion", "-c", a.minionConf, "-l", "warning"), filepath.Join(a.dir, "minion.out"))
			gsalt := func(args ...string) *exec.Cmd {
				return exec.CommandContext(ctx, filepath.Join(bin, "gsalt"), append([]string{"-c", a.masterConf}, args...)...)
			}
			waitFor(t, "salt-minion key pending on gsalt-master", 180*time.Second, func() bool {
				out := run(t, exec.CommandContext(ctx, filepath.Join(bin, "gsalt-key"), "-c", a.masterConf, "-l", "un", "--out", "json"), true)
				return bytes.Contains(out, []byte(`"st1"`))
			})
			run(t, exec.CommandContext(ctx, filepath.Join(bin, "gsalt-key"), "-c", a.masterConf, "-A", "-y"), false)
			waitFor(t, "salt-minion answering gsalt", 180*time.Second, func() bool {
				return bytes.Contains(run(t, gsalt("st1", "test.ping", "--out", "json", "-t", "5"), true), []byte("true"))
			})
			resA = applyTwice(t, a, gsalt)
			extraA = extras(t, a, gsalt)
			snapA = snapshot(t, a.root) // before the setup's folder goes with the subtest
		})
		t.Run("salt-master+gsalt-minion", func(t *testing.T) {
			t.Parallel()
			b := newSetup(t, "b")
			daemon(t, saltpeer.Command(ctx, src, "salt-master", "-c", b.masterConf, "-l", "warning"), filepath.Join(b.dir, "master.out"))
			waitFor(t, "salt-master socket", 180*time.Second, func() bool {
				c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", b.ret))
				if err == nil {
					c.Close()
				}
				return err == nil
			})
			daemon(t, exec.CommandContext(ctx, filepath.Join(bin, "gsalt-minion"), "-c", b.minionConf, "-l", "warning"), filepath.Join(b.dir, "minion.out"))
			salt := func(args ...string) *exec.Cmd {
				return saltpeer.Command(ctx, src, "salt", append([]string{"-c", b.masterConf}, args...)...)
			}
			waitFor(t, "gsalt-minion key pending on salt-master", 180*time.Second, func() bool {
				return bytes.Contains(run(t, saltpeer.Command(ctx, src, "salt-key", "-c", b.masterConf, "-l", "un", "--out", "json"), true), []byte(`"st1"`))
			})
			run(t, saltpeer.Command(ctx, src, "salt-key", "-c", b.masterConf, "-A", "-y"), false)
			waitFor(t, "gsalt-minion answering salt", 180*time.Second, func() bool {
				return bytes.Contains(run(t, salt("st1", "test.ping", "--out", "json", "-t", "5"), true), []byte("true"))
			})
			resB = applyTwice(t, b, salt)
			extraB = extras(t, b, salt)
			snapB = snapshot(t, b.root)
		})
	})
	if t.Failed() {
		return
	}
	for _, k := range []string{"pillar.items", "cp.list_master", "cp.get_file"} {
		if !reflect.DeepEqual(extraA[k], extraB[k]) {
			t.Errorf("%s differs\nreal Salt minion + gsalt-master: %v\ngsalt-minion + real salt-master: %v", k, extraA[k], extraB[k])
		}
	}
	if extraA["pillar.items"] == nil || extraA["cp.get_file"] == nil {
		t.Errorf("empty pillar or file: %v", extraA)
	}

	for i := range resA {
		if len(resA[i]) < 10 {
			t.Fatalf("run %d: only %d states ran on the real minion: %v", i+1, len(resA[i]), resA[i])
		}
		changed := 0
		for _, v := range resA[i] {
			if st, ok := v.(map[string]any); ok {
				if ch, ok := st["changes"].(map[string]any); ok && len(ch) > 0 {
					changed++
				}
			}
		}
		t.Logf("run %d: %d states, %d with changes on the real Salt minion", i+1, len(resA[i]), changed)
		// The tree has states that edit each other's files (file.line and
		// file.blockreplace on a managed template), so the second run
		// changes things again; it must do so identically on both sides.
		if i == 0 && changed < 10 {
			t.Errorf("run %d: unexpected number of changed states %d", i+1, changed)
		}
		diffResults(t, fmt.Sprintf("run %d", i+1), resA[i], resB[i])
	}
	// The beacon states ran on the real minion's beacon manager: added
	// and saved, then (disabled in between) modified with a diff.
	for i, want := range []string{"Adding gsalt_load to beacons\nBeacon gsalt_load saved", "Modifying gsalt_load in beacons\nBeacon gsalt_load saved"} {
		st, _ := resA[i]["beacon_|-load_beacon_|-gsalt_load_|-present"].(map[string]any)
		if st == nil || st["comment"] != want {
			t.Errorf("run %d: beacon.present on the real minion: %v, want comment %q", i+1, st, want)
		}
	}
	if !reflect.DeepEqual(snapA, snapB) {
		ja, _ := json.MarshalIndent(snapA, "", " ")
		jb, _ := json.MarshalIndent(snapB, "", " ")
		t.Errorf("files differ\nreal Salt minion: %s\ngsalt-minion:     %s", ja, jb)
	}
}

// extras runs saltutil.refresh_pillar, pillar.items, cp.list_master and
// cp.get_file on the setup's minion and returns the normalised outputs.
func extras(t *testing.T, s *setup, cli func(args ...string) *exec.Cmd) map[string]any {
	t.Helper()
	get := func(args ...string) any {
		out := run(t, cli(append([]string{"st1"}, append(args, "--out", "json", "-t", "60")...)...), false)
		out = bytes.ReplaceAll(out, []byte(s.root), []byte("ROOT"))
		out = bytes.ReplaceAll(out, []byte(s.dir), []byte("BASE"))
		var v map[string]any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("%v: %q: %v", args, out, err)
		}
		return v["st1"]
	}
	res := map[string]any{}
	if got := get("saltutil.refresh_pillar"); got != true {
		t.Errorf("saltutil.refresh_pillar: %v", got)
	}
	res["pillar.items"] = get("pillar.items")
	res["cp.list_master"] = get("cp.list_master")
	dest := filepath.Join(s.dir, "fetched.conf")
	get("cp.get_file", "salt://web/files/web.conf.jinja", dest)
	if b, err := os.ReadFile(dest); err == nil {
		res["cp.get_file"] = string(b)
	}
	return res
}
