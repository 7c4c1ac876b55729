package interop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// TestMasterSideBatch: gsalt-master runs batches itself (Salt 3006's
// BatchAsync) for `gsalt -b N --async` and for a reactor local reaction
// with batch:, against a gsalt-minion swarm of four; every return lands
// under the one batch jid.
func TestMasterSideBatch(t *testing.T) {
	bin, ctx, cancel := startInterop(t)
	defer cancel()
	ft := newFreshTree(t, "b")
	react := filepath.Join(ft.dir, "srv", "reactor", "batch.sls")
	writeFile(t, react, "echo:\n  local.test.echo:\n    - tgt: 'pf1-*'\n    - arg: [from-reactor]\n    - batch: 1\n")
	f, err := os.OpenFile(filepath.Join(ft.conf, "master"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "auto_accept: True\ntimeout: 10\nreactor:\n  - 'gsalt/test/batch':\n    - %s\n", react)
	f.Close()
	gsalt := startGsaltMaster(t, ctx, bin, ft)
	daemon(t, exec.CommandContext(ctx, filepath.Join(bin, "gsalt-minion"), "-c", ft.conf, "--swarm", "4", "-l", "warning"), filepath.Join(ft.dir, "swarm.out"))
	waitFor(t, "four swarm minions answering", 120*time.Second, func() bool {
		return bytes.Count(run(t, gsalt("pf1-*", "test.ping", "--out", "json", "--static", "-t", "5"), true), []byte("true")) == 4
	})
	runner := func(args ...string) *exec.Cmd {
		return exec.CommandContext(ctx, filepath.Join(bin, "gsalt-run"), append([]string{"-c", ft.conf}, args...)...)
	}
	// returnsOf polls the job cache until the job has n returns.
	returnsOf := func(jid string, n int) map[string]any {
		t.Helper()
		var rets map[string]any
		waitFor(t, fmt.Sprintf("%d returns of %s in the job cache", n, jid), 90*time.Second, func() bool {
			out := run(t, runner("jobs.lookup_jid", jid, "--out", "json"), true)
			rets = map[string]any{}
			_ = json.Unmarshal(out, &rets)
			return len(rets) >= n
		})
		return rets
	}

	out := run(t, gsalt("-b", "2", "--async", "pf1-*", "test.echo", "batched"), false)
	m := regexp.MustCompile(`Executed command with job ID: (\d{20})`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("gsalt -b 2 --async: %s", out)
	}
	rets := returnsOf(string(m[1]), 4)
	// Each sub-job of the batch is cached under the batch jid with its list
	// target; the last one had at most two minions.
	var job map[string]any
	_ = json.Unmarshal(run(t, runner("jobs.list_job", string(m[1]), "--out", "json"), false), &job)
	if tl, _ := job["Target"].([]any); job["Target-type"] != "list" || len(tl) == 0 || len(tl) > 2 {
		t.Errorf("gsalt -b 2 --async was not run as batches of 2: %v %v", job["Target"], job["Target-type"])
	}
	if md, _ := job["Metadata"].(map[string]any); md["batch_jid"] != string(m[1]) {
		t.Errorf("batch metadata: %v", job["Metadata"])
	}
	for id, r := range rets {
		if r != "batched" {
			t.Errorf("%s returned %v under the batch jid", id, r)
		}
	}

	run(t, runner("event.send", "gsalt/test/batch"), false)
	var jid string
	waitFor(t, "the reactor's batch job in the job cache", 90*time.Second, func() bool {
		out := run(t, runner("jobs.list_jobs", "search_function=test.echo", "--out", "json"), true)
		var jobs map[string]map[string]any
		_ = json.Unmarshal(out, &jobs)
		for j, job := range jobs {
			if fmt.Sprint(job["Arguments"]) == "[from-reactor]" {
				jid = j
				// The cached load is the last sub-job's: a list of one.
				if tl, _ := job["Target"].([]any); job["Target-type"] != "list" || len(tl) != 1 {
					t.Errorf("the reactor's job was not run as a batch of 1: %v", job)
				}
				return true
			}
		}
		return false
	})
	for id, r := range returnsOf(jid, 4) {
		if r != "from-reactor" {
			t.Errorf("%s returned %v under the reactor's batch jid", id, r)
		}
	}
}
