package devsim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/gsalt/gsalt/internal/testutil"
)

func startTest(t *testing.T, o Options) *Fleet {
	t.Helper()
	f, err := Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

func dial(addr string, auth ...ssh.AuthMethod) (*ssh.Client, error) {
	return ssh.Dial("tcp", addr, &ssh.ClientConfig{User: "admin", Auth: auth,
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), Timeout: 5 * time.Second})
}

func TestParseFaults(t *testing.T) {
	cases := []struct {
		spec string
		want map[int]Fault
		err  bool
	}{
		{"", map[int]Fault{}, false},
		{"hang:3,badauth:5", map[int]Fault{3: FaultHang, 5: FaultBadAuth}, false},
		{"drop:1-3, refuse:0", map[int]Fault{0: FaultRefuse, 1: FaultDrop, 2: FaultDrop, 3: FaultDrop}, false},
		{"HANG:2", map[int]Fault{2: FaultHang}, false},
		{"hang", nil, true},
		{"melt:1", nil, true},
		{"hang:x", nil, true},
		{"hang:3-1", nil, true},
		{"none:1", nil, true},
	}
	for _, tc := range cases {
		got, err := ParseFaults(tc.spec)
		if tc.err {
			if !errors.Is(err, ErrFaultSpec) {
				t.Errorf("%q: err = %v", tc.spec, err)
			}
			continue
		}
		if err != nil || len(got) != len(tc.want) {
			t.Errorf("%q: %v %v", tc.spec, got, err)
			continue
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%q: [%d] = %v want %v", tc.spec, k, got[k], v)
			}
		}
	}
	if FaultHang.String() != "hang" || Fault(42).String() != "fault(42)" {
		t.Error("Fault.String")
	}
}

func TestStartOptionErrors(t *testing.T) {
	cases := []Options{
		{Devices: 0},
		{Devices: MaxDevices + 1},
		{Devices: 1, Platform: "junos"},
		{Devices: 3, BasePort: 65534},
		{Devices: 1, HostnamePrefix: "bad prefix"},
		{Devices: 1, Latency: -time.Second},
		{Devices: 2, Faults: map[int]Fault{2: FaultHang}},
	}
	for i, o := range cases {
		if _, err := Start(context.Background(), o); !errors.Is(err, ErrOptions) {
			t.Errorf("case %d: err = %v", i, err)
		}
	}
}

func TestBasePortAndListenError(t *testing.T) {
	// Find two consecutive free ports, then ask for them explicitly.
	var f *Fleet
	for try := 0; try < 20 && f == nil; try++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := ln.Addr().(*net.TCPAddr).Port
		_ = ln.Close()
		if p >= 65535 {
			continue
		}
		f, err = Start(context.Background(), Options{Devices: 2, BasePort: p})
		if err == nil {
			defer f.Close()
			if f.Port(0) != p || f.Port(1) != p+1 || f.Addr(1) != "127.0.0.1:"+strconv.Itoa(p+1) {
				t.Fatalf("ports %d %d for base %d", f.Port(0), f.Port(1), p)
			}
			// The same ports again must fail with ErrListen.
			if _, err := Start(context.Background(), Options{Devices: 2, BasePort: p}); !errors.Is(err, ErrListen) {
				t.Fatalf("second fleet on the same ports: %v", err)
			}
		}
	}
	if f == nil {
		t.Skip("no two consecutive free ports found")
	}
}

