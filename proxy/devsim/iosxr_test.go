package devsim

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
)

// xrTerm is an in-process IOS XR CLI session for tests.
type xrTerm struct {
	t    *testing.T
	sh   *shell
	out  *bytes.Buffer
	done chan struct{}
}

func newXRTerm(t *testing.T, f *Fleet, i int) *xrTerm {
	t.Helper()
	var out bytes.Buffer
	done := make(chan struct{})
	sh := newShell(f.Device(i), "admin", &out, done, func() {})
	return &xrTerm{t: t, sh: sh, out: &out, done: done}
}

// run types lines and returns what the device wrote, \r removed.
func (x *xrTerm) run(lines ...string) string {
	x.out.Reset()
	for _, l := range lines {
		x.sh.feed([]byte(l + "\r"))
	}
	return strings.ReplaceAll(x.out.String(), "\r", "")
}

func startXR(t *testing.T, n int) *Fleet {
	t.Helper()
	f, err := Start(context.Background(), Options{Platform: "IOSXR", Devices: n})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	if f.Options().Platform != PlatformIOSXR {
		t.Fatalf("platform %q", f.Options().Platform)
	}
	return f
}

func TestIOSXRCommitConfirmed(t *testing.T) {
	t.Parallel()
	f := startXR(t, 1)
	dev := f.Device(0)
	a := newXRTerm(t, f, 0)
	const line = "server 192.0.2.7"

	// Not confirmed: the trial commit is rolled back when its timer fires.
	a.run("configure", "ntp "+line)
	if out := a.run("commit confirmed 1 comment trial one"); out != "commit confirmed 1 comment trial one\nRP/0/RP0/CPU0:sw1(config)#" {
		t.Fatalf("commit confirmed: %q", out)
	}
	if !strings.Contains(dev.RunningConfig(), line) {
		t.Fatal("trial commit not applied")
	}
	if out := a.run("do show configuration commit list detail"); !strings.Contains(out, "Trial:    pending confirmation, automatic rollback in 1 sec") ||
		!strings.Contains(out, "Comment:  trial one") {
		t.Fatalf("detail during the trial:\n%s", out)
	}
	if out := a.run("commit confirmed 30"); !strings.Contains(out, "already pending") {
		t.Fatalf("second trial: %q", out)
	}
	if out := a.run("end", "rollback configuration last 1"); !strings.Contains(out, "Cannot roll back while a commit confirmed is pending") {
		t.Fatalf("rollback during the trial: %q", out)
	}
	// The revert runs on the device's timer.
	testutil.Eventually(t, 10*time.Second, func() bool { return !strings.Contains(dev.RunningConfig(), line) }, "the automatic rollback")
	if out := a.run("show configuration commit list"); !strings.Contains(out, "1000000002            system") ||
		!strings.Contains(out, "Rollback") {
		t.Fatalf("commit list after the rollback:\n%s", out)
	}

	// Confirmed from another session with an empty target: the change stays.
	a.run("configure", "ntp "+line, "commit confirmed 2")
	b := newXRTerm(t, f, 0)
	if out := b.run("configure", "commit", "end"); strings.Contains(out, "%") {
		t.Fatalf("confirming commit: %q", out)
	}
	if out := b.run("show configuration commit list detail"); strings.Contains(out, "Trial:") {
		t.Fatalf("still pending after the confirmation:\n%s", out)
	}
	// A negative check, the behaviour under test: once the trial's
	// deadline (2 s) has passed on the device's real timer, nothing reverts.
	time.Sleep(2500 * time.Millisecond)
	if !strings.Contains(dev.RunningConfig(), line) {
		t.Fatal("a confirmed commit was rolled back")
	}
	a.run("end")
}

