package testlab

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Netconf is yuma123's netconfd (Debian package netconfd) with its own
// socket, startup file and log in a temporary directory, reachable as the
// SSH subsystem "netconf" of a private sshd on 127.0.0.1:Port. netconfd
// runs as the test user, whose home is the directory, and the user is its
// superuser (NACM would otherwise deny writes).
type Netconf struct {
	Dir, Sock      string
	User, Password string
	Port           int
	netconfd       *exec.Cmd
}

// StopServer kills netconfd (the sshd stays): a server gone away.
func (l *Netconf) StopServer() {
	_ = l.netconfd.Process.Kill()
	_, _ = l.netconfd.Process.Wait()
}

// netconfTools are the programs the lab needs.
var netconfTools = []string{"/usr/sbin/netconfd", "/usr/sbin/netconf-subsystem", "/usr/sbin/sshd", "useradd", "userdel", "chpasswd"}

// StartNetconf starts the lab, or skips the test with one line saying
// why (-short, not root, a program missing).
func StartNetconf(t testing.TB) *Netconf {
	t.Helper()
	if testing.Short() {
		t.Skip("junos: NETCONF server test skipped in -short mode")
	}
	if os.Geteuid() != 0 {
		t.Skip("junos: NETCONF server test needs root (test user, sshd) and the Debian packages netconfd openssh-server")
	}
	for _, tool := range netconfTools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("junos: NETCONF server test needs %s (apt-get install netconfd openssh-server)", tool)
		}
	}
	dir, err := os.MkdirTemp("", "gsalt-netconf-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	// The test user's netconf-subsystem must reach the socket.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// The user's home is the lab directory: netconfd runs as the user and
	// creates ~/.yuma whatever $HOME says.
	u := AddUser(t, "gsnc", dir, "/bin/sh")
	l := &Netconf{Dir: dir, Sock: filepath.Join(dir, "ncxserver.sock"), User: u.Name, Password: u.Password, Port: FreePort(t)}
	l.startNetconfd(t)
	SSHD{Port: l.Port, Users: []string{l.User}, LogDir: dir,
		Extra: fmt.Sprintf("Subsystem netconf /usr/sbin/netconf-subsystem --ncxserver-sockname=%d@%s\n", l.Port, l.Sock)}.Start(t)
	return l
}

func (l *Netconf) startNetconfd(t testing.TB) {
	t.Helper()
	startup := filepath.Join(l.Dir, "startup-cfg.xml")
	if err := os.WriteFile(startup, []byte(NetconfStartup), 0o644); err != nil {
		t.Fatal(err)
	}
	uid, gid := LookupIDs(t, l.User, l.User)
	// netconfd keeps its transaction-id file in yuma-home/data/.
	if err := os.Mkdir(filepath.Join(l.Dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{l.Dir, filepath.Join(l.Dir, "data"), startup} {
		if err := os.Chown(p, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("/usr/sbin/netconfd",
		"--ncxserver-sockname="+l.Sock, "--yuma-home="+l.Dir,
		"--module=ietf-system", "--module=ietf-interfaces", "--module=iana-if-type", "--module=ietf-ip",
		// netconfd accepts sessions from the SSH ports it is told about.
		fmt.Sprintf("--port=%d", l.Port),
		"--target=candidate", "--with-startup=true", "--startup="+startup,
		"--superuser="+l.User, "--log="+filepath.Join(l.Dir, "netconfd.log"), "--log-level=info")
	cmd.Env = append(os.Environ(), "HOME="+l.Dir)
	cmd.Dir = l.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	if err := cmd.Start(); err != nil {
		t.Skipf("junos: cannot start netconfd: %v", err)
	}
	l.netconfd = cmd
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	WaitFor(t, "netconfd socket", func() bool {
		_, err := os.Stat(l.Sock)
		return err == nil
	})
}

// Logs returns the tails of the lab's logs, for failure messages.
func (l *Netconf) Logs() string {
	var b strings.Builder
	for _, f := range []string{"netconfd.log", "sshd.log"} {
		data, _ := os.ReadFile(filepath.Join(l.Dir, f))
		if len(data) > 4000 {
			data = data[len(data)-4000:]
		}
		fmt.Fprintf(&b, "--- %s\n%s\n", f, data)
	}
	return b.String()
}

// NetconfStartup is the lab's startup configuration: hostname vmx1, two NTP
// servers, three ietf-interfaces with addresses.
const NetconfStartup = `<config xmlns="urn:ietf:params:xml:ns:netconf:base:1.0">
  <system xmlns="urn:ietf:params:xml:ns:yang:ietf-system">
    <hostname>vmx1</hostname>
    <ntp>
      <enabled>true</enabled>
      <server><name>ntp-a</name><udp><address>192.0.2.123</address></udp></server>
      <server><name>ntp-b</name><udp><address>192.0.2.124</address></udp><association-type>peer</association-type></server>
    </ntp>
  </system>
  <interfaces xmlns="urn:ietf:params:xml:ns:yang:ietf-interfaces">
    <interface>
      <name>ge-0/0/0</name>
      <description>uplink</description>
      <type xmlns:ianaift="urn:ietf:params:xml:ns:yang:iana-if-type">ianaift:ethernetCsmacd</type>
      <ipv4 xmlns="urn:ietf:params:xml:ns:yang:ietf-ip">
        <address><ip>192.0.2.1</ip><prefix-length>24</prefix-length></address>
      </ipv4>
    </interface>
    <interface>
      <name>ge-0/0/10</name>
      <type xmlns:ianaift="urn:ietf:params:xml:ns:yang:iana-if-type">ianaift:ethernetCsmacd</type>
      <ipv6 xmlns="urn:ietf:params:xml:ns:yang:ietf-ip">
        <address><ip>2001:db8::1</ip><prefix-length>64</prefix-length></address>
      </ipv6>
    </interface>
    <interface>
      <name>ge-0/0/2</name>
      <type xmlns:ianaift="urn:ietf:params:xml:ns:yang:iana-if-type">ianaift:ethernetCsmacd</type>
    </interface>
  </interfaces>
</config>
`
