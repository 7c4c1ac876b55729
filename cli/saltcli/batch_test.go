package saltcli

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/cli/saltcli/fakemaster"
	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/wire/payload"
)

// fiveMinions has m1..m5 (m4 slow, m5 never answers anything) and records
// the list target of every job so the batches can be checked.
func fiveMinions(retcodes map[string]int) *sim {
	order := []string{"m1", "m2", "m3", "m4", "m5"}
	ms := map[string]simMinion{}
	for _, id := range order {
		ms[id] = simMinion{ret: "ok-" + id, retcode: retcodes[id], delay: 20 * time.Millisecond}
	}
	m4 := ms["m4"]
	m4.delay = 150 * time.Millisecond
	ms["m4"] = m4
	ms["m5"] = simMinion{dead: true}
	return newSim(order, ms)
}

// jobTargets lists the targets of the published test.echo jobs.
func jobTargets(m *fakemaster.Master) []string {
	var out []string
	for _, l := range m.Loads() {
		if l.Str("fun") == "test.echo" {
			tgt, _ := l.Get("tgt")
			out = append(out, fmt.Sprint(tgt))
		}
	}
	return out
}

var jidRE = regexp.MustCompile(`\d{20}`)

func TestBatchRun(t *testing.T) {
	cfg := "timeout: 2\ngather_job_timeout: 1\n"
	t.Run("size 2", func(t *testing.T) {
		m := fakemaster.Start(t, fiveMinions(nil).handle, cfg)
		stdout, stderr, code := run(t, m, Options{Words: []string{"*", "test.echo", "x"}, Batch: "2"})
		if code != 0 {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		got := jidRE.ReplaceAllString(stdout, "JID")
		for _, want := range []string{
			"Minion m5 did not respond. No job will be sent.\n",
			"\nExecuting run on ['m1', 'm2']\n\n",
			"jid:\n    JID\nm1:\n    ok-m1\nretcode:\n    0\n",
			"jid:\n    JID\nm4:\n    ok-m4\nretcode:\n    0\n",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("output lacks %q:\n%s", want, got)
			}
		}
		if strings.Contains(got, "m5:") {
			t.Errorf("a job ran on the minion that did not answer the ping:\n%s", got)
		}
		// At most two minions per job, every answering minion exactly once.
		seen := map[string]int{}
		for _, tgt := range jobTargets(m) {
			ids := strings.Fields(strings.Trim(tgt, "[]"))
			if len(ids) > 2 {
				t.Errorf("a job targeted %d minions: %s", len(ids), tgt)
			}
			for _, id := range ids {
				seen[id]++
			}
		}
		for _, id := range []string{"m1", "m2", "m3", "m4"} {
			if seen[id] != 1 {
				t.Errorf("%s ran %d times (%v)", id, seen[id], jobTargets(m))
			}
		}
	})
	t.Run("percent and retcode", func(t *testing.T) {
		m := fakemaster.Start(t, fiveMinions(map[string]int{"m2": 3, "m3": 2}).handle, cfg)
		stdout, _, code := run(t, m, Options{Words: []string{"*", "test.echo", "x"}, Batch: "50%"})
		if code != 3 {
			t.Errorf("exit %d, want the highest retcode 3", code)
		}
		if !strings.Contains(stdout, "\nExecuting run on ['m1', 'm2']\n") {
			t.Errorf("50%% of 4 answering minions is 2 at a time:\n%s", stdout)
		}
		if strings.Contains(stdout, "ERROR") {
			t.Errorf("batch mode prints no error summary:\n%s", stdout)
		}
	})
	t.Run("failhard", func(t *testing.T) {
		m := fakemaster.Start(t, fiveMinions(map[string]int{"m1": 4}).handle, cfg)
		stdout, _, code := run(t, m, Options{Words: []string{"*", "test.echo", "x"}, Batch: "1", Failhard: true})
		if code != 4 {
			t.Errorf("exit %d, want 4", code)
		}
		if strings.Contains(stdout, "m2") || len(jobTargets(m)) != 1 {
			t.Errorf("failhard did not stop after m1 (jobs %v):\n%s", jobTargets(m), stdout)
		}
	})
	t.Run("batch wait", func(t *testing.T) {
		m := fakemaster.Start(t, fiveMinions(nil).handle, cfg)
		start := time.Now()
		_, _, code := run(t, m, Options{Words: []string{"m1,m2,m3", "test.echo", "x"}, TargetType: "list", Batch: "1", BatchWait: 0.3})
		if code != 0 || len(jobTargets(m)) != 3 {
			t.Fatalf("exit %d, jobs %v", code, jobTargets(m))
		}
		// Two slot releases of 0.3 s each lie between the three jobs.
		if el := time.Since(start); el < 600*time.Millisecond {
			t.Errorf("three one-minion jobs with --batch-wait 0.3 took only %v", el)
		}
	})
	t.Run("static", func(t *testing.T) {
		m := fakemaster.Start(t, fiveMinions(nil).handle, cfg)
		stdout, _, code := run(t, m, Options{Words: []string{"*", "test.echo", "x"}, Batch: "3", Static: true, Out: "json"})
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
		v, err := decodeJSONMap(stdout)
		if err != nil || v.Len() != 4 || v.Str("m3") != "ok-m3" {
			t.Errorf("static batch output %q (%v)", stdout, err)
		}
	})
	t.Run("invalid size", func(t *testing.T) {
		m := fakemaster.Start(t, fiveMinions(nil).handle, cfg)
		stdout, _, code := run(t, m, Options{Words: []string{"*", "test.echo", "x"}, Batch: "lots"})
		if code != ExitUsage || !strings.Contains(stdout, "Invalid batch data sent: lots\nData must be in the form of %10, 10% or 3") || len(jobTargets(m)) != 0 {
			t.Errorf("exit %d, jobs %v, output %q", code, jobTargets(m), stdout)
		}
	})
	t.Run("safe limit", func(t *testing.T) {
		m := fakemaster.Start(t, fiveMinions(nil).handle, cfg)
		stdout, _, code := run(t, m, Options{Words: []string{"*", "test.echo", "x"}, BatchSafeLimit: 3, BatchSafeSize: "2"})
		if code != 0 || !strings.HasPrefix(stdout, "\nNOTICE: Too many minions targeted, switching to batch execution.\n") {
			t.Errorf("exit %d, output %q", code, stdout)
		}
		if n := len(jobTargets(m)); n < 2 {
			t.Errorf("safe limit: %d jobs, want batches of 2", n)
		}
		m2 := fakemaster.Start(t, fiveMinions(nil).handle, cfg)
		stdout, _, _ = run(t, m2, Options{Words: []string{"m1", "test.echo", "x"}, BatchSafeLimit: 3})
		if strings.Contains(stdout, "NOTICE") || stdout != "m1:\n    ok-m1\n" {
			t.Errorf("below the safe limit the job runs as usual: %q", stdout)
		}
	})
}

