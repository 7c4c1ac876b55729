package masterd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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
)

// envInt reads a positive integer from the environment, or def.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

var jidRE = regexp.MustCompile(`\b\d{20}\b`)

// TestProdRestartStorm kills gsalt-master with SIGKILL in the middle of a
// return burst from a gsalt-minion swarm, starts it again and checks that
// every return reaches the job cache. GSALT_STORM_MINIONS (default 60)
// and GSALT_STORM_RUNS (default 1) size it; `make chaos` runs 500 minions
// 20 times. Before the fix returns were lost: the request queue dropped
// them and minions that got "bad load" after re-auth did not send again.
func TestProdRestartStorm(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("real-process restart storm skipped in -short mode")
	}
	n := envInt("GSALT_STORM_MINIONS", 60)
	runs := envInt("GSALT_STORM_RUNS", 1)
	prodBin(t) // the build is not part of the deadline
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(runs)*7*time.Minute+time.Duration(n)*time.Second+5*time.Minute)
	defer cancel()
	pm := newProdMaster(t, ctx, "auto_accept: True\nworker_threads: 2\n")
	pm.start()

	startSwarm(t, pm.c.bin, pm.dir, pm.retPort, n)

	// Key generation and first authentication of n identities: allow a
	// second each on a loaded machine.
	pm.c.poll(fmt.Sprintf("%d swarm minions answer", n), max(4*time.Minute, time.Duration(n)*time.Second), func() (bool, string) {
		r := pm.c.tool(90*time.Second, "gsalt", "*", "test.ping", "--out", "json", "--static", "-t", "15")
		got := strings.Count(r.stdout, ": true")
		return got >= n, fmt.Sprintf("%d of %d answered\n%s", got, n, r.stderr)
	})

	// burst publishes a job to every minion and, once a fifth of the
	// returns went by on the bus, either kills the master (SIGKILL) and
	// starts it again, or stops it (SIGSTOP) for stopFor and lets it go on
	// (SIGCONT); then it waits until every return is in the job cache.
	burst := func(run int, mode string, stopFor time.Duration) {
		// Subscribe before publishing: the returns come a second after
		// the publish, and a loaded machine can take longer than that
		// between the CLI's exit and a subscription made after it (the
		// burst was then over and this wait saw 2 of 60 returns). Events
		// that come before the jid is known wait in the socket.
		rd, err := event.DialPub(ctx, filepath.Join(pm.dir, "sock", event.MasterPubSocket))
		if err != nil {
			t.Fatal(err)
		}
		r := pm.c.mustTool(60*time.Second, "gsalt", "--async", "*", "test.sleep", "1")
		jid := jidRE.FindString(r.stdout)
		if jid == "" {
			t.Fatalf("no jid in %s", r)
		}
		seen := 0
		prefix := "salt/job/" + jid + "/ret/"
		wctx, wcancel := context.WithTimeout(ctx, 60*time.Second)
		for seen < max(1, n/5) {
			ev, err := rd.Next(wctx)
			if err != nil {
				t.Fatalf("run %d: waiting for the return burst: %v (%d seen)", run, err, seen)
			}
			if strings.HasPrefix(ev.Tag, prefix) {
				seen++
			}
		}
		wcancel()
		rd.Close()
		auths0 := authCount(pm.dir)
		pid := pm.proc.Pid()
		var hit time.Time
		switch mode {
		case "kill":
			syscall.Kill(pid, syscall.SIGKILL)
			<-pm.proc.Done()
			hit = time.Now()
			pm.start()
		case "stop":
			syscall.Kill(pid, syscall.SIGSTOP)
			hit = time.Now()
			select {
			case <-time.After(stopFor): // the outage being simulated
			case <-ctx.Done():
			}
			syscall.Kill(pid, syscall.SIGCONT)
		}
		var got int
		pm.c.poll(fmt.Sprintf("run %d: all %d returns of %s in the job cache", run, n, jid), 6*time.Minute, func() (bool, string) {
			// A loaded master may answer the CLI slowly: a lookup that
			// runs out of time is tried again, not a failure.
			lctx, lcancel := context.WithTimeout(ctx, 90*time.Second)
			out, err := exec.CommandContext(lctx, filepath.Join(pm.c.bin, "gsalt-run"), "-c", pm.conf,
				"jobs.lookup_jid", jid, "--out", "json", "-t", "80").Output()
			lcancel()
			var m map[string]any
			if json.Unmarshal(out, &m) != nil {
				return false, fmt.Sprintf("lookup: %v: %s", err, out)
			}
			got = len(m)
			return got >= n, fmt.Sprintf("%d of %d returns", got, n)
		})
		t.Logf("CHAOS restart-storm %s run %d/%d: minions=%d returns_kept=%d/%d hit_after=%d recovery=%s auths=%d",
			mode, run, runs, n, got, n, seen, time.Since(hit).Round(10*time.Millisecond), authCount(pm.dir)-auths0)
	}
	for run := 1; run <= runs; run++ {
		burst(run, "kill", 0)
	}
	if os.Getenv("GSALT_CHAOS") != "" {
		burst(1, "stop", 10*time.Second)
	}
	if b, _ := os.ReadFile(pm.proc.ErrLog); strings.Contains(string(b), "dropping requests") {
		t.Errorf("the request queue dropped requests:\n%s", b)
	}
}

// authCount counts the _auth requests the master logged (master.log at
// info): after a restart each minion needs one; more are retries of
// minions that gave up waiting.
func authCount(dir string) int {
	b, _ := os.ReadFile(filepath.Join(dir, "master.log"))
	return bytes.Count(b, []byte("authentication request id="))
}