func TestIOSXRExclusiveLock(t *testing.T) {
	t.Parallel()
	f := startXR(t, 1)
	dev := f.Device(0)
	a, b := newXRTerm(t, f, 0), newXRTerm(t, f, 0)
	a.run("configure exclusive")
	cases := []struct {
		name  string
		term  *xrTerm
		lines []string
		want  string
	}{
		{"second exclusive", b, []string{"configure exclusive"}, "locked exclusively by another session"},
		{"commit while locked", b, []string{"configure", "hostname other", "commit"}, "% Failed to commit: the configuration is locked"},
		{"rollback while locked", b, []string{"abort", "rollback configuration last 1"}, "% Failed to roll back"},
		{"owner commits", a, []string{"hostname mine", "commit"}, ""},
	}
	for _, tc := range cases {
		out := tc.term.run(tc.lines...)
		if tc.want == "" && strings.Contains(out, "%") || tc.want != "" && !strings.Contains(out, tc.want) {
			t.Errorf("%s: %q", tc.name, out)
		}
	}
	if !strings.Contains(dev.RunningConfig(), "hostname mine") {
		t.Fatal("owner's commit not applied")
	}
	// Ctrl-Z leaves configuration mode; the lock goes at the next exec command.
	a.sh.feed([]byte{0x1a})
	a.run("show clock")
	if out := b.run("configure exclusive", "abort"); strings.Contains(out, "%") {
		t.Fatalf("lock kept after Ctrl-Z: %q", out)
	}
	// A session whose connection is gone loses its lock.
	a.run("configure exclusive")
	close(a.done)
	if out := b.run("configure exclusive", "hostname b", "commit", "end"); strings.Contains(out, "%") {
		t.Fatalf("lock of a closed session: %q", out)
	}
	if !strings.Contains(dev.RunningConfig(), "hostname b") {
		t.Fatal("commit after the owner disconnected not applied")
	}
}

func TestIOSXRConfigLines(t *testing.T) {
	t.Parallel()
	f := startXR(t, 2)
	cases := []struct {
		name  string
		lines []string
		want  []string // in the running configuration after commit
		not   []string
		out   string // expected in the output
	}{
		{"one-line hierarchy", []string{"router bgp 65001 neighbor 192.0.2.1 remote-as 65009", "commit"},
			[]string{" neighbor 192.0.2.1\n  remote-as 65009\n !"}, nil, ""},
		{"interface name with a space", []string{"interface GigabitEthernet 0/0/0/2 description spare", "commit"},
			[]string{"interface GigabitEthernet0/0/0/2\n description spare\n shutdown\n!"}, nil, ""},
		{"pasted blocks closed by !", []string{"router static", " address-family ipv4 unicast", "  192.0.2.0/24 10.0.0.1", " !", "!", "hostname pasted", "commit"},
			[]string{"  192.0.2.0/24 10.0.0.1\n", "hostname pasted\n"}, nil, ""},
		{"negation", []string{"no ntp server 172.16.255.254", "no interface Loopback0", "commit"}, nil,
			[]string{"server 172.16.255.254", "interface Loopback0"}, ""},
		{"IOS syntax refused", []string{"interface Gi0/0/0/0", "ip address 10.1.1.1 255.255.255.0", "commit"}, nil,
			[]string{"10.1.1.1"}, "% Invalid input detected at '^' marker."},
		{"semantic error", []string{"interface Loopback7", "ipv4 address 10.7.7.7 255.0.0.255", "commit"}, nil,
			[]string{"Loopback7"}, "% Failed to commit one or more configuration items"},
		{"replace", []string{"hostname replaced", "commit replace", "yes"}, []string{"hostname replaced\n", "interface GigabitEthernet0/0/0/0\n!"},
			[]string{"router bgp", "ntp", "interface Loopback0"}, "Do you wish to proceed? [no]:"},
	}
	for _, tc := range cases {
		term := newXRTerm(t, f, 1)
		out := term.run(append(append([]string{"configure"}, tc.lines...), "abort")...)
		run := f.Device(1).RunningConfig()
		for _, w := range tc.want {
			if !strings.Contains(run, w) {
				t.Errorf("%s: running config lacks %q:\n%s\n(output %s)", tc.name, w, run, out)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(run, w) {
				t.Errorf("%s: running config has %q", tc.name, w)
			}
		}
		if tc.out != "" && !strings.Contains(out, tc.out) {
			t.Errorf("%s: output lacks %q:\n%s", tc.name, tc.out, out)
		}
	}
	if err := f.Device(1).SetRunningConfig(f.Device(0).RunningConfig()); err != nil {
		t.Fatalf("set running config from XR text: %v", err)
	}
	if got := f.Device(1).RunningConfig(); !strings.Contains(got, "hostname sw1") || !strings.Contains(got, "router bgp 65001") {
		t.Fatalf("after SetRunningConfig:\n%s", got)
	}
}
