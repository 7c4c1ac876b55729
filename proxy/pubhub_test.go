package proxy_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/internal/testutil/proc"
	"github.com/gsalt/gsalt/internal/testutil/started"
	"github.com/gsalt/gsalt/masterd"

	"github.com/gsalt/gsalt/master"
	"github.com/gsalt/gsalt/proxy"
	"github.com/gsalt/gsalt/wire/payload"
)

// connsTo counts this process's established TCP connections whose remote
// port is port (the client ends of connections to a local server).
func connsTo(t *testing.T, port int) int {
	t.Helper()
	n := 0
	for _, file := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		fh, err := os.Open(file)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			// sl local_address rem_address st ...; st 01 is ESTABLISHED.
			if len(f) > 3 && f[3] == "01" && strings.HasSuffix(f[2], fmt.Sprintf(":%04X", port)) {
				n++
			}
		}
		fh.Close()
	}
	return n
}

// TestFleetSharesPublisherConnection: the devices of a fleet read the
// master's publisher through one connection, and every one of them still
// gets each job and answers it.
func TestFleetSharesPublisherConnection(t *testing.T) {
	dir := shortDir(t)
	d := testMaster(t, dir, func(context.Context, master.PillarRequest) (*payload.Map, error) {
		return payload.NewMap("proxy", payload.NewMap("proxytype", "dummy")), nil
	})
	etc := proxyConf(t, dir, d, "")
	ids := []string{"h1", "h2", "h3", "h4", "h5"}
	boot := started.Watch(t, d.Bus())
	ctx, cancel := context.WithCancel(context.Background())
	f := runFleet(t, ctx, cancel, proxy.Options{ConfigDir: etc, IDs: ids, Logger: testLogger()})
	waitFor(t, "all devices", func() bool { return len(f.Devices()) == len(ids) })
	for _, dev := range f.Devices() {
		waitServing(t, boot, dev)
	}
	pubPort := d.PubAddr().(interface{ String() string }).String()
	port := 0
	if _, err := fmt.Sscanf(pubPort[strings.LastIndexByte(pubPort, ':')+1:], "%d", &port); err != nil {
		t.Fatal(err)
	}
	if n := connsTo(t, port); n != 1 {
		t.Errorf("%d connections to the publisher for %d devices, want 1", n, len(ids))
	}
	for range 2 {
		got := runJob(t, d, "h*", "glob", "test.ping")
		for _, id := range ids {
			if got[id] != true {
				t.Errorf("test.ping: %s returned %v", id, got[id])
			}
		}
	}
}

// TestFleetAnswersAfterMasterRestart: the devices sharing one publisher
// connection re-authenticate when the master comes back (on the same
// ports, with a new session key) and all answer test.ping again.
func TestFleetAnswersAfterMasterRestart(t *testing.T) {
	dir := shortDir(t)
	ports := proc.FreePorts(t, 2)
	etc := filepath.Join(dir, "metc")
	writeFile(t, filepath.Join(etc, "master"), fmt.Sprintf("interface: 127.0.0.1\npublish_port: %[2]d\nret_port: %[3]d\nroot_dir: %[1]s\n"+
		"pki_dir: %[1]s/mpki\ncachedir: %[1]s/mcache\nsock_dir: %[1]s/ms\nlog_file: %[1]s/master.log\nuser: root\nauto_accept: True\n",
		dir, ports[0], ports[1]))
	pillar := func(context.Context, master.PillarRequest) (*payload.Map, error) {
		return payload.NewMap("proxy", payload.NewMap("proxytype", "dummy")), nil
	}
	start := func() *masterd.Daemon {
		cfg, err := config.LoadMaster(etc)
		if err != nil {
			t.Fatal(err)
		}
		d, err := masterd.Start(context.Background(), cfg, masterd.Options{Logger: testLogger(), Pillar: pillar})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	d := start()
	pconf := proxyConf(t, dir, d, "")
	ids := []string{"r1", "r2", "r3"}
	ctx, cancel := context.WithCancel(context.Background())
	f := runFleet(t, ctx, cancel, proxy.Options{ConfigDir: pconf, IDs: ids, Logger: testLogger()})
	waitFor(t, "all devices", func() bool { return len(f.Devices()) == len(ids) })
	for _, dev := range f.Devices() {
		waitReady(t, dev)
	}
	d.Close()
	d = start()
	t.Cleanup(func() { d.Close() })
	waitFor(t, "every device answering the restarted master", func() bool {
		got := runJob(t, d, "r*", "glob", "test.ping")
		for _, id := range ids {
			if got[id] != true {
				return false
			}
		}
		return true
	})
}

// TestJobAfterStartEventReachesDevices: the fleet's shared publisher
// connection reaches the master late (its subscription is read 500 ms
// after the proxy sent it, as on a loaded master). The master holds the
// devices' start events, and its answers to them, until it applied the
// subscription; a device says Ready only after those answers. So a job
// published after the start events, or right after Device.Ready, reaches
// every device (before the master held its answers, a job published right
// after Ready was lost: the first-job flake of
// TestScheduledCommitsAndReverts and TestFRRThroughMaster).
func TestJobAfterStartEventReachesDevices(t *testing.T) {
	for _, tc := range []struct {
		name       string
		startEvent bool // wait for the start events too, not only Ready
	}{
		{"after the start events", true},
		{"right after Ready", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := shortDir(t)
			d := testMaster(t, dir, func(context.Context, master.PillarRequest) (*payload.Map, error) {
				return payload.NewMap("proxy", payload.NewMap("proxytype", "dummy")), nil
			})
			late := testutil.DelayProxy(t, d.PubAddr().String(), 500*time.Millisecond)
			_, port, err := net.SplitHostPort(late)
			if err != nil {
				t.Fatal(err)
			}
			ids := []string{"l1", "l2", "l3"}
			boot := started.Watch(t, d.Bus())
			ctx, cancel := context.WithCancel(context.Background())
			f := runFleet(t, ctx, cancel, proxy.Options{ConfigDir: proxyConf(t, dir, d, "publish_port: "+port+"\n"), IDs: ids, Logger: testLogger()})
			waitFor(t, "all devices", func() bool { return len(f.Devices()) == len(ids) })
			for _, dev := range f.Devices() {
				if tc.startEvent {
					waitServing(t, boot, dev)
				} else {
					waitReady(t, dev)
				}
			}
			rctx, rcancel := context.WithTimeout(context.Background(), testutil.Scale(60*time.Second))
			defer rcancel()
			res, err := d.Master().RunJob(rctx, master.PublishRequest{Tgt: "l*", Fun: "test.ping", Arg: []any{}}, testutil.Scale(20*time.Second), testutil.Scale(5*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range ids {
				if ret, ok := res.Returns[id]; !ok || ret.Bool("return") != true {
					t.Errorf("%s: no test.ping return (returns %v)", id, res.Returns)
				}
			}
		})
	}
}
