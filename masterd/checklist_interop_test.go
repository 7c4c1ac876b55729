package masterd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil/proc"
)

// This file runs issue 3's interop checklist item 1 end to end with real
// processes only: the gsalt-master binary, a real Salt 3006 salt-minion
// pointing at it, and gsalt's own command-line tools (gsalt-key, gsalt,
// gsalt-run) plus the real salt-call. Nothing runs in-process.

// checklist holds what the steps share.
type checklist struct {
	t    *testing.T
	ctx  context.Context
	src  string // Salt source tree
	bin  string // folder of the freshly built gsalt binaries
	conf string // gsalt-master's -c folder
}

// toolResult is one finished command.
type toolResult struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

func (r toolResult) String() string {
	return fmt.Sprintf("exit %d after %s\nstdout:\n%s\nstderr:\n%s", r.code, r.took.Round(time.Millisecond), r.stdout, r.stderr)
}

// startBg starts a long-running process in its own process group, its
// stdout in outPath and stderr in outPath.err; it is stopped (SIGTERM to
// the group, then SIGKILL) when the test ends.
func startBg(t *testing.T, name string, cmd *exec.Cmd, outPath string) *proc.Proc {
	t.Helper()
	return proc.Start(t, name, cmd, proc.Options{Log: outPath, Stderr: outPath + ".err", Grace: 5 * time.Second, Tail: 3000})
}

// run runs one command to completion in its own process group (killed as a
// group on timeout) and fails the test if a race-built tool reports a race.
func (c *checklist) run(timeout time.Duration, cmd *exec.Cmd) toolResult {
	c.t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("start %s: %v", cmd.Path, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(timeout):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		c.t.Fatalf("%s did not finish within %s\nstdout:\n%s\nstderr:\n%s", strings.Join(cmd.Args, " "), timeout, stdout.String(), stderr.String())
	case <-c.ctx.Done():
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		c.t.Fatalf("%s: %v", strings.Join(cmd.Args, " "), c.ctx.Err())
	}
	// Whatever the command left in its group goes with it.
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	res := toolResult{stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	default:
		c.t.Fatalf("%s: %v", strings.Join(cmd.Args, " "), err)
	}
	if strings.Contains(res.stderr, "WARNING: DATA RACE") {
		c.t.Errorf("%s reported a data race:\n%s", strings.Join(cmd.Args, " "), res.stderr)
	}
	return res
}

// tool runs one of gsalt's commands with -c CONF first.
func (c *checklist) tool(timeout time.Duration, name string, args ...string) toolResult {
	c.t.Helper()
	return c.run(timeout, exec.Command(filepath.Join(c.bin, name), append([]string{"-c", c.conf}, args...)...))
}

// mustTool is tool that fails the test on a non-zero exit status.
func (c *checklist) mustTool(timeout time.Duration, name string, args ...string) toolResult {
	c.t.Helper()
	r := c.tool(timeout, name, args...)
	if r.code != 0 {
		c.t.Fatalf("%s %s: %s", name, strings.Join(args, " "), r)
	}
	return r
}