func decodeJSONMap(s string) (*payload.Map, error) {
	v, err := render.DecodeJSON([]byte(s))
	if err != nil {
		return nil, err
	}
	m, ok := v.(*payload.Map)
	if !ok {
		return nil, fmt.Errorf("not a map: %T", v)
	}
	return m, nil
}

// TestBatchFastMinionsNoTimeouts: when every minion of a batch returns,
// the run neither asks anyone saltutil.find_job (no sub-job waits for
// its timeout) nor opens more than one event-bus subscription, however
// many sub-jobs it starts.
func TestBatchFastMinionsNoTimeouts(t *testing.T) {
	const n = 40
	var order []string
	ms := map[string]simMinion{}
	for i := range n {
		id := fmt.Sprintf("f%02d", i)
		order = append(order, id)
		ms[id] = simMinion{ret: "ok-" + id, delay: time.Duration(i%4) * time.Millisecond}
	}
	// A long timeout: a run that waited for one would hit the test's
	// deadline, and a find_job round would show in the loads.
	m := fakemaster.Start(t, newSim(order, ms).handle, "timeout: 120\ngather_job_timeout: 60\n")
	probes := m.Bus.Subscribe(event.Prefix(ProbeTagPrefix), 1024)
	defer probes.Close()
	for _, o := range []Options{
		{Words: []string{"*", "test.echo", "x"}, Batch: "10%"},
		{Words: []string{"*", "test.echo", "x"}, Batch: "7", Static: true, Out: "json"},
	} {
		stdout, stderr, code := run(t, m, o)
		if code != 0 {
			t.Fatalf("batch %s: exit %d, stderr %q", o.Batch, code, stderr)
		}
		if o.Static {
			v, err := decodeJSONMap(stdout)
			if err != nil || v.Len() != n {
				t.Errorf("static batch: %d returns (%v) in %q", v.Len(), err, stdout)
			}
		} else {
			for _, id := range order {
				if !strings.Contains(stdout, "\n"+id+":\n    ok-"+id+"\n") {
					t.Errorf("batch %s: no return of %s in:\n%s", o.Batch, id, stdout)
				}
			}
		}
	}
	seen := map[string]int{}
	for _, l := range m.Loads() {
		switch l.Str("fun") {
		case "saltutil.find_job":
			t.Errorf("a find_job round although every minion returned: %v", l.List("arg"))
		case "test.echo":
			tgt, _ := l.Get("tgt")
			for _, id := range strs(tgt.([]any)) {
				seen[id]++
			}
		}
	}
	for _, id := range order {
		if seen[id] != 2 {
			t.Errorf("%s ran %d times in two batch runs", id, seen[id])
		}
	}
	tags := map[string]bool{}
	for {
		select {
		case e := <-probes.C():
			tags[e.Tag] = true
			continue
		default:
		}
		break
	}
	if len(tags) != 2 {
		t.Errorf("two batch runs made %d event subscriptions, want one each", len(tags))
	}
}
