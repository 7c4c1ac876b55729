package e2e

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
)

// exampleDir is the example's root, one level up from this package.
func exampleDir(t testing.TB) string {
	t.Helper()
	abs, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// vectorsDir holds the repository's test keys.
const vectorsDir = "../../../testdata/vectors"

func logger() *slog.Logger {
	if os.Getenv("GSALT_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// requireTools skips the test with one line when dnsmasq or dig is missing.
func requireTools(t testing.TB) {
	t.Helper()
	for _, tool := range []string{"dnsmasq", "dig"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed: skipping the dnsmasq reservations end-to-end test", tool)
		}
	}
}

func copyFile(t testing.TB, src, dst string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	testutil.WriteFile(t, dst, string(b), mode)
}

// freeDNSPort returns a port free for both TCP and UDP on 127.0.0.2
// (dnsmasq listens on both).
func freeDNSPort(t testing.TB) int {
	t.Helper()
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.2:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		u, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.2:%d", port))
		l.Close()
		if err == nil {
			u.Close()
			return port
		}
	}
	t.Fatal("no free port on 127.0.0.2")
	return 0
}

// freeUDPPorts returns n distinct free UDP ports on 127.0.0.1.
func freeUDPPorts(t testing.TB, n int) []int {
	t.Helper()
	var out []int
	var conns []net.PacketConn
	for range n {
		c, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		out = append(out, c.LocalAddr().(*net.UDPAddr).Port)
	}
	for _, c := range conns {
		c.Close()
	}
	return out
}

// maxLog bounds the log kept of a dnsmasq.
const maxLog = 1 << 20

// dnsmasq is a running dnsmasq started by a test.
type dnsmasq struct {
	port      int
	pidFile   string
	addnHosts string
	dhcpHosts string
	// hostsDir and dhcpHostsDir are the --hostsdir and --dhcp-hostsdir of
	// the virt guests' reservations (dnsmasq.cloud).
	hostsDir, dhcpHostsDir string
	// dhcp tells whether DHCP is on (root only: it needs CAP_NET_ADMIN),
	// so that dnsmasq reads the dhcp-hostsfile.
	dhcp bool
	log  *testutil.Buffer
}

// startDnsmasq runs dnsmasq on 127.0.0.2:<free port> with empty
// reservation files in dir and stops it when the test ends.
func startDnsmasq(t testing.TB, dir string) *dnsmasq {
	t.Helper()
	d := &dnsmasq{
		port:         freeDNSPort(t),
		pidFile:      filepath.Join(dir, "dnsmasq.pid"),
		addnHosts:    filepath.Join(dir, "reservations.hosts"),
		dhcpHosts:    filepath.Join(dir, "reservations.dhcp"),
		hostsDir:     filepath.Join(dir, "cloud.hosts.d"),
		dhcpHostsDir: filepath.Join(dir, "cloud.dhcp.d"),
		dhcp:         os.Geteuid() == 0,
		log:          &testutil.Buffer{Max: maxLog},
	}
	testutil.WriteFile(t, d.addnHosts, "", 0o644)
	testutil.WriteFile(t, d.dhcpHosts, "", 0o644)
	for _, dir := range []string{d.hostsDir, d.dhcpHostsDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"--hostsdir=" + d.hostsDir, "--dhcp-hostsdir=" + d.dhcpHostsDir, "--keep-in-foreground", "--conf-file=/dev/null", "--listen-address=127.0.0.2", "--bind-interfaces",
		"--port=" + strconv.Itoa(d.port), "--pid-file=" + d.pidFile, "--addn-hosts=" + d.addnHosts,
		"--dhcp-hostsfile=" + d.dhcpHosts, "--no-resolv", "--no-hosts", "--log-facility=-"}
	if d.dhcp {
		// As root dnsmasq would switch to "nobody", which cannot read the
		// test's files after a SIGHUP.
		if u, err := user.Current(); err == nil {
			args = append(args, "--user="+u.Username)
		}
		ports := freeUDPPorts(t, 2)
		args = append(args, "--dhcp-range=127.0.0.50,127.0.0.60", fmt.Sprintf("--dhcp-alternate-port=%d,%d", ports[0], ports[1]),
			"--dhcp-leasefile="+filepath.Join(dir, "dnsmasq.leases"))
	}
	cmd := exec.Command("dnsmasq", args...)
	cmd.Stdout, cmd.Stderr = d.log, d.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	if !testutil.Poll(10*time.Second, func() bool {
		select {
		case <-done:
			t.Fatalf("dnsmasq exited: %s", d.log.String())
		default:
		}
		b, err := os.ReadFile(d.pidFile)
		if err != nil || strings.TrimSpace(string(b)) == "" {
			return false
		}
		_, err = d.dig("localhost.invalid")
		return err == nil
	}) {
		t.Fatalf("dnsmasq did not come up: %s", d.log.String())
	}
	return d
}

// dig asks dnsmasq for name's A records (dig +short), sorted as dig
// prints them.
func (d *dnsmasq) dig(name string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "dig", "@127.0.0.2", "-p", strconv.Itoa(d.port), name, "A", "+short", "+time=1", "+tries=1").Output()
	if err != nil {
		return "", fmt.Errorf("dig %s: %w (%s)", name, err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// waitDig polls dig until name resolves to want ("" for no answer).
func (d *dnsmasq) waitDig(t testing.TB, name, want string, timeout time.Duration) {
	t.Helper()
	var got string
	var err error
	if testutil.Poll(timeout, func() bool { got, err = d.dig(name); return err == nil && got == want }) {
		return
	}
	hosts, _ := os.ReadFile(d.addnHosts)
	t.Fatalf("dig %s: got %q (%v), want %q\naddn-hosts:\n%s\ndnsmasq log:\n%s", name, got, err, want, hosts, d.log.String())
}

// readLines returns a file's lines.
func readLines(t testing.TB, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}