// poll calls f every interval until it reports done or the deadline passes;
// then the test fails with what f last said.
func (c *checklist) poll(what string, within time.Duration, f func() (bool, string)) {
	c.t.Helper()
	deadline := time.Now().Add(within)
	last := ""
	for {
		ok, detail := f()
		if ok {
			return
		}
		last = detail
		if time.Now().After(deadline) {
			c.t.Fatalf("%s: not within %s; last:\n%s", what, within, last)
		}
		select {
		case <-c.ctx.Done():
			c.t.Fatalf("%s: %v; last:\n%s", what, c.ctx.Err(), last)
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// keySection returns the ids listed under header (e.g. "Unaccepted Keys:")
// in gsalt-key -L output.
func keySection(out, header string) []string {
	var ids []string
	in := false
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimRight(line, "\r")
		switch {
		case strings.HasSuffix(line, "Keys:"):
			in = line == header
		case in && strings.TrimSpace(line) != "":
			ids = append(ids, strings.TrimSpace(line))
		}
	}
	return ids
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// pingOK reports whether `gsalt '*' test.ping --out json` printed exactly
// {id: true}.
func pingOK(r toolResult, id string) bool {
	var got map[string]any
	return r.code == 0 && json.Unmarshal([]byte(r.stdout), &got) == nil && reflect.DeepEqual(got, map[string]any{id: true})
}

// TestInteropChecklistItem1 is issue 3's checklist item 1: gsalt-master
// and gsalt's CLIs as real processes against a real Salt 3006 salt-minion.
func TestInteropChecklistItem1(t *testing.T) {
	src := saltpeer.Require(t)
	if testing.Short() {
		t.Skip("interop with real Salt skipped in -short mode")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	dir := shortDir(t)
	c := &checklist{t: t, ctx: ctx, src: src, bin: prodBin(t), conf: filepath.Join(dir, "etc")}
	const id = "m1"
	me := "root"
	if u, err := user.Current(); err == nil {
		me = u.Username
	}

	// 1. gsalt-master on free loopback ports, then a real salt-minion.
	ports := proc.FreePorts(t, 2)
	pubPort, retPort := ports[0], ports[1]
	mroot := filepath.Join(dir, "master")
	sockDir := filepath.Join(mroot, "sock")
	writeFile(t, filepath.Join(c.conf, "master"), fmt.Sprintf(
		"interface: 127.0.0.1\npublish_port: %[2]d\nret_port: %[3]d\nroot_dir: %[1]s\npki_dir: %[1]s/pki\n"+
			"cachedir: %[1]s/cache\nsock_dir: %[1]s/sock\nlog_file: %[1]s/master.log\nlog_level_logfile: info\nuser: %[4]s\n",
		mroot, pubPort, retPort, me))
	master := startBg(t, "gsalt-master",
		exec.Command(filepath.Join(c.bin, "gsalt-master"), "-c", c.conf, "-l", "warning"), filepath.Join(dir, "gsalt-master.out"))
	c.poll("gsalt-master listening", 60*time.Second, func() (bool, string) {
		if master.Exited() {
			b, _ := os.ReadFile(master.ErrLog)
			t.Fatalf("gsalt-master exited: %s", b)
		}
		conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", retPort), time.Second)
		if err != nil {
			return false, err.Error()
		}
		conn.Close()
		if _, err := os.Stat(filepath.Join(sockDir, event.MasterPubSocket)); err != nil {
			return false, err.Error()
		}
		return true, ""
	})

	mdir := filepath.Join(dir, id)
	minionEtc := filepath.Join(mdir, "etc")
	writeFile(t, filepath.Join(minionEtc, "minion"), minionConf(mdir, id, retPort, "mine_functions: {network.ip_addrs: []}\n"))
	startPeer(t, ctx, src, "salt-minion", filepath.Join(dir, "salt-minion.out"), "-c", minionEtc, "-l", "warning")

	// 2. gsalt-key -L shows the key pending; gsalt-key -a accepts it.
	c.poll("gsalt-key -L lists "+id+" under Unaccepted Keys", 90*time.Second, func() (bool, string) {
		r := c.tool(30*time.Second, "gsalt-key", "-L")
		return r.code == 0 && contains(keySection(r.stdout, "Unaccepted Keys:"), id), r.String()
	})
	c.mustTool(30*time.Second, "gsalt-key", "-a", id, "-y")
	if r := c.mustTool(30*time.Second, "gsalt-key", "-L"); !contains(keySection(r.stdout, "Accepted Keys:"), id) ||
		contains(keySection(r.stdout, "Unaccepted Keys:"), id) {
		t.Fatalf("gsalt-key -L after -a: %s", r)
	}

	// 3. Jobs through the gsalt CLI. The minion waits acceptance_wait_time
	// before it signs in again, so the first ping is polled.
	c.poll("gsalt '*' test.ping answers after acceptance", 90*time.Second, func() (bool, string) {
		r := c.tool(60*time.Second, "gsalt", "*", "test.ping", "--out", "json", "-t", "3")
		return pingOK(r, id), r.String()
	})
	if r := c.tool(60*time.Second, "gsalt", "*", "test.ping", "--out", "json"); !pingOK(r, id) {
		t.Fatalf("gsalt '*' test.ping --out json: %s", r)
	}

	r := c.mustTool(60*time.Second, "gsalt", "*", "grains.items", "--out", "json")
	var grains map[string]map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &grains); err != nil {
		t.Fatalf("grains.items: %v\n%s", err, r)
	}
	if g := grains[id]; g == nil || g["id"] != id || g["os"] == nil || g["os"] == "" || len(grains) != 1 {
		t.Fatalf("grains.items has no id/os for %s: %s", id, r)
	}

	r = c.mustTool(60*time.Second, "gsalt", "*", "cmd.run", "echo hi", "--out", "json")
	var cmdRun map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &cmdRun); err != nil || !reflect.DeepEqual(cmdRun, map[string]any{id: "hi"}) {
		t.Fatalf("cmd.run 'echo hi': %v\n%s", err, r)
	}

	r = c.mustTool(60*time.Second, "gsalt", "*", "test.arg", "1", "two", "k=v", "--out", "json")
	var targ map[string]struct {
		Args   []any          `json:"args"`
		Kwargs map[string]any `json:"kwargs"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &targ); err != nil {
		t.Fatalf("test.arg: %v\n%s", err, r)
	}
	if a, ok := targ[id]; !ok || !reflect.DeepEqual(a.Args, []any{float64(1), "two"}) || a.Kwargs["k"] != "v" {
		t.Fatalf("test.arg 1 two k=v: %s", r)
	}

	// A job outliving -t: the CLI asks saltutil.find_job and keeps waiting.
	r = c.mustTool(60*time.Second, "gsalt", "*", "test.sleep", "3", "-t", "1")
	if r.took < 3*time.Second || r.stdout != id+":\n    True\n" {
		t.Fatalf("gsalt '*' test.sleep 3 -t 1 (want %q after >= 3 s): %s", id+":\n    True\n", r)
	}

	// A listed minion that does not exist is reported with -v.
	r = c.tool(90*time.Second, "gsalt", "-L", id+",ghost", "test.ping", "-v")
	if !strings.Contains(r.stdout, "Executing job with jid ") || !strings.Contains(r.stdout, id+":\n    True\n") ||
		!strings.Contains(r.stdout, "ghost:\n    Minion did not return") {
		t.Fatalf("gsalt -L %s,ghost test.ping -v: %s", id, r)
	}
	t.Logf("gsalt -L %s,ghost test.ping -v: exit %d after %s", id, r.code, r.took.Round(time.Millisecond))

	// 4. gsalt-run state.event sees the real salt-call event.send. The
	// watcher has no readiness signal, so the event is sent again until
	// the watcher has printed one and exited (count=1).
	watch := startBg(t, "gsalt-run state.event", exec.Command(filepath.Join(c.bin, "gsalt-run"),
		"-c", c.conf, "state.event", "count=1", "tagmatch=my/tag"), filepath.Join(dir, "state-event.out"))
	sends := 0
	c.poll("gsalt-run state.event prints my/tag", 90*time.Second, func() (bool, string) {
		if watch.Exited() {
			return true, ""
		}
		sends++
		sc := saltpeer.Command(context.Background(), src, "salt-call", "-c", minionEtc, "event.send", "my/tag", `{"a": 1}`)
		sr := c.run(60*time.Second, sc)
		if sr.code != 0 || !strings.Contains(sr.stdout, "True") {
			t.Fatalf("salt-call event.send: %s", sr)
		}
		select {
		case <-watch.Done():
			return true, ""
		case <-time.After(5 * time.Second):
			return false, fmt.Sprintf("salt-call event.send sent %d time(s); last salt-call: %s", sends, sr)
		}
	})
	if code := watch.Cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("gsalt-run state.event exited %d", code)
	}
	evOut, err := os.ReadFile(watch.Log)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(evOut), "\n")
	if !strings.HasPrefix(first, "my/tag\t") || !strings.Contains(first, `"a": 1`) {
		t.Fatalf("gsalt-run state.event output (after %d send(s)):\n%s", sends, evOut)
	}
	t.Logf("state.event saw %q after %d salt-call event.send", first, sends)

	// 5. Mine: mine.update sends _mine, mine.get reads it back.
	r = c.mustTool(60*time.Second, "gsalt", "*", "mine.update", "--out", "json")
	var upd map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &upd); err != nil || !reflect.DeepEqual(upd, map[string]any{id: true}) {
		t.Fatalf("mine.update: %v\n%s", err, r)
	}
	r = c.mustTool(60*time.Second, "gsalt", "*", "mine.get", "*", "network.ip_addrs", "--out", "json")
	var mine map[string]map[string][]string
	if err := json.Unmarshal([]byte(r.stdout), &mine); err != nil {
		t.Fatalf("mine.get: %v\n%s", err, r)
	}
	addrs := mine[id][id]
	if len(addrs) == 0 || len(mine) != 1 || len(mine[id]) != 1 {
		t.Fatalf("mine.get '*' network.ip_addrs: %s", r)
	}
	ipv4, _ := grains[id]["ipv4"].([]any)
	for _, a := range addrs {
		if !contains(anyStrings(ipv4), a) {
			t.Fatalf("mine address %s is not among the minion's ipv4 grains %v", a, ipv4)
		}
	}

	// 6. Key delete. A minion notices that its key was deleted (the
	// session key rotates) only when it next talks to the master: neither
	// Salt 3006 nor gsalt publishes to a target without accepted minions,
	// and nothing is pushed on rotation (ping_on_rotate is off and would
	// target accepted minions only). Checked with a real salt-master and
	// salt-minion: after salt-key -d the lone minion stays silent. So a job
	// runs across the delete: its _return, sealed with the old session
	// key, gets "bad load", and the minion signs in again.
	r = c.mustTool(60*time.Second, "gsalt", "*", "test.sleep", "8", "--async")
	jid, ok := strings.CutPrefix(strings.TrimSpace(r.stdout), "Executed command with job ID: ")
	if !ok {
		t.Fatalf("gsalt --async: %s", r)
	}
	deleted := time.Now()
	c.mustTool(30*time.Second, "gsalt-key", "-d", id, "-y")
	if r := c.mustTool(30*time.Second, "gsalt-key", "-L"); contains(keySection(r.stdout, "Accepted Keys:"), id) {
		t.Fatalf("gsalt-key -L after -d: %s", r)
	}
	r = c.tool(60*time.Second, "gsalt", "*", "test.ping")
	if !strings.Contains(r.stdout, "No minions matched the target. No command was sent, no jid was assigned.") {
		t.Fatalf("gsalt '*' test.ping with the key deleted: %s", r)
	}
	t.Logf("gsalt '*' test.ping with no accepted key: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	c.poll(id+" re-authenticates: pending again", 90*time.Second, func() (bool, string) {
		r := c.tool(30*time.Second, "gsalt-key", "-L")
		return r.code == 0 && contains(keySection(r.stdout, "Unaccepted Keys:"), id), r.String()
	})
	t.Logf("%s pending again %s after gsalt-key -d", id, time.Since(deleted).Round(100*time.Millisecond))
	c.mustTool(30*time.Second, "gsalt-key", "-a", id, "-y")
	c.poll("gsalt '*' test.ping answers after re-acceptance", 90*time.Second, func() (bool, string) {
		r := c.tool(60*time.Second, "gsalt", "*", "test.ping", "--out", "json", "-t", "3")
		return pingOK(r, id), r.String()
	})
	// The return held across the re-authentication reached the job cache.
	c.poll("the return of the job run across the delete", 30*time.Second, func() (bool, string) {
		r := c.tool(60*time.Second, "gsalt-run", "jobs.lookup_jid", jid, "--out", "json")
		var got map[string]any
		return r.code == 0 && json.Unmarshal([]byte(r.stdout), &got) == nil && reflect.DeepEqual(got, map[string]any{id: true}), r.String()
	})
}

func anyStrings(l []any) []string {
	var out []string
	for _, v := range l {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
