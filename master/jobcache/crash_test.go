package jobcache_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gsalt/gsalt/master/jobcache"
	"github.com/gsalt/gsalt/wire/payload"
)

// crashJID is the job the crash writer stores its returns under.
const crashJID = "20261128000000000001"

// crashWriterEnv makes the test binary, run again by
// TestAckedReturnsSurviveKill, the crash writer: it stores returns from 64
// goroutines and prints "acked <minion>" after each SaveReturn came back
// without error, until it is killed.
const crashWriterEnv = "GSALT_JOBCACHE_CRASH_WRITER"

func TestCrashWriterProcess(t *testing.T) {
	path := os.Getenv(crashWriterEnv)
	if path == "" {
		t.Skip("helper process of TestAckedReturnsSurviveKill")
	}
	c, err := jobcache.Open(path, jobcache.Options{})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	var wg sync.WaitGroup
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; ; i++ {
				id := fmt.Sprintf("m%02d-%06d", g, i)
				if err := c.SaveReturn(crashJID, id, payload.NewMap("return", true, "fun", "test.ping")); err != nil {
					mu.Lock()
					fmt.Fprintln(out, "error", id, err)
					out.Flush()
					mu.Unlock()
					return
				}
				mu.Lock()
				fmt.Fprintln(out, "acked", id)
				out.Flush()
				mu.Unlock()
			}
		}(g)
	}
	wg.Wait()
	os.Exit(3)
}

// TestAckedReturnsSurviveKill: a process storing returns through the
// group commit (many writes in one transaction) is killed with SIGKILL
// while it writes; every return it had acknowledged (SaveReturn returned)
// is in the job cache when it is opened again, and the file is not
// damaged. Runs three times, killed after different amounts of work.
func TestAckedReturnsSurviveKill(t *testing.T) {
	if testing.Short() {
		t.Skip("real-process crash test skipped in -short mode")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for run, after := range []int{50, 700, 3000} {
		path := filepath.Join(t.TempDir(), "jobs.db")
		cmd := exec.Command(exe, "-test.run", "^TestCrashWriterProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashWriterEnv+"="+path)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		acked := map[string]bool{}
		sc := bufio.NewScanner(stdout)
		deadline := time.AfterFunc(2*time.Minute, func() { _ = cmd.Process.Kill() })
		for sc.Scan() {
			line := sc.Text()
			if id, ok := strings.CutPrefix(line, "acked "); ok {
				acked[id] = true
				if len(acked) == after {
					_ = cmd.Process.Signal(syscall.SIGKILL)
				}
				continue
			}
			if strings.HasPrefix(line, "PASS") || strings.HasPrefix(line, "ok") || strings.HasPrefix(line, "---") || strings.HasPrefix(line, "===") {
				continue
			}
			t.Errorf("run %d: writer: %s", run, line)
		}
		deadline.Stop()
		err = cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("run %d: the writer was not killed by SIGKILL: %v (%d acked)", run, err, len(acked))
		}
		c, err := jobcache.Open(path, jobcache.Options{})
		if err != nil {
			t.Fatalf("run %d: reopen after the kill: %v", run, err)
		}
		job, err := c.Get(crashJID)
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		lost := 0
		for id := range acked {
			if r := job.Returns[id]; r == nil || r.Bool("return") != true {
				lost++
			}
		}
		c.Close()
		if lost > 0 {
			t.Fatalf("run %d: %d of %d acknowledged returns lost", run, lost, len(acked))
		}
		t.Logf("run %d: killed after %d acknowledged returns (%d stored, the rest in flight)", run, len(acked), len(job.Returns))
	}
}
