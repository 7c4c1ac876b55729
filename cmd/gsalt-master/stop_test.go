package main

import (
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/fleetlab"
	"github.com/gsalt/gsalt/internal/testutil/proc"
)

// TestMasterStopsOnSIGTERM sends SIGTERM to a gsalt-master process (as
// systemctl stop does) with a minion connected, a job running on it that
// a gsalt command waits for, and two clients that opened the publish and
// ret ports and never speak; it must exit, leaving no process behind.
func TestMasterStopsOnSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("real processes; skipped with -short")
	}
	bin := proc.Build(t, "./cmd/gsalt-master", "./cmd/gsalt-minion", "./cmd/gsalt")
	dir := t.TempDir()
	m := fleetlab.StartMaster(t, bin, dir, "auto_accept: True")
	conf := fleetlab.WriteDaemonConfig(t, dir, "minion", "mn", m.RetPort, "id: mn1")
	mn := proc.Command(t, "gsalt-minion", proc.Options{}, filepath.Join(bin, "gsalt-minion"), "-c", conf, "-l", "info")
	mn.WaitLog(t, 90*time.Second, regexp.MustCompile(`authenticated with the master`))
	for _, port := range []int{m.PubPort, m.RetPort} {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	cli := proc.Command(t, "gsalt", proc.Options{}, filepath.Join(bin, "gsalt"), "-c", m.ConfDir, "-t", "600", "mn1", "cmd.run", "sleep 300")
	mn.WaitLog(t, 90*time.Second, regexp.MustCompile(`executing command.*fun=cmd\.run`))
	took := m.Proc.Terminate(t, 30*time.Second)
	t.Logf("gsalt-master exited %v after SIGTERM", took.Round(time.Millisecond))
	cli.Stop()
}
