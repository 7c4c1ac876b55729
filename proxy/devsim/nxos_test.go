package devsim

import (
	"bufio"
	"bytes"
	"crypto/md5" //nolint:gosec // compared with the device's md5sum
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

func TestNXOSOptionsAndConfigRoundTrip(t *testing.T) {
	f := startTest(t, Options{Platform: "NXOS", Devices: 3})
	if f.Options().Platform != PlatformNXOS {
		t.Fatalf("platform %q", f.Options().Platform)
	}
	dev := f.Device(1)
	run := dev.RunningConfig()
	for _, want := range []string{"!Command: show running-config\n", "version 9.3(8) Bios:version\n", "hostname sw2\n",
		"interface Ethernet1/2\n  description to sw3 Ethernet1/3\n  no switchport\n  ip address 10.0.0.2/31\n  no shutdown\n",
		"router bgp 65002\n  router-id 10.255.0.2\n  neighbor 10.0.0.3\n    remote-as 65003\n    address-family ipv4 unicast\n"} {
		if !strings.Contains(run, want) {
			t.Errorf("running config lacks %q:\n%s", want, run)
		}
	}
	if strings.Contains(run, "\n!\n") || strings.Contains(run, "\nend\n") {
		t.Errorf("IOS-style separators in an NX-OS config:\n%s", run)
	}
	// The rendered configuration parses back to the same configuration.
	if err := dev.SetRunningConfig(run); err != nil {
		t.Fatal(err)
	}
	if again := dev.RunningConfig(); strings.SplitN(again, "\n\n", 2)[1] != strings.SplitN(run, "\n\n", 2)[1] {
		t.Errorf("round trip changed the configuration:\n%s\n---\n%s", run, again)
	}
	if err := dev.SetRunningConfig("interface Ethernet1/99\n  shutdown\n"); err == nil {
		t.Error("a configuration with a missing physical port was accepted")
	}
}

// TestNXOSRollbackPatch checks the commands "show diff rollback-patch" prints to turn one
// configuration into another.
func TestNXOSRollbackPatch(t *testing.T) {
	d := mustPlatform(t, PlatformNXOS).d
	cases := []struct {
		name, a, b string
		want       []string
	}{
		{"same", "hostname a\n", "hostname a\n", nil},
		{"single value replaced", "hostname a\nntp server 1.1.1.1\n", "hostname b\nntp server 1.1.1.1\n", []string{"hostname b"}},
		{"leaf swapped", "ntp server 1.1.1.1\n", "ntp server 2.2.2.2\n", []string{"no ntp server 1.1.1.1", "ntp server 2.2.2.2"}},
		{"block removed", "interface loopback1\n  description x\n", "", []string{"no interface loopback1"}},
		{"block added", "", "interface loopback2\n  ip address 10.0.0.1/32\n",
			[]string{"interface loopback2", "  ip address 10.0.0.1/32"}},
		{"child changes", "interface Ethernet1/1\n  description a\n  switchport access vlan 10\n",
			"interface Ethernet1/1\n  description b\n",
			[]string{"interface Ethernet1/1", "  no switchport access vlan 10", "  description b"}},
		{"negated lines", "interface Ethernet1/2\n  no switchport\n  no shutdown\n",
			"interface Ethernet1/2\n  shutdown\n",
			[]string{"interface Ethernet1/2", "  switchport", "  shutdown"}},
		{"nested", "router bgp 1\n  neighbor 10.0.0.1\n    remote-as 2\n",
			"router bgp 1\n  neighbor 10.0.0.1\n    remote-as 3\n    description x\n",
			[]string{"router bgp 1", "  neighbor 10.0.0.1", "    remote-as 3", "    description x"}},
	}
	for _, tc := range cases {
		a, errs := d.parseConfig(tc.a, nil)
		b, errs2 := d.parseConfig(tc.b, nil)
		if len(errs)+len(errs2) > 0 {
			t.Fatalf("%s: parse errors %v %v", tc.name, errs, errs2)
		}
		got := nxosPatch(d, a.items, b.items, "")
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

func TestNXOSPathsAndLocations(t *testing.T) {
	for _, tc := range []struct {
		in, name string
		ok       bool
	}{
		{"bootflash:x.txt", "x.txt", true}, {"bootflash:/x.txt", "x.txt", true}, {"bootflash:///x", "x", true},
		{"x.txt", "x.txt", true}, {"BOOTFLASH:y", "y", true}, {"volatile:x", "", false}, {"bootflash:", "", false},
		{"bootflash:a/b", "", false}, {"a b", "", false},
	} {
		if name, ok := nxosPath(tc.in); name != tc.name || ok != tc.ok {
			t.Errorf("nxosPath(%q) = %q %v", tc.in, name, ok)
		}
	}
	for in, want := range map[string]locKind{"running-config": locRunning, "run": locRunning, "startup-config": locStartup,
		"start": locStartup, "bootflash:c": locFile, "c": locFile, "usb1:c": locBad} {
		if k, _ := nxosLoc(in); k != want {
			t.Errorf("nxosLoc(%q) = %v want %v", in, k, want)
		}
	}
}

// scpPut uploads data with the SCP protocol over an exec channel and returns the first
// error the sink reported ("" when every step was acknowledged).
func scpPut(t *testing.T, c *ssh.Client, target, name string, data []byte) string {
	t.Helper()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	in, _ := sess.StdinPipe()
	outPipe, _ := sess.StdoutPipe()
	out := bufio.NewReader(outPipe)
	if err := sess.Start("scp -t " + target); err != nil {
		t.Fatal(err)
	}
	ack := func() string {
		b, err := out.ReadByte()
		if err != nil {
			return "read: " + err.Error()
		}
		if b == 0 {
			return ""
		}
		if b > 2 { // not an SCP status: the CLI answered
			rest, _ := io.ReadAll(out)
			return string(b) + string(rest)
		}
		msg, _ := out.ReadString('\n')
		return fmt.Sprintf("%q%s", b, strings.TrimSpace(msg))
	}
	if msg := ack(); msg != "" {
		return msg
	}
	fmt.Fprintf(in, "C0644 %d %s\n", len(data), name)
	if msg := ack(); msg != "" {
		return msg
	}
	_, _ = in.Write(data)
	_, _ = in.Write([]byte{0})
	if msg := ack(); msg != "" {
		return msg
	}
	_ = in.Close()
	if err := sess.Wait(); err != nil {
		return "wait: " + err.Error()
	}
	return ""
}

func runExec(t *testing.T, c *ssh.Client, cmd string) string {
	t.Helper()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	out, _ := sess.CombinedOutput(cmd)
	return strings.ReplaceAll(string(out), "\r", "")
}

func TestNXOSSCPSink(t *testing.T) {
	f := startTest(t, Options{Platform: PlatformNXOS, Devices: 1})
	dev := f.Device(0)
	c, err := dial(f.Addr(0), ssh.Password("admin"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	data := []byte("hostname copied\ninterface loopback9\n  description via scp\n")
	sum := md5.Sum(data) //nolint:gosec // test of md5sum
	cases := []struct {
		target, name, file, errPart string
		data                        []byte
	}{
		{"bootflash:candidate_config.txt", "ignored", "candidate_config.txt", "", data},
		{"bootflash:", "named.txt", "named.txt", "", data},
		{"plain.txt", "x", "plain.txt", "", []byte{}},
		{"bootflash:", "bad/name", "", "invalid file name", data},
		{"bootflash:big", "big", "", nxosNoSpace, bytes.Repeat([]byte("x"), maxFileSize+1)},
	}
	for _, tc := range cases {
		msg := scpPut(t, c, tc.target, tc.name, tc.data)
		if tc.errPart == "" {
			if msg != "" {
				t.Errorf("%s: %s", tc.target, msg)
				continue
			}
			if got, ok := dev.File(tc.file); !ok || got != string(tc.data) {
				t.Errorf("%s: file %q = %q %v", tc.target, tc.file, got, ok)
			}
			continue
		}
		if !strings.Contains(msg, tc.errPart) {
			t.Errorf("%s: error %q, want %q", tc.target, msg, tc.errPart)
		}
	}
	// The device's md5sum matches, and the CLI still answers on exec channels.
	if got := runExec(t, c, "show file bootflash:candidate_config.txt md5sum"); strings.TrimSpace(got) != hex.EncodeToString(sum[:]) {
		t.Errorf("md5sum %q", got)
	}
	if got := runExec(t, c, "show hostname"); strings.TrimSpace(got) != "sw1" {
		t.Errorf("exec show hostname: %q", got)
	}
	// Without "feature scp-server" scp is just an invalid command.
	if err := dev.SetRunningConfig(strings.Replace(dev.RunningConfig(), "feature scp-server\n", "", 1)); err != nil {
		t.Fatal(err)
	}
	if msg := scpPut(t, c, "bootflash:x", "x", data); !strings.Contains(msg, "Invalid command") {
		t.Errorf("scp without the feature: %q", msg)
	}
	if _, ok := dev.File("x"); ok {
		t.Error("file written without the scp server")
	}
}

func TestNXOSShellOverSSH(t *testing.T) {
	f := startTest(t, Options{Platform: PlatformNXOS, Devices: 2})
	c, err := dial(f.Addr(0), ssh.Password("admin"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	in, _ := sess.StdinPipe()
	out, _ := sess.StdoutPipe()
	if err := sess.RequestPty("xterm", 24, 511, ssh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	readUntil := func(want string) string {
		var b bytes.Buffer
		buf := make([]byte, 4096)
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) && !strings.Contains(b.String(), want) {
			n, err := out.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return b.String()
	}
	if got := readUntil("sw1#"); !strings.HasSuffix(got, "sw1#") {
		t.Fatalf("login does not land in privileged exec: %q", got)
	}
	_, _ = io.WriteString(in, "terminal length 0\rshow interface status | include Eth1/2\r")
	if got := readUntil("connected routed"); !strings.Contains(got, "Eth1/2        to sw2 Ethernet1/3 connected routed") {
		t.Errorf("status: %q", got)
	}
	_, _ = io.WriteString(in, "configure terminal\rinterface Eth1/2\r")
	if got := readUntil("sw1(config-if)#"); !strings.Contains(got, "sw1(config-if)#") {
		t.Errorf("configuration prompt: %q", got)
	}
	_, _ = io.WriteString(in, "end\rexit\r")
	if err := sess.Wait(); err != nil {
		t.Errorf("logout: %v", err)
	}
}
