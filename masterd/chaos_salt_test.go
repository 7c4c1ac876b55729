package masterd_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil/proc"
	"github.com/gsalt/gsalt/wire/transport"
)

// This file is the Salt column of `make chaos`: the loads of
// TestProdRestartStorm and TestChaosMemory against a real Salt 3006
// salt-master (GSALT_SALT_SRC, Debian python3), with the same
// `gsalt-minion --swarm` identities as its minions. Salt losing returns or
// growing is what is measured, not a failure: these tests fail only when
// Salt cannot be run at all. They print CHAOS lines that scripts/chaos.sh
// sets beside gsalt's.

// saltChaos gates the Salt column: GSALT_CHAOS and a Salt source tree.
func saltChaos(t *testing.T) string {
	t.Helper()
	chaos(t)
	src := saltpeer.Require(t)
	if testing.Short() {
		t.Skip("real-Salt chaos load skipped in -short mode")
	}
	return src
}

// saltMaster is a real salt-master process group on its own folder.
type saltMaster struct {
	t       *testing.T
	ctx     context.Context
	src     string
	dir     string // root_dir
	conf    string // -c folder
	pubPort int
	retPort int
	proc    *proc.Proc
	n       int // starts so far
}

func newSaltMaster(t *testing.T, ctx context.Context, src, extra string) *saltMaster {
	t.Helper()
	dir := shortDir(t)
	ports := proc.FreePorts(t, 2)
	sm := &saltMaster{t: t, ctx: ctx, src: src, dir: dir, conf: filepath.Join(dir, "etc"), pubPort: ports[0], retPort: ports[1]}
	writeFile(t, filepath.Join(sm.conf, "master"), fmt.Sprintf(
		"interface: 127.0.0.1\nipv6: False\npublish_port: %[2]d\nret_port: %[3]d\nroot_dir: %[1]s\npki_dir: %[1]s/pki\n"+
			"cachedir: %[1]s/cache\nsock_dir: %[1]s/sock\nlog_file: %[1]s/master.log\nlog_level_logfile: warning\n"+
			"pidfile: %[1]s/salt-master.pid\nuser: root\nfile_roots: {base: [%[1]s/srv/salt]}\n", dir, sm.pubPort, sm.retPort)+extra)
	return sm
}

// start runs salt-master in its own process group and waits until both
// of its ports accept connections.
func (sm *saltMaster) start() *proc.Proc {
	t := sm.t
	t.Helper()
	sm.n++
	cmd := saltpeer.Command(context.Background(), sm.src, "salt-master", "-c", sm.conf, "-l", "warning")
	p := proc.Start(t, "salt-master", cmd, proc.Options{Log: filepath.Join(sm.dir, fmt.Sprintf("salt-master.%d.out", sm.n)), Grace: 10 * time.Second})
	sm.proc = p
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if p.Exited() {
			t.Fatalf("salt-master exited (%v): %s", p.Err(), p.Tail(3000))
		}
		if proc.Dials(fmt.Sprintf("127.0.0.1:%d", sm.retPort)) && proc.Dials(fmt.Sprintf("127.0.0.1:%d", sm.pubPort)) {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("salt-master not listening after 3 min: %s", p.Tail(3000))
		}
		sleepCtx(sm.ctx, 200*time.Millisecond)
	}
}

