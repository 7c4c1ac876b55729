package main

import (
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/fleetlab"
	"github.com/gsalt/gsalt/internal/testutil/proc"
)

// stopDeadline is how long a stopped daemon may take before the test
// fails: generous (a loaded 2-core machine, -race binaries), since a stop
// that hangs is what is tested, not its speed.
const stopDeadline = 30 * time.Second

// startStopMinion writes a minion configuration for id mn1 that talks to
// the master at 127.0.0.1:port and starts gsalt-minion on it.
func startStopMinion(t *testing.T, bin, dir string, port int) *proc.Proc {
	t.Helper()
	conf := fleetlab.WriteDaemonConfig(t, dir, "minion", "mn", port, "id: mn1")
	return proc.Command(t, "gsalt-minion", proc.Options{}, filepath.Join(bin, "gsalt-minion"), "-c", conf, "-l", "info")
}

// TestMinionStopsOnSIGTERM sends SIGTERM to a gsalt-minion process (as
// systemctl stop does) while its master keeps the connection open without
// answering, after its master stopped answering (SIGSTOP), and while a
// cmd.run job runs a child process, and checks that it exits and leaves
// no process behind (the job's child included).
func TestMinionStopsOnSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("real processes; skipped with -short")
	}
	bin := proc.Build(t, "./cmd/gsalt-master", "./cmd/gsalt-minion", "./cmd/gsalt")

	d := fleetlab.StopDaemon{Name: "gsalt-minion", Ready: regexp.MustCompile(`authenticated with the master`), Deadline: stopDeadline,
		Start: func(t *testing.T, dir string, port int) *proc.Proc { return startStopMinion(t, bin, dir, port) }}
	t.Run("master holds the connection", d.StopsWithSilentMaster)
	t.Run("master stops answering", func(t *testing.T) { d.StopsWithStoppedMaster(t, bin) })

	t.Run("job running", func(t *testing.T) {
		dir := t.TempDir()
		m := fleetlab.StartMaster(t, bin, dir, "auto_accept: True")
		p := startStopMinion(t, bin, dir, m.RetPort)
		p.WaitLog(t, 90*time.Second, d.Ready)
		cli := proc.Command(t, "gsalt", proc.Options{}, filepath.Join(bin, "gsalt"), "-c", m.ConfDir, "-t", "600", "mn1", "cmd.run", "sleep 300")
		// The job's own process must be there for the check of what the
		// stop leaves behind to mean something.
		p.WaitFor(t, 90*time.Second, "the job's sleep process", func() bool { return len(proc.Descendants(p.Pid())) > 0 })
		took := p.Terminate(t, stopDeadline)
		t.Logf("gsalt-minion exited %v after SIGTERM with a job running", took.Round(time.Millisecond))
		cli.Stop()
	})
}
