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

// startStopProxy writes a proxy configuration for one dummy device that
// talks to the master at 127.0.0.1:port and starts gsalt-proxy on it.
func startStopProxy(t *testing.T, bin, dir string, port int) *proc.Proc {
	t.Helper()
	conf := fleetlab.WriteDaemonConfig(t, dir, "proxy", "p", port, "proxy: {proxytype: dummy}")
	return proc.Command(t, "gsalt-proxy", proc.Options{}, filepath.Join(bin, "gsalt-proxy"), "-c", conf, "--proxyid", "d1", "-l", "info")
}

// TestProxyStopsOnSIGTERM sends SIGTERM to a gsalt-proxy process (as
// systemctl stop does) in the states a stop used to be slow in, and
// checks that it exits, leaving no process behind: its master accepts the
// connection and never answers (a master that keeps the connection
// open), its master stops answering once the device is served (SIGSTOP),
// and a job runs on the device.
func TestProxyStopsOnSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("real processes; skipped with -short")
	}
	bin := fleetlab.Build(t)

	d := fleetlab.StopDaemon{Name: "gsalt-proxy", Ready: regexp.MustCompile(`proxy module initialized`), Deadline: stopDeadline,
		Start: func(t *testing.T, dir string, port int) *proc.Proc { return startStopProxy(t, bin, dir, port) }}
	t.Run("master holds the connection", d.StopsWithSilentMaster)
	t.Run("master stops answering", func(t *testing.T) { d.StopsWithStoppedMaster(t, bin) })

	t.Run("job running", func(t *testing.T) {
		dir := t.TempDir()
		m := fleetlab.StartMaster(t, bin, dir, "auto_accept: True")
		p := startStopProxy(t, bin, dir, m.RetPort)
		p.WaitLog(t, 90*time.Second, d.Ready)
		cli := proc.Command(t, "gsalt", proc.Options{}, filepath.Join(bin, "gsalt"), "-c", m.ConfDir, "-t", "600", "d1", "test.sleep", "300")
		p.WaitLog(t, 90*time.Second, regexp.MustCompile(`executing command.*fun=test\.sleep`))
		took := p.Terminate(t, stopDeadline)
		t.Logf("gsalt-proxy exited %v after SIGTERM with a job running", took.Round(time.Millisecond))
		cli.Stop()
	})
}