// cli runs one of Salt's command-line scripts against this master; one
// that runs out of time is killed with its process group and reported
// with code -1 (a loaded Salt answering slowly is measured, not a
// failure).
func (sm *saltMaster) cli(timeout time.Duration, script string, args ...string) toolResult {
	sm.t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := saltpeer.Command(context.Background(), sm.src, script, append([]string{"-c", sm.conf}, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		sm.t.Fatalf("start %s: %v", script, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	code := 0
	select {
	case err := <-done:
		if err != nil {
			code = cmd.ProcessState.ExitCode()
		}
	case <-time.After(timeout):
		code = -1
	case <-sm.ctx.Done():
		code = -1
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if code == -1 {
		<-done
	}
	return toolResult{stdout: stdout.String(), stderr: stderr.String(), code: code, took: time.Since(start)}
}

// returns counts the minion returns of jid in Salt's job cache
// (local_cache: jobs/<h[:2]>/<h[2:]>/<minion>/return.p, h the sha256 of
// the jid).
func (sm *saltMaster) returns(jid string) int {
	h := sha256.Sum256([]byte(jid))
	hx := hex.EncodeToString(h[:])
	jdir := filepath.Join(sm.dir, "cache", "jobs", hx[:2], hx[2:])
	ents, err := os.ReadDir(jdir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(jdir, e.Name(), "return.p")); err == nil {
				n++
			}
		}
	}
	return n
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// swarmKeyCache is where scripts/swarm-lib.sh keeps the swarm identities'
// key pairs between bench runs (GSALT_BENCH_KEYS, or the user cache).
func swarmKeyCache() string {
	if d := os.Getenv("GSALT_BENCH_KEYS"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "gsalt-bench", "swarm-keys")
	}
	return ""
}

// seedSwarmKeys copies the cached key pairs of swarm identities
// base-0000 ... into pki/<id>/ so a swarm of n starts without generating
// n RSA keys on a loaded machine; identities not in the cache are
// generated by the swarm as usual. It returns how many were copied.
func seedSwarmKeys(t *testing.T, pki, base string, n int) int {
	t.Helper()
	cache := swarmKeyCache()
	if cache == "" {
		return 0
	}
	copied := 0
	for i := range n {
		id := fmt.Sprintf("%s-%04d", base, i)
		pem, err1 := os.ReadFile(filepath.Join(cache, id, "minion.pem"))
		pub, err2 := os.ReadFile(filepath.Join(cache, id, "minion.pub"))
		if err1 != nil || err2 != nil {
			continue
		}
		if err := os.MkdirAll(filepath.Join(pki, id), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pki, id, "minion.pem"), pem, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pki, id, "minion.pub"), pub, 0o644); err != nil {
			t.Fatal(err)
		}
		copied++
	}
	return copied
}

// startSwarm starts `gsalt-minion --swarm n` (ids sw-0000 ...) pointing
// at a master's request port; its files live under dir/swarm.
func startSwarm(t *testing.T, bin, dir string, retPort, n int) *proc.Proc {
	t.Helper()
	mdir := filepath.Join(dir, "swarm")
	writeFile(t, filepath.Join(mdir, "etc", "minion"), fmt.Sprintf(
		"id: sw\nroot_dir: %[1]s\npki_dir: %[1]s/pki\ncachedir: %[1]s/cache\nsock_dir: %[1]s/sock\nlog_file: %[1]s/log\n"+
			"master: 127.0.0.1\nmaster_port: %[2]d\nacceptance_wait_time: 1\n", mdir, retPort))
	seeded := seedSwarmKeys(t, filepath.Join(mdir, "pki"), "sw", n)
	t.Logf("swarm of %d: %d key pairs from the bench key cache, %d to generate", n, seeded, n-seeded)
	return startBg(t, "gsalt-minion --swarm", exec.Command(filepath.Join(bin, "gsalt-minion"), "-c", filepath.Join(mdir, "etc"),
		"--swarm", strconv.Itoa(n), "-l", "warning"), filepath.Join(dir, "swarm.out"))
}

// groupPids lists the processes of process group pgid.
func groupPids(pgid int) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) {
			out = append(out, pid)
		}
	}
	return out
}

