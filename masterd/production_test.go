package masterd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/internal/testutil/proc"
	"github.com/gsalt/gsalt/master/jobcache"
	"github.com/gsalt/gsalt/masterd"
	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/message"
	"github.com/gsalt/gsalt/wire/payload"
	"github.com/gsalt/gsalt/wire/transport"
)

// runtimePanic matches Go's report of a panic that ended a process.
var runtimePanic = regexp.MustCompile(`(?m)^(panic: |fatal error: |goroutine \d+ \[)`)

// prodTest starts a production test: parallel, the commands built first
// (the build is not part of the deadline), and a context that ends after
// d or with the test.
func prodTest(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	t.Parallel()
	prodBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// loneMinion is a gsalt-minion configuration in a fresh short folder whose
// master is a free port where nothing listens.
type loneMinion struct {
	c   *checklist
	dir string
}

// newLoneMinion writes the configuration with id and extra (a format in
// which %[1]s is the folder) appended.
func newLoneMinion(t *testing.T, ctx context.Context, id, extra string) *loneMinion {
	t.Helper()
	dir := shortDir(t)
	port := proc.FreePort(t)
	writeFile(t, filepath.Join(dir, "etc", "minion"), fmt.Sprintf(
		"id: "+id+"\nroot_dir: %[1]s\npki_dir: %[1]s/pki\ncachedir: %[1]s/cache\nsock_dir: %[1]s/sock\nlog_file: %[1]s/log\n"+
			"master: 127.0.0.1\nmaster_port: %[2]d\n"+extra, dir, port))
	return &loneMinion{c: &checklist{t: t, ctx: ctx, bin: prodBin(t)}, dir: dir}
}

// start runs gsalt-minion at log level, its output in the file out of the
// folder.
func (lm *loneMinion) start(level, out string) *proc.Proc {
	lm.c.t.Helper()
	return startBg(lm.c.t, "gsalt-minion", exec.Command(filepath.Join(lm.c.bin, "gsalt-minion"), "-c", filepath.Join(lm.dir, "etc"), "-l", level),
		filepath.Join(lm.dir, out))
}

// prodMaster is a gsalt-master process on its own configuration folder.
type prodMaster struct {
	c       *checklist
	dir     string // root_dir
	conf    string // -c folder
	retPort int
	pubPort int
	proc    *proc.Proc
	n       int // starts so far
}

// newProdMaster writes a configuration (extra appended) under a fresh
// short folder; nothing is started yet.
func newProdMaster(t *testing.T, ctx context.Context, extra string) *prodMaster {
	t.Helper()
	dir := shortDir(t)
	ports := proc.FreePorts(t, 2)
	pm := &prodMaster{dir: dir, conf: filepath.Join(dir, "etc"), pubPort: ports[0], retPort: ports[1]}
	pm.c = &checklist{t: t, ctx: ctx, bin: prodBin(t), conf: pm.conf}
	writeFile(t, filepath.Join(pm.conf, "master"), fmt.Sprintf(
		"interface: 127.0.0.1\npublish_port: %[2]d\nret_port: %[3]d\nroot_dir: %[1]s\npki_dir: %[1]s/pki\n"+
			"cachedir: %[1]s/cache\nsock_dir: %[1]s/sock\nlog_file: %[1]s/master.log\nlog_level_logfile: info\nuser: root\n"+
			"file_roots: {base: [%[1]s/srv/salt]}\n", dir, pm.pubPort, pm.retPort)+extra)
	return pm
}

func (pm *prodMaster) jobCachePath() string {
	return filepath.Join(pm.dir, "cache", masterd.JobCacheFile)
}

// start runs gsalt-master and waits until it serves the request port and
// the event bus.
func (pm *prodMaster) start() *proc.Proc {
	t := pm.c.t
	t.Helper()
	pm.n++
	p := startBg(t, "gsalt-master", exec.Command(filepath.Join(pm.c.bin, "gsalt-master"), "-c", pm.conf, "-l", "warning"),
		filepath.Join(pm.dir, fmt.Sprintf("gsalt-master.%d.out", pm.n)))
	pm.proc = p
	pm.c.poll("gsalt-master listening", 60*time.Second, func() (bool, string) {
		if p.Exited() {
			b, _ := os.ReadFile(p.ErrLog)
			t.Fatalf("gsalt-master exited (%v): %s", p.Err(), b)
		}
		conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", pm.retPort), time.Second)
		if err != nil {
			return false, err.Error()
		}
		conn.Close()
		if _, err := os.Stat(filepath.Join(pm.dir, "sock", event.MasterPubSocket)); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	return p
}

func (pm *prodMaster) stderr() string {
	b, _ := os.ReadFile(pm.proc.ErrLog)
	return string(b)
}

// TestProdDamagedJobCache: gsalt-master starts on an empty, truncated or
// page-damaged job cache, moves it aside with a clear log line, keeps
// serving through several maintenance (prune) cycles, and the jobs
// runners name the lost jobs. Before the fix the master panicked at start
// (exit 2) or a few seconds later in the prune loop.
func TestProdDamagedJobCache(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		{"empty", func(t *testing.T, path string) { os.Truncate(path, 0) }},
		{"truncated", func(t *testing.T, path string) {
			fi, _ := os.Stat(path)
			os.Truncate(path, fi.Size()/3)
		}},
		{"damaged_page", func(t *testing.T, path string) {
			fi, _ := os.Stat(path)
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			junk := make([]byte, 4096)
			for i := range junk {
				junk[i] = byte(i*131 + 7)
			}
			f.WriteAt(junk, (fi.Size()/4096/2)*4096)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prodBin(t) // the build is not part of the deadline
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			pm := newProdMaster(t, ctx, "loop_interval: 1\nkeep_jobs_seconds: 3600\n")
			if err := os.MkdirAll(filepath.Dir(pm.jobCachePath()), 0o755); err != nil {
				t.Fatal(err)
			}
			c, err := jobcache.Open(pm.jobCachePath(), jobcache.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var jids []string
			for i := range 80 {
				jid := c.NewJID()
				c.SaveLoad(jid, payload.NewMap("fun", "test.ping", "tgt", "*", "tgt_type", "glob", "arg", []any{}, "user", "root", "jid", jid), []string{"m1"})
				c.SaveReturn(jid, "m1", payload.NewMap("return", strings.Repeat(strconv.Itoa(i), 2000), "fun", "test.ping"))
				jids = append(jids, jid)
			}
			c.Close()
			tc.damage(t, pm.jobCachePath())

			p := pm.start()
			aside, _ := filepath.Glob(pm.jobCachePath() + ".damaged-*")
			if len(aside) != 1 {
				t.Fatalf("damaged file not kept aside: %v", aside)
			}
			if !strings.Contains(pm.stderr(), "job cache file is damaged") {
				t.Fatalf("no clear log line about the damaged job cache; stderr:\n%s", pm.stderr())
			}
			// Three maintenance cycles (loop_interval 1 s) and a few runner
			// calls later the master still runs.
			r := pm.c.mustTool(90*time.Second, "gsalt-run", "jobs.list_jobs", "--out", "json")
			if !strings.Contains(r.stdout+r.stderr, "lost") {
				t.Fatalf("jobs.list_jobs does not say which jobs were lost:\n%s", r)
			}
			lostOne := ""
			for _, jid := range jids {
				if strings.Contains(r.stdout+r.stderr, jid) && !strings.Contains(r.stdout, `"`+jid+`": {`) {
					lostOne = jid
					break
				}
			}
			if lostOne != "" {
				r2 := pm.c.tool(90*time.Second, "gsalt-run", "jobs.lookup_jid", lostOne)
				if !strings.Contains(r2.stdout+r2.stderr, "was lost") {
					t.Fatalf("jobs.lookup_jid %s does not say it was lost:\n%s", lostOne, r2)
				}
			}
			deadline := time.Now().Add(4 * time.Second)
			for time.Now().Before(deadline) && !p.Exited() {
				select {
				case <-p.Done():
				case <-time.After(200 * time.Millisecond):
				}
			}
			if p.Exited() {
				t.Fatalf("gsalt-master died after start: %v\n%s", p.Err(), pm.stderr())
			}
			if runtimePanic.MatchString(pm.stderr()) {
				t.Fatalf("a panic reached the process:\n%s", pm.stderr())
			}
		})
	}
}

// TestProdSecondMaster: a second gsalt-master on the same configuration
// stops at once with "another gsalt-master is running (pid N)" and touches
// nothing of the running one: its IPC sockets stay (same inode) and the
// CLI keeps working. Before the fix the second master deleted the sockets
// before failing on the job cache lock ("timeout").
func TestProdSecondMaster(t *testing.T) {
	ctx := prodTest(t, 3*time.Minute)
	pm := newProdMaster(t, ctx, "")
	first := pm.start()
	sock := filepath.Join(pm.dir, "sock", event.MasterPubSocket)
	var before syscall.Stat_t
	if err := syscall.Stat(sock, &before); err != nil {
		t.Fatal(err)
	}
	r := pm.c.run(60*time.Second, exec.Command(filepath.Join(pm.c.bin, "gsalt-master"), "-c", pm.conf, "-l", "warning"))
	if r.code == 0 {
		t.Fatalf("second master exited 0:\n%s", r)
	}
	want := fmt.Sprintf("another gsalt-master is running (pid %d", first.Pid())
	if !strings.Contains(r.stderr, want) {
		t.Fatalf("second master's message does not say %q:\n%s", want, r)
	}
	if r.took > 20*time.Second {
		t.Errorf("second master took %s to give up", r.took)
	}
	var after syscall.Stat_t
	if err := syscall.Stat(sock, &after); err != nil {
		t.Fatalf("the running master's event socket is gone: %v", err)
	}
	if after.Ino != before.Ino {
		t.Fatal("the running master's event socket was replaced")
	}
	out := pm.c.mustTool(60*time.Second, "gsalt-run", "test.arg", "still-here", "--out", "json")
	if !strings.Contains(out.stdout, "still-here") {
		t.Fatalf("the running master does not answer the CLI:\n%s", out)
	}
	if first.Exited() {
		t.Fatal("the running master stopped")
	}
}

// TestProdRunnerReturnEventMissed: gsalt-run waiting for its runner's
// return event misses it (the process is stopped while a flood of large
// events overflows its reader queue on the master, so the bus drops the
// return for it). It must still print the runner's return, found in the
// job cache, instead of hanging until its timeout.
func TestProdRunnerReturnEventMissed(t *testing.T) {
	ctx := prodTest(t, 4*time.Minute)
	pm := newProdMaster(t, ctx, "")
	pm.start()
	sock := filepath.Join(pm.dir, "sock")
	rd, err := event.DialPub(ctx, filepath.Join(sock, event.MasterPubSocket))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	tags := make(chan string, 1<<16)
	go func() {
		for {
			ev, err := rd.Next(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				continue
			}
			if strings.HasPrefix(ev.Tag, "salt/run/") {
				tags <- ev.Tag
			}
		}
	}()

	cmd := exec.Command(filepath.Join(pm.c.bin, "gsalt-run"), "-c", pm.conf, "test.sleep", "15", "--out", "json", "-t", "200")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	waitTag := func(suffix string) string {
		t.Helper()
		for {
			select {
			case tag := <-tags:
				if strings.HasSuffix(tag, suffix) {
					return tag
				}
			case <-ctx.Done():
				t.Fatalf("no %s event", suffix)
			}
		}
	}
	newTag := waitTag("/new")
	jid := strings.Split(newTag, "/")[2]
	syscall.Kill(-cmd.Process.Pid, syscall.SIGSTOP)
	// 160 events of 600 KB: more than the 64 MiB a reader may have queued
	// plus the socket buffers, before the runner returns.
	p, err := event.DialPush(ctx, filepath.Join(sock, event.MasterPullSocket))
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 600<<10)
	for i := range 160 {
		if err := p.Fire(ctx, event.Event{Tag: fmt.Sprintf("flood/%d", i), Data: payload.NewMap("blob", big)}); err != nil {
			t.Fatal(err)
		}
	}
	// Then small ones fill the last bytes of the queue, so the return
	// (a few hundred bytes) cannot fit either.
	for i := range 3000 {
		if err := p.Fire(ctx, event.Event{Tag: fmt.Sprintf("f/%d", i), Data: payload.NewMap()}); err != nil {
			t.Fatal(err)
		}
	}
	p.Close()
	select {
	case tag := <-tags:
		if strings.HasPrefix(tag, "salt/run/"+jid+"/ret") {
			t.Skip("the runner returned before the flood filled the reader's queue: the return was not dropped, so there is nothing to recover from on this run (machine too slow)")
		}
	default:
	}
	waitTag("salt/run/" + jid + "/ret")
	// The master dropped the return for the stopped reader.
	pm.c.poll("the master dropping events for the stopped gsalt-run", 30*time.Second, func() (bool, string) {
		b, _ := os.ReadFile(filepath.Join(pm.dir, "master.log"))
		return strings.Contains(string(b), "events dropped"), "no drop logged yet"
	})
	if b, _ := os.ReadFile(filepath.Join(pm.dir, "master.log")); testing.Verbose() {
		t.Logf("master log:\n%s", tail(b, 3000))
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGCONT)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("gsalt-run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
		}
	case <-time.After(90 * time.Second):
		t.Fatalf("gsalt-run still waits for a return the runner sent long ago\nstdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	if strings.TrimSpace(stdout.String()) != "true" {
		t.Fatalf("gsalt-run printed %q, want true\nstderr:\n%s", stdout.String(), stderr.String())
	}
}

// TestProdMalformedKeysUnderAutoAccept: _auth requests carrying keys that
// are not RSA public keys reach a gsalt-master process with auto_accept;
// each is refused with {ret: false} and nothing is written, so the real
// minion of that id is accepted afterwards (before, the first bad key was
// stored as the accepted key and the real minion was denied).
func TestProdMalformedKeysUnderAutoAccept(t *testing.T) {
	ctx := prodTest(t, 3*time.Minute)
	pm := newProdMaster(t, ctx, "auto_accept: True\n")
	pm.start()
	priv, err := crypt.LoadPrivateKey(filepath.Join(vectorsDir, "pki/minion1/minion.pem"))
	if err != nil {
		t.Fatal(err)
	}
	realPub, _ := os.ReadFile(filepath.Join(vectorsDir, "pki/minion1/minion.pub"))
	privPEM, _ := os.ReadFile(filepath.Join(vectorsDir, "pki/minion1/minion.pem"))
	for name, pub := range map[string][]byte{
		"string":           []byte("not a key"),
		"armoured garbage": []byte("-----BEGIN PUBLIC KEY-----\nZ2FyYmFnZQ==\n-----END PUBLIC KEY-----\n"),
		"private key":      privPEM,
		"integer":          []byte("42"),
	} {
		si, err := message.NewSignIn("m1", realPub, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		si.Load.Set("pub", pub)
		frame, _ := message.EncodeClearRequest(si.Load)
		reply, err := transport.Request(ctx, fmt.Sprintf("127.0.0.1:%d", pm.retPort), frame, 20*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		res, err := message.OpenAuthReply(reply, si, priv, nil, payload.DefaultLimits)
		if err != nil || res.Status != message.AuthRejected {
			t.Fatalf("%s: status %v, err %v; want rejected", name, res.Status, err)
		}
		for _, sub := range []string{"minions", "minions_pre", "minions_denied", "minions_rejected"} {
			if _, err := os.Stat(filepath.Join(pm.dir, "pki", sub, "m1")); err == nil {
				t.Fatalf("%s: a key file was written to %s", name, sub)
			}
		}
	}
	// The real minion now signs in (vector key installed) and answers.
	mdir := filepath.Join(pm.dir, "m1")
	copyFile(t, filepath.Join(vectorsDir, "pki/minion1/minion.pem"), filepath.Join(mdir, "pki", "minion.pem"), 0o600)
	copyFile(t, filepath.Join(vectorsDir, "pki/minion1/minion.pub"), filepath.Join(mdir, "pki", "minion.pub"), 0o644)
	writeFile(t, filepath.Join(mdir, "etc", "minion"), fmt.Sprintf(
		"id: m1\nroot_dir: %[1]s\npki_dir: %[1]s/pki\ncachedir: %[1]s/cache\nsock_dir: %[1]s/sock\nlog_file: %[1]s/log\n"+
			"master: 127.0.0.1\nmaster_port: %[2]d\nacceptance_wait_time: 1\n", mdir, pm.retPort))
	startBg(t, "gsalt-minion", exec.Command(filepath.Join(pm.c.bin, "gsalt-minion"), "-c", filepath.Join(mdir, "etc"), "-l", "warning"),
		filepath.Join(pm.dir, "m1.out"))
	pm.c.poll("the real m1 answers", 90*time.Second, func() (bool, string) {
		r := pm.c.tool(60*time.Second, "gsalt", "m1", "test.ping", "--out", "json", "-t", "10")
		return pingOK(r, "m1"), r.String()
	})
	if !strings.Contains(pm.stderr(), "malformed public key") {
		t.Errorf("the refusals were not logged:\n%s", pm.stderr())
	}

	// With the real minion up: jobs.active lists the running job only,
	// not its own saltutil.running probe (which it listed on every minion).
	t.Run("jobs.active shows only real jobs", func(t *testing.T) {
		r := pm.c.mustTool(60*time.Second, "gsalt", "--async", "m1", "test.sleep", "20")
		jid := jidRE.FindString(r.stdout)
		pm.c.poll("jobs.active shows the sleep", 60*time.Second, func() (bool, string) {
			a := pm.c.tool(60*time.Second, "gsalt-run", "jobs.active", "--out", "json")
			var m map[string]any
			if json.Unmarshal([]byte(a.stdout), &m) != nil {
				return false, a.String()
			}
			if _, ok := m[jid]; !ok {
				return false, a.stdout
			}
			if len(m) != 1 {
				t.Fatalf("jobs.active lists more than the running job %s:\n%s", jid, a.stdout)
			}
			return true, ""
		})
	})
}

// TestProdSignedReturnWins: an accepted minion returns for another id
// (unsigned; the master cannot tell) before the genuine, signed return of
// that id arrives. The signed return replaces the forged one in the job
// cache; a later unsigned return changes nothing. Before, the genuine
// return was dropped as a duplicate.
func TestProdSignedReturnWins(t *testing.T) {
	ctx := prodTest(t, 3*time.Minute)
	pm := newProdMaster(t, ctx, "auto_accept: True\n")
	pm.start()
	addr := fmt.Sprintf("127.0.0.1:%d", pm.retPort)
	mk := func(vector, id string) *minion {
		priv, err := crypt.LoadPrivateKey(filepath.Join(vectorsDir, "pki", vector, "minion.pem"))
		if err != nil {
			t.Fatal(err)
		}
		pub, _ := os.ReadFile(filepath.Join(vectorsDir, "pki", vector, "minion.pub"))
		mn := &minion{t: t, id: id, priv: priv, pubPEM: pub, req: addr}
		if st := mn.auth(); st != message.AuthAccepted {
			t.Fatalf("%s: auth %v", id, st)
		}
		return mn
	}
	genuine := mk("minion1", "m1")
	attacker := mk("proxy1", "p1")
	const jid = "20261127000000000001"
	ret := func(mn *minion, value string, sign bool) {
		load := payload.NewMap("cmd", "_return", "id", "m1", "success", true, "return", value, "retcode", int64(0),
			"jid", jid, "fun", "test.echo", "fun_args", []any{value})
		if sign {
			packed, err := payload.MarshalBin(load)
			if err != nil {
				t.Fatal(err)
			}
			sig, err := crypt.Sign(mn.priv, packed)
			if err != nil {
				t.Fatal(err)
			}
			load.Set("sig", sig)
		}
		if _, err := mn.send(load); err != nil {
			t.Fatal(err)
		}
	}
	lookup := func() string {
		r := pm.c.mustTool(60*time.Second, "gsalt-run", "jobs.lookup_jid", jid, "--out", "json")
		return strings.Join(strings.Fields(r.stdout), "")
	}
	ret(attacker, "forged", false)
	if got := lookup(); got != `{"m1":"forged"}` {
		t.Fatalf("after the forged return: %s", got)
	}
	ret(genuine, "genuine", true)
	if got := lookup(); got != `{"m1":"genuine"}` {
		t.Fatalf("the signed return did not win: %s", got)
	}
	ret(attacker, "forged-again", false)
	if got := lookup(); got != `{"m1":"genuine"}` {
		t.Fatalf("an unsigned return replaced the signed one: %s", got)
	}
}

// TestProdDaemonFlags: gsalt-master -d --pid-file detaches, writes the
// pidfile with the daemon's pid, tells systemd READY=1 over
// $NOTIFY_SOCKET, then WATCHDOG=1 every half of $WATCHDOG_USEC, and on
// SIGTERM says STOPPING=1 and removes the pidfile; --version names gsalt's
// and Salt's versions and Go.
func TestProdDaemonFlags(t *testing.T) {
	ctx := prodTest(t, 3*time.Minute)
	pm := newProdMaster(t, ctx, "")
	v := pm.c.run(30*time.Second, exec.Command(filepath.Join(pm.c.bin, "gsalt-master"), "--version"))
	for _, want := range []string{"gsalt-master ", "Salt 3006", "Go: go", "go.etcd.io/bbolt"} {
		if !strings.Contains(v.stdout, want) {
			t.Fatalf("--version does not show %q:\n%s", want, v)
		}
	}
	notify := filepath.Join(pm.dir, "notify.sock")
	ln, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: notify, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	msgs := make(chan string, 16)
	go func() {
		buf := make([]byte, 512)
		for {
			n, _, err := ln.ReadFromUnix(buf)
			if err != nil {
				return
			}
			msgs <- string(buf[:n])
		}
	}()
	pidPath := filepath.Join(pm.dir, "run", "gsalt-master.pid")
	cmd := exec.Command(filepath.Join(pm.c.bin, "gsalt-master"), "-c", pm.conf, "-d", "--pid-file", pidPath, "-l", "quiet")
	cmd.Env = append(os.Environ(), "NOTIFY_SOCKET="+notify, "WATCHDOG_USEC=400000")
	r := pm.c.run(30*time.Second, cmd)
	if r.code != 0 {
		t.Fatalf("gsalt-master -d: %s", r)
	}
	// wait returns once want arrives, counting the WATCHDOG=1 pings
	// before it; any other message fails the test.
	watchdogs := 0
	wait := func(want string) {
		t.Helper()
		for {
			select {
			case m := <-msgs:
				if m == want {
					return
				}
				if m != "WATCHDOG=1" || want == "READY=1" {
					t.Fatalf("sd_notify %q, want %q", m, want)
				}
				watchdogs++
			case <-time.After(60 * time.Second):
				t.Fatalf("no %s from the daemon", want)
			}
		}
	}
	wait("READY=1")
	wait("WATCHDOG=1")
	b, err := os.ReadFile(pidPath)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid == cmd.Process.Pid {
		t.Fatalf("pidfile %q (parent was %d)", b, cmd.Process.Pid)
	}
	defer syscall.Kill(pid, syscall.SIGKILL)
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	wait("STOPPING=1")
	t.Logf("%d more WATCHDOG=1 between the first one and STOPPING=1", watchdogs)
	pm.c.poll("pidfile removed", 30*time.Second, func() (bool, string) {
		_, err := os.Stat(pidPath)
		return os.IsNotExist(err), fmt.Sprint(err)
	})
}

// TestProdMinionUnreachableMasterLogged: gsalt-minion pointed at a port
// where nothing listens logs the refused connection at warning at once
// (before: 35 s of silence, then "i/o timeout"). Name resolution failures
// take the same path; they are not tested here to keep DNS off the wire.
func TestProdMinionUnreachableMasterLogged(t *testing.T) {
	ctx := prodTest(t, 2*time.Minute)
	lm := newLoneMinion(t, ctx, "lonely", "")
	c := lm.c
	p := lm.start("warning", "minion.out")
	start := time.Now()
	c.poll("a warning naming the refused connection", 20*time.Second, func() (bool, string) {
		b, _ := os.ReadFile(p.ErrLog)
		s := string(b)
		return strings.Contains(s, "cannot reach the master") && strings.Contains(s, "connection refused"), s
	})
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("the warning came after %s", took)
	}
}

// TestProdMissingConfigDir: a daemon given a -c folder that does not exist
// refuses to start (before, it started with Salt's defaults and wrote to
// /etc/salt, /var/cache/salt and /run/salt).
func TestProdMissingConfigDir(t *testing.T) {
	ctx := prodTest(t, 2*time.Minute)
	c := &checklist{t: t, ctx: ctx, bin: prodBin(t)}
	missing := filepath.Join(shortDir(t), "no-such-dir")
	for _, d := range []string{"gsalt-master", "gsalt-minion"} {
		r := c.run(30*time.Second, exec.Command(filepath.Join(c.bin, d), "-c", missing, "-l", "quiet"))
		if r.code == 0 || !strings.Contains(r.stderr, missing) {
			t.Errorf("%s -c %s: %s", d, missing, r)
		}
	}
}

// TestProdConfigWarningsAndLogFormat: a daemon reports a misspelled
// option with a "did you mean" and a missing file_roots directory once
// logging is up, in the log_fmt_console format of its config; -l critical
// keeps even errors and warnings off the console.
func TestProdConfigWarningsAndLogFormat(t *testing.T) {
	ctx := prodTest(t, 2*time.Minute)
	lm := newLoneMinion(t, ctx, "typo", "master_alive_intervall: 30\nfile_client: local\nfile_roots: {base: [%[1]s/nosuch]}\n"+
		"log_fmt_console: 'GS %%(levelname)s %%(name)s: %%(message)s'\n")
	dir, c := lm.dir, lm.c
	p := lm.start("warning", "minion.out")
	c.poll("config warnings in the configured format", 30*time.Second, func() (bool, string) {
		b, _ := os.ReadFile(p.ErrLog)
		s := string(b)
		return strings.Contains(s, `GS WARNING gsalt: config: unknown option "master_alive_intervall" in the minion configuration (did you mean "master_alive_interval"?)`) &&
			strings.Contains(s, "GS WARNING gsalt: config: file_roots: directory "+dir+`/nosuch of saltenv "base" does not exist`), s
	})
	p.Stop()
	q := lm.start("critical", "minion2.out")
	// The file log (log_level_logfile defaults to log_level) shows the
	// daemon ran past its connection attempts; the console stays empty.
	c.poll("the daemon trying its master", 30*time.Second, func() (bool, string) {
		b, _ := os.ReadFile(filepath.Join(dir, "log"))
		return strings.Contains(string(b), "cannot reach the master"), string(b)
	})
	q.Stop()
	if b, _ := os.ReadFile(q.ErrLog); len(bytes.TrimSpace(b)) != 0 {
		t.Fatalf("-l critical wrote to the console:\n%s", b)
	}
}

// TestProdMaxOpenFiles: max_open_files bounds the connections the two
// ports of a gsalt-master process hold together (all but a reserve for
// files, at least 64): with max_open_files 200, of 120 idle connections
// to the request port the oldest are closed to admit the newer ones, the
// master logs it, and the CLI is answered while the rest are still held
// (its connection takes the place of an idle one) and after they are gone.
func TestProdMaxOpenFiles(t *testing.T) {
	ctx := prodTest(t, 3*time.Minute)
	pm := newProdMaster(t, ctx, "max_open_files: 200\n")
	p := pm.start()
	addr := fmt.Sprintf("127.0.0.1:%d", pm.retPort)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	refused := 0
	for range 120 {
		c, err := zmtpReq(addr)
		if err != nil {
			refused++
			continue
		}
		conns = append(conns, c)
	}
	// A kept connection stays open; a dropped one reads EOF at once.
	kept := 0
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				kept++
				continue
			}
		}
		refused++
	}
	t.Logf("max_open_files 200: %d of 120 connections kept, %d dropped", kept, refused)
	if kept > 80 || refused < 40 {
		t.Fatalf("max_open_files 200: %d connections kept, %d refused; want at most 80 kept", kept, refused)
	}
	if !strings.Contains(pm.stderr()+p.Output(), "too many connections") {
		t.Logf("no 'too many connections' line on the console (level warning); log file checked instead")
		b, _ := os.ReadFile(filepath.Join(pm.dir, "master.log"))
		if !strings.Contains(string(b), "too many connections") {
			t.Fatalf("the dropped connections are not logged:\n%s", b)
		}
	}
	pm.c.poll("the CLI is answered while idle connections fill the budget", 90*time.Second, func() (bool, string) {
		r := pm.c.tool(60*time.Second, "gsalt-run", "test.arg", "alive", "--out", "json")
		return strings.Contains(r.stdout, "alive"), r.String()
	})
	for _, c := range conns {
		c.Close()
	}
	conns = nil
	pm.c.poll("the CLI is answered once the idle connections are gone", 90*time.Second, func() (bool, string) {
		r := pm.c.tool(60*time.Second, "gsalt-run", "test.arg", "alive", "--out", "json")
		return strings.Contains(r.stdout, "alive"), r.String()
	})
}