func TestAuthAndShellOverSSH(t *testing.T) {
	f := startTest(t, Options{Devices: 2, Platform: PlatformEOS, Password: "pw"})
	if _, err := dial(f.Addr(0), ssh.Password("wrong")); err == nil {
		t.Fatal("wrong password accepted")
	}
	ki := ssh.KeyboardInteractive(func(_, _ string, q []string, _ []bool) ([]string, error) {
		a := make([]string, len(q))
		for i := range a {
			a[i] = "pw"
		}
		return a, nil
	})
	c, err := dial(f.Addr(0), ki)
	if err != nil {
		t.Fatalf("keyboard-interactive: %v", err)
	}
	defer c.Close()
	// exec request: one command, privileged, no prompt.
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Output("show hostname")
	if err != nil || string(out) != "Hostname: sw1\r\nFQDN:     sw1.example.net\r\n" {
		t.Fatalf("exec: %q %v", out, err)
	}
	// interactive shell with a pty.
	s, err = c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RequestPty("xterm", 24, 200, ssh.TerminalModes{ssh.ECHO: 1}); err != nil {
		t.Fatal(err)
	}
	in, _ := s.StdinPipe()
	var buf testutil.Buffer
	s.Stdout = &buf
	if err := s.Shell(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, &buf, "sw1>")
	if f.Device(0).ActiveSessions() != 1 {
		t.Fatalf("active sessions = %d", f.Device(0).ActiveSessions())
	}
	io.WriteString(in, "enable\r\nshow ip interface brief | include Loopback\r\nexit\r\n")
	if err := s.Wait(); err != nil {
		t.Fatalf("shell exit: %v", err)
	}
	got := strings.ReplaceAll(buf.String(), "\r", "")
	if !strings.Contains(got, "sw1#show ip interface brief | include Loopback\nLoopback0         10.255.0.1/32") {
		t.Fatalf("shell transcript:\n%s", got)
	}
}

func TestSessionLimitAndRefuse(t *testing.T) {
	f := startTest(t, Options{Devices: 2, MaxSessions: 2, Faults: map[int]Fault{1: FaultRefuse}})
	var clients []*ssh.Client
	for i := range 2 {
		c, err := dial(f.Addr(0), ssh.Password("admin"))
		if err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
		clients = append(clients, c)
	}
	if _, err := dial(f.Addr(0), ssh.Password("admin")); err == nil {
		t.Fatal("third concurrent connection accepted")
	}
	_ = clients[0].Close()
	testutil.Eventually(t, 5*time.Second, func() bool { return f.Device(0).ActiveSessions() < 2 }, "the closed session to free its slot")
	c, err := dial(f.Addr(0), ssh.Password("admin"))
	if err != nil {
		t.Fatalf("connection after a slot freed: %v", err)
	}
	c.Close()
	clients[1].Close()
	if _, err := dial(f.Addr(1), ssh.Password("admin")); err == nil {
		t.Fatal("refuse fault accepted a connection")
	}
}

func TestLatency(t *testing.T) {
	f := startTest(t, Options{Devices: 1, Latency: 50 * time.Millisecond})
	c, err := dial(f.Addr(0), ssh.Password("admin"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, _ := c.NewSession()
	start := time.Now()
	if _, err := s.Output("show clock"); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Fatalf("answered after %v, latency 50ms", d)
	}
}

func TestCloseEndsConnections(t *testing.T) {
	f, err := Start(context.Background(), Options{Devices: 1})
	if err != nil {
		t.Fatal(err)
	}
	c, err := dial(f.Addr(0), ssh.Password("admin"))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	_ = f.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("client connection survived Close")
	}
	if _, err := dial(f.Addr(0), ssh.Password("admin")); err == nil {
		t.Fatal("listener survived Close")
	}
}

func TestContextCancelStopsFleet(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f, err := Start(ctx, Options{Devices: 1})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	_ = f.Close()
	if _, err := dial(f.Addr(0), ssh.Password("admin")); err == nil {
		t.Fatal("fleet still serving after cancel")
	}
}