// pssKiB reads a process's proportional set size (shared pages divided
// among the processes sharing them), so a sum over a forking server's
// processes does not count shared pages again and again.
func pssKiB(pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "Pss:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// groupPSS is the PSS summed over process group pgid, in MiB, and the
// number of processes.
func groupPSS(pgid int) (float64, int) {
	var sum int64
	pids := groupPids(pgid)
	for _, p := range pids {
		sum += pssKiB(p)
	}
	return float64(sum) / 1024, len(pids)
}

// peakGroupPSS samples groupPSS every 100 ms until stop is closed and
// returns the highest value in MiB.
func peakGroupPSS(pgid int, stop <-chan struct{}) <-chan float64 {
	out := make(chan float64, 1)
	go func() {
		var peak float64
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			if r, _ := groupPSS(pgid); r > peak {
				peak = r
			}
			select {
			case <-stop:
				out <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return out
}

// TestChaosSaltRestartStorm is TestProdRestartStorm's load against a real
// salt-master: a swarm of GSALT_STORM_MINIONS gsalt minions, a job to all
// of them, SIGKILL of the whole salt-master process group once a fifth of
// the returns are in its job cache, a restart, then the returns counted in
// local_cache until all are there or none came for 90 s
// (GSALT_STORM_SALT_RUNS runs, default 1); then one SIGSTOP/SIGCONT of 10 s.
func TestChaosSaltRestartStorm(t *testing.T) {
	src := saltChaos(t)
	n := envInt("GSALT_STORM_MINIONS", 60)
	runs := envInt("GSALT_STORM_SALT_RUNS", 1)
	prodBin(t) // the build is not part of the deadline
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(runs+1)*8*time.Minute+time.Duration(n)*time.Second+5*time.Minute)
	defer cancel()
	bin := prodBin(t)
	sm := newSaltMaster(t, ctx, src, "auto_accept: True\nworker_threads: 2\n")
	sm.start()
	startSwarm(t, bin, sm.dir, sm.retPort, n)

	// A salt-master on a loaded machine takes minutes to start its
	// workers and accept n keys: wait for the keys first, then for the
	// minions to answer.
	deadline := time.Now().Add(max(10*time.Minute, 2*time.Duration(n)*time.Second))
	for {
		ents, _ := os.ReadDir(filepath.Join(sm.dir, "pki", "minions"))
		if len(ents) >= n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("salt-master accepted %d of %d swarm keys: %s", len(ents), n, sm.proc.Tail(2000))
		}
		sleepCtx(ctx, time.Second)
	}
	deadline = time.Now().Add(10 * time.Minute)
	for {
		r := sm.cli(5*time.Minute, "salt", "*", "test.ping", "--out", "json", "--static", "-t", "60")
		got := strings.Count(r.stdout, ": true")
		if got >= n {
			break
		}
		if time.Now().After(deadline) {
			// Salt could not carry the load: that is the measurement.
			t.Logf("CHAOS salt restart-storm: only %d of %d minions answered salt-master 10 min after their keys were accepted; storm not run (last: %s)",
				got, n, strings.TrimSpace(r.stderr))
			return
		}
		sleepCtx(ctx, 2*time.Second)
	}

	burst := func(run int, mode string, stopFor time.Duration) {
		r := sm.cli(5*time.Minute, "salt", "--async", "*", "test.sleep", "1")
		jid := jidRE.FindString(r.stdout)
		if jid == "" {
			t.Fatalf("no jid from salt --async: %s", r)
		}
		bdl := time.Now().Add(3 * time.Minute)
		seen := 0
		for seen = sm.returns(jid); seen < max(1, n/5); seen = sm.returns(jid) {
			if time.Now().After(bdl) {
				t.Fatalf("run %d: only %d returns of %s in the job cache after 3 min", run, seen, jid)
			}
			sleepCtx(ctx, 50*time.Millisecond)
		}
		var hit time.Time
		switch mode {
		case "kill":
			sm.proc.Signal(syscall.SIGKILL)
			<-sm.proc.Done()
			hit = time.Now()
			sm.start()
		case "stop":
			sm.proc.Signal(syscall.SIGSTOP)
			hit = time.Now()
			sleepCtx(ctx, stopFor) // the outage being simulated
			sm.proc.Signal(syscall.SIGCONT)
		}
		// All returns, or nothing new for 90 s, or 6 min in all.
		got, last := sm.returns(jid), time.Now()
		lastAt := time.Since(hit)
		for got < n && time.Since(last) < 90*time.Second && time.Since(hit) < 6*time.Minute && ctx.Err() == nil {
			sleepCtx(ctx, 200*time.Millisecond)
			if g := sm.returns(jid); g != got {
				got, last, lastAt = g, time.Now(), time.Since(hit)
			}
		}
		rec := lastAt.Round(10 * time.Millisecond).String()
		if got < n {
			rec = "never(last_return_after=" + rec + ")"
		}
		t.Logf("CHAOS salt restart-storm %s run %d/%d: minions=%d returns_kept=%d/%d hit_after=%d recovery=%s",
			mode, run, runs, n, got, n, seen, rec)
	}
	for run := 1; run <= runs; run++ {
		burst(run, "kill", 0)
	}
	burst(1, "stop", 10*time.Second)
}

// TestChaosSaltMemory is TestChaosMemory's load against a real
// salt-master: 200 connections stalled 4 MiB into 90 MiB frames on its
// request port, then 10 complete 90 MB requests at once; peak and
// remaining memory are the PSS summed over the salt-master process group.
func TestChaosSaltMemory(t *testing.T) {
	src := saltChaos(t)
	prodBin(t) // the build is not part of the deadline
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	sm := newSaltMaster(t, ctx, src, "")
	p := sm.start()
	pgid := p.Pid()
	addr := fmt.Sprintf("127.0.0.1:%d", sm.retPort)
	// The master's children come up after its ports: wait until the
	// process count stays put.
	procs, stable := 0, 0
	for wdl := time.Now().Add(2 * time.Minute); stable < 10 && time.Now().Before(wdl); sleepCtx(ctx, 500*time.Millisecond) {
		if _, k := groupPSS(pgid); k == procs {
			stable++
		} else {
			procs, stable = k, 0
		}
	}
	base, procs := groupPSS(pgid)
	const frame = 90 << 20
	chunk := make([]byte, 1<<20)

	// 1. 200 stalled connections, each 4 MiB into a 90 MiB frame.
	stop := make(chan struct{})
	peak := peakGroupPSS(pgid, stop)
	var conns []net.Conn
	var closed atomic.Int64
	var firstErr atomic.Value
	for range 200 {
		c, err := zmtpReq(addr)
		if err != nil {
			closed.Add(1)
			firstErr.CompareAndSwap(nil, err.Error())
			continue
		}
		conns = append(conns, c)
		c.SetWriteDeadline(time.Now().Add(30 * time.Second))
		c.Write(bigFrameHead(frame))
		for range 4 {
			if _, err := c.Write(chunk); err != nil {
				closed.Add(1)
				firstErr.CompareAndSwap(nil, err.Error())
				break
			}
		}
	}
	// Does the master still answer a publish (the salt CLI asks the
	// request port) during the flood?
	small := sm.cli(2*time.Minute, "salt", "nobody-*", "test.ping", "-t", "5")
	answered := !strings.Contains(small.stdout+small.stderr, "not responding") && !strings.Contains(small.stdout+small.stderr, "timed out")
	sleepCtx(ctx, 2*time.Second) // let the last sample see what the stalled buffers hold
	close(stop)
	stalled := <-peak
	for _, c := range conns {
		c.Close()
	}

	// 2. 10 complete 90 MB requests at once.
	stop = make(chan struct{})
	peak = peakGroupPSS(pgid, stop)
	var wg sync.WaitGroup
	var failed atomic.Int64
	firstStalled := firstErr.Load()
	firstErr = atomic.Value{}
	body := make([]byte, frame)
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := transport.Request(ctx, addr, body, 90*time.Second); err != nil {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, err.Error())
			}
		}()
	}
	wg.Wait()
	close(stop)
	complete := <-peak

	// 3. What stays once the floods are over.
	sleepCtx(ctx, 3*time.Second) // RSS only, no condition to poll
	after, _ := groupPSS(pgid)
	if p.Exited() {
		t.Logf("salt-master died under the load: %v", p.Err())
	}
	t.Logf("CHAOS salt memory: peak PSS stalled 200x90MiB %.0f MiB (%d closed, answered=%v), 10 complete 90 MB requests %.0f MiB (%d failed/unanswered), after %.0f MiB, idle %.0f MiB over %d processes",
		stalled, closed.Load(), answered, complete, failed.Load(), after, base, procs)
	t.Logf("first errors: stalled flood %v; complete requests %v", firstStalled, firstErr.Load())
}
