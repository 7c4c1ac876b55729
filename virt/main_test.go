//go:build libvirt_dlopen

package virt_test

import (
	"flag"
	"os"
	"os/exec"
	"testing"

	"github.com/gsalt/gsalt/internal/testutil/proc"
)

// TestMain starts building the commands of the daemon tests (the host's
// and the guest's static gsalt-minion) in the background when the whole
// package runs, since the parallel tests start in no fixed order and the
// guest boot test is the longest; and it lets six of the parallel tests
// (each on its own private libvirtd) run at once: they mostly wait on
// libvirtd, QEMU and daemons.
func TestMain(m *testing.M) {
	flag.Parse()
	if !testing.Short() && flag.Lookup("test.run").Value.String() == "" && daemonTestsRun() {
		proc.Prebuild(hostBuild, hostCommands...)
		proc.Prebuild(guestBuild, "./cmd/gsalt-minion")
	}
	proc.MainParallel(m, 6)
}

// daemonTestsRun reports whether the daemon tests can run here (what
// virttest.Start needs), so that no build outlives a package whose tests
// all skip.
func daemonTestsRun() bool {
	if os.Geteuid() != 0 {
		return false
	}
	for _, tool := range []string{"/usr/sbin/libvirtd", "unshare", "qemu-system-x86_64"} {
		if _, err := exec.LookPath(tool); err != nil {
			return false
		}
	}
	return true
}