// TestConcurrentSessions edits one device from several sessions at once (run with -race).
func TestConcurrentSessions(t *testing.T) {
	f := startTest(t, Options{Devices: 1, MaxSessions: 8})
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Go(func() {
			c, err := dial(f.Addr(0), ssh.Password("admin"))
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			s, _ := c.NewSession()
			in, _ := s.StdinPipe()
			s.Stdout = io.Discard
			if err := s.Shell(); err != nil {
				t.Error(err)
				return
			}
			lines := "enable\rterminal length 0\rconfigure terminal\rinterface Loopback" + strconv.Itoa(100+i) +
				"\rdescription s" + strconv.Itoa(i) + "\rend\rshow running-config\rexit\r"
			io.WriteString(in, lines)
			_ = s.Wait()
		})
	}
	wg.Wait()
	run := f.Device(0).RunningConfig()
	for i := range 6 {
		if !strings.Contains(run, "interface Loopback"+strconv.Itoa(100+i)+"\n description s"+strconv.Itoa(i)) {
			t.Errorf("Loopback%d missing:\n%s", 100+i, run)
		}
	}
}

func TestLargeFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("large fleet skipped in -short mode")
	}
	const n = 2000
	f := startTest(t, Options{Devices: n, Platform: PlatformEOS})
	for _, i := range []int{0, n / 2, n - 1} {
		c, err := dial(f.Addr(i), ssh.Password("admin"))
		if err != nil {
			t.Fatalf("device %d: %v", i, err)
		}
		s, _ := c.NewSession()
		out, err := s.Output("show lldp neighbors")
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := "sw" + strconv.Itoa(i) + " "
		if i == 0 {
			want = "sw2 "
		}
		if !strings.Contains(string(out), want) {
			t.Errorf("device %d lldp:\n%s", i, out)
		}
	}
	// Devices nobody connected to have no state.
	allocated := 0
	for i := range n {
		d := f.Device(i)
		d.mu.Lock()
		if d.st != nil {
			allocated++
		}
		d.mu.Unlock()
	}
	if allocated != 3 {
		t.Errorf("%d devices allocated state, want 3", allocated)
	}
}

func TestDeviceAPI(t *testing.T) {
	f := startTest(t, Options{Devices: 2, HostnamePrefix: "leaf"})
	d := f.Device(1)
	if d.Name() != "leaf2" || d.Index() != 1 || d.Addr() != f.Addr(1) || d.Fault() != FaultNone || f.Len() != 2 {
		t.Fatal("device accessors")
	}
	if f.HostKey() == nil {
		t.Fatal("no host key")
	}
	run := d.RunningConfig()
	if !strings.HasPrefix(run, "!\n! Last configuration change at ") || !strings.Contains(run, "hostname leaf2\n") ||
		!strings.HasSuffix(run, "end\n") {
		t.Fatalf("running config:\n%s", run)
	}
	if err := d.SetRunningConfig("hostname spine9\ninterface GigabitEthernet1\n ip address 192.0.2.1 255.255.255.0\n"); err != nil {
		t.Fatal(err)
	}
	run = d.RunningConfig()
	for _, w := range []string{"hostname spine9\n", "interface GigabitEthernet2\n!", "interface GigabitEthernet1\n ip address 192.0.2.1"} {
		if !strings.Contains(run, w) {
			t.Errorf("after SetRunningConfig lacks %q:\n%s", w, run)
		}
	}
	if strings.Contains(run, "router bgp") {
		t.Error("SetRunningConfig kept old settings")
	}
	if err := d.SetRunningConfig("interface GigabitEthernet99\n"); !errors.Is(err, ErrConfig) {
		t.Fatalf("bad config: %v", err)
	}
	if err := d.SetRunningConfig("this is wrong\n"); !errors.Is(err, ErrConfig) {
		t.Fatalf("bad config: %v", err)
	}
	if !strings.Contains(d.StartupConfig(), "hostname leaf2") {
		t.Error("startup config changed by SetRunningConfig")
	}
}

func waitFor(t *testing.T, b *testutil.Buffer, want string) {
	t.Helper()
	testutil.Eventually(t, 5*time.Second, func() bool { return strings.Contains(b.String(), want) }, fmt.Sprintf("%q in the output", want))
}
