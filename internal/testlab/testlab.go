// Package testlab starts the real programs some tests run against —
// a private sshd on 127.0.0.1, test users, yuma123's netconfd — and
// removes them when the test ends. It is used only by tests; every
// helper skips the test with one line when what it needs is missing.
package testlab

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/internal/testutil/proc"
	"golang.org/x/crypto/ssh"
)

// RandHex returns n random bytes in hex (unique user names, passwords).
func RandHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Run runs a command and fails the test when it fails.
func Run(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// LookupIDs returns the uid of user u and the gid of group g.
func LookupIDs(t testing.TB, u, g string) (int, int) {
	t.Helper()
	uu, err := user.Lookup(u)
	if err != nil {
		t.Fatal(err)
	}
	gg, err := user.LookupGroup(g)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(uu.Uid)
	gid, _ := strconv.Atoi(gg.Gid)
	return uid, gid
}

// WaitFor polls ok for up to 60 s (scaled by GSALT_TEST_SLOWDOWN) and
// fails the test if it never holds. A real daemon (sshd in front of
// netconfd, FRR, dnsmasq) took over 10 s to come up on a loaded 2-core
// machine (make test beside other work).
func WaitFor(t testing.TB, what string, ok func() bool) {
	t.Helper()
	testutil.Eventually(t, 60*time.Second, ok, "testlab: "+what+" to come up")
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	return proc.FreePort(t)
}

// User is a local user the test created.
type User struct {
	Name, Password string
}

// AddUser creates a user without a home directory of its own (home is
// used as $HOME when given), in groups, with shell and a random password;
// the user is deleted when the test ends (retrying while sshd's
// per-connection processes still run as it).
func AddUser(t testing.TB, prefix, home, shell string, groups ...string) User {
	t.Helper()
	u := User{Name: prefix + RandHex(4), Password: "Pw-" + RandHex(8)}
	args := []string{"-M", "-s", shell}
	if home != "" {
		args = append(args, "-d", home)
	}
	if len(groups) > 0 {
		args = append(args, "-G", strings.Join(groups, ","))
	}
	Run(t, "useradd", append(args, u.Name)...)
	t.Cleanup(func() {
		for end := time.Now().Add(3 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if exec.Command("userdel", u.Name).Run() == nil {
				return
			}
			if time.Now().After(end) {
				_ = exec.Command("userdel", "-f", u.Name).Run()
				return
			}
		}
	})
	cmd := exec.Command("chpasswd")
	cmd.Stdin = strings.NewReader(u.Name + ":" + u.Password + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chpasswd: %v %s", err, out)
	}
	return u
}

// SSHD describes a private sshd: password logins for Users only, on
// 127.0.0.1:Port (a free port when 0), with Extra appended to its
// configuration (Subsystem, Match blocks). LogDir receives sshd.log (a
// temporary directory when empty).
type SSHD struct {
	Port   int
	Users  []string
	Extra  string
	LogDir string
}

// Start starts sshd in the foreground until the test ends and returns
// its port. It skips the test when sshd cannot start.
func (s SSHD) Start(t testing.TB) int {
	t.Helper()
	if _, err := os.Stat("/run/sshd"); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Remove("/run/sshd") })
	}
	dir := t.TempDir()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	blk, err := ssh.MarshalPrivateKey(key, "")
	if err != nil {
		t.Fatal(err)
	}
	hostKey := filepath.Join(dir, "host_ed25519")
	if err := os.WriteFile(hostKey, pem.EncodeToMemory(blk), 0o600); err != nil {
		t.Fatal(err)
	}
	if s.Port == 0 {
		s.Port = FreePort(t)
	}
	cfg := fmt.Sprintf(`Port %d
ListenAddress 127.0.0.1
HostKey %s
PidFile %s
UsePAM no
PasswordAuthentication yes
KbdInteractiveAuthentication no
PermitRootLogin no
StrictModes no
AllowUsers %s
%s`, s.Port, hostKey, filepath.Join(dir, "sshd.pid"), strings.Join(s.Users, " "), s.Extra)
	cfgFile := filepath.Join(dir, "sshd_config")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	logDir := s.LogDir
	if logDir == "" {
		logDir = dir
	}
	logf, err := os.Create(filepath.Join(logDir, "sshd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/usr/sbin/sshd", "-D", "-e", "-f", cfgFile)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		t.Skipf("testlab: cannot start sshd: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = logf.Close()
	})
	WaitFor(t, "sshd", func() bool {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", s.Port), 200*time.Millisecond)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	})
	return s.Port
}
