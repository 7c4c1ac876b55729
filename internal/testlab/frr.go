package testlab

// A real FRR router for tests: its daemons in a network namespace of
// their own, vtysh reachable over SSH on 127.0.0.1.

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
)

// FRR is FRR's zebra, staticd and bgpd running in their own network
// namespace, reachable through an sshd on 127.0.0.1 whose test user
// (VtyshUser) gets vtysh (ForceCommand) and whose second user (ShellUser)
// gets a bash login shell.
type FRR struct {
	NS, Dir    string
	VtyshUser  User
	ShellUser  User
	Port       int
	VtyshFlags []string
}

// frrLabTools are the programs the lab needs (Debian packages frr,
// openssh-server, iproute2, passwd, bash).
var frrLabTools = []string{
	"/usr/lib/frr/zebra", "/usr/lib/frr/staticd", "/usr/lib/frr/bgpd", "/usr/bin/vtysh",
	"/usr/sbin/sshd", "ip", "useradd", "userdel", "chpasswd", "bash",
}

// StartFRR starts the lab (needs root and Debian's frr and
// openssh-server) or skips the test with one line saying why; everything
// stops when the test ends.
func StartFRR(t testing.TB) *FRR {
	t.Helper()
	if testing.Short() {
		t.Skip("frr: real-router test skipped in -short mode")
	}
	if os.Geteuid() != 0 {
		t.Skip("frr: real-router test needs root (network namespace, daemons, test user)")
	}
	for _, tool := range frrLabTools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("frr: real-router test needs %s (apt-get install frr openssh-server)", tool)
		}
	}
	for _, g := range []string{"frr", "frrvty"} {
		if _, err := user.LookupGroup(g); err != nil {
			t.Skipf("frr: real-router test needs group %s (apt-get install frr)", g)
		}
	}
	l := &FRR{NS: "gsalt-frr-" + RandHex(4)}
	if out, err := exec.Command("ip", "netns", "add", l.NS).CombinedOutput(); err != nil {
		t.Skipf("frr: cannot create a network namespace: %v %s", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", l.NS).Run() })
	Run(t, "ip", "netns", "exec", l.NS, "ip", "link", "set", "lo", "up")

	dir, err := os.MkdirTemp("", "gsalt-frr-")
	if err != nil {
		t.Fatal(err)
	}
	l.Dir = dir
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	frrUID, frrGID := LookupIDs(t, "frr", "frr")
	for _, f := range []string{"zebra.conf", "staticd.conf", "bgpd.conf", "vtysh.conf"} {
		p := filepath.Join(dir, f)
		if err := os.WriteFile(p, nil, 0o640); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, frrUID, frrGID); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(dir, frrUID, frrGID); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o770); err != nil {
		t.Fatal(err)
	}
	l.VtyshFlags = []string{"--vty_socket", dir, "--config_dir", dir}
	daemons := []string{"zebra", "staticd", "bgpd"}
	t.Cleanup(func() {
		// SIGTERM makes FRR's daemons linger for a second or two; nothing
		// of theirs outlives the namespace and the directory, so kill.
		for _, d := range daemons {
			if pid := frrPid(filepath.Join(dir, d+".pid")); pid > 1 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	for _, d := range daemons {
		args := []string{"netns", "exec", l.NS, "/usr/lib/frr/" + d, "-d", "-N", l.NS,
			"--vty_socket", dir, "-i", filepath.Join(dir, d+".pid"), "-z", filepath.Join(dir, "zserv.api"),
			"-f", filepath.Join(dir, d+".conf"), "-u", "frr", "-g", "frr", "-P", "0",
			"--log", "file:" + filepath.Join(dir, d+".log")}
		if d == "bgpd" {
			args = append(args, "-p", "0")
		}
		Run(t, "ip", args...)
		WaitFor(t, d+" vty socket", func() bool {
			_, err := os.Stat(filepath.Join(dir, d+".vty"))
			return err == nil
		})
	}

	l.VtyshUser = AddUser(t, "gsfrr", "", "/bin/bash", "frr", "frrvty")
	l.ShellUser = AddUser(t, "gsfrs", "", "/bin/bash", "frr", "frrvty")
	l.Port = SSHD{Users: []string{l.VtyshUser.Name, l.ShellUser.Name},
		Extra: fmt.Sprintf("Match User %s\n    ForceCommand /usr/bin/vtysh %s\n", l.VtyshUser.Name, strings.Join(l.VtyshFlags, " "))}.Start(t)
	return l
}

// frrPid reads a daemon's pid file (0 if there is none).
func frrPid(p string) int {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// Vtysh runs one command on the router directly (not through a driver).
func (l *FRR) Vtysh(t testing.TB, cmd string) string {
	t.Helper()
	args := append(slices.Clone(l.VtyshFlags), "-c", cmd)
	return Run(t, "/usr/bin/vtysh", args...)
}

// KernelRoute returns the namespace's kernel route for prefix ("" if
// none). zebra updates the kernel after vtysh returns, so the route is
// read until it matches want (present or absent) or 5 s have passed.
func (l *FRR) KernelRoute(t testing.TB, prefix string, want bool) string {
	t.Helper()
	var r string
	testutil.Poll(5*time.Second, func() bool {
		r = strings.TrimSpace(Run(t, "ip", "netns", "exec", l.NS, "ip", "route", "show", prefix))
		return (r != "") == want
	})
	return r
}
